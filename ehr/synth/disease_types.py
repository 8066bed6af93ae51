"""Types describing an admission diagnosis: lab effects, orders, imaging studies.

One ``Disease`` is the principal diagnosis of an admission. Everything the admission produces is
derived from it plus the patient's chronic conditions, which is what keeps diagnoses, labs,
medications, microbiology and the discharge note consistent with each other.
"""

from dataclasses import dataclass, field


@dataclass(frozen=True)
class Effect:
    """How one lab behaves during the admission (values in the lab's unit).

    kind: ``recover`` starts abnormal (lo..hi) and returns toward the patient's baseline at
    ``rate`` per day; ``rise`` starts at the baseline and approaches ``target`` (e.g. INR on
    warfarin); ``peak`` climbs to lo..hi on ``peak_day`` then recovers (troponin, drug AKI).
    """

    kind: str
    lo: float
    hi: float
    rate: float = 0.35
    target: float | None = None
    peak_day: int = 1


@dataclass(frozen=True)
class Order:
    drug: str
    start: int = 0  # hospital day the order starts
    days: int | None = None  # None: until discharge
    prn: bool = False


@dataclass(frozen=True)
class Study:
    name: str  # exam name, first line of the report
    findings: tuple[str, ...]  # alternatives
    impression: tuple[str, ...]


@dataclass(frozen=True)
class Disease:
    key: str
    name: str  # discharge diagnosis wording
    icd10: str
    icd9: str
    secondary: tuple[tuple[str, str], ...]  # extra (icd10, icd9) coded with it
    requires: tuple[str, ...]  # chronic conditions the patient must have
    service: str
    careunit: str
    icu: float  # probability of an ICU stay
    los: tuple[int, int]  # length of stay in days
    chief_complaint: str
    hpi: dict[str, tuple[str, ...]]  # onset, location, duration, character, severity, modifiers, associated
    effects: dict[str, Effect]
    extra_labs: tuple[str, ...]  # lab keys drawn daily besides BMP and CBC
    admit_labs: tuple[str, ...]  # lab keys drawn once at admission
    orders: tuple[Order, ...]
    hold: tuple[str, ...]  # home drug keys held during the stay (and why in the note)
    discharge_add: tuple[str, ...]  # drug keys newly started at discharge
    discharge_stop: tuple[str, ...]  # home drug keys stopped at discharge
    cultures: tuple[tuple[str, tuple[str | None, ...]], ...]  # (specimen key, organism alternatives)
    studies: tuple[Study, ...]
    procedures: tuple[tuple[str, str], ...]  # (ICD-10-PCS, ICD-9 procedure)
    vitals: dict[str, tuple[float, float]] = field(default_factory=dict)  # admission vital ranges
    course: str = ""
    instructions: str = ""
    followup: str = ""


CXR_CLEAR = Study(
    "CHEST (PA AND LAT)",
    (
        "The lungs are clear without focal consolidation, pleural effusion or pneumothorax. "
        "The cardiomediastinal silhouette is within normal limits.",
    ),
    ("No acute cardiopulmonary process.",),
)
