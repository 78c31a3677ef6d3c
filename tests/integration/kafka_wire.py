"""Hand-written Kafka wire bits for tests that must not go through a client library.

CRC-32C (Castagnoli) in pure Python, zig-zag varints, v2 record batches, request framing, and a
reader for Kafka segment (.log) files.
"""

import socket
import struct
import time

# ---------------------------------------------------------------------------------------------
# CRC-32C, reflected polynomial 0x82F63B78, table driven.

_CRC32C_TABLE = []
for _i in range(256):
    _c = _i
    for _ in range(8):
        _c = (_c >> 1) ^ 0x82F63B78 if _c & 1 else _c >> 1
    _CRC32C_TABLE.append(_c)


def crc32c(data, crc=0):
    crc ^= 0xFFFFFFFF
    table = _CRC32C_TABLE
    for b in data:
        crc = table[(crc ^ b) & 0xFF] ^ (crc >> 8)
    return crc ^ 0xFFFFFFFF


assert crc32c(b"123456789") == 0xE3069283  # the standard check value


# ---------------------------------------------------------------------------------------------
# Varints (zig-zag, as used inside v2 records).


def varint(n):
    z = (n << 1) ^ (n >> 63)
    z &= 0xFFFFFFFFFFFFFFFF
    out = bytearray()
    while True:
        if z < 0x80:
            out.append(z)
            return bytes(out)
        out.append((z & 0x7F) | 0x80)
        z >>= 7


def read_varint(buf, pos):
    shift = 0
    z = 0
    while True:
        b = buf[pos]
        pos += 1
        z |= (b & 0x7F) << shift
        if not b & 0x80:
            break
        shift += 7
    return (z >> 1) ^ -(z & 1), pos


def uvarint(n):
    out = bytearray()
    while True:
        if n < 0x80:
            out.append(n)
            return bytes(out)
        out.append((n & 0x7F) | 0x80)
        n >>= 7


# ---------------------------------------------------------------------------------------------
# v2 record batches.


def encode_record(offset_delta, timestamp_delta, key, value, headers=()):
    body = bytearray()
    body += b"\x00"  # attributes
    body += varint(timestamp_delta)
    body += varint(offset_delta)
    if key is None:
        body += varint(-1)
    else:
        body += varint(len(key)) + key
    if value is None:
        body += varint(-1)
    else:
        body += varint(len(value)) + value
    body += varint(len(headers))
    for hk, hv in headers:
        hkb = hk.encode()
        body += varint(len(hkb)) + hkb
        if hv is None:
            body += varint(-1)
        else:
            body += varint(len(hv)) + hv
    return varint(len(body)) + bytes(body)


def build_record_batch(records, base_offset=0, base_timestamp=None, attributes=0):
    """records: list of (key, value, headers).  Uncompressed v2 batch with a correct CRC-32C."""
    if base_timestamp is None:
        base_timestamp = int(time.time() * 1000)
    encoded = b"".join(encode_record(i, i, k, v, h) for i, (k, v, h) in enumerate(records))
    after_crc = struct.pack(
        ">hiqqqhii",
        attributes,
        len(records) - 1,          # lastOffsetDelta
        base_timestamp,            # baseTimestamp
        base_timestamp + len(records) - 1,  # maxTimestamp
        -1,                        # producerId
        -1,                        # producerEpoch
        -1,                        # baseSequence
        len(records),              # records count
    ) + encoded
    crc = crc32c(after_crc)
    after_length = struct.pack(">ibI", -1, 2, crc) + after_crc  # partitionLeaderEpoch, magic, crc
    return struct.pack(">qi", base_offset, len(after_length)) + after_length


# Offsets inside a v2 batch.
BATCH_CRC_OFFSET = 17
BATCH_ATTRIBUTES_OFFSET = 21
BATCH_HEADER_SIZE = 61


def parse_batches(data, verify_crc=True):
    """Yields dicts for each v2 batch in data (a segment file or a Fetch records blob).

    Stops at a trailing partial batch (allowed in fetch responses); raises ValueError on a
    malformed or CRC-mismatching batch.
    """
    pos = 0
    while pos + 12 <= len(data):
        base_offset, length = struct.unpack_from(">qi", data, pos)
        if length == 0 and base_offset == 0:
            return  # zero-filled (preallocated) tail
        if length < BATCH_HEADER_SIZE - 12:
            raise ValueError(f"batch at byte {pos}: length {length} too small")
        end = pos + 12 + length
        if end > len(data):
            return  # partial batch
        epoch, magic, crc = struct.unpack_from(">ibI", data, pos + 12)
        if magic != 2:
            raise ValueError(f"batch at byte {pos}: magic {magic}")
        if verify_crc:
            actual = crc32c(data[pos + BATCH_ATTRIBUTES_OFFSET:end])
            if actual != crc:
                raise ValueError(f"batch at byte {pos}: crc {crc:#x} != computed {actual:#x}")
        (attributes, last_delta, base_ts, max_ts, pid, pepoch, bseq, count) = struct.unpack_from(
            ">hiqqqhii", data, pos + BATCH_ATTRIBUTES_OFFSET)
        yield {
            "position": pos,
            "base_offset": base_offset,
            "last_offset": base_offset + last_delta,
            "length": length,
            "size": 12 + length,
            "leader_epoch": epoch,
            "attributes": attributes,
            "base_timestamp": base_ts,
            "max_timestamp": max_ts,
            "count": count,
            "raw": bytes(data[pos:end]),
        }
        pos = end


def decode_uncompressed_records(batch_raw):
    """Records of an uncompressed batch: list of (offset, timestamp, key, value, headers)."""
    base_offset = struct.unpack_from(">q", batch_raw, 0)[0]
    base_ts = struct.unpack_from(">q", batch_raw, 27)[0]
    count = struct.unpack_from(">i", batch_raw, 57)[0]
    pos = BATCH_HEADER_SIZE
    out = []
    for _ in range(count):
        _length, pos = read_varint(batch_raw, pos)
        pos += 1  # attributes
        ts_delta, pos = read_varint(batch_raw, pos)
        off_delta, pos = read_varint(batch_raw, pos)
        klen, pos = read_varint(batch_raw, pos)
        key = None if klen < 0 else bytes(batch_raw[pos:pos + klen])
        pos += max(klen, 0)
        vlen, pos = read_varint(batch_raw, pos)
        value = None if vlen < 0 else bytes(batch_raw[pos:pos + vlen])
        pos += max(vlen, 0)
        nh, pos = read_varint(batch_raw, pos)
        headers = []
        for _ in range(nh):
            hklen, pos = read_varint(batch_raw, pos)
            hk = bytes(batch_raw[pos:pos + hklen]).decode()
            pos += hklen
            hvlen, pos = read_varint(batch_raw, pos)
            hv = None if hvlen < 0 else bytes(batch_raw[pos:pos + hvlen])
            pos += max(hvlen, 0)
            headers.append((hk, hv))
        out.append((base_offset + off_delta, base_ts + ts_delta, key, value, headers))
    return out


# ---------------------------------------------------------------------------------------------
# Request framing (non-flexible request header v1) and a blocking connection.


def string(s):
    if s is None:
        return struct.pack(">h", -1)
    b = s.encode() if isinstance(s, str) else s
    return struct.pack(">h", len(b)) + b


def request_frame(api_key, api_version, correlation_id, body, client_id="oxbow-it"):
    header = struct.pack(">hhi", api_key, api_version, correlation_id) + string(client_id)
    payload = header + body
    return struct.pack(">i", len(payload)) + payload


class ConnectionClosed(Exception):
    pass


class Conn:
    def __init__(self, port, host="127.0.0.1", timeout=10):
        self.sock = socket.create_connection((host, port), timeout=timeout)

    def close(self):
        try:
            self.sock.close()
        except OSError:
            pass

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def send(self, data):
        self.sock.sendall(data)

    def recv_exact(self, n):
        buf = bytearray()
        while len(buf) < n:
            chunk = self.sock.recv(n - len(buf))
            if not chunk:
                raise ConnectionClosed(f"connection closed after {len(buf)} of {n} bytes")
            buf += chunk
        return bytes(buf)

    def recv_frame(self):
        (size,) = struct.unpack(">i", self.recv_exact(4))
        assert 0 <= size < 256 * 1024 * 1024, f"bad response size {size}"
        return self.recv_exact(size)

    def request(self, api_key, api_version, correlation_id, body):
        self.send(request_frame(api_key, api_version, correlation_id, body))
        resp = self.recv_frame()
        (corr,) = struct.unpack_from(">i", resp, 0)
        assert corr == correlation_id, f"correlation id {corr} != {correlation_id}"
        return resp[4:]

    def wait_closed_or_response(self, timeout):
        """Returns 'closed' if the peer closes the connection, else the bytes received."""
        self.sock.settimeout(timeout)
        try:
            data = self.sock.recv(65536)
        except ConnectionResetError:
            return "closed"
        except socket.timeout:
            return None
        return "closed" if not data else data


class Reader:
    def __init__(self, data, pos=0):
        self.data = data
        self.pos = pos

    def take(self, fmt):
        vals = struct.unpack_from(fmt, self.data, self.pos)
        self.pos += struct.calcsize(fmt)
        return vals if len(vals) > 1 else vals[0]

    def int8(self):
        return self.take(">b")

    def int16(self):
        return self.take(">h")

    def int32(self):
        return self.take(">i")

    def int64(self):
        return self.take(">q")

    def string(self):
        n = self.int16()
        if n < 0:
            return None
        s = self.data[self.pos:self.pos + n].decode()
        self.pos += n
        return s

    def bytes_(self):
        n = self.int32()
        if n < 0:
            return None
        b = self.data[self.pos:self.pos + n]
        self.pos += n
        return b

    def remaining(self):
        return len(self.data) - self.pos

    # Flexible versions' encodings.
    def uvarint(self):
        value, shift = 0, 0
        while True:
            b = self.data[self.pos]
            self.pos += 1
            value |= (b & 0x7F) << shift
            if not b & 0x80:
                return value
            shift += 7

    def compact_string(self):
        n = self.uvarint() - 1
        if n < 0:
            return None
        s = self.data[self.pos:self.pos + n].decode()
        self.pos += n
        return s

    def compact_array(self, read_element):
        return [read_element() for _ in range(self.uvarint() - 1)]

    def skip_tags(self):
        for _ in range(self.uvarint()):
            self.uvarint()
            self.pos += self.uvarint()


def compact_string(s):
    raw = s.encode()
    return uvarint(len(raw) + 1) + raw


def compact_array(encoded_elements):
    return uvarint(len(encoded_elements) + 1) + b"".join(encoded_elements)


def flexible_request(conn, api_key, api_version, correlation_id, body):
    """Sends a request of a flexible version (header v2, `body` without its trailing tagged fields)
    and returns a Reader past the response header v1."""
    payload = struct.pack(">hhi", api_key, api_version, correlation_id) + string("oxbow-it") + b"\x00" + body + b"\x00"
    conn.send(struct.pack(">i", len(payload)) + payload)
    r = Reader(conn.recv_frame())
    assert r.int32() == correlation_id
    r.skip_tags()
    return r


# ---------------------------------------------------------------------------------------------
# Specific requests/responses.


def produce_body(topic, partition, records_blob, version, acks=-1, timeout_ms=10000):
    body = string(None) if version >= 3 else b""  # transactional_id, from v3
    body += struct.pack(">hi", acks, timeout_ms)
    body += struct.pack(">i", 1) + string(topic)
    body += struct.pack(">i", 1) + struct.pack(">i", partition)
    body += struct.pack(">i", len(records_blob)) + records_blob
    return body


def produce_v8_body(topic, partition, records_blob, acks=-1, timeout_ms=10000):
    return produce_body(topic, partition, records_blob, 8, acks, timeout_ms)


def parse_produce_response(body, version):
    """Produce responses v2-v8 (non-flexible); fields a version lacks are None."""
    r = Reader(body)
    out = []
    for _ in range(r.int32()):
        name = r.string()
        for _ in range(r.int32()):
            entry = {"topic": name, "partition": r.int32(), "error": r.int16(), "base_offset": r.int64(),
                     "log_append_time": r.int64(), "log_start_offset": None, "record_errors": [],
                     "error_message": None}
            if version >= 5:
                entry["log_start_offset"] = r.int64()
            if version >= 8:
                for _ in range(r.int32()):
                    entry["record_errors"].append((r.int32(), r.string()))
                entry["error_message"] = r.string()
            out.append(entry)
    throttle = r.int32()
    return out, throttle


def parse_produce_v8_response(body):
    return parse_produce_response(body, 8)


def parse_api_versions_v0(body):
    r = Reader(body)
    error = r.int16()
    keys = {}
    for _ in range(r.int32()):
        k, lo, hi = r.int16(), r.int16(), r.int16()
        keys[k] = (lo, hi)
    return error, keys


def fetch_v12(conn, session_id, epoch, topic, partitions=(), forgotten=(), max_wait_ms=0, min_bytes=0,
              sizes=None):
    """A Fetch v12 of one topic within a KIP-227 session (0 and -1: none). partitions: (partition,
    fetch offset) each. Returns (error, session id, {partition: (high watermark, record count)});
    appends (request body bytes, response bytes) to `sizes` if given."""
    body = struct.pack(">iiiibii", -1, max_wait_ms, min_bytes, 1 << 20, 0, session_id, epoch)
    entries = [struct.pack(">iiqiqi", p, -1, offset, -1, -1, 1 << 20) + b"\x00" for p, offset in partitions]
    body += compact_array([compact_string(topic) + compact_array(entries) + b"\x00"] if entries else [])
    if forgotten:
        ids = uvarint(len(forgotten) + 1) + b"".join(struct.pack(">i", p) for p in forgotten)
        body += compact_array([compact_string(topic) + ids + b"\x00"])
    else:
        body += compact_array([])
    body += compact_string("")  # rack_id
    r = flexible_request(conn, 1, 12, 21, body)
    if sizes is not None:
        sizes.append((len(body), len(r.data)))
    r.int32()  # throttle
    error, session = r.int16(), r.int32()
    answered = {}

    def partition():
        index, _error, high_watermark = r.int32(), r.int16(), r.int64()
        r.int64(), r.int64()  # last stable offset, log start offset
        for _ in range(max(r.uvarint() - 1, 0)):  # aborted transactions
            r.int64(), r.int64()
            r.skip_tags()
        r.int32()  # preferred read replica
        size = r.uvarint() - 1
        records = r.data[r.pos:r.pos + max(size, 0)]
        r.pos += max(size, 0)
        r.skip_tags()
        answered[index] = (high_watermark, sum(b["count"] for b in parse_batches(records)))

    def topic_answer():
        assert r.compact_string() == topic
        r.compact_array(partition)
        r.skip_tags()

    r.compact_array(topic_answer)
    return error, session, answered
