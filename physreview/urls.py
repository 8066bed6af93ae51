from django.contrib import admin
from django.contrib.auth import views as auth_views
from django.urls import include, path
from django.views.generic import RedirectView

from physreview.throttle import ThrottledLoginView

urlpatterns = [
    path("", RedirectView.as_view(pattern_name="ehr:patient_list", permanent=False)),
    path("accounts/login/", ThrottledLoginView.as_view(), name="login"),
    path("accounts/logout/", auth_views.LogoutView.as_view(), name="logout"),
    path("admin/", admin.site.urls),
    path("ehr/", include("ehr.urls")),
    path("review/", include("annotations.urls")),
]
