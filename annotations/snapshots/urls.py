from django.urls import path

from annotations.snapshots import views

app_name = "snapshots"

urlpatterns = [
    path("<str:label>/files/<str:name>", views.download, name="download"),
]
