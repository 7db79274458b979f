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


# After a large block is freed, is a 1 MB block mmap-ed (returned to the system when freed) or taken from the heap?
_PROBE = """
import ctypes
libc = ctypes.CDLL(None)
class MallInfo2(ctypes.Structure):
    _fields_ = [(name, ctypes.c_size_t) for name in
                "arena ordblks smblks hblks hblkhd usmblks fsmblks uordblks fordblks keepcost".split()]
libc.mallinfo2.restype = MallInfo2
libc.malloc.restype = ctypes.c_void_p
libc.free.argtypes = [ctypes.c_void_p]
libc.free(libc.malloc(16 << 20))  # glibc's dynamic threshold rises to 16 MB here
before = libc.mallinfo2().hblkhd
block = libc.malloc(1 << 20)
mapped = libc.mallinfo2().hblkhd - before >= 1 << 20
libc.free(block)
"""
glibc_only = pytest.mark.skipif(not hasattr(__import__("ctypes").CDLL(None), "mallinfo2"), reason="glibc ≥ 2.33 only")


def _probe(setup: str) -> str:
    import subprocess
    import sys

    code = f"{setup}\n{_PROBE}\nprint(mapped)"
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.strip()


@glibc_only
def test_fixed_mmap_threshold_keeps_large_blocks_mapped():
    assert _probe("") == "False"  # glibc's default: the block comes from the heap and stays resident
    assert _probe("from crawler.procs import fixed_mmap_threshold; fixed_mmap_threshold()") == "True"


@glibc_only
def test_helper_processes_run_with_a_fixed_mmap_threshold():
    assert call_in_fresh_process(exec, _PROBE + "assert mapped, 'taken from the heap'", {}) is None
