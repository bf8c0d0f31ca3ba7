"""Settings come from the environment; the defaults run the embedded PostgreSQL.

Production sets DATABASE_URL (PostgreSQL with pgvector), REDIS_URL (and CELERY_BROKER_URL for
another broker), SECRET_KEY and ALLOWED_HOSTS. DEBUG is off unless DEBUG=1 says otherwise.
"""

from __future__ import annotations

import os
from pathlib import Path

import dj_database_url

from memorypr.common.db.roles import database_url_as_role
from memorypr.embedded import broker_url_for_redis, embedded_database_url, embedded_redis_url

BASE_DIR = Path(__file__).resolve().parent.parent

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")


def _env_bool(name: str, default: bool = False) -> bool:
    value = os.environ.get(name)
    if value is None:
        return default
    return value.strip().lower() in {"1", "true", "yes", "on"}


def _env_list(name: str, default: str) -> list[str]:
    return [item.strip() for item in os.environ.get(name, default).split(",") if item.strip()]


DEBUG = _env_bool("DEBUG", False)
SECRET_KEY = os.environ.get("SECRET_KEY", "")
if not SECRET_KEY:
    if not DEBUG and os.environ.get("MEMORYPR_REQUIRE_SECRET_KEY"):
        raise RuntimeError("SECRET_KEY must be set in production")
    SECRET_KEY = "memorypr-insecure-local-key-change-me"  # noqa: S105 - local embedded default only
ALLOWED_HOSTS = _env_list("ALLOWED_HOSTS", "127.0.0.1,localhost,testserver")
CSRF_TRUSTED_ORIGINS = _env_list("CSRF_TRUSTED_ORIGINS", "")

INSTALLED_APPS = [
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "django.contrib.postgres",
    "rest_framework",
    "drf_spectacular",
    "drf_spectacular_sidecar",
    "django_htmx",
    "axes",
    "memorypr.common",
    "memorypr.agents",
    "memorypr.audit",
    "memorypr.pulls",
    "memorypr.facts",
    "memorypr.retrieval",
    "memorypr.evolution",
    "memorypr.working_memory",
    "reviewer",
    "reviewer.dashboard",
]

# The browser pages' middleware (sessions, logins, messages, frame and CSP headers, htmx)
# pass the agent API by: memorypr/common/browser_middleware.py.
MIDDLEWARE = [
    "memorypr.monitoring.metrics.RequestMetricsMiddleware",
    "django.middleware.security.SecurityMiddleware",
    "memorypr.common.request_guards.RequestGuardMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "memorypr.common.unavailable.ServiceUnavailableMiddleware",
    "memorypr.common.browser_middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "memorypr.common.browser_middleware.AuthenticationMiddleware",
    # Row-level security: the database shows a request only its reviewer's (or agent's) namespaces.
    "memorypr.agents.tenancy.TenancyScopeMiddleware",
    "memorypr.common.browser_middleware.MessageMiddleware",
    "memorypr.common.browser_middleware.XFrameOptionsMiddleware",
    "memorypr.common.browser_middleware.HtmxMiddleware",
    "memorypr.common.browser_middleware.CSPMiddleware",
    # Last, as django-axes asks: it turns a locked-out login into its lockout response.
    "axes.middleware.AxesMiddleware",
]

ROOT_URLCONF = "memorypr.urls"
WSGI_APPLICATION = "memorypr.wsgi.application"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [BASE_DIR / "templates"],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
            ],
        },
    },
]

# --- Database: DATABASE_URL, else the embedded PostgreSQL 18 + pgvector -------------
DATABASE_URL = os.environ.get("DATABASE_URL") or embedded_database_url()
# The web tier (MEMORYPR_DB_ROLE=app, set by memorypr/gunicorn_conf.py) connects as a role that
# owns no table, so row-level security binds it: DATABASE_APP_URL, else DATABASE_URL's server as
# MEMORYPR_APP_ROLE. Migrations, the worker, beat and commands connect as the owner (DATABASE_URL).
MEMORYPR_APP_ROLE = os.environ.get("MEMORYPR_APP_ROLE", "memorypr_app")
DATABASE_APP_URL = os.environ.get("DATABASE_APP_URL") or database_url_as_role(
    DATABASE_URL, role=MEMORYPR_APP_ROLE
)
if os.environ.get("MEMORYPR_DB_ROLE", "owner") == "app":
    DATABASE_URL = DATABASE_APP_URL
DATABASES = {
    "default": dj_database_url.parse(DATABASE_URL, conn_max_age=int(os.environ.get("CONN_MAX_AGE", "60")))
}
DATABASES["default"]["CONN_HEALTH_CHECKS"] = True
# Django's backend, but a connection being opened waits out a database restart of a few seconds.
DATABASES["default"]["ENGINE"] = "memorypr.common.db"
MEMORYPR_DB_CONNECT_WAIT_SECONDS = float(os.environ.get("MEMORYPR_DB_CONNECT_WAIT_SECONDS", "5"))
# The web server's threads share a bounded pool per process (MEMORYPR_DB_POOL_MAX, set by
# memorypr/gunicorn_conf.py to the thread count), so a burst of requests can never open more
# connections than the server allows. A request that waits longer than the pool timeout for a
# connection answers 503 with Retry-After (memorypr.common.unavailable). Celery children keep one
# persistent connection each instead: a pool object must never cross a fork.
DB_POOL_MAX = int(os.environ.get("MEMORYPR_DB_POOL_MAX", "0"))
if DB_POOL_MAX > 0:
    DATABASES["default"]["CONN_MAX_AGE"] = 0
    DATABASES["default"].setdefault("OPTIONS", {})["pool"] = {
        "min_size": min(2, DB_POOL_MAX),
        "max_size": DB_POOL_MAX,
        "timeout": float(os.environ.get("MEMORYPR_DB_POOL_TIMEOUT", "3")),
        "max_idle": 60.0,
        # With CONN_HEALTH_CHECKS, Django has the pool check each connection it hands out, so the
        # dead connections of a restarted database are replaced, not served.
    }
# Parameters bound on the server, and a statement run a few times on a connection prepared
# there (psycopg's prepare_threshold): the hot statements are parsed and planned once per
# connection instead of on every request.
# "off" prepares nothing (a connection pooler in transaction mode that does not track them).
_PREPARE_THRESHOLD = os.environ.get("MEMORYPR_DB_PREPARE_THRESHOLD", "5")
DATABASES["default"].setdefault("OPTIONS", {}).update(
    server_side_binding=True,
    prepare_threshold=None if _PREPARE_THRESHOLD == "off" else int(_PREPARE_THRESHOLD),
)
if os.environ.get("MEMORYPR_TEST_DATABASE_NAME"):
    DATABASES["default"]["TEST"] = {"NAME": os.environ["MEMORYPR_TEST_DATABASE_NAME"]}
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"


# --- Redis: REDIS_URL, else the embedded Redis that `make run` starts under .data/redis ----
# One server carries the Celery broker, tier-1 working memory and the cache (throttle counters).
REDIS_URL = os.environ.get("REDIS_URL") or embedded_redis_url()


# --- Celery ---------------------------------------------------------------------------
CELERY_BROKER_URL = os.environ.get("CELERY_BROKER_URL") or broker_url_for_redis(REDIS_URL)
CELERY_TASK_ALWAYS_EAGER = _env_bool("CELERY_TASK_ALWAYS_EAGER", False)
CELERY_TASK_EAGER_PROPAGATES = True
# A task is acknowledged after it ran; the task of a killed child is given back at once, and
# the unacknowledged tasks of a killed worker master come back after the visibility timeout.
CELERY_TASK_ACKS_LATE = True
CELERY_TASK_REJECT_ON_WORKER_LOST = True
CELERY_WORKER_PREFETCH_MULTIPLIER = 1
CELERY_TASK_IGNORE_RESULT = True
CELERY_BROKER_CONNECTION_RETRY_ON_STARTUP = True
CELERY_BROKER_TRANSPORT_OPTIONS = {
    "visibility_timeout": int(os.environ.get("MEMORYPR_BROKER_VISIBILITY_TIMEOUT", "300")),
    "socket_timeout": 5,
    "socket_connect_timeout": 3,
}
# Sending a task while the broker restarts retries briefly, then gives up: the sweeps hand the
# KPR over again, so a request never waits long on the broker.
CELERY_TASK_PUBLISH_RETRY_POLICY = {"max_retries": 3, "interval_start": 0.1, "interval_step": 0.3}
CELERY_WORKER_CANCEL_LONG_RUNNING_TASKS_ON_CONNECTION_LOSS = True
CELERY_TIMEZONE = "UTC"
# Celery's Django fixup closes the database connection before and after every task unless this
# is set, and each task then pays for a new server process with cold caches. It closes them
# only every this many tasks instead; memorypr/celery.py checks them around each task as Django
# does around a request, so CONN_MAX_AGE still recycles them and a broken one is replaced.
CELERY_DB_REUSE_MAX = 1000
CELERY_TASK_DEFAULT_QUEUE = os.environ.get("CELERY_TASK_DEFAULT_QUEUE", "memorypr")

# --- Cache (throttle counters) on the same Redis --------------------------------------
CACHES = {
    "default": {
        "BACKEND": "django.core.cache.backends.redis.RedisCache",
        "LOCATION": REDIS_URL,
        "OPTIONS": {"socket_timeout": 2, "socket_connect_timeout": 2},
    }
}

AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
]
LOGIN_URL = "/review/login/"
LOGIN_REDIRECT_URL = "/review/"

# Failed logins (dashboard and admin) lock out a username from one address after
# AXES_FAILURE_LIMIT failures, for AXES_COOLOFF_TIME hours; the counters live in the cache (Redis).
AUTHENTICATION_BACKENDS = [
    "memorypr.agents.backends.LoginAttemptBackend",
    "django.contrib.auth.backends.ModelBackend",
]
AXES_HANDLER = "axes.handlers.cache.AxesCacheHandler"
AXES_FAILURE_LIMIT = int(os.environ.get("AXES_FAILURE_LIMIT", "5"))
AXES_COOLOFF_TIME = float(os.environ.get("AXES_COOLOFF_HOURS", "0.25"))
AXES_LOCKOUT_PARAMETERS = [["username", "ip_address"]]
AXES_RESET_ON_SUCCESS = True
AXES_VERBOSE = False

# Content security policy: the dashboard's scripts and styles come from this server only (no
# inline script, no on* handler, no style attribute). The admin and the API docs bring their own
# pages and are left out.
CONTENT_SECURITY_POLICY = {
    "EXCLUDE_URL_PREFIXES": ["/admin/", "/api/docs/", "/api/redoc/"],
    "DIRECTIVES": {
        "default-src": ["'self'"],
        "script-src": ["'self'"],
        "style-src": ["'self'"],
        "img-src": ["'self'", "data:"],
        "connect-src": ["'self'"],
        "form-action": ["'self'"],
        "frame-ancestors": ["'none'"],
        "base-uri": ["'none'"],
        "object-src": ["'none'"],
    },
}

LANGUAGE_CODE = "en-us"
TIME_ZONE = "UTC"
USE_I18N = True
USE_TZ = True

STATIC_URL = "static/"
STATICFILES_DIRS = [BASE_DIR / "static"]
STATIC_ROOT = BASE_DIR / "staticfiles"
# whitenoise serves the static files from the web server itself; `make run` collects them,
# and the finders serve them before a collectstatic (tests, a fresh checkout).
WHITENOISE_USE_FINDERS = True
STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    "staticfiles": {"BACKEND": "whitenoise.storage.CompressedStaticFilesStorage"},
}

REST_FRAMEWORK = {
    "DEFAULT_AUTHENTICATION_CLASSES": ["memorypr.agents.authentication.AgentTokenAuthentication"],
    "DEFAULT_PERMISSION_CLASSES": ["memorypr.agents.permissions.IsAgent"],
    "DEFAULT_THROTTLE_CLASSES": ["memorypr.agents.throttling.AgentRateThrottle"],
    "DEFAULT_SCHEMA_CLASS": "memorypr.common.schema.ApiAutoSchema",
    "DEFAULT_RENDERER_CLASSES": ["rest_framework.renderers.JSONRenderer"],
    "DEFAULT_PARSER_CLASSES": ["memorypr.common.parsers.StrictJSONParser"],
    "EXCEPTION_HANDLER": "memorypr.common.errors.api_exception_handler",
    "UNAUTHENTICATED_USER": None,
}

SPECTACULAR_SETTINGS = {
    "TITLE": "memorypr API",
    "DESCRIPTION": "Knowledge pull requests: reviewed, audited long-term memory for LLM agents.",
    "VERSION": "1",
    "SERVE_INCLUDE_SCHEMA": False,
    "COMPONENT_SPLIT_REQUEST": True,
    # The docs pages load their JavaScript from this project, never from a CDN.
    "SWAGGER_UI_DIST": "SIDECAR",
    "SWAGGER_UI_FAVICON_HREF": "SIDECAR",
    "REDOC_DIST": "SIDECAR",
}

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "handlers": {"console": {"class": "logging.StreamHandler"}},
    "root": {"handlers": ["console"], "level": os.environ.get("LOG_LEVEL", "WARNING")},
    "loggers": {"memorypr": {"level": os.environ.get("MEMORYPR_LOG_LEVEL", "INFO")}},
}

# --- memorypr ---------------------------------------------------------------------
MEMORYPR_AGENT_RATE = os.environ.get("MEMORYPR_AGENT_RATE", "6000/min")
MEMORYPR_MAX_OPERATIONS = int(os.environ.get("MEMORYPR_MAX_OPERATIONS", "100"))
MEMORYPR_MAX_VALUE_BYTES = int(os.environ.get("MEMORYPR_MAX_VALUE_BYTES", "16384"))
MEMORYPR_MAX_QUOTE_CHARS = int(os.environ.get("MEMORYPR_MAX_QUOTE_CHARS", "8000"))
# Merge lanes drained side by side (memorypr/facts/conf.py holds the default): one number for
# the whole deployment, so it comes from the environment that every worker shares.
if os.environ.get("MEMORYPR_MERGE_LANES"):
    MEMORYPR_MERGE_LANES = int(os.environ["MEMORYPR_MERGE_LANES"])

# LLM reviewer (any OpenAI-compatible endpoint); off when OPENAI_BASE_URL is unset.
OPENAI_BASE_URL = os.environ.get("OPENAI_BASE_URL", "")
OPENAI_API_KEY = os.environ.get("OPENAI_API_KEY", "")
MEMORYPR_REVIEW_MODEL = os.environ.get("MEMORYPR_REVIEW_MODEL", "gpt-4o-mini")
MEMORYPR_REVIEW_TIMEOUT_SECONDS = float(os.environ.get("MEMORYPR_REVIEW_TIMEOUT_SECONDS", "20"))
MEMORYPR_REVIEW_RETRIES = int(os.environ.get("MEMORYPR_REVIEW_RETRIES", "2"))

# /healthz: degraded (503) when no worker heartbeat for this long (beat sends one every 10 s),
# or when a KPR has waited this long for its review or its merge (the sweeps run every 60 s).
MEMORYPR_HEALTH_HEARTBEAT_MAX_SECONDS = float(os.environ.get("MEMORYPR_HEALTH_HEARTBEAT_MAX_SECONDS", "60"))
MEMORYPR_HEALTH_STUCK_SECONDS = float(os.environ.get("MEMORYPR_HEALTH_STUCK_SECONDS", "150"))
# /metrics is open when unset; otherwise it wants `Authorization: Bearer <token>`.
MEMORYPR_METRICS_TOKEN = os.environ.get("MEMORYPR_METRICS_TOKEN", "")

# Celery beat: evolution jobs and transcript retention (entries in memorypr.evolution.schedule).
from memorypr.common.schedule import COMMON_BEAT_SCHEDULE  # noqa: E402
from memorypr.evolution.schedule import EVOLUTION_BEAT_SCHEDULE  # noqa: E402
from memorypr.facts.schedule import FACTS_BEAT_SCHEDULE  # noqa: E402
from reviewer.schedule import REVIEW_BEAT_SCHEDULE  # noqa: E402

CELERY_BEAT_SCHEDULE = {
    **EVOLUTION_BEAT_SCHEDULE,
    **REVIEW_BEAT_SCHEDULE,
    **FACTS_BEAT_SCHEDULE,
    **COMMON_BEAT_SCHEDULE,
}
