from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render

from ehr import selectors


@login_required
def patient_list(request: HttpRequest) -> HttpResponse:
    query = request.GET.get("q", "").strip()
    return render(request, "ehr/patient_list.html", {"rows": selectors.patient_rows(query=query), "q": query})


@login_required
def admission_detail(request: HttpRequest, hadm_id: int) -> HttpResponse:
    return render(request, "ehr/admission_detail.html", selectors.admission_overview(hadm_id=hadm_id))
