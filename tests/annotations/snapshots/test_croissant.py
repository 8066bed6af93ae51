"""``croissant.json`` of snapshots and exports, validated and read with ``mlcroissant`` offline (issue 38, item 5),
and the card's YAML header for dataset hubs.

Cases come from the issue's acceptance ("mlcroissant validation of the demo snapshot's croissant.json"), the
Croissant 1.0 format (FileObject checksums are checked when a record set is read; record sets read local
files beside the JSON-LD) and the PhysioNet terms the card already states for MIMIC-derived content. The
demo-like snapshot is made of sessions the rules backend generates over the bundled demo cohort, as the demo's.
"""

from __future__ import annotations

import hashlib
import itertools
import json
import shutil
import socket

import mlcroissant as mlc
import pytest

from annotations.snapshots import card, croissant, selectors
from annotations.snapshots.services import create_snapshot, export_to
from tests.annotations.snapshots.conftest import approve_by_review
from tests.evaluation.conftest import make_sessions


@pytest.fixture
def no_network(monkeypatch):
    """Any connection beyond loopback fails (what mlcroissant would do to fetch a remote context or file)."""
    real_connect = socket.socket.connect

    def connect(self, address):
        host = address[0] if isinstance(address, tuple) else address
        if isinstance(host, str) and host not in ("127.0.0.1", "::1", "localhost") and not host.startswith("/"):
            raise OSError(f"network disabled in this test (tried {address!r})")
        return real_connect(self, address)

    monkeypatch.setattr(socket.socket, "connect", connect)
    monkeypatch.setattr(socket, "getaddrinfo", lambda *a, **k: (_ for _ in ()).throw(OSError("no DNS in this test")))


def _load(path):
    dataset = mlc.Dataset(jsonld=path)
    assert not dataset.metadata.ctx.issues.errors, dataset.metadata.ctx.issues.report()
    return dataset


def _text(value):
    return value.decode("utf-8") if isinstance(value, bytes) else value


@pytest.fixture
def demo_snapshot(demo_cohort, people):
    sessions = make_sessions(n=6)
    for session in sessions:  # through real reviews: the card then has agreement figures
        approve_by_review(session=session, reviewers=[people["rev1"], people["rev2"]], by=people["boss"])
    return create_snapshot(user=people["boss"], ehr_provenance="synthetic"), sessions


def test_demo_snapshot_croissant_validates_and_reads_offline(demo_snapshot, no_network):
    snapshot, sessions = demo_snapshot
    folder = selectors.snapshot_dir(snapshot=snapshot)
    metadata = json.loads((folder / "croissant.json").read_text(encoding="utf-8"))
    dataset = _load(folder / "croissant.json")

    # Every exported data file is a FileObject with the manifest's sha256 and size.
    objects = {d["name"]: d for d in metadata["distribution"] if d["@type"] == "cr:FileObject"}
    assert {f["name"]: f["sha256"] for f in snapshot.manifest["files"]} == {n: o["sha256"] for n, o in objects.items()}
    for name, entry in objects.items():
        assert hashlib.sha256((folder / name).read_bytes()).hexdigest() == entry["sha256"]

    # The flat rows: one record per line of turns.jsonl, with the same values.
    lines = [json.loads(x) for x in (folder / "turns.jsonl").read_text(encoding="utf-8").splitlines()]
    records = list(dataset.records("turns"))
    assert len(records) == len(lines) == 2 * sum(s.turns.count() for s in sessions)
    first = records[0]
    assert _text(first["turns/record_id"]) == lines[0]["record_id"]
    assert first["turns/turn_index"] == lines[0]["turn_index"] and first["turns/is_implicit"] == lines[0]["is_implicit"]
    assert [_text(r["turns/rubric/text"]) for r in first["turns/rubric"]] == [r["text"] for r in lines[0]["rubric"]]
    assert [_text(r) for r in first["turns/reviewers"]] == lines[0]["reviewers"]
    zh = next(r for r in records if _text(r["turns/language"]) == "zh")
    assert any("\u4e00" <= ch <= "\u9fff" for ch in _text(zh["turns/request"]))  # Chinese as written

    # The PhysAssistBench sessions: one record per session, read from the scenario files.
    sessions_read = list(dataset.records("sessions"))
    assert sorted(_text(r["sessions/id"]) for r in sessions_read) == sorted(s.record_id for s in sessions)
    assert all(len(r["sessions/tasks"]) == 4 for r in sessions_read)

    # Licence, data use and Responsible-AI fields, filled from the card.
    assert metadata["conformsTo"] == "http://mlcommons.org/croissant/1.0"
    assert metadata["conditionsOfAccess"] == card.SYNTHETIC_NOTE and metadata["isAccessibleForFree"] is True
    for key in ("dataCollection", "dataBiases", "personalSensitiveInformation", "dataUseCases", "dataLimitations"):
        assert metadata[f"rai:{key}"], key
        assert getattr(dataset.metadata, _snake(key)), key  # mlcroissant read it under its own name
    assert "Reviewers (turns reviewed)" in metadata["rai:dataAnnotationAnalysis"][0]
    assert metadata["rai:personalSensitiveInformation"] == ["None: the records are synthetic."]

    # The card's YAML header, as hubs read it.
    header, body = card.split_front_matter((folder / "card.md").read_text(encoding="utf-8"))
    assert body.startswith(f"# PhysReview curated set {snapshot.label}")
    assert header["license"] == "other" and header["license_name"] == card.NO_LICENSE_NAME
    assert header["language"] == ["en", "zh"] and header["size_categories"] == ["n<1K"]
    assert "synthetic" in header["tags"] and header["pretty_name"] == f"PhysReview curated set {snapshot.label}"
    assert header["configs"][0]["data_files"] == [{"split": "test", "path": "turns.jsonl"}]


def _snake(name: str) -> str:
    return "".join(f"_{c.lower()}" if c.isupper() else c for c in name)


def test_a_changed_file_fails_its_checksum(demo_snapshot, tmp_path, no_network):
    """A file that no longer matches its sha256 stops the read; an export of every format writes the
    same croissant.json as the snapshot folder's (same snapshot, same bytes)."""
    snapshot, _ = demo_snapshot
    export_to(snapshot=snapshot, formats="all", out=tmp_path / "all")
    folder = selectors.snapshot_dir(snapshot=snapshot)
    assert (tmp_path / "all" / "croissant.json").read_bytes() == (folder / "croissant.json").read_bytes()
    copy = tmp_path / "copy"
    shutil.copytree(selectors.snapshot_dir(snapshot=snapshot), copy)
    (copy / "turns.jsonl").write_text((copy / "turns.jsonl").read_text(encoding="utf-8")[:-200] + "\n")
    dataset = _load(copy / "croissant.json")
    with pytest.raises(Exception, match=r"Download\(turns.jsonl\)") as failure:
        list(itertools.islice(dataset.records("turns"), 1))
    assert "Hash of downloaded file" in str(failure.value.__cause__)


def test_mimic_export_of_pab_files_only(curated, people, tmp_path, no_network):
    """A MIMIC-derived set: PhysioNet licence and DUA in croissant.json and the card header; an export of
    the PAB files alone describes those files and the sessions record set, nothing else."""
    snapshot = create_snapshot(user=people["boss"], ehr_provenance="mimic")
    export_to(snapshot=snapshot, formats="pab", out=tmp_path / "pab")
    metadata = json.loads((tmp_path / "pab" / "croissant.json").read_text(encoding="utf-8"))
    dataset = _load(tmp_path / "pab" / "croissant.json")

    assert metadata["license"] == card.PHYSIONET_LICENSE and metadata["conditionsOfAccess"] == card.MIMIC_NOTE
    assert metadata["isAccessibleForFree"] is False
    assert "PhysioNet DUA" in metadata["rai:personalSensitiveInformation"][0]
    assert [r["name"] for r in metadata["recordSet"]] == ["sessions"]
    names = {d["name"] for d in metadata["distribution"]}
    assert names == {"diagnostic_workup.jsonl", "med_safety.jsonl", croissant.PAB_FILES}
    assert len(list(dataset.records("sessions"))) == 2
    header, _ = card.split_front_matter((tmp_path / "pab" / "card.md").read_text(encoding="utf-8"))
    assert header["license_link"] == card.PHYSIONET_LICENSE and "mimic-iv" in header["tags"]
    assert "credentialed" in header["extra_gated_prompt"]
