"""Streaming access to one MIMIC table file (``NAME.csv.gz`` or ``NAME.csv``).

Nothing here holds more than a chunk or one record in memory. Records come with the physical
line they start on (header = line 1; newlines inside quoted fields count), which is what every
error message quotes. Decompression errors become :class:`TableImportError` with the last
complete line read, so a truncated download names where it stops.
"""

import contextlib
import csv
import gzip
import io
import os
import zlib
from collections.abc import Iterator
from pathlib import Path
from types import TracebackType

from ehr.importer.errors import TableImportError

# Discharge notes can exceed the csv module's 128 KiB default field limit.
csv.field_size_limit(2**31 - 1)

SUFFIXES = (".csv.gz", ".csv")
CHUNK_SIZE = 1 << 20


def find_table_file(*, root: Path, stem: str) -> tuple[Path | None, list[Path]]:
    """The file for ``stem`` (``hosp/labevents``) under ``root``, preferring ``.csv.gz``; also the ignored others."""
    found = [root / f"{stem}{suffix}" for suffix in SUFFIXES if (root / f"{stem}{suffix}").is_file()]
    return (found[0] if found else None), found[1:]


def shorten(text: str, limit: int = 60) -> str:
    """A value as quoted in a message: one line, bounded length."""
    text = text.replace("\r", "\\r").replace("\n", "\\n")
    return text if len(text) <= limit else text[: limit - 3] + "..."


class TableFile:
    """An opened table file: the decompressed byte stream, plus the raw position for progress bars.

    Use as a context manager. ``read_header`` must be called first; then either ``chunks`` (raw
    bytes after the header, for PostgreSQL COPY) or ``records`` (parsed CSV records).
    """

    def __init__(self, path: Path) -> None:
        self.path = path
        self.label = str(path)
        self._raw = open(path, "rb")  # noqa: SIM115 - closed in close()
        self.size = os.fstat(self._raw.fileno()).st_size
        self.gzipped = path.name.endswith(".gz")
        self._stream: io.BufferedIOBase = gzip.GzipFile(fileobj=self._raw, mode="rb") if self.gzipped else self._raw
        # Complete physical lines handed out so far (for "truncated gzip after line N").
        self.lines_read = 0

    def __enter__(self) -> "TableFile":
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()

    def close(self) -> None:
        if self._stream is not self._raw:
            self._stream.close()
        self._raw.close()

    def raw_position(self) -> int:
        """Bytes of the file on disk consumed so far (compressed bytes for .gz)."""
        return self._raw.tell()

    def _decompression_error(self, exc: BaseException) -> TableImportError:
        if isinstance(exc, EOFError):
            return TableImportError(f"{self.label}: truncated gzip after line {self.lines_read}")
        if isinstance(exc, gzip.BadGzipFile) and self.lines_read == 0:
            return TableImportError(f"{self.label}: not a gzip file ({exc})")
        return TableImportError(f"{self.label}: corrupt gzip data after line {self.lines_read} ({exc})")

    def read_header(self) -> tuple[bytes, list[str]]:
        """The raw header line and its column names (BOM and surrounding spaces stripped)."""
        try:
            line = self._stream.readline()
        except (EOFError, zlib.error, gzip.BadGzipFile) as exc:
            raise self._decompression_error(exc) from None
        if not line.strip():
            raise TableImportError(f"{self.label}:1: empty file or empty header line")
        self.lines_read = 1
        try:
            text = line.decode("utf-8-sig")
        except UnicodeDecodeError:
            raise TableImportError(f"{self.label}:1: header is not valid UTF-8") from None
        try:
            names = next(csv.reader([text], strict=True))
        except (csv.Error, StopIteration) as exc:
            raise TableImportError(f"{self.label}:1: malformed header ({exc})") from None
        return line, [n.strip() for n in names]

    def chunks(self) -> Iterator[bytes]:
        """Raw decompressed bytes after the header, in ~1 MiB chunks.

        ``read1`` keeps the data decompressed before a truncation point: a plain ``read`` of a
        truncated stream raises and drops what it had gathered, and the line count would be wrong.
        """
        parts: list[bytes] = []
        size = 0
        while True:
            failure: BaseException | None = None
            try:
                data = self._stream.read1(CHUNK_SIZE)
            except (EOFError, zlib.error, gzip.BadGzipFile) as exc:
                failure, data = exc, b""
            if data:
                parts.append(data)
                size += len(data)
            if parts and (size >= CHUNK_SIZE or not data):
                chunk = b"".join(parts)
                parts, size = [], 0
                self.lines_read += chunk.count(b"\n")
                yield chunk
            if failure is not None:
                raise self._decompression_error(failure) from None
            if not data:
                return

    def records(self) -> Iterator[tuple[int, list[str]]]:
        """``(start_line, fields)`` for each record after the header."""
        # newline="" lets the csv module see quoted newlines as they are, so line_num counts them.
        text = io.TextIOWrapper(self._stream, encoding="utf-8", newline="")
        reader = csv.reader(text, strict=True)
        first = self.lines_read + 1
        try:
            while True:
                start = first + reader.line_num
                try:
                    fields = next(reader)
                except StopIteration:
                    return
                except csv.Error as exc:
                    raise TableImportError(f"{self.label}:{start}: malformed CSV ({exc})") from None
                except UnicodeDecodeError:
                    # The decoder works a chunk ahead of the reader: find the exact line in a second pass.
                    raise TableImportError(_invalid_utf8(self.path)) from None
                except (EOFError, zlib.error, gzip.BadGzipFile) as exc:
                    self.lines_read = first - 1 + reader.line_num
                    raise self._decompression_error(exc) from None
                yield start, fields
        finally:
            self.lines_read = first - 1 + reader.line_num
            # Detach so that dropping the wrapper does not close the stream under the caller.
            with contextlib.suppress(ValueError):
                text.detach()


def _invalid_utf8(path: Path) -> str:
    """``FILE:LINE: not valid UTF-8 ...`` for the first physical line that does not decode."""
    with TableFile(path) as source, contextlib.suppress(EOFError, zlib.error, gzip.BadGzipFile):
        # No UTF-8 multi-byte sequence contains a newline byte, so lines can be decoded one by one.
        for number, line in enumerate(source._stream, start=1):
            try:
                line.decode("utf-8")
            except UnicodeDecodeError as exc:
                bad = line[exc.start : exc.end].hex(" ")
                return f"{source.label}:{number}: not valid UTF-8 (byte {bad} at byte {exc.start + 1} of the line)"
    return f"{path}: not valid UTF-8"
