"""Shared fixtures for Oxbow's integration tests.

Every test runs against the real broker binary ($OXBOW_BIN, default build/oxbow) started in a
fresh temporary log directory on a free port.  Brokers started by a test are always torn down by
the fixture finalizer, also when the test fails, and so are the applications a test starts
through harness.track; when a test fails, the tail of each broker's log
is attached to the failure report.
"""

import os
import pathlib

import pytest

from harness import FAULTS, Broker, kill_tracked  # noqa: F401

# Never look for tests inside the node dependencies.
collect_ignore_glob = ["node_modules/*"]


@pytest.fixture(autouse=True)
def _no_process_outlives_its_test():
    """Kills the applications a test started (harness.track) and left running, failed or not."""
    yield
    kill_tracked()


@pytest.fixture
def make_broker(tmp_path, request):
    """Factory: make_broker(**overrides) starts a broker; all are stopped at teardown."""
    brokers = []
    request.node._oxbow_brokers = brokers

    def factory(overrides=None, start=True, config_file=None, env=None, **kwargs):
        merged = dict(overrides or {})
        merged.update({k.replace("_", "."): v for k, v in kwargs.items()})
        b = Broker(tmp_path / f"broker{len(brokers)}", merged, config_file=config_file, env=env)
        brokers.append(b)
        if start:
            b.start()
        return b

    yield factory

    errors = []
    for b in brokers:
        if b.is_alive():
            code = b.stop(check=False)
            if code != 0:
                errors.append(f"broker on port {b.port} exited with code {code} after SIGTERM at teardown"
                              f"\n--- broker log tail ---\n{b.log_tail()}")
    if errors:
        pytest.fail("\n".join(errors), pytrace=False)


@pytest.fixture
def broker(make_broker):
    """A running broker with default settings."""
    return make_broker()


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    report = outcome.get_result()
    if report.failed:
        for i, b in enumerate(getattr(item, "_oxbow_brokers", [])):
            report.sections.append((f"oxbow broker {i} log tail ({b.log_path})", b.log_tail(80)))


# Roughly how long the slowest tests take (seconds, setup to teardown, from `--durations=0`):
# with workers (-n) they are handed out first, so that none starts near the end while the other
# workers sit idle.  Only the order depends on it; a test missing from it runs in its turn.
SLOW_TESTS = pathlib.Path(__file__).with_name("slow_tests.txt")


def _slow_tests():
    weights = {}
    for line in SLOW_TESTS.read_text().splitlines():
        if line.strip() and not line.startswith("#"):
            seconds, test = line.split(None, 1)
            weights[test.strip()] = float(seconds)
    return weights


def pytest_configure(config):
    config.addinivalue_line("markers", "xdist_group(name): tests that share state run in one worker, in order")
    config.addinivalue_line("markers", "serial: measures time, memory, CPU or throughput: `make test` runs it "
                                       "alone, after the parallel run (-m 'not serial', then -m serial)")


def pytest_collection_modifyitems(config, items):
    if not os.environ.get("PYTEST_XDIST_WORKER"):  # each worker collects: the controller does not
        return
    weights = _slow_tests()
    group_weight = {}
    for item in items:
        group = item.get_closest_marker("xdist_group")
        item._oxbow_group = group.args[0] if group and group.args else None
        item._oxbow_weight = weights.get(f"{item.path.name}::{item.name}", 0.0)
        if item._oxbow_group:
            group_weight[item._oxbow_group] = group_weight.get(item._oxbow_group, 0.0) + item._oxbow_weight
    # Stable: a group's tests keep their order, and so do the tests of equal weight.
    items.sort(key=lambda item: -(group_weight[item._oxbow_group] if item._oxbow_group else item._oxbow_weight))


def pytest_sessionfinish(session):
    workeroutput = getattr(session.config, "workeroutput", None)
    if workeroutput is not None:  # an xdist worker: the controller reports the faults
        workeroutput["oxbow_faults"] = dict(FAULTS)


@pytest.hookimpl(optionalhook=True)  # an xdist hook: without xdist, never called
def pytest_testnodedown(node, error):
    FAULTS.update(getattr(node, "workeroutput", {}).get("oxbow_faults", {}))


def pytest_terminal_summary(terminalreporter):
    if FAULTS:
        kinds = ", ".join(f"{kind}: {n}" for kind, n in sorted(FAULTS.items()))
        terminalreporter.write_line(f"client faults injected: {sum(FAULTS.values())} ({kinds})")
