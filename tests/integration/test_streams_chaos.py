"""Word count under exactly_once_v2 while instances are killed -9 at random moments: in their
first rebalance, while they join, and while lines flow and commits go on. After the last crash
every live instance must reach RUNNING within the dead members' sessions plus a rebalance or so,
and the committed counts must end exactly at the truth computed here from the lines.

The seed comes from CHAOS_SEED (default fixed), so that a failure can be replayed.
"""

import os
import random
import re
import threading
import time

from harness import wait_until
from test_streams_wordcount import App, Output, _lines, _produce, _truth, topics  # noqa: F401

EOS = "exactly_once_v2"
SESSION_S = 6  # the App's consumer.session.timeout.ms
# Liveness bound after the last crash: two dead members' sessions, one after the other (one may
# be the leader a round waits on), plus rebalances and the restore of the counts' stores. Before
# the member could get through a timed-out SyncGroup this was unbounded (never RUNNING).
RECOVERY_BOUND_S = 4 * SESSION_S + 40


def last_state(app):
    states = re.findall(r"State transition from \w+ to (\w+)", app.log_path.read_text(errors="replace"))
    return states[-1] if states else None


def test_kills_in_rebalances_joins_and_commits_end_exactly_once(topics, tmp_path):  # noqa: F811
    seed = int(os.environ.get("CHAOS_SEED", "40"))
    rng = random.Random(seed)
    broker = topics
    lines = _lines(rng, 30000)
    out = Output(broker, isolation="read_committed")
    started = [0]

    def app(name):
        started[0] += 1
        # A session longer than a request's timeout, as with Kafka's defaults (45 s and 30 s): a
        # follower's SyncGroup waiting on a dead leader outlasts the request.
        return App(broker, tmp_path, f"{name}-{started[0]}", guarantee=EOS, state=name,
                   extra=("--config", "request.timeout.ms=3000")).start()

    # The first instance dies in its first rebalance (the group's leader, whose assignment never
    # comes), the second while it joins or waits for that assignment; a third then starts
    # alone and must get the tasks once both dead sessions expired.
    for name in ("first", "second"):
        doomed = app(name)
        time.sleep(rng.uniform(1.0, 2.0))
        doomed.kill()
    live = {"a": app("a")}
    t0 = time.monotonic()
    wait_until(lambda: last_state(live["a"]) == "RUNNING", RECOVERY_BOUND_S,
               message="the instance started after two crashes RUNNING")
    print(f"\nchaos seed {seed}: RUNNING {time.monotonic() - t0:.1f} s after two crashes in the first rebalance")
    live.update({name: app(name) for name in ("b", "c")})
    chunks = [lines[i:i + 2000] for i in range(0, len(lines), 2000)]
    producing = threading.Thread(target=lambda: [(_produce(broker, c), time.sleep(0.3)) for c in chunks])
    producing.start()
    # Kills while lines flow: each at a random moment (commits run every 200 ms, rebalances
    # follow each restart), the victim restarted on its own state directory at once or a little later.
    for _ in range(6):
        time.sleep(rng.uniform(0.3, 2.5))
        name = rng.choice(sorted(live))
        live[name].kill()
        time.sleep(rng.choice([0.0, rng.uniform(0.0, 2.0)]))
        live[name] = app(name)
    last_crash = time.monotonic()
    producing.join()

    # Liveness, not speed: the bound is several times what recovery needs on an idle machine.
    out.read_until(_truth(lines), timeout=max(1.0, last_crash + RECOVERY_BOUND_S - time.monotonic()))
    wait_until(lambda: all(last_state(a) == "RUNNING" for a in live.values()),
               max(1.0, last_crash + RECOVERY_BOUND_S - time.monotonic()),
               message="every live instance RUNNING")
    print(f"\nchaos seed {seed}: exact counts and every instance RUNNING "
          f"{time.monotonic() - last_crash:.1f} s after the last crash")
    assert not out.backwards, f"committed counts went backwards: {out.backwards[:5]}"
    for a in live.values():
        a.stop()
    out.close()
