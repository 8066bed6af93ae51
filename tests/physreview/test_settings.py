"""Settings come only from the environment; a bad value stops start-up with a message naming it."""

import pytest

from tests.physreview.startup import print_settings


def _start(env: dict[str, str], tmp_path):
    return print_settings("s.DEBUG", env=env, var_dir=tmp_path)


@pytest.mark.parametrize(
    ("name", "value", "expected"),
    [
        ("DEBUG", "maybe", "DEBUG='maybe' is not a boolean"),
        ("DATABASE_URL", "mysql://root@localhost/x", "DATABASE_URL='mysql://root@localhost/x' has scheme 'mysql'"),
        ("CELERY_BROKER_URL", "localhost:6379", "CELERY_BROKER_URL='localhost:6379' has scheme 'localhost'"),
        ("SECRET_KEY", "short", "SECRET_KEY is set but shorter than 32 characters"),
        ("OPENAI_BASE_URL", "api.example", "OPENAI_BASE_URL='api.example' has scheme '(none)'"),
        ("ALLOWED_HOSTS", "a,,b", "ALLOWED_HOSTS='a,,b' contains an empty host name"),
    ],
)
def test_bad_environment_value_fails_at_start_with_its_name(name, value, expected, tmp_path):
    result = _start({name: value}, tmp_path)
    assert result.returncode != 0
    assert "ImproperlyConfigured" in result.stderr
    assert expected in result.stderr


def test_defaults_are_demo_safe(tmp_path):
    result = print_settings(
        "s.DATABASES['default']['ENGINE'], s.DATABASES['default']['NAME'], s.DEBUG,"
        " s.CELERY_TASK_ALWAYS_EAGER, len(s.SECRET_KEY) >= 50",
        env={},
        var_dir=tmp_path,
    )
    assert result.returncode == 0, result.stderr
    engine, name, debug, eager, key_ok = result.stdout.split()
    assert engine == "django.db.backends.sqlite3"
    assert name == str(tmp_path / "physreview.sqlite3")
    assert (debug, eager, key_ok) == ("False", "True", "True")
    # The generated secret key is kept, so sessions survive restarts.
    assert (tmp_path / "secret_key").read_text().strip()


def test_valid_postgres_url_and_broker_are_accepted(tmp_path):
    result = _start(
        {"DATABASE_URL": "postgres://postgres@127.0.0.1:5432/x", "CELERY_BROKER_URL": "redis://127.0.0.1:6379/3"},
        tmp_path,
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "False"


def test_empty_variables_mean_unset(tmp_path):
    result = _start({"DATABASE_URL": "", "CELERY_BROKER_URL": "", "OPENAI_BASE_URL": ""}, tmp_path)
    assert result.returncode == 0, result.stderr
