"""Keeping freed heap memory for the length of an export (glibc only; elsewhere a no-op).

An export allocates and frees ~100 KB lines (and 20 MB database result chunks) over and over. With
glibc's defaults each free at the top of the heap is handed back to the kernel and the next line faults
fresh pages in again: measured, a third of the export's CPU time went to that (system time). Inside
:func:`retained_heap` up to :data:`RETAIN` bytes stay in the heap; afterwards the defaults come back and
the spare memory is returned.
"""

from __future__ import annotations

import ctypes
import platform
from collections.abc import Iterator
from contextlib import contextmanager

RETAIN = 64 << 20
_M_TRIM_THRESHOLD, _M_MMAP_THRESHOLD = -1, -3  # mallopt parameters (malloc.h)
_DEFAULT_TRIM, _DEFAULT_MMAP = 128 * 1024, 128 * 1024
_MAX_MMAP_THRESHOLD = 32 << 20  # glibc's upper bound for M_MMAP_THRESHOLD on 64-bit


def _libc() -> ctypes.CDLL | None:
    if platform.system() != "Linux" or platform.libc_ver()[0] != "glibc":
        return None
    try:
        libc = ctypes.CDLL(None)
        return libc if hasattr(libc, "mallopt") and hasattr(libc, "malloc_trim") else None
    except OSError:
        return None


@contextmanager
def retained_heap() -> Iterator[None]:
    libc = _libc()
    if libc is None:
        yield
        return
    libc.mallopt(_M_TRIM_THRESHOLD, RETAIN)
    libc.mallopt(_M_MMAP_THRESHOLD, _MAX_MMAP_THRESHOLD)
    try:
        yield
    finally:
        libc.mallopt(_M_TRIM_THRESHOLD, _DEFAULT_TRIM)
        libc.mallopt(_M_MMAP_THRESHOLD, _DEFAULT_MMAP)
        libc.malloc_trim(0)
