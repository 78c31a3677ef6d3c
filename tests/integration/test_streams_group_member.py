"""The Streams group member (src/streams/assignment/group_member.cpp) against the real broker's
coordinator, one row for each answer and failure a member must get through: the member is the
streams_member_probe process; the group's other members, and the member that dies at the wrong
moment, are spoken byte by byte here.

Each row ends with the probe holding an assignment of the group's generation: a member that
cannot get through an answer stays without one (a Streams instance stuck in REBALANCING).
"""

import json
import os
import pathlib
import queue
import signal
import struct
import subprocess
import threading
import time

import pytest

import ck_helpers as ck
import kafka_wire as kw
from harness import OXBOW_BIN, track, unique_topic, wait_until

PROBE = pathlib.Path(os.environ.get("OXBOW_MEMBER_PROBE",
                                    pathlib.Path(OXBOW_BIN).resolve().parent / "tests" / "streams_member_probe"))

JOIN_GROUP, SYNC_GROUP, HEARTBEAT, LEAVE_GROUP, DESCRIBE_GROUPS = 11, 14, 12, 13, 15
NONE, ILLEGAL_GENERATION, UNKNOWN_MEMBER_ID, REBALANCE_IN_PROGRESS = 0, 22, 25, 27
MEMBER_ID_REQUIRED = 79

# The probe's settings: requests time out well before a session does, so that a coordinator
# holding an answer for a session or a rebalance outlasts a request's timeout.
SESSION_MS, REBALANCE_MS, HEARTBEAT_MS, REQUEST_TIMEOUT_MS = 6000, 6000, 300, 2000


class Probe:
    """The streams_member_probe process and the events it printed."""

    def __init__(self, broker, group, **settings):
        args = {"bootstrap": broker.bootstrap, "group": group, "topic": "input", "partitions": 3,
                "session-ms": SESSION_MS, "rebalance-ms": REBALANCE_MS,
                "heartbeat-ms": HEARTBEAT_MS, "request-timeout-ms": REQUEST_TIMEOUT_MS, **settings}
        cmd = [str(PROBE)]
        for name, value in args.items():
            cmd += [f"--{name}", str(value)]
        self.stderr_path = broker.base_dir / f"probe-{group}.log"
        self.proc = track(subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                           stderr=open(self.stderr_path, "wb"), text=True))
        self.events, self.log_lines = [], []
        self._lock = threading.Lock()
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self):
        for line in self.proc.stdout:
            if not line.startswith("{"):  # the member's own log lines
                self.log_lines.append(line)
                continue
            with self._lock:
                self.events.append(json.loads(line))

    def seen(self, kind):
        with self._lock:
            return [e for e in self.events if e["event"] == kind]

    def wait_assigned(self, timeout, after=0, message="an assignment"):
        """The first assignment after the first `after` ones."""
        return wait_until(lambda: self.seen("assigned")[after:][:1], timeout,
                          message=f"{message}; probe log:\n{self.log()}")[0]

    def send(self, command):
        self.proc.stdin.write(command + "\n")
        self.proc.stdin.flush()

    def log(self):
        return ("".join(self.log_lines) + self.stderr_path.read_text(errors="replace"))[-3000:]

    def pause(self):
        self.proc.send_signal(signal.SIGSTOP)

    def resume(self):
        self.proc.send_signal(signal.SIGCONT)


def call(broker, api_key, version, body, timeout=60):
    with kw.Conn(broker.port, timeout=timeout) as conn:
        return conn.request(api_key, version, 1, body)


class RawMember:
    """A member of the group spoken by hand: it does exactly what a row tells it, nothing more."""

    def __init__(self, broker, group, session_ms=30000, rebalance_ms=5000, member_id=""):
        self.broker, self.group = broker, group
        self.session_ms, self.rebalance_ms = session_ms, rebalance_ms
        self.member_id, self.generation = member_id, -1
        self._heartbeats = None

    def join(self, metadata=b""):
        """JoinGroup v5 (learning its member id first, KIP-394): (error, leader, members)."""
        while True:
            body = (kw.string(self.group) + struct.pack(">ii", self.session_ms, self.rebalance_ms)
                    + kw.string(self.member_id) + kw.string(None) + kw.string("consumer")
                    + struct.pack(">i", 1) + kw.string("stream")
                    + struct.pack(">i", len(metadata)) + metadata)
            r = kw.Reader(call(self.broker, JOIN_GROUP, 5, body))
            r.int32()  # throttle
            error, generation = r.int16(), r.int32()
            r.string()  # protocol
            leader, member_id = r.string(), r.string()
            members = []
            for _ in range(r.int32()):
                members.append(r.string())
                r.string(), r.bytes_()  # instance id, metadata
            self.member_id = member_id or self.member_id
            if error == MEMBER_ID_REQUIRED:
                continue
            self.generation = generation
            return error, leader, members

    def join_in_background(self):
        answers = queue.Queue()
        threading.Thread(target=lambda: answers.put(self.join()), daemon=True).start()
        return answers

    def sync(self, assignments=None):
        """SyncGroup v3, with the leader's assignments if given: (error, assignment bytes)."""
        assignments = assignments or {}
        body = (kw.string(self.group) + struct.pack(">i", self.generation) + kw.string(self.member_id)
                + kw.string(None) + struct.pack(">i", len(assignments)))
        for member, data in assignments.items():
            body += kw.string(member) + struct.pack(">i", len(data)) + data
        r = kw.Reader(call(self.broker, SYNC_GROUP, 3, body))
        r.int32()
        return r.int16(), r.bytes_()

    def heartbeat(self):
        body = (kw.string(self.group) + struct.pack(">i", self.generation) + kw.string(self.member_id)
                + kw.string(None))
        return struct.unpack(">h", call(self.broker, HEARTBEAT, 3, body)[4:6])[0]

    def keep_heartbeating(self):
        """Heartbeats every 0.5 s (answers collected) until stop_heartbeating(): alive, but it
        never rejoins."""
        stop, answers = threading.Event(), []

        def loop():
            while not stop.wait(0.5):
                try:
                    answers.append(self.heartbeat())
                except OSError:
                    pass

        threading.Thread(target=loop, daemon=True).start()
        self._heartbeats = stop
        return answers

    def stop_heartbeating(self):
        if self._heartbeats:
            self._heartbeats.set()


def remove_member(broker, group, member_id):
    """LeaveGroup v3 on a member's behalf, as an operator's tool removes one."""
    body = kw.string(group) + struct.pack(">i", 1) + kw.string(member_id) + kw.string(None)
    return struct.unpack(">h", call(broker, LEAVE_GROUP, 3, body)[4:6])[0]


def decode_assignment(data):
    """A ConsumerAssignment's partitions, by topic."""
    r = kw.Reader(data)
    r.int16()  # version
    out = {}
    for _ in range(r.int32()):
        topic = r.string()
        out[topic] = [r.int32() for _ in range(r.int32())]
    return out


def probe_joining_a_member(broker, group, **member_settings):
    """A member spoken by hand alone in the group and heartbeating, then the probe, whose join
    rebalances the group: (the member, its heartbeats' answers, the probe)."""
    other = RawMember(broker, group, **member_settings)
    assert other.join()[0] == NONE and other.sync({other.member_id: b""})[0] == NONE
    answers = other.keep_heartbeating()
    probe = Probe(broker, group)
    wait_until(lambda: REBALANCE_IN_PROGRESS in answers, 20, message="the probe's join rebalancing")
    return other, answers, probe


# ---------------------------------------------------------------------------------------------
# The rows: each drives the probe into one answer of the coordinator and checks it came through.


def member_id_required(broker, group):
    # A new member's first JoinGroup is refused with the id it must join with (KIP-394).
    probe = Probe(broker, group)
    assigned = probe.wait_assigned(30)
    assert assigned["partitions"] == [0, 1, 2] and assigned["member"]


def join_held_for_the_rebalance_timeout(broker, group):
    # A member that heartbeats but never rejoins holds the probe's JoinGroup for the whole
    # rebalance timeout, longer than a request's timeout, before the coordinator drops it.
    other, _, probe = probe_joining_a_member(broker, group, rebalance_ms=5000)
    assigned = probe.wait_assigned(40)
    other.stop_heartbeating()
    assert assigned["partitions"] == [0, 1, 2]
    assert other.heartbeat() == UNKNOWN_MEMBER_ID


def sync_waiting_on_a_dead_leader(broker, group):
    # The leader dies between JoinGroup and SyncGroup: the probe's SyncGroup is answered only
    # when the leader's session (longer than the probe's request timeouts) expires.
    leader, _, probe = probe_joining_a_member(broker, group, session_ms=12000)
    leader.stop_heartbeating()
    error, elected, members = leader.join()
    assert error == NONE and elected == leader.member_id and len(members) == 2
    # ... and the leader dies here, with no SyncGroup and no heartbeat.
    assigned = probe.wait_assigned(60, message="an assignment after the dead leader's session")
    assert assigned["partitions"] == [0, 1, 2] and assigned["generation"] > leader.generation


def rebalance_in_progress(broker, group):
    # A member joining an assigned group: the probe's heartbeat hears REBALANCE_IN_PROGRESS,
    # it rejoins and, as the leader, deals the partitions over both.
    probe = Probe(broker, group)
    first = probe.wait_assigned(30)
    other = RawMember(broker, group)
    error, leader, _ = other.join()
    assert error == NONE and leader == first["member"]
    error, data = other.sync()
    assert error == NONE
    second = probe.wait_assigned(30, after=1)
    theirs = decode_assignment(data)["input"]
    assert second["generation"] == other.generation > first["generation"]
    assert sorted(second["partitions"] + theirs) == [0, 1, 2] and theirs and second["partitions"]


def unknown_member_id(broker, group):
    # An operator removes the member: its heartbeat hears UNKNOWN_MEMBER_ID, it drops its
    # tasks and joins again as a new member.
    probe = Probe(broker, group)
    first = probe.wait_assigned(30)
    assert remove_member(broker, group, first["member"]) == NONE
    second = probe.wait_assigned(30, after=1)
    assert probe.seen("lost"), "the probe did not drop its tasks"
    assert second["member"] != first["member"] and second["partitions"] == [0, 1, 2]


def illegal_generation(broker, group):
    # The group completed a round with the member while it heard nothing of it (its JoinGroup
    # answer lost): played here by joining with its id while it is stopped. Its heartbeat hears
    # ILLEGAL_GENERATION; it drops its tasks and rejoins under the same id.
    probe = Probe(broker, group)
    first = probe.wait_assigned(30)
    probe.pause()
    try:
        twin = RawMember(broker, group, member_id=first["member"])
        assert twin.join(metadata=b"changed")[0] == NONE
        assert twin.sync({first["member"]: b""})[0] == NONE
    finally:
        probe.resume()
    second = probe.wait_assigned(30, after=1)
    assert probe.seen("lost"), "the probe did not drop its tasks"
    assert second["member"] == first["member"] and second["generation"] > twin.generation


def coordinator_silent_mid_join(broker, group):
    # The coordinator stops answering while the probe's JoinGroup is held: the request times
    # out on the probe's side, and the member must join again once the coordinator is back.
    other, _, probe = probe_joining_a_member(broker, group, rebalance_ms=4000)
    broker.proc.send_signal(signal.SIGSTOP)
    try:
        # Past the probe's JoinGroup timeout (its rebalance timeout plus a request timeout).
        time.sleep((REBALANCE_MS + REQUEST_TIMEOUT_MS) / 1000 + 2)
    finally:
        broker.proc.send_signal(signal.SIGCONT)
    other.stop_heartbeating()
    assigned = probe.wait_assigned(40, message="an assignment after the coordinator came back")
    assert assigned["partitions"] == [0, 1, 2]


def coordinator_silent_mid_heartbeat(broker, group):
    # The coordinator stops answering for longer than a request's timeout but less than a
    # session: the member reconnects and stays in its generation (a commit with it succeeds).
    ck.create_topic(broker.bootstrap, "input", 3)
    probe = Probe(broker, group)
    first = probe.wait_assigned(30)
    broker.proc.send_signal(signal.SIGSTOP)
    try:
        time.sleep(REQUEST_TIMEOUT_MS / 1000 + 1.5)  # the outage is the point of the row
    finally:
        broker.proc.send_signal(signal.SIGCONT)
    commits = 0
    deadline = time.monotonic() + 20
    while not probe.seen("committed") and time.monotonic() < deadline:
        probe.send(f"commit input 0 {commits + 1}")
        commits += 1
        wait_until(lambda: len(probe.seen("committed") + probe.seen("commit_refused")) >= commits,
                   30, message="a commit's answer")
        time.sleep(0.2)
    assert probe.seen("committed"), f"no commit succeeded: {probe.seen('commit_refused')[-3:]}"
    assert not probe.seen("lost") and len(probe.seen("assigned")) == 1
    assert probe.seen("assigned")[0]["generation"] == first["generation"]


ROWS = [member_id_required, join_held_for_the_rebalance_timeout, sync_waiting_on_a_dead_leader,
        rebalance_in_progress, unknown_member_id, illegal_generation, coordinator_silent_mid_join,
        coordinator_silent_mid_heartbeat]


@pytest.mark.parametrize("row", ROWS, ids=[r.__name__ for r in ROWS])
def test_the_member_gets_through(make_broker, row):
    assert PROBE.exists(), f"{PROBE} not built"
    broker = make_broker({"group.initial.rebalance.delay.ms": "0"})
    row(broker, unique_topic("member"))
