"""PhysReview settings: the one place configuration is read, only from environment variables.

Every variable has a default that is safe for the local demo (SQLite file under ``var/``, tasks
run in-process, the offline ``rules`` LLM backend). A value that cannot be parsed stops start-up
with :class:`~django.core.exceptions.ImproperlyConfigured` naming the variable and the value.
"""

import ipaddress
import os
import secrets
from pathlib import Path
from urllib.parse import urlsplit

import environ
from django.core.exceptions import ImproperlyConfigured

BASE_DIR = Path(__file__).resolve().parent.parent
VAR_DIR = Path(os.environ.get("PHYSREVIEW_VAR_DIR", BASE_DIR / "var"))

env = environ.Env()

_TRUE = {"1", "true", "yes", "on"}
_FALSE = {"0", "false", "no", "off", ""}


def _bool(name: str, default: bool) -> bool:
    """Strict boolean: django-environ maps any unknown word to False, which hides typos."""
    raw = os.environ.get(name)
    if raw is None:
        return default
    value = raw.strip().lower()
    if value in _TRUE:
        return True
    if value in _FALSE:
        return False
    raise ImproperlyConfigured(f"{name}={raw!r} is not a boolean (use one of: true, false, 1, 0, yes, no).")


def _url(name: str, default: str | None, *, schemes: set[str]) -> str | None:
    # An empty variable (``DATABASE_URL=``) means unset, as shells and .env files often write it.
    raw = os.environ.get(name) or default
    if raw is None:
        return None
    scheme = urlsplit(raw).scheme
    if scheme not in schemes:
        raise ImproperlyConfigured(
            f"{name}={raw!r} has scheme {scheme or '(none)'!r}; expected one of {', '.join(sorted(schemes))}."
        )
    return raw


def _int(name: str, default: int, *, minimum: int) -> int:
    """Strict integer no smaller than ``minimum``; ``1e3``, ``5.0`` or ``five`` stop start-up."""
    raw = os.environ.get(name)
    if raw is None or raw.strip() == "":
        return default
    try:
        value = int(raw.strip(), 10)
    except ValueError:
        raise ImproperlyConfigured(f"{name}={raw!r} is not an integer.") from None
    if value < minimum:
        raise ImproperlyConfigured(f"{name}={raw!r} must be at least {minimum}.")
    return value


def _fraction(name: str, default: float) -> float:
    """Strict number in [0, 1]; ``80%`` or ``high`` stop start-up."""
    raw = os.environ.get(name)
    if raw is None or raw.strip() == "":
        return default
    try:
        value = float(raw.strip())
    except ValueError:
        raise ImproperlyConfigured(f"{name}={raw!r} is not a number.") from None
    if not 0.0 <= value <= 1.0:
        raise ImproperlyConfigured(f"{name}={raw!r} must be between 0 and 1 (e.g. 0.80).")
    return value


def _origins(name: str) -> list[str]:
    """Comma-separated ``scheme://host[:port]`` origins, as CSRF_TRUSTED_ORIGINS expects them."""
    raw = os.environ.get(name, "")
    origins = [o.strip() for o in raw.split(",")] if raw.strip() else []
    for origin in origins:
        parts = urlsplit(origin)
        if parts.scheme not in {"http", "https"} or not parts.netloc or parts.path not in {"", "/"}:
            raise ImproperlyConfigured(
                f"{name}={raw!r} contains {origin!r}; expected comma-separated origins like https://review.example.org."
            )
    return origins


def _networks(name: str) -> list[str]:
    """Comma-separated IP addresses or networks (``10.0.0.0/8``); an unparsable entry stops start-up."""
    raw = os.environ.get(name, "")
    networks = [n.strip() for n in raw.split(",") if n.strip()]
    for network in networks:
        try:
            ipaddress.ip_network(network, strict=False)
        except ValueError:
            raise ImproperlyConfigured(f"{name}={raw!r} contains {network!r}, not an IP address or network.") from None
    return networks


def _proxy_header(name: str) -> tuple[str, str] | None:
    """``HTTP_X_FORWARDED_PROTO,https`` → the (header, value) pair Django trusts as "this request was HTTPS"."""
    raw = os.environ.get(name, "")
    if not raw.strip():
        return None
    parts = [p.strip() for p in raw.split(",")]
    if len(parts) != 2 or not parts[0].startswith("HTTP_") or not parts[1]:
        raise ImproperlyConfigured(
            f"{name}={raw!r} must be 'HTTP_<HEADER>,<value>', e.g. HTTP_X_FORWARDED_PROTO,https."
        )
    return parts[0], parts[1]


def _secret_key() -> str:
    """``SECRET_KEY`` from the environment, else a random key kept in var/ (never a key in the code)."""
    if key := os.environ.get("SECRET_KEY"):
        if len(key) < 32:
            raise ImproperlyConfigured("SECRET_KEY is set but shorter than 32 characters.")
        return key
    path = VAR_DIR / "secret_key"
    if not path.exists():
        VAR_DIR.mkdir(parents=True, exist_ok=True)
        path.write_text(secrets.token_urlsafe(50))
        path.chmod(0o600)
    return path.read_text().strip()


SECRET_KEY = _secret_key()
DEBUG = _bool("DEBUG", False)
ALLOWED_HOSTS = [h.strip() for h in os.environ.get("ALLOWED_HOSTS", "127.0.0.1,localhost,testserver").split(",")]
if not all(ALLOWED_HOSTS):
    raise ImproperlyConfigured(f"ALLOWED_HOSTS={os.environ.get('ALLOWED_HOSTS')!r} contains an empty host name.")

# --- HTTPS / deployment (all off by default so the demo works over plain http) ----------------
# Behind a TLS-terminating proxy set SECURE_PROXY_SSL_HEADER, and only if the proxy overwrites that header.
SECURE_SSL_REDIRECT = _bool("SECURE_SSL_REDIRECT", False)
SESSION_COOKIE_SECURE = _bool("SESSION_COOKIE_SECURE", False)
CSRF_COOKIE_SECURE = _bool("CSRF_COOKIE_SECURE", False)
SECURE_HSTS_SECONDS = _int("SECURE_HSTS_SECONDS", 0, minimum=0)
SECURE_HSTS_INCLUDE_SUBDOMAINS = _bool("SECURE_HSTS_INCLUDE_SUBDOMAINS", False)
SECURE_HSTS_PRELOAD = _bool("SECURE_HSTS_PRELOAD", False)
SECURE_PROXY_SSL_HEADER = _proxy_header("SECURE_PROXY_SSL_HEADER")
CSRF_TRUSTED_ORIGINS = _origins("CSRF_TRUSTED_ORIGINS")

INSTALLED_APPS = [
    "physreview.apps.PhysReviewAdminConfig",  # django.contrib.admin, login throttled (physreview.throttle)
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "django.contrib.humanize",
    "django_htmx",
    "template_partials",
    "rest_framework",
    "rest_framework.authtoken",
    "django_filters",
    "drf_spectacular",
    "drf_spectacular_sidecar",  # Swagger UI / Redoc assets served from static (no CDN)
    "physreview",
    "core",
    "ehr",
    "scenarios",
    "annotations",
    "evaluation",
]

MIDDLEWARE = [
    "physreview.middleware.ServerTimingMiddleware",  # first: its time covers every other layer
    "django.middleware.security.SecurityMiddleware",
    "physreview.middleware.ContentSecurityPolicyMiddleware",  # CSP with a per-request nonce
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    # UI language: the session's choice (header switch), else Accept-Language; URLs carry no prefix.
    "django.middleware.locale.LocaleMiddleware",
    "django.middleware.common.CommonMiddleware",
    "core.cleaning.InputCleaningMiddleware",  # NUL, surrogates, database-refused values → 400
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "physreview.middleware.NoStoreMiddleware",  # no-store on signed-in pages and the API (patient data)
    "django.contrib.messages.middleware.MessageMiddleware",
    "physreview.access.AccessMiddleware",  # who may open which URL: the table in physreview/access.py
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    "django_htmx.middleware.HtmxMiddleware",
]

ROOT_URLCONF = "physreview.urls"
WSGI_APPLICATION = "physreview.wsgi.application"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [BASE_DIR / "templates"],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.template.context_processors.i18n",  # LANGUAGE_CODE, LANGUAGE_BIDI in every template
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
            ],
        },
    },
]

# --- database -------------------------------------------------------------------------------
_default_db = f"sqlite:///{VAR_DIR / 'physreview.sqlite3'}"
_db_url = _url("DATABASE_URL", _default_db, schemes={"sqlite", "postgres", "postgresql", "pgsql"})
try:
    DATABASES = {"default": env.db_url_config(_db_url)}
except Exception as exc:  # django-environ raises several types for a malformed URL
    raise ImproperlyConfigured(f"DATABASE_URL={_db_url!r} cannot be parsed: {exc}") from exc
if DATABASES["default"]["ENGINE"] == "django.db.backends.sqlite3":
    VAR_DIR.mkdir(parents=True, exist_ok=True)
    # The importer writes in large transactions; a busy timeout keeps the dev server from failing meanwhile.
    # IMMEDIATE: a write transaction takes the lock when it begins, so two writers queue on `timeout` instead
    # of one failing with "database is locked" when it upgrades a read lock (two editors on the demo).
    DATABASES["default"]["OPTIONS"] = {"timeout": 30, "transaction_mode": "IMMEDIATE"}
    # Tests on SQLite use a real file, not Django's in-memory default: live-server threads and forked runeval
    # processes then open their own connections with file locking and the busy timeout (an in-memory
    # shared-cache database has table locks that ignore the timeout: "database table is locked").
    DATABASES["default"]["TEST"] = {"NAME": str(VAR_DIR / "test_physreview.sqlite3")}
DATABASES["default"]["ATOMIC_REQUESTS"] = False
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

# --- caches ------------------------------------------------------------------------------------
# "default" (rendered fragments, guidelines): in-process memory, or Redis with CACHE_URL=redis://...
# "throttle" (login attempt counters) must be shared by every server process: the database (table made
# by migration physreview 0002) unless THROTTLE_CACHE_URL says otherwise; Redis when CACHE_URL is Redis.
# Culling at MAX_ENTRIES would drop counters: sized far above the keys a throttled client can create.
_CACHE_SCHEMES = {"db", "locmem", "redis", "rediss"}


def _cache(name: str, url: str) -> dict:
    parts = urlsplit(url)
    if parts.scheme == "db":
        return {
            "BACKEND": "core.cachedb.AtomicDatabaseCache",  # atomic incr for the throttle
            "LOCATION": parts.netloc or "physreview_cache",
            "OPTIONS": {"MAX_ENTRIES": 100_000},
        }
    if parts.scheme == "locmem":
        return {
            "BACKEND": "django.core.cache.backends.locmem.LocMemCache",
            "LOCATION": parts.netloc or name,
            "OPTIONS": {"MAX_ENTRIES": 100_000},
        }
    return {"BACKEND": "core.cacheredis.ReusedClientRedisCache", "LOCATION": url}


_cache_url = _url("CACHE_URL", "locmem://physreview", schemes=_CACHE_SCHEMES)
_throttle_default = _cache_url if urlsplit(_cache_url).scheme.startswith("redis") else "db://physreview_cache"
_throttle_url = _url("THROTTLE_CACHE_URL", _throttle_default, schemes=_CACHE_SCHEMES)
CACHES = {"default": _cache("physreview", _cache_url), "throttle": _cache("physreview-throttle", _throttle_url)}
# Sessions are kept in the database; with a Redis cache (shared by every server process) they are also read
# from it (written through to both), which saves a query on every request. Not with a per-process memory
# cache: another process's copy would go stale when a session changes.
SESSION_ENGINE = (
    "django.contrib.sessions.backends.cached_db"
    if urlsplit(_cache_url).scheme.startswith("redis")
    else "django.contrib.sessions.backends.db"
)

# Login throttle (physreview.throttle, docs/operations.md): after LOGIN_FAILURE_LIMIT failed logins on one
# account (LOGIN_ADDRESS_FAILURE_LIMIT from one client address) within the window, one attempt passes per
# delay (1 s doubling, at most LOGIN_DELAY_MAX_SECONDS); a browser that logged in to the account before
# (device cookie) is not delayed by others' failures. LOGIN_TRUSTED_PROXIES: the reverse proxies whose
# X-Forwarded-For is believed (none by default: the client address is REMOTE_ADDR).
LOGIN_FAILURE_LIMIT = _int("LOGIN_FAILURE_LIMIT", 5, minimum=1)
LOGIN_ADDRESS_FAILURE_LIMIT = _int("LOGIN_ADDRESS_FAILURE_LIMIT", 30, minimum=1)
LOGIN_FAILURE_WINDOW_SECONDS = _int("LOGIN_FAILURE_WINDOW_SECONDS", 900, minimum=1)
LOGIN_DELAY_MAX_SECONDS = _int("LOGIN_DELAY_MAX_SECONDS", 60, minimum=1)
LOGIN_DEVICE_COOKIE_DAYS = _int("LOGIN_DEVICE_COOKIE_DAYS", 180, minimum=1)
LOGIN_TRUSTED_PROXIES = _networks("LOGIN_TRUSTED_PROXIES")

AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
]
LOGIN_URL = "login"
LOGIN_REDIRECT_URL = "home"  # annotations.views.start: each role's own start page
LOGOUT_REDIRECT_URL = "login"

LANGUAGE_CODE = "en"
# UI languages only: turn content carries its own language (EN and ZH fields) whatever the UI shows.
LANGUAGES = [("en", "English"), ("zh-hans", "简体中文")]
LOCALE_PATHS = [BASE_DIR / "locale"]
TIME_ZONE = "UTC"
USE_I18N = True
# MIMIC times are naive local clock times; the app stores and shows them as UTC wall time.
USE_TZ = True

STATIC_URL = "static/"
STATICFILES_DIRS = [BASE_DIR / "static"]
STATIC_ROOT = VAR_DIR / "staticfiles"
STATIC_ROOT.mkdir(parents=True, exist_ok=True)  # WhiteNoise warns at every start when it is missing
WHITENOISE_USE_FINDERS = True

# REST API (annotations/api): token auth for scripts (first, so a missing login answers 401), session
# auth with CSRF for the browser; one error body shape for every error (annotations.api.errors).
REST_FRAMEWORK = {
    "DEFAULT_AUTHENTICATION_CLASSES": [
        "rest_framework.authentication.TokenAuthentication",
        "rest_framework.authentication.SessionAuthentication",
    ],
    # The same rules as the pages (physreview.access); a view without this permission is refused.
    "DEFAULT_PERMISSION_CLASSES": ["physreview.access.RoleTablePermission"],
    "DEFAULT_PARSER_CLASSES": ["core.cleaning.CleanJSONParser"],  # JSON depth, NUL, surrogates → 400
    # The API has no versions: spectacular's ?version= then names nothing (it went into Content-Disposition).
    "ALLOWED_VERSIONS": ["1"],
    "DEFAULT_FILTER_BACKENDS": ["django_filters.rest_framework.DjangoFilterBackend"],
    "DEFAULT_PAGINATION_CLASS": "annotations.api.pagination.PageNumberPagination",
    "DEFAULT_SCHEMA_CLASS": "drf_spectacular.openapi.AutoSchema",
    "EXCEPTION_HANDLER": "annotations.api.errors.exception_handler",
}
SPECTACULAR_SETTINGS = {
    "TITLE": "PhysReview API",
    "DESCRIPTION": "Sessions, turns, review actions, curated snapshots and evaluation runs (docs/api.md).",
    "VERSION": "1",
    "SERVE_INCLUDE_SCHEMA": False,
    "SERVE_PERMISSIONS": ["physreview.access.RoleTablePermission"],
    "SCHEMA_PATH_PREFIX": "/api/",
    "SWAGGER_UI_DIST": "SIDECAR",
    "SWAGGER_UI_FAVICON_HREF": "SIDECAR",
    # No call-out to the public validator badge: the docs page stays offline.
    "SWAGGER_UI_SETTINGS": {"deepLinking": True, "validatorUrl": None, "persistAuthorization": True},
    "COMPONENT_SPLIT_REQUEST": True,
    "ENUM_NAME_OVERRIDES": {
        "ScenarioEnum": "scenarios.models.Scenario",
        "SnapshotStatusEnum": "annotations.models.SnapshotStatus",
        "EvalRunStatusEnum": "evaluation.models.EvalStatus",
    },
}

# --- Celery -----------------------------------------------------------------------------------
CELERY_BROKER_URL = _url("CELERY_BROKER_URL", None, schemes={"redis", "rediss", "amqp", "memory"})
CELERY_RESULT_BACKEND = _url(
    "CELERY_RESULT_BACKEND",
    CELERY_BROKER_URL if CELERY_BROKER_URL and CELERY_BROKER_URL.startswith("redis") else None,
    schemes={"redis", "rediss", "cache", "django-db"},
)
CELERY_TASK_ALWAYS_EAGER = CELERY_BROKER_URL is None
CELERY_TASK_EAGER_PROPAGATES = True
CELERY_TASK_SERIALIZER = "json"
CELERY_RESULT_SERIALIZER = "json"
CELERY_ACCEPT_CONTENT = ["json"]
# Tasks are written to be idempotent, so a task is acknowledged only once it has finished.
# A worker killed with -9 never acknowledges its message; ``task_reject_on_worker_lost`` requeues the message of
# a pool child that died at once, and Redis hands an unacknowledged message to another worker once the
# visibility timeout has passed. That timeout is set deliberately (Kombu's default is 1 h): longer than any
# single task should run (a slot task, one snapshot build), because a task still running when it passes is
# delivered a second time (harmless: slots are idempotent and a build holds a lease, see core.jobs, but a
# second delivery of an LLM slot costs its calls twice). Recovery does not wait for it: stale heartbeats are
# found by the worker's sweep (JOB_* below). docs/operations.md, "Jobs that stop".
CELERY_TASK_ACKS_LATE = True
CELERY_TASK_REJECT_ON_WORKER_LOST = True
CELERY_BROKER_TRANSPORT_OPTIONS = {"visibility_timeout": _int("CELERY_VISIBILITY_TIMEOUT", 1800, minimum=1)}
CELERY_WORKER_PREFETCH_MULTIPLIER = 1
CELERY_BROKER_CONNECTION_RETRY_ON_STARTUP = True

# --- Background jobs: heartbeats and automatic recovery (core.jobs, physreview.jobs) -------------------------
# A snapshot build or a generation run refreshes its heartbeat every JOB_HEARTBEAT_SECONDS; with none for
# JOB_STALE_SECONDS it is stale, and the Celery worker's sweep (every JOB_SWEEP_SECONDS, 0 = never; also at
# worker start) or the next make_snapshot / generate resumes it, at most JOB_MAX_AUTO_RESUMES times before
# marking it failed with the reason (a person can still resume it from the admin, the API or the command).
JOB_HEARTBEAT_SECONDS = _int("JOB_HEARTBEAT_SECONDS", 10, minimum=1)
JOB_STALE_SECONDS = _int("JOB_STALE_SECONDS", 180, minimum=2)
JOB_SWEEP_SECONDS = _int("JOB_SWEEP_SECONDS", 60, minimum=0)
JOB_MAX_AUTO_RESUMES = _int("JOB_MAX_AUTO_RESUMES", 3, minimum=0)
if JOB_STALE_SECONDS <= JOB_HEARTBEAT_SECONDS:
    raise ImproperlyConfigured(
        f"JOB_STALE_SECONDS={JOB_STALE_SECONDS} must exceed JOB_HEARTBEAT_SECONDS={JOB_HEARTBEAT_SECONDS}."
    )

# --- Judge certification (evaluation.calibration.certification) ---------------------------------------------
# A judge is certified when the exact 95% lower bounds of its TPR and TNR against physician grades reach this.
JUDGE_CERTIFICATION_THRESHOLD = _fraction("JUDGE_CERTIFICATION_THRESHOLD", 0.80)

# --- LLM endpoints (used from the generation pipeline on) --------------------------------------
OPENAI_BASE_URL = _url("OPENAI_BASE_URL", None, schemes={"http", "https"})
# The key is read where a client is built and never stored elsewhere; only its presence is known here.
OPENAI_API_KEY_SET = bool(os.environ.get("OPENAI_API_KEY"))
# What the EHR store holds: "mimic", "synthetic" (synth_ehr, the demo cohort) or "undeclared" (treated as MIMIC).
# One declaration for the data-use rule of every LLM role (core.llm.data_use) and the default of
# make_snapshot --ehr-provenance (the card's and croissant.json's licence and data-use note).
EHR_PROVENANCE = os.environ.get("PHYSREVIEW_EHR_PROVENANCE", "undeclared").strip().lower() or "undeclared"
if EHR_PROVENANCE not in ("mimic", "synthetic", "undeclared"):
    raise ImproperlyConfigured(
        f"PHYSREVIEW_EHR_PROVENANCE={os.environ.get('PHYSREVIEW_EHR_PROVENANCE')!r} must be mimic, synthetic or "
        "undeclared."
    )

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "handlers": {"console": {"class": "logging.StreamHandler"}},
    "root": {"handlers": ["console"], "level": os.environ.get("LOG_LEVEL", "WARNING")},
}
