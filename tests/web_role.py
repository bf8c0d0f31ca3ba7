"""Every request a test sends runs as the web tier's database role, as gunicorn's do.

The test database belongs to the owner role, which bypasses row-level security; the web tier
connects as MEMORYPR_APP_ROLE, which the policies bind. The test client's requests switch to
that role (`SET ROLE`) for their duration, so a view that reads or writes outside its
request's namespaces fails here as it would in production, while the test's own setup and
assertions keep the owner's view of every row.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import pytest
from django.conf import settings
from django.core.signals import request_finished, request_started
from django.db import DatabaseError, connection


def _web_role_assume(**kwargs: Any) -> None:
    try:
        with connection.cursor() as cursor:
            cursor.execute(f"SET ROLE {connection.ops.quote_name(settings.MEMORYPR_APP_ROLE)}")
    except RuntimeError:
        # A test without database access: its requests cannot reach the database either.
        pass


def _web_role_drop(**kwargs: Any) -> None:
    """When the request ends; a WSGI caller that never closes its response leaves it to the
    teardown hook below."""
    # After an error the transaction is rolled back as a whole, and the SET ROLE with it.
    if connection.connection is None or connection.needs_rollback:
        return
    try:
        with connection.cursor() as cursor:
            cursor.execute("RESET ROLE")
    except DatabaseError:
        pass  # the test fails on the error that left the transaction unusable


@contextmanager
def _switching() -> Iterator[None]:
    request_started.connect(_web_role_assume, dispatch_uid="tests.web_role.assume")
    request_finished.connect(_web_role_drop, dispatch_uid="tests.web_role.drop")
    try:
        yield
    finally:
        request_started.disconnect(dispatch_uid="tests.web_role.assume")
        request_finished.disconnect(dispatch_uid="tests.web_role.drop")


@contextmanager
def requests_as_owner() -> Iterator[None]:
    """For a test about the application's own checks, without the database's behind them."""
    request_started.disconnect(dispatch_uid="tests.web_role.assume")
    request_finished.disconnect(dispatch_uid="tests.web_role.drop")
    try:
        yield
    finally:
        request_started.connect(_web_role_assume, dispatch_uid="tests.web_role.assume")
        request_finished.connect(_web_role_drop, dispatch_uid="tests.web_role.drop")


@pytest.fixture(autouse=True)
def web_tier_role() -> Iterator[None]:
    with _switching():
        yield


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_teardown(item: pytest.Item, nextitem: pytest.Item | None) -> None:
    """Before any fixture's teardown (a transactional test's flush needs the owner): back to the owner."""
    with contextlib.suppress(RuntimeError):  # a test without database access
        _web_role_drop()
