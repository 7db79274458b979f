"""call_in_fresh_process: the result of a function run in a spawned process, or its failure."""

from __future__ import annotations

import os

import pytest

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
