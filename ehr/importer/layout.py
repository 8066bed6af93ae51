"""Which files make up each table: the standard MIMIC-IV layout or the release's per-patient split.

Standard
    ``ROOT/hosp/labevents.csv.gz`` (or ``.csv``): one file per table.
Per-patient (the PhysAssistBench release)
    ``ROOT/<subject_id>/hosp_labevents.csv.csv.gz`` (or ``.csv.gz``, ``.csv``; preferred in that
    order): one file per table and patient, ``<module>_<table>`` being the standard path with ``_``
    for ``/``. All patients' files of a table are loaded as that table, in subject_id order.

Rules (nothing is guessed, so no data is silently left out)
    - A root with table files in both layouts is an error: import each from its own folder.
    - In the per-patient layout every folder under the root must be named by an integer
      (the subject_id); any other folder is an error. Hidden entries (``.name``) and plain files
      at the root are ignored; files in a patient folder that are not a table PhysReview reads are
      ignored with one note.
    - A table is present if any patient folder has its file. With subjects, only those subjects'
      folders are read, and their rows of every present table are replaced. Tables without ``subject_id``
      (dictionaries) are not part of the split; if patient folders hold them anyway, they are read
      from every folder (a dictionary is always replaced whole) and a key repeated across folders is
      a duplicate-key error.
"""

import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from ehr.importer.errors import ImportArgumentError
from ehr.importer.source import find_table_file
from ehr.mimic_tables import TABLES, MimicTableSpec

PATIENT_SUFFIXES = (".csv.csv.gz", ".csv.gz", ".csv")
_SUBJECT_DIR_RE = re.compile(r"[0-9]+")


@dataclass(frozen=True)
class SourceFile:
    path: Path
    subject_id: int | None = None  # the patient folder's subject_id in the per-patient layout


@dataclass
class Layout:
    kind: Literal["standard", "per-patient"]
    # Present tables only: name → files in load order (empty when no selected subject has a file).
    files: dict[str, list[SourceFile]]
    ignored: dict[str, list[tuple[Path, Path]]]  # table name → (ignored file, file imported instead)
    notes: list[str] = field(default_factory=list)

    def absent_note(self, *, spec: MimicTableSpec, root: Path) -> str:
        if self.kind == "standard":
            return f"note: {spec.path}.csv.gz / .csv not in {root}, {spec.name} skipped"
        stem = patient_stem(spec)
        return f"note: no {stem}.csv.csv.gz / .csv.gz / .csv in the patient folders of {root}, {spec.name} skipped"


def patient_stem(spec: MimicTableSpec) -> str:
    """``hosp/labevents`` → ``hosp_labevents``."""
    return spec.path.replace("/", "_")


def find_layout(*, root: Path, specs: list[MimicTableSpec], subjects: set[int] | None) -> Layout:
    """The files of ``specs`` under ``root``; :class:`ImportArgumentError` for a layout the rules refuse."""
    standard = {name: find_table_file(root=root, stem=spec.path) for name, spec in TABLES.items()}
    standard_files = [path for path, _ in standard.values() if path]
    patient_dirs, other_dirs = _subdirectories(root)
    by_subject = {d: _patient_files(d) for d in patient_dirs}
    patient_files = [path for found, _ in by_subject.values() for path, _ in found.values()]

    if standard_files and patient_files:
        raise ImportArgumentError(
            f"{root}: mixes the standard layout ({standard_files[0].relative_to(root)}) and the per-patient "
            f"layout ({patient_files[0].relative_to(root)}); import each from its own folder"
        )
    if not patient_files:
        if not standard_files and (loose := sorted(_patient_files(root)[0])):
            # One patient's folder given instead of the release's root.
            raise ImportArgumentError(
                f"{root}: holds per-patient files ({patient_stem(TABLES[loose[0]])}...) outside a <subject_id> "
                f"folder: give the folder that contains the patient folders ({root.parent})"
            )
        if not any(standard[spec.name][0] for spec in specs):
            looked = ", ".join(f"{spec.path}.csv[.gz]" for spec in specs[:2])
            per_patient = ", ".join(f"<subject_id>/{patient_stem(spec)}.csv.csv.gz" for spec in specs[:2])
            raise ImportArgumentError(
                f"{root}: no MIMIC-IV table file found (looked for {looked}, ... or, per patient, {per_patient}, ...)"
            )
        chosen = {spec.name: standard[spec.name] for spec in specs if standard[spec.name][0]}
        files = {name: [SourceFile(path)] for name, (path, _) in chosen.items() if path}
        ignored = {name: [(other, path) for other in others] for name, (path, others) in chosen.items() if path}
        return Layout(kind="standard", files=files, ignored=ignored)

    if other_dirs:
        names = ", ".join(f"{d.name}/" for d in other_dirs[:3]) + (", ..." if len(other_dirs) > 3 else "")
        raise ImportArgumentError(
            f"{root}: {names} not a patient folder: in the per-patient layout "
            f"(<subject_id>/<module>_<table>.csv.csv.gz) every folder is named by an integer subject_id"
        )
    wanted = {spec.name for spec in specs}
    present = {name for found, _ in by_subject.values() for name in found} & wanted
    if not present:
        stems = ", ".join(f"<subject_id>/{patient_stem(spec)}.csv.csv.gz" for spec in specs[:2])
        raise ImportArgumentError(
            f"{root}: no MIMIC-IV table file of the selected tables found (looked for {stems}, ...)"
        )
    # A table in any folder is present: with subjects, their rows are replaced even if they have no file.
    layout = Layout(kind="per-patient", files={n: [] for n in present}, ignored={n: [] for n in present})
    for folder in sorted(patient_dirs, key=lambda d: (int(d.name), d.name)):
        subject_id = int(folder.name)
        for name, (path, others) in by_subject[folder][0].items():
            if name not in present or (
                subjects is not None and TABLES[name].has_subject and subject_id not in subjects
            ):
                continue
            layout.files[name].append(SourceFile(path, subject_id))
            layout.ignored[name].extend((other, path) for other in others)
    unknown = sorted({n for _, names in by_subject.values() for n in names})
    if unknown:
        shown = ", ".join(unknown[:5]) + (", ..." if len(unknown) > 5 else "")
        layout.notes.append(f"note: ignoring files in patient folders that are not tables PhysReview reads: {shown}")
    if subjects is not None:
        folders = {int(d.name) for d in patient_dirs}
        if missing := sorted(subjects - folders):
            shown = ", ".join(map(str, missing[:5])) + (", ..." if len(missing) > 5 else "")
            layout.notes.append(f"note: no patient folder in {root} for subject(s) {shown}")
    return layout


def _subdirectories(root: Path) -> tuple[list[Path], list[Path]]:
    """Visible folders under ``root``: those named by an integer, and the others."""
    patients, others = [], []
    with os.scandir(root) as entries:
        for entry in entries:
            if entry.name.startswith(".") or not entry.is_dir():
                continue
            (patients if _SUBJECT_DIR_RE.fullmatch(entry.name) else others).append(Path(entry.path))
    return sorted(patients), sorted(others)


def _patient_files(folder: Path) -> tuple[dict[str, tuple[Path, list[Path]]], list[str]]:
    """Table name → (file to import, ignored variants) in one patient folder; and unknown visible file names."""
    names = {n for n in os.listdir(folder) if not n.startswith(".")}
    found: dict[str, tuple[Path, list[Path]]] = {}
    used: set[str] = set()
    for table, spec in TABLES.items():
        variants = [f"{patient_stem(spec)}{suffix}" for suffix in PATIENT_SUFFIXES]
        present = [n for n in variants if n in names]
        if present:
            found[table] = (folder / present[0], [folder / n for n in present[1:]])
            used.update(present)
    return found, sorted(names - used)
