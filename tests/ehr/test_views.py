import pytest
from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group
from django.urls import reverse

from ehr.models import Admission, DiagnosisIcd, DIcdDiagnosis, LabEvent


@pytest.fixture
def client_logged_in(client, db):
    user = get_user_model().objects.create_user(username="dr_a", password="pw-123456")
    user.groups.add(Group.objects.get_or_create(name="reviewer")[0])  # no role, no EHR pages (physreview.access)
    client.force_login(user)
    return client


@pytest.mark.parametrize("url_name", ["ehr:patient_list"])
def test_pages_require_login(client, db, url_name):
    response = client.get(reverse(url_name))
    assert response.status_code == 302
    assert response.url.startswith(reverse("login"))


def test_admission_page_requires_login(client, demo_cohort):
    hadm_id = Admission.objects.values_list("hadm_id", flat=True).first()
    response = client.get(reverse("ehr:admission_detail", args=[hadm_id]))
    assert response.status_code == 302


def test_patient_list_shows_every_patient_with_admission_links(client_logged_in, demo_cohort):
    response = client_logged_in.get(reverse("ehr:patient_list"))
    assert response.status_code == 200
    body = response.content.decode()
    for adm in Admission.objects.all()[:20]:
        assert reverse("ehr:admission_detail", args=[adm.hadm_id]) in body


def test_patient_list_query_count_does_not_grow_with_patients(
    client_logged_in, demo_cohort, django_assert_max_num_queries
):
    with django_assert_max_num_queries(6):
        client_logged_in.get(reverse("ehr:patient_list"))


def test_patient_search_by_diagnosis_title(client_logged_in, demo_cohort):
    dx = DiagnosisIcd.objects.first()
    title = DIcdDiagnosis.objects.get(icd_code=dx.icd_code, icd_version=dx.icd_version).long_title
    word = max(title.split(), key=len)
    response = client_logged_in.get(reverse("ehr:patient_list"), {"q": word})
    assert str(dx.subject_id) in response.content.decode()


def test_patient_search_by_hadm_id_finds_its_patient_only(client_logged_in, demo_cohort):
    adm = Admission.objects.first()
    response = client_logged_in.get(reverse("ehr:patient_list"), {"q": str(adm.hadm_id)})
    rows = response.context["rows"]
    assert [r.patient.subject_id for r in rows] == [adm.subject_id]


def test_admission_page_shows_labs_meds_diagnoses_notes(client_logged_in, demo_cohort, django_assert_max_num_queries):
    hadm_id = LabEvent.objects.exclude(hadm_id=None).values_list("hadm_id", flat=True).first()
    with django_assert_max_num_queries(16):  # + the user's groups (physreview.access)
        response = client_logged_in.get(reverse("ehr:admission_detail", args=[hadm_id]))
    assert response.status_code == 200
    body = response.content.decode()
    for heading in ("Diagnoses", "Labs", "Medications", "Microbiology", "Notes"):
        assert f"<h2>{heading}" in body
    assert response.context["labs"], "an admission with lab events lists them"
    assert '<svg class="spark"' in body


def test_unknown_admission_is_404(client_logged_in):
    assert client_logged_in.get(reverse("ehr:admission_detail", args=[999999999])).status_code == 404
