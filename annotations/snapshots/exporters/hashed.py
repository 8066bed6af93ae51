"""A binary output file that hashes what it writes: the manifest's sha256 without reading the file back.

Writes are gathered into blocks of :data:`BLOCK` bytes; each block is hashed and written by a helper
thread while the caller builds the next one (``hashlib`` and file writes release the GIL on large
buffers, so on a second core they cost no wall time). One block in flight per file: memory stays
bounded, and blocks reach the file in order.
"""

from __future__ import annotations

import hashlib
import os
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path

BLOCK = 4 << 20
_IOV_MAX = 1024


class HashedFile:
    def __init__(self, path: Path) -> None:
        self.path = path
        self.handle = path.open("wb", buffering=0)
        self.digest = hashlib.sha256()
        self.size = 0
        self._parts: list[bytes] = []
        self._pending = 0
        self._worker = ThreadPoolExecutor(max_workers=1, thread_name_prefix="export-write")
        self._in_flight: Future[None] | None = None

    def write(self, data: bytes) -> None:
        self._parts.append(data)
        self._pending += len(data)
        if self._pending >= BLOCK:
            self._submit()

    def _submit(self) -> None:
        parts, size = self._parts, self._pending
        self._parts, self._pending = [], 0
        self._wait()
        self._in_flight = self._worker.submit(self._write_block, parts, size)

    def _write_block(self, parts: list[bytes], size: int) -> None:
        for part in parts:
            self.digest.update(part)
        fd = self.handle.fileno()
        for start in range(0, len(parts), _IOV_MAX):  # one system call per 1024 parts, no joined copy
            batch = parts[start : start + _IOV_MAX]
            written = os.writev(fd, batch)
            if written < sum(map(len, batch)):  # a partial write: finish it plainly
                rest = memoryview(b"".join(batch))[written:]
                while rest:
                    rest = rest[os.write(fd, rest) :]
        # Start writing back what went before and let the kernel drop those pages once on disk: gigabytes
        # of dirty page cache otherwise end in writeback throttling and reclaim (system time).
        if self.size and hasattr(os, "posix_fadvise"):
            os.posix_fadvise(fd, 0, self.size, os.POSIX_FADV_DONTNEED)
        self.size += size

    def _wait(self) -> None:
        if self._in_flight is not None:
            self._in_flight.result()  # re-raises a write error (disk full, ...) in the caller
            self._in_flight = None

    def close(self) -> dict[str, int | str]:
        """Write what is left and close; returns the ``bytes`` and ``sha256`` of what was written."""
        try:
            if self._pending:
                self._submit()
            self._wait()
        finally:
            self._worker.shutdown(wait=True)
            self.handle.close()
        return {"bytes": self.size, "sha256": self.digest.hexdigest()}
