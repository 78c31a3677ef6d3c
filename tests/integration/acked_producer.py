"""Producer subprocess for the kill -9 durability test.

usage: acked_producer.py BOOTSTRAP TOPIC [PER_SECOND]

Produces increasing integers (1, 2, 3, ...) as values to partition 0 with acks=all, no
idempotence and one request in flight, and prints every value whose delivery was ACKNOWLEDGED
by the broker (from the delivery callback) on its own line, flushing each line.  Runs until
killed.  Delivery failures are reported on stderr.  With PER_SECOND, produces at most that
many records a second.
"""

import sys
import time

from confluent_kafka import Producer


def main():
    bootstrap, topic = sys.argv[1], sys.argv[2]
    per_second = float(sys.argv[3]) if len(sys.argv) > 3 else None
    started = time.monotonic()
    p = Producer({
        "bootstrap.servers": bootstrap,
        "acks": "all",
        "enable.idempotence": False,
        "max.in.flight.requests.per.connection": 1,
        "linger.ms": 1,
        "batch.num.messages": 50,
        "retries": 0,
        "message.timeout.ms": 60000,
    })

    def on_delivery(err, msg):
        if err is None:
            sys.stdout.write(f"{int(msg.value())}\n")
            sys.stdout.flush()
        else:
            sys.stderr.write(f"failed {int(msg.value())}: {err}\n")
            sys.stderr.flush()

    sys.stdout.write("ready\n")
    sys.stdout.flush()
    value = 0
    while True:
        value += 1
        while True:
            try:
                p.produce(topic, value=str(value).encode(), partition=0, on_delivery=on_delivery)
                break
            except BufferError:
                p.poll(0.01)
        # Keep a bounded number of records queued so the stream stays steady.
        while len(p) > 200:
            p.poll(0.005)
        p.poll(0)
        if per_second:
            while value > (time.monotonic() - started) * per_second:
                p.poll(0.01)


if __name__ == "__main__":
    main()
