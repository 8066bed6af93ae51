"""Just enough Markdown reading for the docs checks: sections, code, links, heading anchors, command mentions.

Not a Markdown parser: it knows fenced code blocks, inline code spans (any number of backticks), ATX headings
and inline links, which is all the project's docs use.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

FENCE = re.compile(r"^\s*(```|~~~)")
HEADING = re.compile(r"^(#{1,6})\s+(.*?)\s*#*\s*$")
CODE_SPAN = re.compile(r"(?<!`)(`+)(?!`)(.+?)(?<!`)\1(?!`)", re.DOTALL)
LINK = re.compile(r"!?\[[^\]]*\]\(\s*([^)\s]+)(?:\s+\"[^\"]*\")?\s*\)")
# An invocation: ``manage.py <command>`` (owner: the command) or a benchmark script (owner: its path).
INVOKE = re.compile(r"manage\.py\s+([A-Za-z_][\w-]*)|\b(bench/\w+\.py)\b")
OPTION = re.compile(r"(?<![\w-])--[a-z][a-z0-9-]*")
ENV_NAME = re.compile(r"`([A-Z][A-Z0-9_]+)`")


@dataclass
class Section:
    heading: str  # "" before the first heading
    prose: list[str] = field(default_factory=list)
    code: list[list[str]] = field(default_factory=list)  # one list of lines per fenced block


@dataclass(frozen=True)
class Document:
    path: Path
    text: str

    def sections(self) -> list[Section]:
        sections = [Section(heading="")]
        block: list[str] | None = None
        for line in self.text.split("\n"):
            if FENCE.match(line):
                if block is None:
                    block = []
                else:
                    sections[-1].code.append(block)
                    block = None
                continue
            if block is not None:
                block.append(line)
            elif match := HEADING.match(line):
                sections.append(Section(heading=match.group(2)))
            else:
                sections[-1].prose.append(line)
        return sections


@dataclass(frozen=True)
class Mention:
    owners: tuple[str, ...]  # management commands or bench/ scripts; the option must belong to one of them
    options: tuple[str, ...]
    where: str


def code_spans(text: str) -> list[str]:
    return [m.group(2).strip() for m in CODE_SPAN.finditer(text)]


def links(doc: Document) -> list[str]:
    found = []
    for section in doc.sections():
        prose = CODE_SPAN.sub("", "\n".join(section.prose))
        found += [m.group(1) for m in LINK.finditer(prose)]
    return found


def slug(heading: str) -> str:
    """GitHub's anchor for a heading: the text lower-cased, punctuation dropped, spaces to hyphens."""
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", heading)
    return re.sub(r"[^\w\- ]", "", text.strip().lower()).replace(" ", "-")


def heading_slugs(doc: Document) -> set[str]:
    seen: dict[str, int] = {}
    slugs = set()
    for section in doc.sections()[1:]:
        base = slug(section.heading)
        count = seen.get(base, 0)
        slugs.add(base if count == 0 else f"{base}-{count}")
        seen[base] = count + 1
    return slugs


def _logical_lines(block: list[str]) -> Iterator[tuple[str, str]]:
    """(comment lines just above, command line with its backslash continuations) of a shell block."""
    comments: list[str] = []
    current = ""
    for line in block:
        stripped = line.strip()
        if not current and stripped.startswith("#"):
            comments.append(stripped)
            continue
        current += " " + stripped.rstrip("\\")
        if not stripped.endswith("\\"):
            yield " ".join(comments), current
            comments, current = [], ""
    if current:
        yield " ".join(comments), current


def _invocations(text: str) -> Iterator[tuple[str, tuple[str, ...]]]:
    """Each invocation in ``text`` with the options written up to the next invocation or ``&&``."""
    matches = list(INVOKE.finditer(text))
    for i, match in enumerate(matches):
        end = matches[i + 1].start() if i + 1 < len(matches) else len(text)
        segment = re.split(r"&&|\|\||;", text[match.end() : end])[0]
        yield match.group(1) or match.group(2), tuple(OPTION.findall(segment))


def option_mentions(doc: Document, *, commands: set[str]) -> Iterator[Mention]:
    """Every management command and bench/ script the docs name, with the ``--options`` they give it.

    An invocation (``manage.py X …`` or ``bench/x.py …``, in a code block or inline code) owns the options written
    after it on its line; options in comment lines just above it belong to any invocation of that line. An inline
    span starting with a command name (``runeval --max-tokens``) owns its options. A bare option span
    (``--resume``) belongs to a command or script named in the same section; in a section that names none it is not
    checked. Spans starting with another program (``llama-server …``, ``gunicorn …``) are not checked.
    """
    for section in doc.sections():
        where = f"section {section.heading!r}" if section.heading else "top of file"
        named: list[str] = []
        for block in section.code:
            for comment, line in _logical_lines(block):
                invoked = list(_invocations(line))
                for command, options in invoked:
                    named.append(command)
                    yield Mention(owners=(command,), options=options, where=where)
                if invoked and OPTION.search(comment):  # a comment above names options of the line below
                    below = tuple(dict.fromkeys(c for c, _ in invoked))
                    yield Mention(owners=below, options=tuple(OPTION.findall(comment)), where=where)
        bare: list[str] = []
        for span in code_spans("\n".join(section.prose)):
            if INVOKE.search(span):
                for command, options in _invocations(span):
                    named.append(command)
                    yield Mention(owners=(command,), options=options, where=where)
                continue
            first = span.split()[0] if span.split() else ""
            if first in commands:
                named.append(first)
                yield Mention(owners=(first,), options=tuple(OPTION.findall(span)), where=where)
            elif first.startswith("--"):
                bare += OPTION.findall(span)
        owners = tuple(dict.fromkeys(c for c in named if c in commands or c.startswith("bench/")))
        if bare and owners:
            yield Mention(owners=owners, options=tuple(dict.fromkeys(bare)), where=where)


def section_table_names(doc: Document, *, heading: str) -> set[str]:
    """Backticked UPPER_CASE names in the first column of the tables of one section (not its subsections)."""
    names: set[str] = set()
    for section in doc.sections():
        if section.heading != heading:
            continue
        for line in section.prose:
            cells = line.split("|")
            if line.lstrip().startswith("|") and len(cells) > 2:
                names |= set(ENV_NAME.findall(cells[1]))
    return names
