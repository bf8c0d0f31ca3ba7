"""Test settings: a throwaway embedded PostgreSQL + pgvector server for this test run.

The server lives in a fresh temporary folder and is deleted when the run ends, unless
DATABASE_URL points the suite at another PostgreSQL with pgvector.
"""

import os
import tempfile

if not os.environ.get("DATABASE_URL"):
    os.environ.setdefault("MEMORYPR_PGDATA", os.path.join(tempfile.mkdtemp(prefix="memorypr-test-"), "pg"))
    os.environ.setdefault("MEMORYPR_PGDATA_CLEANUP", "delete")
os.environ.setdefault("MEMORYPR_TEST_DATABASE_NAME", "test_memorypr")

from memorypr.settings import *  # noqa: E402,F403

# Transactional tests reset tables with TRUNCATE, which the triggers refuse to other sessions.
DATABASES["default"].setdefault("OPTIONS", {})["options"] = "-c memorypr.allow_truncate=on"  # noqa: F405

# Tests that need a real worker use Redis, on a queue of their own (see the live_worker fixture).
CELERY_BROKER_URL = os.environ.get("MEMORYPR_TEST_BROKER_URL", "redis://127.0.0.1:6379/15")
CELERY_BROKER_TRANSPORT_OPTIONS = {}

# Reviews run inline when their transaction commits; tests about real workers start one.
CELERY_TASK_ALWAYS_EAGER = True
PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
CACHES = {"default": {"BACKEND": "django.core.cache.backends.locmem.LocMemCache"}}
