#!/usr/bin/python3
"""What KIP-227 fetch sessions save a consumer of many partitions that is caught up: the same
Fetch v12, naming every partition each time (no session) or naming none within a session, against
one broker. Reports requests/s, the bytes of each request and response, and the broker's CPU time
per fetch. Usage: bench/fetch_sessions.py OXBOW_BINARY [PARTITIONS] [FETCHES]
"""

import os
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "integration"))
import kafka_wire as kw  # noqa: E402
from groups import start_broker  # noqa: E402  (bench/groups.py)


def cpu_seconds(pid):
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def run(conn, pid, fetches, one_fetch):
    sizes = []
    cpu, start = cpu_seconds(pid), time.perf_counter()
    for i in range(fetches):
        one_fetch(i, sizes)
    elapsed, cpu = time.perf_counter() - start, cpu_seconds(pid) - cpu
    request = sum(s[0] for s in sizes) / len(sizes)
    response = sum(s[1] for s in sizes) / len(sizes)
    return fetches / elapsed, request, response, cpu / fetches * 1e6


def main():
    binary = sys.argv[1]
    partitions = int(sys.argv[2]) if len(sys.argv) > 2 else 1000
    fetches = int(sys.argv[3]) if len(sys.argv) > 3 else 2000
    with tempfile.TemporaryDirectory() as workdir:
        proc, bootstrap = start_broker(binary, workdir)
        try:
            subprocess.run([binary, "topic", "create", "bench", "--partitions", str(partitions), "-b", bootstrap],
                           check=True, capture_output=True)
            port = int(bootstrap.rsplit(":", 1)[1])
            caught_up = [(p, 0) for p in range(partitions)]
            print(f"machine: {os.cpu_count()} cores, load {os.getloadavg()[0]:.2f}; {partitions} partitions, "
                  f"{fetches} fetches each way, caught up (max_wait_ms=0)")
            with kw.Conn(port) as c:
                def sessionless(_i, sizes):
                    kw.fetch_v12(c, 0, -1, "bench", caught_up, sizes=sizes)
                rate, request, response, cpu = run(c, proc.pid, fetches, sessionless)
                print(f"no session:  {rate:8.0f} fetches/s, request {request:7.0f} B, response {response:7.0f} B, "
                      f"broker CPU {cpu:6.1f} us/fetch")
                _error, session, _ = kw.fetch_v12(c, 0, 0, "bench", caught_up)

                def incremental(i, sizes):
                    kw.fetch_v12(c, session, i + 1, "bench", sizes=sizes)
                rate, request, response, cpu = run(c, proc.pid, fetches, incremental)
                print(f"in session:  {rate:8.0f} fetches/s, request {request:7.0f} B, response {response:7.0f} B, "
                      f"broker CPU {cpu:6.1f} us/fetch")
            print(f"load after: {os.getloadavg()[0]:.2f}")
        finally:
            proc.terminate()
            proc.wait()


if __name__ == "__main__":
    main()
