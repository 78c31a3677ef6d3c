"""Timing for bench/connect.sh, which sets up the broker, files and properties:

  standalone  starts `oxbow connect standalone WORKER CONNECTOR...`, polls the sink's output file
              until it holds the input's bytes, and prints the time from the start, the worker's
              CPU seconds and the broker's over that time; the worker is stopped with SIGTERM
  failover    starts `oxbow connect distributed` workers, creates a file source and a file sink,
              kills (-9) the worker that runs the source's (or sink's) task and prints the time
              until GET /connectors/NAME/status on a survivor shows each task that worker ran
              RUNNING on a survivor, and until a line appended after the kill is in the sink's file

Prints one JSON object on stdout; progress goes to stderr.
"""

import argparse
import json
import os
import signal
import subprocess
import sys
import time
import urllib.error
import urllib.request

TICKS = os.sysconf("SC_CLK_TCK")


def cpu_seconds(pid):
    """User and system CPU of a process and its threads so far (0 once it is gone)."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / TICKS
    except (FileNotFoundError, ProcessLookupError):
        return 0.0


def tail(path, n=20):
    try:
        with open(path, errors="replace") as f:
            return "".join(f.readlines()[-n:])
    except FileNotFoundError:
        return ""


def size(path):
    try:
        return os.stat(path).st_size
    except FileNotFoundError:
        return 0


def child_of(pid):
    """The first child of a process (the worker under perf), waiting for it to start."""
    return int(wait_for("the profiled worker", lambda: open(
        f"/proc/{pid}/task/{pid}/children").read().split()[:1], 10, 0.001)[0])


def standalone(args):
    command = [args.oxbow, "connect", "standalone", args.worker, *args.connector]
    if args.perf:  # sampled with DWARF call stacks: the binary has no frame pointers
        command = ["perf", "record", "-F", "199", "--call-graph", "dwarf,16384", "-o", args.perf,
                   "--", *command]
    with open(args.log, "ab") as log:
        t0 = time.monotonic()
        broker_cpu0 = cpu_seconds(args.broker_pid)
        process = subprocess.Popen(command, stdout=log, stderr=log, stdin=subprocess.DEVNULL)
    worker = child_of(process.pid) if args.perf else process.pid
    first = None
    deadline = t0 + args.timeout
    while True:
        got = size(args.output)
        now = time.monotonic()
        if got and first is None:
            first = now - t0
        if got >= args.bytes:
            break
        if process.poll() is not None or now > deadline:
            process.kill()
            sys.exit(f"the sink's file holds {got} of {args.bytes} bytes after {now - t0:.1f} s; "
                     f"worker exit {process.poll()}\n{tail(args.log)}")
        time.sleep(0.005)
    seconds = time.monotonic() - t0
    worker_cpu = cpu_seconds(worker)
    broker_cpu = cpu_seconds(args.broker_pid) - broker_cpu0
    os.kill(worker, signal.SIGTERM)  # perf ends with it
    code = process.wait(timeout=60)
    if code != 0:
        sys.exit(f"the worker exited with {code}\n{tail(args.log)}")
    if size(args.output) != args.bytes:
        sys.exit(f"the sink's file holds {size(args.output)} bytes, not {args.bytes}")
    print(json.dumps({"seconds": round(seconds, 3), "first_line_seconds": round(first or 0, 3),
                      "cpu_seconds": worker_cpu, "broker_cpu_seconds": broker_cpu}))


def rest(port, method, path, body=None):
    """(status, parsed JSON or None); (None, None) when the worker does not answer."""
    data = None if body is None else json.dumps(body).encode()
    request = urllib.request.Request(f"http://127.0.0.1:{port}{path}", data=data, method=method,
                                     headers={"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(request, timeout=5) as answer:
            text = answer.read()
            return answer.status, json.loads(text) if text else None
    except urllib.error.HTTPError as error:
        return error.code, None
    except (urllib.error.URLError, ConnectionError, TimeoutError):
        return None, None


def wait_for(what, check, timeout, interval=0.02):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        result = check()
        if result:
            return result
        time.sleep(interval)
    sys.exit(f"timed out waiting for {what}")


class Worker:
    def __init__(self, args, index, port):
        self.port, self.id = port, f"127.0.0.1:{port}"
        self.log = f"{args.dir}/worker-{index}.log"
        with open(self.log, "ab") as log:
            self.proc = subprocess.Popen([args.oxbow, "connect", "distributed",
                                          f"{args.dir}/worker-{index}.properties"],
                                         stdout=log, stderr=log, stdin=subprocess.DEVNULL)

    def status(self, name):
        code, body = rest(self.port, "GET", f"/connectors/{name}/status")
        return body if code == 200 else None


def running_on(worker, name, ids):
    """The task states of NAME as WORKER reports them, if every task is RUNNING on one of ids."""
    status = worker.status(name)
    if not status or not status["tasks"] or status["connector"]["state"] != "RUNNING":
        return None
    tasks = status["tasks"]
    if all(t["state"] == "RUNNING" and t["worker_id"] in ids for t in tasks):
        return status
    return None


def append(path, text):
    with open(path, "a") as f:
        f.write(text)


def failover(args):
    workers = [Worker(args, i, port) for i, port in enumerate(args.ports)]
    try:
        return failover_once(args, workers)
    finally:
        for worker in workers:
            if worker.proc.poll() is None:
                worker.proc.send_signal(signal.SIGTERM)
        for worker in workers:
            try:
                worker.proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                worker.proc.kill()


def failover_once(args, workers):
    connectors = {
        "source": {"connector.class": "FileStreamSource", "file": args.input, "topic": args.topic},
        "sink": {"connector.class": "FileStreamSink", "topics": args.topic, "file": args.output},
    }
    for name, config in connectors.items():
        def created(name=name, config=config):
            # 409 while the group forms; or the connector exists (an earlier try went through)
            code, _ = rest(workers[0].port, "POST", "/connectors", {"name": name, "config": config})
            return code == 201 or (code == 409
                                   and rest(workers[0].port, "GET", f"/connectors/{name}")[0] == 200)
        wait_for(f"the cluster to take {name}", created, 60, 0.2)
    ids = {w.id for w in workers}
    for name in connectors:
        wait_for(f"{name} RUNNING", lambda name=name: running_on(workers[0], name, ids), 60)
    append(args.input, "before the kill\n")
    wait_for("the first line in the sink's file",
             lambda: "before the kill" in open(args.output).read() if size(args.output) else False,
             60)
    status = workers[0].status(args.victim_of)
    victim = next(w for w in workers if w.id == status["tasks"][0]["worker_id"])
    survivors = [w for w in workers if w is not victim]
    held = [name for name in connectors
            if any(t["worker_id"] == victim.id for t in workers[0].status(name)["tasks"])]
    print(f"killing {victim.id}, which runs the tasks of {', '.join(held)}", file=sys.stderr)
    victim.proc.kill()
    killed = time.monotonic()
    victim.proc.wait()
    append(args.input, "after the kill\n")
    alive = {w.id for w in survivors}
    moved = {}
    deadline = killed + args.timeout
    while len(moved) < len(held) + 1 and time.monotonic() < deadline:
        for name in held:
            if name not in moved and running_on(survivors[0], name, alive):
                moved[name] = time.monotonic() - killed
        if "data" not in moved and "after the kill" in open(args.output).read():
            moved["data"] = time.monotonic() - killed
        time.sleep(0.02)
    if len(moved) < len(held) + 1:
        sys.exit(f"after {args.timeout} s only {sorted(moved)} moved\n{tail(survivors[0].log)}")
    print(json.dumps({"victim_of": args.victim_of, "victim_ran": held,
                      "task_running_elsewhere_seconds": {k: round(v, 3) for k, v in moved.items()
                                                         if k != "data"},
                      "first_line_after_kill_seconds": round(moved["data"], 3)}))


def main():
    parser = argparse.ArgumentParser()
    commands = parser.add_subparsers(dest="command", required=True)
    s = commands.add_parser("standalone")
    s.add_argument("--oxbow", required=True)
    s.add_argument("--worker", required=True)
    s.add_argument("--connector", action="append", required=True)
    s.add_argument("--output", required=True)
    s.add_argument("--bytes", type=int, required=True)
    s.add_argument("--log", required=True)
    s.add_argument("--broker-pid", type=int, required=True)
    s.add_argument("--timeout", type=float, default=600)
    s.add_argument("--perf", help="record a perf profile of the worker into this file")
    f = commands.add_parser("failover")
    f.add_argument("--oxbow", required=True)
    f.add_argument("--dir", required=True, help="holds worker-N.properties; logs go there")
    f.add_argument("--ports", type=int, nargs="+", required=True)
    f.add_argument("--input", required=True)
    f.add_argument("--output", required=True)
    f.add_argument("--topic", required=True)
    f.add_argument("--victim-of", choices=["source", "sink"], default="source",
                   help="the worker killed is the one running this connector's task")
    f.add_argument("--timeout", type=float, default=120)
    args = parser.parse_args()
    standalone(args) if args.command == "standalone" else failover(args)


if __name__ == "__main__":
    main()
