"""The suite-wide guard (tests/conftest.py, ADR-0089) fails the test that leaks, not a later one."""

from __future__ import annotations

from pathlib import Path

import pytest

GUARD = Path(__file__).resolve().parents[2] / "conftest.py"

LEAKING = """
def test_leaks_a_file_in_a_cycle():
    handle = open(__file__)  # never closed; warns on every Python when it is freed
    cycle = [handle]
    cycle.append(cycle)  # freed only by the cyclic collector


def test_after_it():
    pass
"""


def test_a_leak_in_a_reference_cycle_fails_the_test_that_made_it(pytester: pytest.Pytester) -> None:
    pytester.makeconftest(GUARD.read_text(encoding="utf-8"))
    pytester.makepyfile(test_leak=LEAKING)
    pytester.makeini("[pytest]\nfilterwarnings = error\nasyncio_default_fixture_loop_scope = function\n")
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider")
    result.assert_outcomes(passed=2, errors=1)
    result.stdout.fnmatch_lines(["*ERROR at teardown of test_leaks_a_file_in_a_cycle*", "*ResourceWarning*"])
