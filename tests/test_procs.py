"""call_in_fresh_process: the result of a function run in a spawned process, or its failure; settle_gc."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from conftest import ROOT
from crawler.procs import ChildFailed, call_in_fresh_process


def test_returns_the_result_computed_in_another_process():
    assert call_in_fresh_process(divmod, 17, 5) == (3, 2)
    assert call_in_fresh_process(os.getpid) != os.getpid()


def test_an_exception_in_the_child_is_raised_with_its_traceback():
    with pytest.raises(ChildFailed) as err:
        call_in_fresh_process(int, "seventeen", name="parse")
    assert str(err.value).startswith("parse failed:\nTraceback")
    assert "ValueError: invalid literal for int() with base 10: 'seventeen'" in str(err.value)


def test_a_child_that_dies_is_reported_with_its_exit_code():
    with pytest.raises(ChildFailed, match=r"^steps died \(exit code 3\)$"):
        call_in_fresh_process(os._exit, 3, name="steps")


@pytest.mark.parametrize("freeze, frozen", [pytest.param(True, True, id="freeze"), pytest.param(False, False, id="thresholds-only")])
def test_settle_gc_freezes_what_is_alive_and_collects_gen_0_less_often(freeze, frozen):
    # In a fresh Python: freezing is for a process of this project's own, not for the test runner.
    script = ("import gc, json; from crawler.procs import settle_gc, GC_THRESHOLDS\n"
              f"before = gc.get_freeze_count(); settle_gc(freeze={freeze})\n"
              "print(json.dumps([before, gc.get_freeze_count() > 1000, gc.get_threshold() == GC_THRESHOLDS]))")
    proc = subprocess.run([sys.executable, "-c", script], cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert json.loads(proc.stdout) == [0, frozen, True], proc.stderr
