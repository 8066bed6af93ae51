"""``runeval --output`` that cannot be written: refused before any turn is played (issue 36 F11: every turn was
played, then a traceback, and the run stayed 'finished' with no files)."""

import pytest
from django.core.management import CommandError, call_command

from evaluation.models import EvalRun, TurnResult


@pytest.mark.parametrize("where", ["/proc/x", "file"])
def test_unwritable_output_is_refused_before_the_run(sessions, tmp_path, where):
    output = tmp_path / "file" if where == "file" else where
    if where == "file":
        output.write_text("not a folder")
    with pytest.raises(CommandError, match=f"--output {output}: cannot write there"):
        call_command(
            "runeval",
            "--model",
            "rules:oracle",
            "--language",
            "en",
            "--sessions",
            "all",
            "--quiet",
            "--output",
            str(output),
        )
    assert not EvalRun.objects.exists() and not TurnResult.objects.exists()


def test_writable_output_still_runs(sessions, tmp_path):
    output = tmp_path / "new" / "run"
    call_command(
        "runeval",
        "--model",
        "rules:oracle",
        "--language",
        "en",
        "--sessions",
        "all",
        "--quiet",
        "--output",
        str(output),
    )
    assert (output / "summary.json").is_file() and EvalRun.objects.get().status == "finished"
