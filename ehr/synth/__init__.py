"""Synthetic MIMIC-IV-layout cohort generator (``manage.py synth_ehr``; ENGINE.md says why it is in-house).

Modules, in the order a patient flows through them:

- ``plan``: demographics, chronic conditions (``conditions``), home drugs, admissions and anchor years.
- ``diseases`` (+ ``diseases_cardiorenal``, ``diseases_infection``, ``disease_types``): what each
  admission diagnosis does to labs, vitals, orders, cultures, imaging and the note.
- ``encounters``: patients, admissions, transfers, services, icustays, diagnoses/procedures ICD.
- ``micro`` (organism first), ``meds`` (prescriptions + emar), ``labs``, ``vitals`` (chartevents + omr),
  ``notes`` (discharge + radiology).
- ``catalog``, ``drugs``, ``microbes``, ``icd``: dictionaries; ``sink`` + ``writer``: ids and CSV.GZ output.
- ``cohort.generate_cohort``: runs all of the above, patient by patient.
"""
