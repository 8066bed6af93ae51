"""One large CSV file into the committed staging table over several COPY streams at once.

A single COPY keeps one server process busy parsing and inserting while the client mostly
waits; that process, not reading or decompressing the file, bounds the load. Staged loads
(:mod:`ehr.importer.staging`) commit the rows into a table of their own before the swap, so
several connections may load it at the same time. The file's bytes are cut at record
boundaries into blocks handed to the streams in turn (the table's rows then sit in block order
per stream, not file order: row order is never relied on, every tool query sorts).

A record boundary is a newline after an even number of quote characters since the previous
boundary: PostgreSQL's CSV reader toggles "inside quotes" on every quote character (a doubled
quote toggles twice), so this is exactly where it ends a record. This path is optimistic: if any
stream refuses its data, or the file needs what only the sequential path does (a ``\\.`` line,
a file PostgreSQL refuses), :func:`copy_file_in_parallel` returns ``None`` and the caller
empties the staging table and loads the file the sequential way, which names the problem.
"""

import os
import queue
import threading
from collections.abc import Callable, Iterable

from django.db import connection, connections

from ehr.importer.loaders import END_MARKERS

# Below this size (compressed bytes on disk) one COPY is as fast: the streams' set-up would not pay.
MIN_FILE_BYTES = 16 << 20
MAX_STREAMS = 4
QUEUE_BLOCKS = 4  # blocks waiting per stream: bounds memory to a few MiB per stream
# Looking back past this many newlines inside quoted fields, the block just grows until the next chunk.
MAX_BOUNDARY_PROBES = 64


def stream_count() -> int:
    """One stream per core, at least two, at most :data:`MAX_STREAMS`."""
    return max(2, min(MAX_STREAMS, os.cpu_count() or 2))


def split_at_record_end(data: bytes) -> int:
    """Length of the longest prefix of ``data`` (which starts at a record boundary) that ends at one; 0 if none."""
    pos = data.rfind(b"\n")
    for _ in range(MAX_BOUNDARY_PROBES):
        if pos < 0:
            return 0
        if data.count(b'"', 0, pos) % 2 == 0:
            return pos + 1
        pos = data.rfind(b"\n", 0, pos)
    return 0


class _Stream(threading.Thread):
    """One connection running one COPY, fed blocks through a queue; ``None`` ends it."""

    def __init__(self, *, sql: str, header: bytes, failed: threading.Event) -> None:
        super().__init__(name="copy-stream", daemon=True)
        self.sql = sql
        self.header = header
        self.failed = failed
        self.blocks: queue.Queue[bytes | None] = queue.Queue(maxsize=QUEUE_BLOCKS)
        self.rows = 0
        self.error: BaseException | None = None

    def run(self) -> None:
        ended = False  # the feeder's None was taken
        try:
            with connection.cursor() as wrapper:
                cursor = wrapper.cursor
                with cursor.copy(self.sql) as copy:
                    copy.write(self.header)  # each stream's COPY skips its own header line
                    while (block := self.blocks.get()) is not None:
                        if not self.failed.is_set():
                            copy.write(block)
                    ended = True
                    if self.failed.is_set():
                        raise _Abandoned
                self.rows = cursor.rowcount
        except Exception as exc:  # the thread boundary: any failure means "load it the sequential way"
            self.error = exc
            self.failed.set()
            while not ended:  # let the feeder finish; its blocks are not needed
                ended = self.blocks.get() is None
        finally:
            connections.close_all()  # this thread's own connection

    def put(self, block: bytes | None) -> None:
        self.blocks.put(block)


class _Abandoned(Exception):
    """Another stream failed or the file needs the sequential path: this COPY is rolled back."""


def copy_file_in_parallel(
    *, table: str, columns: list[str], header: bytes, chunks: Iterable[bytes], on_chunk: Callable[[], None]
) -> int | None:
    """Rows copied into ``table`` (qualified, quoted) over :func:`stream_count` COPY streams; ``None``: fall back.

    ``columns`` are the file's columns in file order; the COPY options are those of
    :func:`ehr.importer.loaders.copy_csv_bytes`. Each stream commits on its own, so after a
    ``None`` the table holds some rows and the caller must empty it.
    """
    quoted = ", ".join(connection.ops.quote_name(c) for c in columns)
    sql = f"COPY {table} ({quoted}) FROM STDIN WITH (FORMAT csv, HEADER true, FORCE_NULL ({quoted}))"
    failed = threading.Event()
    streams = [_Stream(sql=sql, header=header, failed=failed) for _ in range(stream_count())]
    for stream in streams:
        stream.start()
    turn = 0
    pending = b""
    tail = header[-4:]
    try:
        for chunk in chunks:
            window = tail + chunk[:4]  # a marker may straddle two chunks
            if any(m in chunk or m in window for m in END_MARKERS):
                failed.set()
            tail = (tail + chunk)[-4:]
            if failed.is_set():
                break
            pending += chunk
            if cut := split_at_record_end(pending):
                streams[turn].put(pending[:cut])
                pending = pending[cut:]
                turn = (turn + 1) % len(streams)
            on_chunk()
        if pending and not failed.is_set():
            streams[turn].put(pending)
    except BaseException:
        failed.set()
        raise
    finally:
        for stream in streams:
            stream.put(None)
        for stream in streams:
            stream.join()
    if failed.is_set():
        return None
    return sum(stream.rows for stream in streams)
