"""Results pages (leaderboard, comparisons, drill-down, downloads) and judge calibration."""

from django.urls import include, path

app_name = "evaluation"

urlpatterns = [
    path("", include("evaluation.results.urls")),
    path("calibration/", include("evaluation.calibration.urls")),
]
