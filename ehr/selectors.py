"""Read queries for the patient browser."""
