"""Test harness for Oxbow's integration tests: the Broker process wrapper and polling helpers.

Every test runs against the real broker binary ($OXBOW_BIN, default build/oxbow) started in a
fresh temporary log directory on a free port.  Brokers started by a test are always torn down by
the fixture finalizer, also when the test fails; when a test fails, the tail of each broker's log
is attached to the failure report.
"""

import collections
import fcntl
import os
import pathlib
import random
import signal
import socket
import subprocess
import tempfile
import threading
import time

import pytest

REPO_ROOT = pathlib.Path(__file__).resolve().parents[2]
OXBOW_BIN = os.environ.get("OXBOW_BIN", str(REPO_ROOT / "build" / "oxbow"))

START_TIMEOUT_S = 20.0
STOP_TIMEOUT_S = 30.0


# Faults the client-fault suite injected, by kind; the run's summary reports them.
FAULTS = collections.Counter()

# Listener ports come from below the kernel's ephemeral range (where outgoing connections take
# their local ports, so a port handed out there could be taken by a client before the broker binds
# it), at random, and each is reserved across processes by a lock on its byte of one shared file:
# pytest-xdist workers, other pytest runs and the node tests (which listen on ephemeral ports) never
# get the same one.  POSIX record locks belong to the process and go with it: nothing stale remains.
_PORT_LOCK_PATH = os.path.join(tempfile.gettempdir(), "oxbow-test-ports.lock")
_port_mutex = threading.Lock()
_port_lock_fd = None
_handed_out_ports = set()
_port_random = random.Random(f"{os.getpid()}-{time.time_ns()}")


def _listener_port_range():
    try:
        ephemeral_low = int(pathlib.Path("/proc/sys/net/ipv4/ip_local_port_range").read_text().split()[0])
    except (OSError, ValueError, IndexError):
        ephemeral_low = 32768
    if ephemeral_low - 10000 >= 2000:
        return 10000, ephemeral_low
    return 1024, 65536  # an unusual kernel setting: any port, still reserved and checked


def _bindable(port):
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        try:
            s.bind(("127.0.0.1", port))
        except OSError:
            return False
    return True


def free_port():
    """A TCP port on 127.0.0.1 nothing listens on right now, that no other test process holds, and
    never one this process was given before: a broker given one port for two listeners refuses to
    start."""
    global _port_lock_fd
    with _port_mutex:
        if _port_lock_fd is None:
            _port_lock_fd = os.open(_PORT_LOCK_PATH, os.O_RDWR | os.O_CREAT, 0o666)
        low, high = _listener_port_range()
        for _ in range(10_000):
            port = _port_random.randrange(low, high)
            if port in _handed_out_ports:
                continue
            try:
                fcntl.lockf(_port_lock_fd, fcntl.LOCK_EX | fcntl.LOCK_NB, 1, port)
            except OSError:
                continue  # another process holds it
            _handed_out_ports.add(port)  # this process keeps the lock either way
            if _bindable(port):
                return port
        raise RuntimeError(f"no free port in [{low}, {high}) after 10000 tries")


# Processes a test starts besides its brokers (Streams applications): conftest kills those still
# running when the test ends, so that a failed test leaves nothing behind.
_test_processes = []


def track(proc):
    """Registers a subprocess.Popen to be killed at the end of the running test; returns it."""
    _test_processes.append(proc)
    return proc


def kill_tracked():
    while _test_processes:
        proc = _test_processes.pop()
        if proc.poll() is None:
            proc.kill()
            proc.wait()


def wait_until(condition, timeout, interval=0.05, message="condition"):
    """Polls condition() until it returns a truthy value, which is returned; fails on timeout."""
    deadline = time.monotonic() + timeout
    last_exc = None
    while True:
        try:
            value = condition()
            if value:
                return value
        except Exception as exc:  # noqa: BLE001 - kept for the failure message
            last_exc = exc
        if time.monotonic() >= deadline:
            detail = f" (last error: {last_exc!r})" if last_exc else ""
            raise AssertionError(f"timed out after {timeout}s waiting for {message}{detail}")
        time.sleep(interval)


def port_accepts(port, host="127.0.0.1"):
    try:
        with socket.create_connection((host, port), timeout=0.5):
            return True
    except OSError:
        return False


class Broker:
    """One oxbow broker process with its own log dir and port, restartable in place."""

    def __init__(self, base_dir, overrides=None, port=None, config_file=None, extra_listeners=None, env=None):
        self.base_dir = pathlib.Path(base_dir)
        self.base_dir.mkdir(parents=True, exist_ok=True)
        self.data_dir = self.base_dir / "data"
        self.data_dir.mkdir(exist_ok=True)
        self.log_path = self.base_dir / "broker.log"
        self.port = port or free_port()
        # Each broker gets its own admin HTTP port, so that brokers never fight over the default.
        self.admin_port = free_port()
        self.overrides = dict(overrides or {})
        self.overrides.setdefault("admin.listener", f"127.0.0.1:{self.admin_port}")
        self.config_file = config_file
        # Extra environment variables for the broker process (LD_PRELOAD fault shims).
        self.env = dict(env or {})
        # Listeners beside the PLAINTEXT one on self.port: name -> port (see add_listener).
        self.extra_listeners = {}
        for name in extra_listeners or ():
            self.add_listener(name)
        self.proc = None
        self.starts = 0
        self.last_exit_code = None

    @property
    def bootstrap(self):
        return f"127.0.0.1:{self.port}"

    def add_listener(self, name, port=None):
        """Adds listener NAME://127.0.0.1:<port> (a free port by default) after the PLAINTEXT one.

        Must be called before start(); the listener is also advertised as is.  Its security protocol
        is whatever listener.security.protocol.map (an override) gives NAME.  Returns the port.
        """
        assert self.config_file is None, "extra listeners are not supported with a config file"
        assert name != "PLAINTEXT" and name not in self.extra_listeners, f"listener {name} already defined"
        self.extra_listeners[name] = port or free_port()
        return self.extra_listeners[name]

    def listener_bootstrap(self, name):
        return f"127.0.0.1:{self.extra_listeners[name]}"

    @property
    def admin_url(self):
        return f"http://127.0.0.1:{self.admin_port}"

    @property
    def pid(self):
        return self.proc.pid if self.proc else None

    def command(self):
        if self.config_file is not None:
            # Everything (listeners, log.dirs, ...) comes from the file, plus explicit overrides.
            cmd = [OXBOW_BIN, "broker", "--config", str(self.config_file)]
            for key, value in self.overrides.items():
                cmd += ["--override", f"{key}={value}"]
            return cmd
        listener = ",".join([f"PLAINTEXT://127.0.0.1:{self.port}"]
                            + [f"{name}://127.0.0.1:{port}" for name, port in self.extra_listeners.items()])
        cmd = [
            OXBOW_BIN, "broker",
            "--override", f"listeners={listener}",
            "--override", f"advertised.listeners={listener}",
            "--override", f"log.dirs={self.data_dir}",
        ]
        for key, value in self.overrides.items():
            cmd += ["--override", f"{key}={value}"]
        return cmd

    def is_alive(self):
        return self.proc is not None and self.proc.poll() is None

    def log_tail(self, lines=60):
        try:
            text = self.log_path.read_text(errors="replace")
        except OSError:
            return "(no broker log)"
        return "\n".join(text.splitlines()[-lines:])

    def log_text(self):
        try:
            return self.log_path.read_text(errors="replace")
        except OSError:
            return ""

    def fail(self, message):
        pytest.fail(f"{message}\n--- broker log tail ({self.log_path}) ---\n{self.log_tail()}",
                    pytrace=False)

    def start(self, extra_overrides=None, timeout=START_TIMEOUT_S, wait=True):
        assert not self.is_alive(), "broker already running"
        if not os.path.exists(OXBOW_BIN):
            pytest.fail(f"broker binary {OXBOW_BIN} does not exist (set OXBOW_BIN)")
        # While a build relinks the binary it is briefly not executable: wait for it.
        deadline = time.monotonic() + 120
        while not os.access(OXBOW_BIN, os.X_OK) and time.monotonic() < deadline:
            time.sleep(0.5)
        if extra_overrides:
            self.overrides.update(extra_overrides)
        self.starts += 1
        with open(self.log_path, "ab") as log:
            log.write(f"===== test harness: start #{self.starts}: {' '.join(self.command())}\n".encode())
            log.flush()
            self.proc = subprocess.Popen(self.command(), stdin=subprocess.DEVNULL, stdout=log, stderr=log,
                                         cwd=self.base_dir, env={**os.environ, **self.env})
        if not wait:
            return self
        deadline = time.monotonic() + timeout
        while True:
            if self.proc.poll() is not None:
                self.fail(f"broker exited with code {self.proc.returncode} during start-up")
            if port_accepts(self.port) and all(port_accepts(p) for p in self.extra_listeners.values()):
                return self
            if time.monotonic() >= deadline:
                self.kill()
                ports = ", ".join(str(p) for p in [self.port, *self.extra_listeners.values()])
                self.fail(f"broker did not accept connections on port {ports} within {timeout}s")
            time.sleep(0.05)

    def stop(self, timeout=STOP_TIMEOUT_S, check=True):
        """Clean shutdown: SIGTERM, wait, and (check=True) assert exit code 0."""
        if self.proc is None:
            return None
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout=timeout)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
                if check:
                    self.fail(f"broker did not exit within {timeout}s of SIGTERM (killed it)")
        code = self.proc.returncode
        self.last_exit_code = code
        self.proc = None
        if check and code != 0:
            self.fail(f"broker exited with code {code} after SIGTERM, expected 0")
        return code

    def kill(self):
        """Crash: SIGKILL and reap."""
        if self.proc is None:
            return
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.wait()
        self.last_exit_code = self.proc.returncode
        self.proc = None

    def restart(self, extra_overrides=None, clean=True):
        """Stops (SIGTERM if clean, else SIGKILL) and starts again on the same dir and port."""
        if clean:
            self.stop()
        else:
            self.kill()
        return self.start(extra_overrides)

    def assert_alive(self):
        if not self.is_alive():
            code = self.proc.returncode if self.proc else None
            self.fail(f"broker process is not running any more (exit code {code})")

    def partition_dir(self, topic, partition):
        return self.data_dir / f"{topic}-{partition}"


# ---------------------------------------------------------------------------------------------
# Small client helpers shared by the confluent-kafka based tests.


def unique_topic(prefix="t"):
    unique_topic.counter += 1
    return f"{prefix}-{os.getpid()}-{int(time.time() * 1000) % 10_000_000}-{unique_topic.counter}"


unique_topic.counter = 0


def scrape_metrics(broker):
    """Every sample of the broker's /metrics as {(name, frozenset(labels)): value}; a malformed line fails."""
    import urllib.request
    from prometheus_client.parser import text_string_to_metric_families
    with urllib.request.urlopen(broker.admin_url + "/metrics", timeout=10) as response:
        assert response.status == 200
        text = response.read().decode()
    samples = {}
    for family in text_string_to_metric_families(text):
        for s in family.samples:
            samples[(s.name, frozenset(s.labels.items()))] = s.value
    return samples


def metric_value(samples, name, **labels):
    """A sample of scrape_metrics(), 0 when absent."""
    return samples.get((name, frozenset(labels.items())), 0.0)
