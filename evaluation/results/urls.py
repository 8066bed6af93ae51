from django.urls import path

from evaluation.results import views

urlpatterns = [
    path("", views.leaderboard, name="leaderboard"),
    path("leaderboard.<str:fmt>", views.leaderboard_download, name="leaderboard_download"),
    path("compare/", views.compare, name="compare"),
    path("runs/<int:pk>/", views.run_detail, name="run"),
    path("runs/<int:pk>/download.<str:fmt>", views.run_download, name="run_download"),
    path("runs/<int:pk>/turns/", views.turn_list, name="turns"),
    path("runs/<int:pk>/turns/<int:result_pk>/", views.turn_detail, name="turn"),
    path("runs/<int:pk>/turns/<int:result_pk>/fault/", views.turn_fault, name="turn_fault"),
]
