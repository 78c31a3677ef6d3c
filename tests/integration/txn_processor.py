"""An exactly-once consume-transform-produce loop, run as its own process by test_transactions.py so
that the test can kill -9 it in the middle of a transaction.

usage: txn_processor.py BOOTSTRAP INPUT_TOPIC OUTPUT_TOPIC GROUP TRANSACTIONAL_ID [--batch N] [--pause-ms MS]

Reads INPUT_TOPIC as a member of GROUP (read_committed, no auto-commit).  Every non-empty batch
returned by consume() becomes one transaction: each record is written to OUTPUT_TOPIC with the same
key and the value prefixed by "out-", and the consumer's positions are committed in the same
transaction (send_offsets_to_transaction).  --batch caps the records per transaction (default
5000); --pause-ms makes each transaction wait that long after its records are written and before
it commits, so that a test killing the process at a random moment likely catches one open.

An abortable error aborts the transaction and rewinds the consumer to the committed offsets; any
other error (e.g. being fenced by a newer instance with the same transactional id) ends the process
with status 3.  SIGTERM or SIGINT stops it between two transactions.  Progress and errors go to
stderr.
"""

import argparse
import signal
import sys
import time

from confluent_kafka import OFFSET_BEGINNING, Consumer, KafkaException, Producer, TopicPartition


def log(text):
    sys.stderr.write(f"{time.strftime('%H:%M:%S')} txn_processor: {text}\n")
    sys.stderr.flush()


def retrying(call, what, timeout=60):
    """Runs call(), repeating it while it fails with a retriable error."""
    deadline = time.monotonic() + timeout
    while True:
        try:
            return call()
        except KafkaException as exc:
            err = exc.args[0]
            if not err.retriable() or time.monotonic() >= deadline:
                raise
            log(f"{what}: retriable error {err}, again")
            time.sleep(0.1)


def rewind(consumer):
    """Back to the committed offsets of every assigned partition (after an aborted transaction)."""
    assignment = consumer.assignment()
    if not assignment:
        return
    for tp in consumer.committed(assignment, timeout=30):
        offset = tp.offset if tp.offset >= 0 else OFFSET_BEGINNING
        consumer.seek(TopicPartition(tp.topic, tp.partition, offset))


def main():
    ap = argparse.ArgumentParser()
    for name in ("bootstrap", "input_topic", "output_topic", "group", "transactional_id"):
        ap.add_argument(name)
    ap.add_argument("--batch", type=int, default=5000)
    ap.add_argument("--pause-ms", type=int, default=0)
    args = ap.parse_args()
    stopping = []
    signal.signal(signal.SIGTERM, lambda *_: stopping.append(True))
    signal.signal(signal.SIGINT, lambda *_: stopping.append(True))

    producer = Producer({
        "bootstrap.servers": args.bootstrap,
        "transactional.id": args.transactional_id,
        "transaction.timeout.ms": 10000,
        "linger.ms": 20,
        "batch.num.messages": 10000,
        "queue.buffering.max.messages": 4 * args.batch,
    })
    consumer = Consumer({
        "bootstrap.servers": args.bootstrap,
        "group.id": args.group,
        "isolation.level": "read_committed",
        "enable.auto.commit": False,
        "auto.offset.reset": "earliest",
        "session.timeout.ms": 6000,
        "heartbeat.interval.ms": 500,
        # Also the rebalance timeout: a join never waits longer for a killed predecessor's leave.
        "max.poll.interval.ms": 15000,
        "fetch.wait.max.ms": 100,
    })
    # Initialising fences any earlier instance with this transactional id and aborts its open
    # transaction, before this one reads the group's committed offsets.
    retrying(lambda: producer.init_transactions(30), "init_transactions")
    log("transactions initialised")
    consumer.subscribe([args.input_topic])
    transactions = 0
    status = 0
    try:
        while not stopping:
            records = []
            for msg in consumer.consume(num_messages=args.batch, timeout=0.5):
                err = msg.error()
                if err is None:
                    records.append(msg)
                elif err.fatal():
                    raise KafkaException(err)
            if not records:
                continue
            try:
                producer.begin_transaction()
                for msg in records:
                    while True:
                        try:
                            producer.produce(args.output_topic, key=msg.key(), value=b"out-" + msg.value())
                            break
                        except BufferError:
                            producer.poll(0.01)
                    producer.poll(0)
                if args.pause_ms:
                    producer.flush(30)
                    time.sleep(args.pause_ms / 1000)
                positions = [tp for tp in consumer.position(consumer.assignment()) if tp.offset >= 0]
                retrying(lambda: producer.send_offsets_to_transaction(
                    positions, consumer.consumer_group_metadata(), 30), "send_offsets_to_transaction")
                retrying(lambda: producer.commit_transaction(30), "commit_transaction")
                transactions += 1
                log(f"transaction {transactions}: {len(records)} records committed")
            except KafkaException as exc:
                err = exc.args[0]
                if not err.txn_requires_abort():
                    raise
                log(f"aborting the transaction after {err}")
                retrying(lambda: producer.abort_transaction(30), "abort_transaction")
                rewind(consumer)
    except KafkaException as exc:
        log(f"fatal: {exc.args[0]}")
        status = 3
    finally:
        consumer.close()
    log(f"stopped after {transactions} transactions")
    return status


if __name__ == "__main__":
    sys.exit(main())
