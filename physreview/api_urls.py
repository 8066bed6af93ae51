"""The REST API, mounted at ``/api/`` by physreview.urls (namespace ``api``): the review app's routes and the
evaluation app's under one router, composed here by the site so that neither app needs to know the other."""

from django.urls import path, re_path
from drf_spectacular.views import SpectacularAPIView, SpectacularSwaggerView
from rest_framework.routers import DefaultRouter

from annotations.api import snapshots, views
from evaluation.api import EvalRunViewSet, TurnResultViewSet

app_name = "api"

router = DefaultRouter(trailing_slash=True)
router.include_format_suffixes = False
router.register("sessions", views.SessionViewSet, basename="session")
router.register("turns", views.TurnViewSet, basename="turn")
router.register("snapshots", snapshots.SnapshotViewSet, basename="snapshot")
router.register("runs", EvalRunViewSet, basename="run")
router.register(r"runs/(?P<run_pk>[0-9]+)/turns", TurnResultViewSet, basename="run-turn")

urlpatterns = [
    path("schema/", SpectacularAPIView.as_view(), name="schema"),
    # Swagger UI only: drf-spectacular's Redoc page pulls Google Fonts, and the docs must work offline.
    # GET only: DRF's OPTIONS metadata has no template for this HTML-only view (a 500 otherwise).
    path(
        "docs/", SpectacularSwaggerView.as_view(url_name="api:schema", http_method_names=["get", "head"]), name="docs"
    ),
    *router.urls,
    # Unnamed on purpose: a name would reverse to "/api/" (the root), not to this catch-all.
    re_path(r"^.*$", views.NotFoundView.as_view()),
]
