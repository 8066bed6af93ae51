"""The start page (``/``, where login lands): each role on its own screen, a user with no role told so."""

from __future__ import annotations

from django.contrib.auth.views import redirect_to_login
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render

from annotations.roles import start_page_for


def home(request: HttpRequest) -> HttpResponse:
    if not request.user.is_authenticated:
        return redirect_to_login("/")
    target = start_page_for(request.user)
    if target is None:
        return render(request, "no_role.html")
    return redirect(target)
