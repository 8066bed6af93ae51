"""`manage.py check --deploy` is clean with production settings; the demo defaults still work over http."""

import secrets

import pytest
from django.conf import settings
from django.urls import reverse

from tests.physreview.startup import run_python

PRODUCTION = {
    "DEBUG": "false",
    "SECRET_KEY": secrets.token_urlsafe(40)[:50],
    "ALLOWED_HOSTS": "review.example.org",
    "SECURE_SSL_REDIRECT": "true",
    "SESSION_COOKIE_SECURE": "true",
    "CSRF_COOKIE_SECURE": "true",
    "SECURE_HSTS_SECONDS": "31536000",
    "SECURE_HSTS_INCLUDE_SUBDOMAINS": "true",
    "SECURE_HSTS_PRELOAD": "true",
    "SECURE_PROXY_SSL_HEADER": "HTTP_X_FORWARDED_PROTO,https",
    "CSRF_TRUSTED_ORIGINS": "https://review.example.org,https://review2.example.org:8443",
}


def _run(args, env, tmp_path):
    return run_python(args, env=env, var_dir=tmp_path)


def test_check_deploy_is_clean_with_production_settings(tmp_path):
    assert len(PRODUCTION["SECRET_KEY"]) == 50
    result = _run(["manage.py", "check", "--deploy", "--fail-level", "WARNING"], PRODUCTION, tmp_path)
    output = result.stdout + result.stderr
    assert result.returncode == 0, output
    assert "WARNING" not in output and "security." not in output, output
    assert "System check identified no issues" in result.stdout


def test_check_deploy_warns_with_the_demo_defaults(tmp_path):
    """The guard above is meaningful: without the production variables the deploy check complains."""
    result = _run(["manage.py", "check", "--deploy", "--fail-level", "WARNING"], {}, tmp_path)
    assert result.returncode != 0
    for warning in ("security.W004", "security.W008", "security.W012", "security.W016"):
        assert warning in result.stderr


def test_production_values_are_parsed(tmp_path):
    result = _run(
        [
            "-c",
            "import django; django.setup(); from django.conf import settings as s;"
            "print(s.SECURE_SSL_REDIRECT, s.SESSION_COOKIE_SECURE, s.CSRF_COOKIE_SECURE, s.SECURE_HSTS_SECONDS,"
            " s.SECURE_HSTS_INCLUDE_SUBDOMAINS, s.SECURE_HSTS_PRELOAD, '|'.join(s.SECURE_PROXY_SSL_HEADER),"
            " '|'.join(s.CSRF_TRUSTED_ORIGINS))",
        ],
        PRODUCTION,
        tmp_path,
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == [
        "True",
        "True",
        "True",
        "31536000",
        "True",
        "True",
        "HTTP_X_FORWARDED_PROTO|https",
        "https://review.example.org|https://review2.example.org:8443",
    ]


@pytest.mark.parametrize(
    ("name", "value", "expected"),
    [
        ("SECURE_SSL_REDIRECT", "yes please", "SECURE_SSL_REDIRECT='yes please' is not a boolean"),
        ("SESSION_COOKIE_SECURE", "enabled", "SESSION_COOKIE_SECURE='enabled' is not a boolean"),
        ("CSRF_COOKIE_SECURE", "2", "CSRF_COOKIE_SECURE='2' is not a boolean"),
        ("SECURE_HSTS_SECONDS", "1y", "SECURE_HSTS_SECONDS='1y' is not an integer"),
        ("SECURE_HSTS_SECONDS", "-5", "SECURE_HSTS_SECONDS='-5' must be at least 0"),
        ("SECURE_HSTS_INCLUDE_SUBDOMAINS", "y", "SECURE_HSTS_INCLUDE_SUBDOMAINS='y' is not a boolean"),
        ("SECURE_HSTS_PRELOAD", "t", "SECURE_HSTS_PRELOAD='t' is not a boolean"),
        ("SECURE_PROXY_SSL_HEADER", "X-Forwarded-Proto", "SECURE_PROXY_SSL_HEADER='X-Forwarded-Proto' must be"),
        ("CSRF_TRUSTED_ORIGINS", "review.example.org", "CSRF_TRUSTED_ORIGINS='review.example.org' contains"),
        ("CSRF_TRUSTED_ORIGINS", "https://a.example,", "CSRF_TRUSTED_ORIGINS='https://a.example,' contains ''"),
    ],
)
def test_bad_security_value_fails_at_start_with_its_name(name, value, expected, tmp_path):
    result = _run(["-c", "import django; django.setup()"], {name: value}, tmp_path)
    assert result.returncode != 0
    assert "ImproperlyConfigured" in result.stderr
    assert expected in result.stderr


def test_demo_defaults_serve_the_login_page_over_http(client):
    assert not settings.SECURE_SSL_REDIRECT
    assert not settings.SESSION_COOKIE_SECURE and not settings.CSRF_COOKIE_SECURE
    assert settings.SECURE_HSTS_SECONDS == 0
    response = client.get(reverse("login"))  # plain http: no redirect to https
    assert response.status_code == 200
    assert not response.wsgi_request.is_secure()
    assert "Strict-Transport-Security" not in response.headers
