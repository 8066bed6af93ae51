from django.urls import path

from ehr import views

app_name = "ehr"
urlpatterns = [
    path("patients/", views.patient_list, name="patient_list"),
    path("admissions/<int:hadm_id>/", views.admission_detail, name="admission_detail"),
]
