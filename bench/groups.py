#!/usr/bin/python3
"""Consumer-group benchmark (run with Debian's /usr/bin/python3 and confluent-kafka).

1. Rebalance: 10 members over 100 partitions; one member leaves; reports the time from its
   LeaveGroup until every partition is assigned again (client-observed), and the broker's own
   rebalance time (PreparingRebalance -> Stable) from its log.
2. Commits: 10 members each committing synchronously in a loop for a few seconds; commits/s.
Usage: bench/groups.py OXBOW_BINARY
"""

import os
import re
import socket
import subprocess
import sys
import tempfile
import threading
import time

from confluent_kafka import Consumer, TopicPartition
from confluent_kafka.admin import AdminClient, NewTopic


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start_broker(binary, workdir):
    port = free_port()
    log = open(os.path.join(workdir, "broker.log"), "w")
    proc = subprocess.Popen([binary, "broker", "--override", f"listeners=PLAINTEXT://127.0.0.1:{port}",
                             "--override", f"log.dirs={workdir}/data",
                             "--override", "group.initial.rebalance.delay.ms=0",
                             "--override", "admin.listener=127.0.0.1:0"], stdout=log, stderr=log)
    deadline = time.time() + 20
    while time.time() < deadline:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
            return proc, f"127.0.0.1:{port}"
        except OSError:
            time.sleep(0.05)
    raise RuntimeError("broker did not start")


def member(bootstrap, group, topic, heartbeat_ms):
    c = Consumer({"bootstrap.servers": bootstrap, "group.id": group, "session.timeout.ms": 10000,
                  "heartbeat.interval.ms": heartbeat_ms, "enable.auto.commit": False,
                  "partition.assignment.strategy": "roundrobin"})
    c.subscribe([topic])
    return c


def coverage(consumers, partitions):
    owned = sorted(tp.partition for c in consumers for tp in c.assignment())
    return owned == list(range(partitions))


def bench_rebalance(bootstrap, workdir, heartbeat_ms):
    # The other members learn of a rebalance from their next heartbeat, so the interval bounds
    # how fast any broker can finish one.
    topic, group, partitions = f"rebalance-bench-{heartbeat_ms}", f"rebalance-group-{heartbeat_ms}", 100
    admin = AdminClient({"bootstrap.servers": bootstrap})
    admin.create_topics([NewTopic(topic, partitions, 1)])[topic].result(10)
    consumers = [member(bootstrap, group, topic, heartbeat_ms) for _ in range(10)]
    # Each member is polled by its own thread, as in a real deployment: rebalance callbacks run
    # inside poll(), so a shared polling loop would add its own delays to the measurement.
    stops = [threading.Event() for _ in consumers]

    def keep_polling(c, stop):
        while not stop.is_set():
            c.poll(0.001)

    threads = [threading.Thread(target=keep_polling, args=(c, e)) for c, e in zip(consumers, stops)]
    for t in threads:
        t.start()
    deadline = time.time() + 60
    while not (coverage(consumers, partitions) and all(c.assignment() for c in consumers)):
        if time.time() > deadline:
            raise RuntimeError("the 10 members never shared the partitions")
        time.sleep(0.001)
    stops[-1].set()
    threads[-1].join()
    leaving = consumers.pop()
    t0 = time.monotonic()
    leaving.close()
    while not coverage(consumers, partitions):
        time.sleep(0.0005)
    client_ms = (time.monotonic() - t0) * 1000
    for e in stops:
        e.set()
    for t in threads:
        t.join()
    for c in consumers:
        c.close()
    text = open(os.path.join(workdir, "broker.log")).read()
    broker_ms = [int(m) for m in re.findall(rf"group {group} generation \d+ stable: 9 members, rebalance took (\d+) ms", text)]
    return client_ms, broker_ms[-1] if broker_ms else None


def bench_commits(bootstrap, seconds=5.0):
    topic, group = "commit-bench", "commit-group"
    admin = AdminClient({"bootstrap.servers": bootstrap})
    admin.create_topics([NewTopic(topic, 10, 1)])[topic].result(10)
    counts = [0] * 10
    stop = time.monotonic() + seconds

    def run(i):
        c = Consumer({"bootstrap.servers": bootstrap, "group.id": f"{group}-{i}", "enable.auto.commit": False})
        offset = 0
        while time.monotonic() < stop:
            offset += 1
            c.commit(offsets=[TopicPartition(topic, i, offset)], asynchronous=False)
            counts[i] += 1
        c.close()

    threads = [threading.Thread(target=run, args=(i,)) for i in range(10)]
    t0 = time.monotonic()
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return sum(counts) / (time.monotonic() - t0)


def main():
    binary = sys.argv[1] if len(sys.argv) > 1 else "build/oxbow"
    with tempfile.TemporaryDirectory() as workdir:
        proc, bootstrap = start_broker(binary, workdir)
        try:
            load = open("/proc/loadavg").read().split()[:3]
            rebalances = [(hb, *bench_rebalance(bootstrap, workdir, hb)) for hb in (100, 10)]
            commits = bench_commits(bootstrap)
            print(f"machine: {os.cpu_count()} cores, load {' '.join(load)}")
            for hb, client_ms, broker_ms in rebalances:
                print(f"rebalance 10 members / 100 partitions after a leave (heartbeat.interval.ms={hb}): "
                      f"{client_ms:.0f} ms client-observed, {broker_ms} ms PreparingRebalance->Stable in the broker")
            print(f"synchronous commits from 10 members: {commits:.0f} commits/s")
        finally:
            proc.terminate()
            proc.wait()


if __name__ == "__main__":
    main()
