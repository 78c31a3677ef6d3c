"""A consumer-group member run as its own process by test_groups.py, so that tests can kill -9 it.

Prints one JSON object per line on stdout:
  {"event": "assigned", "partitions": [..]}  after every (incremental) assignment change
  {"event": "record", "partition": p, "offset": o, "value": v}  for every record processed
Offsets are committed synchronously after each record is processed (at-least-once).
Usage: group_member.py BOOTSTRAP GROUP TOPIC [--assignor A] [--instance-id ID] [--session-ms N]
"""

import argparse
import json
import sys

from confluent_kafka import Consumer


def emit(obj):
    sys.stdout.write(json.dumps(obj) + "\n")
    sys.stdout.flush()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("bootstrap")
    ap.add_argument("group")
    ap.add_argument("topic")
    ap.add_argument("--assignor", default="range")
    ap.add_argument("--instance-id")
    ap.add_argument("--session-ms", type=int, default=6000)
    args = ap.parse_args()
    conf = {
        "bootstrap.servers": args.bootstrap,
        "group.id": args.group,
        "enable.auto.commit": False,
        "auto.offset.reset": "earliest",
        "session.timeout.ms": args.session_ms,
        "heartbeat.interval.ms": 500,
        "partition.assignment.strategy": args.assignor,
        "fetch.wait.max.ms": 100,
    }
    if args.instance_id:
        conf["group.instance.id"] = args.instance_id
    consumer = Consumer(conf)
    owned = set()

    def on_assign(c, partitions):
        if args.assignor == "cooperative-sticky":
            c.incremental_assign(partitions)
        owned.update(p.partition for p in partitions)
        emit({"event": "assigned", "partitions": sorted(owned)})

    def on_revoke(c, partitions):
        if args.assignor == "cooperative-sticky":
            c.incremental_unassign(partitions)
        owned.difference_update(p.partition for p in partitions)
        emit({"event": "assigned", "partitions": sorted(owned)})

    consumer.subscribe([args.topic], on_assign=on_assign, on_revoke=on_revoke)
    try:
        while True:
            msg = consumer.poll(0.2)
            if msg is None or msg.error():
                continue
            emit({"event": "record", "partition": msg.partition(), "offset": msg.offset(),
                  "value": msg.value().decode()})
            consumer.commit(message=msg, asynchronous=False)
    except KeyboardInterrupt:
        pass
    finally:
        consumer.close()


if __name__ == "__main__":
    main()
