#include "protocol/batch_builder.h"

#include <algorithm>

#include "common/crc32c.h"
#include "protocol/compression.h"
#include "protocol/record_batch.h"
#include "protocol/wire.h"

namespace oxbow::protocol {

namespace {

void write_nullable(Writer& w, const std::optional<std::string>& s) {
  if (!s) {
    w.varint(-1);
    return;
  }
  w.varint(static_cast<int32_t>(s->size()));
  w.raw(s->data(), s->size());
}

std::optional<std::string_view> read_nullable(Reader& r) {
  int32_t n = r.varint();
  if (n < 0) return std::nullopt;
  auto span = r.take_span(static_cast<size_t>(n));
  return std::string_view(reinterpret_cast<const char*>(span.data()), span.size());
}

}  // namespace

namespace {

std::vector<uint8_t> build(const std::vector<OutgoingRecord>& records, int64_t base_timestamp,
                           int64_t base_offset, const ProducerFields& producer, int16_t attributes);

}  // namespace

std::vector<uint8_t> build_batch(const std::vector<OutgoingRecord>& records, int64_t base_timestamp,
                                 int64_t base_offset, const ProducerFields& producer) {
  return build(records, base_timestamp, base_offset, producer,
               producer.transactional ? kTransactionalBit : 0);
}

std::vector<uint8_t> build_control_batch(const ProducerFields& producer, ControlType type,
                                         int32_t coordinator_epoch, int64_t timestamp) {
  Writer key;
  key.i16(0);
  key.i16(static_cast<int16_t>(type));
  Writer value;
  value.i16(0);
  value.i32(coordinator_epoch);
  auto as_string = [](const Writer& w) {
    return std::string(w.buffer().begin(), w.buffer().end());
  };
  ProducerFields fields = producer;
  fields.base_sequence = -1;
  return build({{as_string(key), as_string(value), 0}}, timestamp, 0, fields,
               kTransactionalBit | kControlBit);
}

ControlType control_type(const uint8_t* batch, size_t available) {
  if (available < kBatchHeaderSize) return ControlType::kUnknown;
  BatchHeader h = read_batch_header(batch);
  if (!h.is_control() || h.codec() != 0) return ControlType::kUnknown;
  size_t end = std::min(available, h.total_size());
  Reader r(std::span(const_cast<uint8_t*>(batch) + kBatchHeaderSize, end - kBatchHeaderSize));
  try {
    r.varint();   // record length
    r.i8();       // attributes
    r.varlong();  // timestamp delta
    r.varint();   // offset delta
    if (r.varint() < 4) return ControlType::kUnknown;
    r.i16();  // key version
    int16_t type = r.i16();
    if (type == 0) return ControlType::kAbort;
    if (type == 1) return ControlType::kCommit;
  } catch (const DecodeError&) {
  }
  return ControlType::kUnknown;
}

namespace {

std::vector<uint8_t> build(const std::vector<OutgoingRecord>& records, int64_t base_timestamp,
                           int64_t base_offset, const ProducerFields& producer,
                           int16_t attributes) {
  Writer body;
  int64_t max_ts = base_timestamp;
  for (size_t i = 0; i < records.size(); ++i) {
    const auto& r = records[i];
    Writer rec;
    rec.i8(0);  // attributes
    rec.varlong(r.timestamp_delta);
    rec.varint(static_cast<int32_t>(i));
    write_nullable(rec, r.key);
    write_nullable(rec, r.value);
    rec.varint(0);  // headers
    body.varint(static_cast<int32_t>(rec.buffer().size()));
    body.raw(rec.buffer().data(), rec.buffer().size());
    max_ts = std::max(max_ts, base_timestamp + r.timestamp_delta);
  }
  Writer batch;
  batch.i64(base_offset);
  batch.i32(static_cast<int32_t>(kBatchHeaderSize - kBatchLogOverhead + body.buffer().size()));
  batch.i32(0);  // leader epoch
  batch.i8(2);   // magic
  batch.u32(0);  // crc, patched below
  batch.i16(attributes);
  batch.i32(static_cast<int32_t>(records.size()) - 1);
  batch.i64(base_timestamp);
  batch.i64(max_ts);
  batch.i64(producer.producer_id);
  batch.i16(producer.producer_epoch);
  batch.i32(producer.base_sequence);
  batch.i32(static_cast<int32_t>(records.size()));
  batch.raw(body.buffer().data(), body.buffer().size());
  auto& bytes = batch.buffer();
  uint32_t crc = crc32c(bytes.data() + kAttributesOffset, bytes.size() - kAttributesOffset);
  for (int i = 0; i < 4; ++i) bytes[kCrcOffset + i] = static_cast<uint8_t>(crc >> (24 - 8 * i));
  return bytes;
}

}  // namespace

bool parse_records(const uint8_t* batch, size_t size, std::vector<RecordView>& out) {
  if (size < kBatchHeaderSize) return false;
  BatchHeader h = read_batch_header(batch);
  if (h.codec() != 0 || h.total_size() > size) return false;
  Reader r(
      std::span(const_cast<uint8_t*>(batch) + kBatchHeaderSize, h.total_size() - kBatchHeaderSize));
  try {
    for (int32_t i = 0; i < h.record_count; ++i) {
      int32_t length = r.varint();
      size_t start = r.position();
      r.i8();
      RecordView view;
      view.timestamp = h.base_timestamp + r.varlong();
      view.offset = h.base_offset + r.varint();
      view.key = read_nullable(r);
      view.value = read_nullable(r);
      size_t used = r.position() - start;
      if (length < 0 || static_cast<size_t>(length) < used) return false;
      r.take_span(static_cast<size_t>(length) - used);  // headers
      out.push_back(view);
    }
  } catch (const DecodeError&) {
    return false;
  }
  return true;
}

bool parse_raw_records(std::span<const uint8_t> batch, std::string& scratch,
                       std::vector<RawRecord>& out) {
  if (batch.size() < kBatchHeaderSize) return false;
  BatchHeader h = read_batch_header(batch.data());
  if (h.total_size() > batch.size()) return false;
  auto payload = batch.subspan(kBatchHeaderSize, h.total_size() - kBatchHeaderSize);
  std::span<const uint8_t> records = payload;
  if (h.codec() != 0) {
    scratch.clear();
    if (!decompress(h.codec(), payload, scratch)) return false;
    records = std::span(reinterpret_cast<const uint8_t*>(scratch.data()), scratch.size());
  }
  Reader r(std::span(const_cast<uint8_t*>(records.data()), records.size()));
  try {
    for (int32_t i = 0; i < h.record_count; ++i) {
      size_t record_start = r.position();
      int32_t length = r.varint();
      size_t start = r.position();
      r.i8();
      RawRecord raw;
      raw.view.timestamp = h.base_timestamp + r.varlong();
      raw.view.offset = h.base_offset + r.varint();
      raw.view.key = read_nullable(r);
      raw.view.value = read_nullable(r);
      size_t used = r.position() - start;
      if (length < 0 || static_cast<size_t>(length) < used) return false;
      r.take_span(static_cast<size_t>(length) - used);  // headers
      raw.bytes = records.subspan(record_start, r.position() - record_start);
      out.push_back(raw);
    }
  } catch (const DecodeError&) {
    return false;
  }
  return true;
}

std::vector<uint8_t> rebuild_batch(std::span<const uint8_t> original,
                                   const std::vector<RawRecord>& records, int level) {
  std::vector<uint8_t> bytes(original.begin(), original.begin() + kBatchHeaderSize);
  int16_t attributes = read_batch_header(original.data()).attributes;
  std::string plain;
  for (const auto& r : records)
    plain.append(reinterpret_cast<const char*>(r.bytes.data()), r.bytes.size());
  std::string packed;
  int codec = attributes & kCodecMask;
  if (codec != 0 && compress(codec, {reinterpret_cast<const uint8_t*>(plain.data()), plain.size()},
                             packed, level)) {
    bytes.insert(bytes.end(), packed.begin(), packed.end());
  } else {
    bytes.insert(bytes.end(), plain.begin(), plain.end());
    attributes = static_cast<int16_t>(attributes & ~kCodecMask);
  }
  write_i32(bytes.data() + kBatchLengthOffset,
            static_cast<int32_t>(bytes.size() - kBatchLogOverhead));
  write_i16(bytes.data() + kAttributesOffset, attributes);
  write_i32(bytes.data() + kBatchHeaderSize - 4, static_cast<int32_t>(records.size()));
  uint32_t crc = crc32c(bytes.data() + kAttributesOffset, bytes.size() - kAttributesOffset);
  for (int i = 0; i < 4; ++i) bytes[kCrcOffset + i] = static_cast<uint8_t>(crc >> (24 - 8 * i));
  return bytes;
}

std::vector<uint8_t> rebuild_batch_with_delete_horizon(std::span<const uint8_t> original,
                                                       const std::vector<RawRecord>& records,
                                                       int64_t delete_horizon_ms, int level) {
  std::vector<uint8_t> header(original.begin(), original.begin() + kBatchHeaderSize);
  auto attributes = read_batch_header(original.data()).attributes;
  write_i16(header.data() + kAttributesOffset,
            static_cast<int16_t>(attributes | kDeleteHorizonBit));
  write_i64(header.data() + kBaseTimestampOffset, delete_horizon_ms);
  // Each record is (length, attributes, timestamp delta, the rest): only the delta changes.
  Writer out;
  std::vector<size_t> ends;
  for (const auto& r : records) {
    Reader in(std::span(const_cast<uint8_t*>(r.bytes.data()), r.bytes.size()));
    in.varint();
    int8_t record_attributes = in.i8();
    in.varlong();
    auto rest = r.bytes.subspan(in.position());
    Writer body;
    body.i8(record_attributes);
    body.varlong(r.view.timestamp - delete_horizon_ms);
    body.raw(rest.data(), rest.size());
    out.varint(static_cast<int32_t>(body.buffer().size()));
    out.raw(body.buffer().data(), body.buffer().size());
    ends.push_back(out.buffer().size());
  }
  std::vector<RawRecord> rebased = records;
  for (size_t i = 0, start = 0; i < rebased.size(); start = ends[i++]) {
    rebased[i].bytes = std::span(out.buffer().data() + start, ends[i] - start);
  }
  return rebuild_batch(header, rebased, level);
}

bool needs_recompression(std::span<const uint8_t> batches, int codec) {
  for (size_t pos = 0; batches.size() - pos >= kBatchHeaderSize;) {
    auto header = read_batch_header(batches.data() + pos);
    if (header.batch_length < 0) return false;  // validation refuses it
    if (header.codec() != codec) return true;
    pos += header.total_size();
    if (pos > batches.size()) return false;
  }
  return false;
}

bool recompress_batches(std::span<const uint8_t> batches, int codec, std::vector<uint8_t>& out,
                        int level) {
  out.clear();
  std::string scratch;
  std::vector<RawRecord> records;
  for (size_t pos = 0; pos < batches.size();) {
    if (batches.size() - pos < kBatchHeaderSize) return false;
    auto header = read_batch_header(batches.data() + pos);
    if (header.batch_length < 0 || header.total_size() > batches.size() - pos) return false;
    auto batch = batches.subspan(pos, header.total_size());
    pos += header.total_size();
    if (header.codec() == codec) {
      out.insert(out.end(), batch.begin(), batch.end());
      continue;
    }
    records.clear();
    if (!parse_raw_records(batch, scratch, records)) return false;
    std::vector<uint8_t> target_header(batch.begin(), batch.begin() + kBatchHeaderSize);
    write_i16(target_header.data() + kAttributesOffset,
              static_cast<int16_t>((header.attributes & ~kCodecMask) | codec));
    auto rebuilt = rebuild_batch(target_header, records, level);
    out.insert(out.end(), rebuilt.begin(), rebuilt.end());
  }
  return true;
}

}  // namespace oxbow::protocol
