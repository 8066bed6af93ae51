"""The documentation names only things that exist.

Cases come from the docs themselves (README.md, docs/*.md; CHANGELOG.md for links only), read at test time:
(a) every relative link resolves to a file, and to a heading when it names an anchor;
(b) every ``manage.py <command>`` is a real management command whose ``--help`` runs, and every ``--option``
    the docs give it appears in that help; every ``bench/<script>.py`` exists and defines the options given it;
(c) the configuration table of docs/operations.md and the variables the settings module reads agree both ways;
(d) the access table of docs/operations.md is the one physreview.access generates.
"""

from __future__ import annotations

import ast
import contextlib
import importlib.util
import io
import re
from functools import cache
from pathlib import Path

import pytest
from django.conf import settings
from django.core.management import ManagementUtility, get_commands

from tests.docs.mdparse import Document, heading_slugs, links, option_mentions, section_table_names

ROOT = Path(settings.BASE_DIR)
GUIDES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
# The changelog is history: its links must resolve, but it may name options that have since gone.
DOCS = [*GUIDES, ROOT / "CHANGELOG.md"]
OPERATIONS = ROOT / "docs" / "operations.md"


def _doc_id(path: Path) -> str:
    return str(path.relative_to(ROOT))


@cache
def _document(path: Path) -> Document:
    return Document(path=path, text=path.read_text(encoding="utf-8"))


def test_docs_exist():
    missing = [_doc_id(p) for p in DOCS if not p.exists()]
    assert not missing, f"documentation files missing: {missing}"


@pytest.mark.parametrize("doc", DOCS, ids=_doc_id)
def test_relative_links_resolve(doc: Path):
    problems = []
    for target in links(_document(doc)):
        if re.match(r"^[a-z][a-z0-9+.-]*:", target):  # http:, https:, mailto: — not checked offline
            continue
        path_part, _, anchor = target.partition("#")
        file = (doc.parent / path_part).resolve() if path_part else doc
        if not file.exists():
            problems.append(f"{_doc_id(doc)}: link {target!r} points to a missing file")
            continue
        if anchor and file.suffix == ".md" and anchor not in heading_slugs(_document(file)):
            problems.append(f"{_doc_id(doc)}: link {target!r}: no heading with anchor #{anchor} in {file.name}")
    assert not problems, "\n".join(problems)


@cache
def _help(command: str) -> str:
    """What ``manage.py <command> --help`` prints, run in-process exactly as manage.py runs it."""
    out = io.StringIO()
    with contextlib.redirect_stdout(out), pytest.raises(SystemExit) as exit_info:
        ManagementUtility(["manage.py", command, "--help"]).execute()
    assert exit_info.value.code in (0, None), f"manage.py {command} --help exited with {exit_info.value.code}"
    return out.getvalue()


def _name(owner: str) -> str:
    return owner if owner.startswith("bench/") else f"manage.py {owner}"


def _options_text(owner: str) -> str:
    """Where an owner's options are spelled: a command's ``--help``, a bench script's own source (argparse)."""
    return (ROOT / owner).read_text(encoding="utf-8") if owner.startswith("bench/") else _help(owner)


@pytest.mark.parametrize("doc", GUIDES, ids=_doc_id)
def test_documented_commands_and_options_exist(doc: Path):
    commands = set(get_commands())
    problems = []
    for mention in option_mentions(_document(doc), commands=commands):
        unknown = [o for o in mention.owners if not (o in commands or (ROOT / o).is_file())]
        for owner in unknown:
            what = "a file" if owner.startswith("bench/") else "a management command"
            problems.append(f"{_doc_id(doc)}: `{_name(owner)}` is not {what} ({mention.where})")
        if unknown:
            continue
        texts = [_options_text(o) for o in mention.owners]  # --help runs for every command the docs name
        for option in mention.options:
            if not any(re.search(rf"(?<![\w-]){re.escape(option)}(?![\w-])", t) for t in texts):
                owners = " or ".join(f"`{_name(o)}`" for o in mention.owners)
                problems.append(f"{_doc_id(doc)}: `{option}` is not an option of {owners} ({mention.where})")
    assert not problems, "\n".join(problems)


def _settings_sources() -> list[Path]:
    origin = Path(importlib.util.find_spec(settings.SETTINGS_MODULE).origin)
    return sorted(origin.parent.glob("*.py")) if origin.name == "__init__.py" else [origin]


def _reads_environ(node: ast.AST) -> bool:
    return any(
        isinstance(n, ast.Attribute) and n.attr == "environ" and isinstance(n.value, ast.Name) and n.value.id == "os"
        for n in ast.walk(node)
    ) or any(isinstance(n, ast.Name) and n.id == "env" for n in ast.walk(node))


def _variables_read_by_settings() -> set[str]:
    """Names passed as a literal to os.environ / os.getenv / django-environ, or to a helper that reads them."""
    names: set[str] = set()
    for source in _settings_sources():
        tree = ast.parse(source.read_text(encoding="utf-8"))
        helpers = {f.name for f in tree.body if isinstance(f, ast.FunctionDef) and f.args.args and _reads_environ(f)}
        for node in ast.walk(tree):
            if isinstance(node, ast.Call) and node.args and isinstance(node.args[0], ast.Constant):
                func, value = node.func, node.args[0].value
                if not isinstance(value, str) or not re.fullmatch(r"[A-Z][A-Z0-9_]+", value):
                    continue
                dotted = ast.unparse(func)
                if dotted in {"os.environ.get", "os.getenv", "env"} or dotted.startswith("env.") or dotted in helpers:
                    names.add(value)
            elif (
                isinstance(node, ast.Subscript)
                and ast.unparse(node.value) == "os.environ"
                and isinstance(node.slice, ast.Constant)
                and isinstance(node.slice.value, str)
            ):
                names.add(node.slice.value)
    return names


def _settings_literals() -> str:
    return "\n".join(p.read_text(encoding="utf-8") for p in _settings_sources())


def test_configuration_table_matches_settings():
    documented = section_table_names(_document(OPERATIONS), heading="Configuration")
    assert documented, "docs/operations.md: no variable found in the table under '## Configuration'"
    source = _settings_literals()
    not_read = sorted(n for n in documented if not re.search(rf"[\"']{n}[\"']", source))
    read = _variables_read_by_settings()
    undocumented = sorted(read - documented)
    problems = [f"docs/operations.md: `{n}` is documented but the settings never read it" for n in not_read]
    problems += [
        f"docs/operations.md: the settings read `{n}`, which the configuration table omits" for n in undocumented
    ]
    assert not problems, "\n".join(problems)


def test_settings_reader_finds_known_variables():
    """Guard for the AST reader above: it must see the variables read each way the settings read them."""
    read = _variables_read_by_settings()
    for name in ("DATABASE_URL", "DEBUG", "SECRET_KEY", "ALLOWED_HOSTS", "PHYSREVIEW_VAR_DIR", "LOGIN_FAILURE_LIMIT"):
        assert name in read, f"the settings reader missed {name}"


def test_security_table_is_the_rule_table():
    """docs/operations.md says its who-may-see-what table is generated from physreview.access's rule table."""
    from physreview.access import rules_markdown

    assert rules_markdown() in _document(OPERATIONS).text, (
        "docs/operations.md: the table under 'Security model: who may see what' differs from "
        "physreview.access.rules_markdown(); paste its output into the doc"
    )
