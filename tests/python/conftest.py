# Shared by the tests of the Python module: where the sources and the heatsim executable are
# (set by tests/CMakeLists.txt), and a runner for the command line.
import os
import subprocess

import pytest

SOURCE_DIR = os.environ.get("HEATSIM_SOURCE_DIR",
                            os.path.dirname(os.path.dirname(os.path.dirname(__file__))))
BINARY = os.environ.get("HEATSIM_BINARY", "")


def case_path(name):
    return os.path.join(SOURCE_DIR, "inputs", name)


def run_cli(*args, cwd=None):
    """The command line's exit code and what it printed, stdout and stderr together."""
    if not BINARY:
        pytest.skip("HEATSIM_BINARY not set (run the tests through ctest)")
    p = subprocess.run([BINARY, *args], cwd=cwd, stdout=subprocess.PIPE,
                       stderr=subprocess.STDOUT, text=True)
    return p.returncode, p.stdout


_outcomes = {"passed": 0, "skipped": 0}


def pytest_runtest_logreport(report):
    if report.when == "call" and report.passed:
        _outcomes["passed"] += 1
    if report.skipped:
        _outcomes["skipped"] += 1


def pytest_sessionfinish(session, exitstatus):
    # A file whose every test skipped (no GPU) exits 77, which ctest reports as skipped.
    if exitstatus == 0 and _outcomes["skipped"] and not _outcomes["passed"]:
        session.exitstatus = 77
