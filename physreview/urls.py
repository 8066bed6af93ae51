from django.contrib import admin
from django.contrib.auth import views as auth_views
from django.urls import include, path

from annotations.views import start as start_views
from physreview.throttle import ThrottledLoginView

admin.autodiscover()  # here rather than at start-up (physreview.apps.PhysReviewAdminConfig)

urlpatterns = [
    path("", start_views.home, name="home"),  # each role's start page (annotations.roles.start_page_for)
    path("accounts/login/", ThrottledLoginView.as_view(), name="login"),
    path("accounts/logout/", auth_views.LogoutView.as_view(), name="logout"),
    path("admin/", admin.site.urls),
    # The header's language switch posts to i18n/setlang/, which keeps the choice in a cookie.
    path("i18n/", include("django.conf.urls.i18n")),
    path("ehr/", include("ehr.urls")),
    path("review/", include("annotations.urls")),
    path("snapshots/", include("annotations.snapshots.urls")),  # staff download of snapshot files
    path("results/", include("evaluation.urls")),  # leaderboard, drill-down, judge calibration
    path("api/", include("physreview.api_urls")),  # REST API, OpenAPI schema and docs (docs/api.md)
]
