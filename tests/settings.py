"""Test settings: throwaway embedded PostgreSQL + pgvector and Redis servers for this test run.

Both live in a fresh temporary folder, started the same way `make run` starts them, and are
deleted when the run ends, unless DATABASE_URL / MEMORYPR_TEST_REDIS_URL point the suite at
other servers.
"""

import atexit
import os
import shutil
import tempfile
from pathlib import Path

from memorypr.embedded import broker_url_for_redis, embedded_redis_start, embedded_redis_url

_RUN_DIR = Path(tempfile.mkdtemp(prefix="memorypr-test-"))
if not os.environ.get("DATABASE_URL"):
    os.environ.setdefault("MEMORYPR_PGDATA", str(_RUN_DIR / "pg"))
    os.environ.setdefault("MEMORYPR_PGDATA_CLEANUP", "delete")
os.environ.setdefault("MEMORYPR_TEST_DATABASE_NAME", "test_memorypr")
# A developer's model endpoint must never receive test data: tests start their own.
os.environ.pop("OPENAI_BASE_URL", None)
os.environ.pop("OPENAI_API_KEY", None)


def _test_redis_url() -> str:
    if os.environ.get("MEMORYPR_TEST_REDIS_URL"):
        return os.environ["MEMORYPR_TEST_REDIS_URL"]
    folder = _RUN_DIR / "redis"
    server = embedded_redis_start(folder=folder)

    def stop() -> None:
        server.terminate()
        server.wait(timeout=10)
        shutil.rmtree(_RUN_DIR, ignore_errors=True)

    atexit.register(stop)
    return embedded_redis_url(folder=folder)


# Redis for the tests that need one: the broker of the real worker, the Redis working memory.
TEST_REDIS_URL = _test_redis_url()

from memorypr.settings import *  # noqa: E402,F403

# Transactional tests reset tables with TRUNCATE, which the triggers refuse to other sessions.
DATABASES["default"].setdefault("OPTIONS", {})["options"] = "-c memorypr.allow_truncate=on"  # noqa: F405

# Working memory on PostgreSQL unless a test sets REDIS_URL; tests that need a real worker use
# the test Redis as broker, on a queue of their own (see the live_worker fixture).
REDIS_URL = ""
CELERY_BROKER_URL = broker_url_for_redis(TEST_REDIS_URL)

# Reviews run inline when their transaction commits; tests about real workers start one.
CELERY_TASK_ALWAYS_EAGER = True
PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
CACHES = {"default": {"BACKEND": "django.core.cache.backends.locmem.LocMemCache"}}
