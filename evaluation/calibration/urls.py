"""Judge calibration, mounted at /results/calibration/ inside the ``evaluation`` namespace."""

from django.urls import path

from evaluation.calibration import views

urlpatterns = [
    path("", views.index, name="calibration_index"),
    path("samples/", views.draw, name="calibration_draw"),
    path("samples/<int:pk>/next/", views.next_item, name="calibration_next"),
    path("samples/<int:pk>/answers/<int:turn_result>/", views.grade, name="calibration_grade"),
    path("samples/<int:pk>/answers/<int:turn_result>/grade/", views.save, name="calibration_save"),
    path("agreement/", views.agreement, name="calibration_agreement"),
]
