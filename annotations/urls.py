from django.urls import path

from annotations import views

app_name = "annotations"

urlpatterns = [
    path("", views.queue, name="queue"),
    path("done/", views.done, name="done"),  # the reviewer's submitted turns
    path("turns/<int:pk>/", views.review_turn, name="turn"),
    path("turns/<int:pk>/approve/", views.approve, name="approve"),
    path("turns/<int:pk>/reject/", views.reject, name="reject"),
    path("turns/<int:pk>/undo/", views.undo, name="undo"),  # withdraw a just-submitted review
    path("turns/<int:pk>/comment/", views.comment, name="comment"),
    path("turns/<int:pk>/edit/", views.edit, name="edit"),
    path("turns/<int:pk>/raw/", views.step_raw, name="step_raw"),  # ?step=<idx>: a step's raw observation
    path("turns/<int:pk>/draft/discard/", views.discard_draft, name="discard_draft"),
    path("turns/<int:pk>/merge/", views.merge, name="merge"),
    path("turns/<int:pk>/lease/", views.lease, name="lease"),
    path("turns/<int:pk>/lease/release/", views.release_lease, name="release_lease"),
    path("adjudicate/<int:pk>/", views.adjudicate, name="adjudicate"),
    # An edit of an approved turn: confirmed or reverted by someone other than the editor.
    path("turns/<int:pk>/confirm/", views.confirm, name="confirm"),
    path("history/<int:pk>/", views.history, name="history"),
    path("dashboard/", views.dashboard, name="dashboard"),
]
