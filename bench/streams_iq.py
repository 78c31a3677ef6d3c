#!/usr/bin/python3
"""Interactive queries and standby failover benchmark (run with Debian's /usr/bin/python3).

1. Lookups (build/bench/streams_iq): random point lookups of a count store through the store API
   (1 and 4 threads) against the same gets on a plain RocksDB database, and through the REST
   helper (8 clients, a connection per request) against the same server answering a constant.
2. Failover: two instances of build/tests/streams_test_app --topology iq counting KEYS distinct
   keys over 4 partitions, then the instance holding partition 0 killed with -9. The survivor
   takes its tasks over; reported: the restoration it ran (records, ms) and the time from the kill
   until its store answers for every key, with num.standby.replicas=1 (a warm standby) against 0
   (a cold restore of the same state). The session timeout (6 s) is part of the latter time.
Usage: bench/streams_iq.py OXBOW_BINARY [KEYS]   (KEYS: 1,000,000)
"""

import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

from confluent_kafka import Producer
from confluent_kafka.admin import AdminClient, NewTopic

sys.path.insert(0, os.path.dirname(__file__))
from groups import free_port, start_broker  # noqa: E402

RESTORED = re.compile(r"\[([0-9:. -]+)\] \[info\] stream thread \S+: restored (\d+) records into (\d+) stores in (\d+) ms")


def partition_of(key: bytes, partitions: int) -> int:
    """Java's default partitioner: murmur2 of the key, made positive, modulo."""
    m, h = 0x5BD1E995, (0x9747B28C ^ len(key)) & 0xFFFFFFFF
    i = 0
    while i + 4 <= len(key):
        k = (int.from_bytes(key[i:i + 4], "little") * m) & 0xFFFFFFFF
        k = ((k ^ (k >> 24)) * m) & 0xFFFFFFFF
        h = ((h * m) & 0xFFFFFFFF) ^ k
        i += 4
    rest = len(key) - i
    if rest == 3:
        h ^= key[i + 2] << 16
    if rest >= 2:
        h ^= key[i + 1] << 8
    if rest >= 1:
        h = ((h ^ key[i]) * m) & 0xFFFFFFFF
    h = ((h ^ (h >> 13)) * m) & 0xFFFFFFFF
    h ^= h >> 15
    return (h & 0x7FFFFFFF) % partitions


def produce_keys(bootstrap, topic, keys):
    p = Producer({"bootstrap.servers": bootstrap, "partitioner": "murmur2_random", "linger.ms": 20})
    for i in range(keys):
        while True:
            try:
                p.produce(topic, key=f"k{i}".encode(), value=b"x")
                break
            except BufferError:
                p.poll(0.05)
        if i % 10000 == 0:
            p.poll(0)
    assert p.flush(120) == 0


class Instance:
    def __init__(self, app_bin, bootstrap, work, name, port, standbys, app_id):
        self.log_path = os.path.join(work, f"{name}-{app_id}.log")
        self.proc = subprocess.Popen(
            [app_bin, "--topology", "iq", "--bootstrap-server", bootstrap, "--application-id",
             app_id, "--state-dir", os.path.join(work, f"state-{name}-{app_id}"),
             "--query-stdin", "--config", "commit.interval.ms=1000",
             "--config", "consumer.session.timeout.ms=6000",
             "--config", "consumer.heartbeat.interval.ms=500",
             "--config", f"num.standby.replicas={standbys}",
             "--config", f"application.server=127.0.0.1:{port}"],
            stdin=subprocess.PIPE, stdout=open(self.log_path, "w"), stderr=subprocess.STDOUT)
        self.asked = 0

    def text(self):
        with open(self.log_path, errors="replace") as f:
            return f.read()

    def ask(self, command, timeout=120):
        self.asked += 1
        marker = f"IQ {command}: "
        before = self.text().count(marker)
        self.proc.stdin.write((command + "\n").encode())
        self.proc.stdin.flush()
        deadline = time.time() + timeout
        while time.time() < deadline:
            t = self.text()
            if t.count(marker) > before:
                return t[t.rindex(marker) + len(marker):].split("\n", 1)[0]
            time.sleep(0.02)
        raise TimeoutError(command)


def failover(app_bin, bootstrap, work, keys, standbys, graceful=False):
    """a counts every key alone; b joins (taking two tasks once warmed up); a is killed: b takes
    a's two tasks, from its standbys or (none configured) from their changelogs, state it never
    had."""
    app_id = f"failover-{standbys}-{'term' if graceful else 'kill'}"
    a = Instance(app_bin, bootstrap, work, "a", 18001, standbys, app_id)
    last_keys = {p: [k for k in (f"k{i}" for i in range(keys - 1, -1, -1))
                     if partition_of(k.encode(), 4) == p][:10] for p in range(4)}

    def answers(inst, partitions):
        return all(inst.ask(f"get {k}") == "1" for p in partitions for k in last_keys[p])

    def wait(condition, timeout):
        deadline = time.time() + timeout
        while time.time() < deadline:
            try:
                if condition():
                    return
            except TimeoutError:
                pass
            time.sleep(0.2)
        raise TimeoutError("the failover benchmark's setup")
    wait(lambda: answers(a, range(4)), 600)
    b = Instance(app_bin, bootstrap, work, "b", 18002, standbys, app_id)

    def split():
        meta = a.ask("meta")
        hosts = dict(re.findall(r"(127\.0\.0\.1:\d+)\{[^}]*\}\{([^}]*)\}", meta))
        return len(hosts) == 2 and all(len(v.split(",")) == 2 for v in hosts.values())
    wait(split, 600)
    meta = a.ask("meta")
    held = dict(re.findall(r"(127\.0\.0\.1:\d+)\{[^}]*\}\{([^}]*)\}", meta))["127.0.0.1:18001"]
    moved = [int(p.rsplit("-", 1)[1]) for p in held.split(",")]
    wait(lambda: answers(b, [p for p in range(4) if p not in moved]), 600)
    if standbys:
        time.sleep(3)  # the standbys read the changelogs' ends
    restores_before = len(RESTORED.findall(b.text()))
    if graceful:
        a.proc.terminate()  # close(): it leaves the group, no session timeout to wait out
    else:
        a.proc.kill()
    killed = time.time()
    wait(lambda: answers(b, moved), 600)
    serving_s = time.time() - killed
    restores = [(int(n), int(ms)) for _, n, _, ms in RESTORED.findall(b.text())[restores_before:]]
    b.proc.terminate()
    b.proc.wait(30)
    return {"standby_replicas": standbys, "stop": "SIGTERM" if graceful else "kill -9",
            "stop_to_serving_s": round(serving_s, 2),
            "restored_records": sum(n for n, _ in restores),
            "restore_ms": sum(ms for _, ms in restores)}


def main():
    binary = sys.argv[1]
    keys = int(sys.argv[2]) if len(sys.argv) > 2 else 1_000_000
    build = os.path.dirname(os.path.abspath(binary))
    work = tempfile.mkdtemp()
    broker, bootstrap = start_broker(binary, work)
    try:
        print(f"machine: {os.cpu_count()} cores, load {open('/proc/loadavg').read().split()[:3]}; "
              f"{keys} keys")
        admin = AdminClient({"bootstrap.servers": bootstrap})
        for f in admin.create_topics([NewTopic("iq-bench-input", 4, 1),
                                      NewTopic("iq-input", 4, 1)]).values():
            f.result(20)
        lookups = subprocess.run(
            [os.path.join(build, "bench", "streams_iq"), "--bootstrap-server", bootstrap,
             "--input", "iq-bench-input", "--state-dir", os.path.join(work, "lookups"),
             "--keys", "100000", "--seconds", "4"], capture_output=True, text=True, timeout=600)
        line = [l for l in lookups.stdout.splitlines() if l.startswith("{")]
        if not line:
            print(lookups.stdout[-3000:], lookups.stderr[-3000:])
            raise SystemExit("streams_iq printed no figures")
        print("lookups:", json.dumps(json.loads(line[-1]), indent=1))
        produce_keys(bootstrap, "iq-input", keys)
        app_bin = os.path.join(build, "tests", "streams_test_app")
        for standbys, graceful in ((1, False), (0, False), (1, True), (0, True)):
            print("failover:",
                  json.dumps(failover(app_bin, bootstrap, work, keys, standbys, graceful)))
        print(f"load after: {open('/proc/loadavg').read().split()[:3]}")
    finally:
        broker.terminate()
        broker.wait()
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
