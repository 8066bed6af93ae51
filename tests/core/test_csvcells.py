"""core.csvcells: cells a spreadsheet would run as formulas are written as text (issue 36 F7, OWASP CSV Injection)."""

import csv
import io

import pytest

from core.csvcells import SafeDictWriter, SafeWriter, safe_cell


@pytest.mark.parametrize(
    ("value", "written"),
    [
        ("=cmd|' /C calc'!A0", "'=cmd|' /C calc'!A0"),
        ('=HYPERLINK("http://evil","x")', '\'=HYPERLINK("http://evil","x")'),
        ("+1+cmd", "'+1+cmd"),
        ("-2+3", "'-2+3"),
        ("@SUM(A1)", "'@SUM(A1)"),
        ("\t=1", "'\t=1"),
        ("\r=1", "'\r=1"),
        ("plain", "plain"),
        ("a=b", "a=b"),
        ("", ""),
        # Numbers stay numbers.
        ("-1.5", "-1.5"),
        ("+3", "+3"),
        ("-2e-3", "-2e-3"),
        (-1.5, -1.5),
        (None, None),
    ],
)
def test_safe_cell(value, written):
    assert safe_cell(value) == written


def test_writers_escape_every_cell_and_keep_the_rest():
    buf = io.StringIO()
    SafeWriter(buf, lineterminator="\n").writerows([["=1+1", -3, "ok"]])
    writer = SafeDictWriter(buf, fieldnames=["a", "b"], lineterminator="\n")
    writer.writeheader()
    writer.writerow({"a": "@x", "b": "-0.25"})
    assert list(csv.reader(io.StringIO(buf.getvalue()))) == [["'=1+1", "-3", "ok"], ["a", "b"], ["'@x", "-0.25"]]
