"""Lab and chart item dictionaries (d_labitems, d_items) with reference ranges and print precision.

The itemids are the real MIMIC-IV ones so that tools, rubrics and tests written against the
synthetic cohort keep working on credentialed data.
"""

from dataclasses import dataclass


@dataclass(frozen=True)
class LabItem:
    itemid: int
    label: str
    fluid: str
    category: str
    unit: str | None
    low: float | None  # reference range; None = the lab prints none (real files have gaps)
    high: float | None
    decimals: int


# Positional on purpose: each call below is one row of the dictionary table.
def _lab(
    itemid: int, label: str, fluid: str, category: str, unit: str | None, low: float | None, high: float | None,
    decimals: int,
) -> LabItem:  # fmt: skip
    return LabItem(itemid, label, fluid, category, unit, low, high, decimals)


# Real MIMIC-IV d_labitems rows (itemid, label, fluid, category). "Glucose" appears for two
# fluids on purpose: 50931 (blood) and 51478 (urine), as in the real dictionary.
LAB_ITEMS: dict[str, LabItem] = {
    "creatinine": _lab(50912, "Creatinine", "Blood", "Chemistry", "mg/dL", 0.5, 1.2, 1),
    "potassium": _lab(50971, "Potassium", "Blood", "Chemistry", "mEq/L", 3.3, 5.1, 1),
    "sodium": _lab(50983, "Sodium", "Blood", "Chemistry", "mEq/L", 133, 145, 0),
    "chloride": _lab(50902, "Chloride", "Blood", "Chemistry", "mEq/L", 96, 108, 0),
    "bicarbonate": _lab(50882, "Bicarbonate", "Blood", "Chemistry", "mEq/L", 22, 32, 0),
    "anion_gap": _lab(50868, "Anion Gap", "Blood", "Chemistry", "mEq/L", 8, 20, 0),
    "bun": _lab(51006, "Urea Nitrogen", "Blood", "Chemistry", "mg/dL", 6, 20, 0),
    "glucose": _lab(50931, "Glucose", "Blood", "Chemistry", "mg/dL", 70, 100, 0),
    "magnesium": _lab(50960, "Magnesium", "Blood", "Chemistry", "mg/dL", 1.6, 2.6, 1),
    "calcium": _lab(50893, "Calcium, Total", "Blood", "Chemistry", "mg/dL", 8.4, 10.3, 1),
    "albumin": _lab(50862, "Albumin", "Blood", "Chemistry", "g/dL", 3.5, 5.2, 1),
    "bilirubin": _lab(50885, "Bilirubin, Total", "Blood", "Chemistry", "mg/dL", 0.0, 1.5, 1),
    "crp": _lab(50889, "C-Reactive Protein", "Blood", "Chemistry", "mg/L", 0.0, 5.0, 1),
    "hba1c": _lab(50852, "% Hemoglobin A1c", "Blood", "Chemistry", "%", 4.0, 6.0, 1),
    "troponin_t": _lab(51003, "Troponin T", "Blood", "Chemistry", "ng/mL", 0.0, 0.01, 2),
    "ntprobnp": _lab(50963, "NTproBNP", "Blood", "Chemistry", "pg/mL", 0, 353, 0),
    "vancomycin": _lab(51009, "Vancomycin", "Blood", "Chemistry", "ug/mL", None, None, 1),
    "lactate": _lab(50813, "Lactate", "Blood", "Blood Gas", "mmol/L", 0.5, 2.0, 1),
    "wbc": _lab(51301, "White Blood Cells", "Blood", "Hematology", "K/uL", 4.0, 11.0, 1),
    "hemoglobin": _lab(51222, "Hemoglobin", "Blood", "Hematology", "g/dL", 12.0, 16.0, 1),
    "hematocrit": _lab(51221, "Hematocrit", "Blood", "Hematology", "%", 36.0, 48.0, 1),
    "platelets": _lab(51265, "Platelet Count", "Blood", "Hematology", "K/uL", 150, 440, 0),
    "inr": _lab(51237, "INR(PT)", "Blood", "Hematology", None, 0.9, 1.1, 1),
    "pt": _lab(51274, "PT", "Blood", "Hematology", "sec", 9.4, 12.5, 1),
    "ptt": _lab(51275, "PTT", "Blood", "Hematology", "sec", 25.0, 36.5, 1),
    "urine_glucose": _lab(51478, "Glucose", "Urine", "Hematology", "mg/dL", None, None, 0),
    "urine_ketone": _lab(51484, "Ketone", "Urine", "Hematology", "mg/dL", None, None, 0),
    "urine_leukocytes": _lab(51486, "Leukocytes", "Urine", "Hematology", None, None, None, 0),
    "urine_nitrite": _lab(51487, "Nitrite", "Urine", "Hematology", None, None, None, 0),
    "urine_wbc": _lab(51516, "WBC", "Urine", "Hematology", "#/hpf", 0, 5, 0),
}

# Panels drawn together on one specimen, as a lab orders them.
PANELS: dict[str, tuple[str, ...]] = {
    "bmp": ("sodium", "potassium", "chloride", "bicarbonate", "anion_gap", "bun", "creatinine", "glucose"),
    "cbc": ("wbc", "hemoglobin", "hematocrit", "platelets"),
    "coag": ("inr", "pt", "ptt"),
    "urinalysis": ("urine_glucose", "urine_ketone", "urine_leukocytes", "urine_nitrite", "urine_wbc"),
}


@dataclass(frozen=True)
class ChartItem:
    itemid: int
    label: str
    abbreviation: str
    category: str
    unit: str | None
    low: float | None
    high: float | None
    decimals: int


# Real MIMIC-IV d_items rows for the vital signs the cohort charts.
CHART_ITEMS: dict[str, ChartItem] = {
    "hr": ChartItem(220045, "Heart Rate", "HR", "Routine Vital Signs", "bpm", 60, 100, 0),
    "sbp": ChartItem(220179, "Non Invasive Blood Pressure systolic", "NBPs", "Routine Vital Signs", "mmHg", 90, 140, 0),
    "dbp": ChartItem(220180, "Non Invasive Blood Pressure diastolic", "NBPd", "Routine Vital Signs", "mmHg", 60, 90, 0),
    "mbp": ChartItem(220181, "Non Invasive Blood Pressure mean", "NBPm", "Routine Vital Signs", "mmHg", 65, 105, 0),
    "rr": ChartItem(220210, "Respiratory Rate", "RR", "Respiratory", "insp/min", 12, 20, 0),
    "spo2": ChartItem(220277, "O2 saturation pulseoxymetry", "SpO2", "Respiratory", "%", 92, 100, 0),
    "temp": ChartItem(223762, "Temperature Celsius", "Temperature C", "Routine Vital Signs", "°C", 36.0, 38.0, 1),
    "weight": ChartItem(226512, "Admission Weight (Kg)", "Admit Wt", "General", "kg", None, None, 1),
    "height": ChartItem(226730, "Height (cm)", "Height (cm)", "General", "cm", None, None, 0),
    "fingerstick": ChartItem(
        225664, "Glucose finger stick (range 70-100)", "Glucose FS", "Routine Vital Signs", "mg/dL", 70, 100, 0
    ),
    "o2flow": ChartItem(223834, "O2 Flow", "O2 Flow", "Respiratory", "L/min", None, None, 0),
    "pain": ChartItem(223791, "Pain Level", "Pain Level", "Pain/Sedation", None, None, None, 0),
}
