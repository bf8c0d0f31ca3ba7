"""The PostgreSQL backend waits out a database that is restarting, when it opens a connection."""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager

import pytest
from django.db import OperationalError, connection
from django.db.utils import ConnectionHandler


def _pipe(source: socket.socket, target: socket.socket) -> None:
    try:
        while data := source.recv(65536):
            target.sendall(data)
    except OSError:
        pass
    finally:
        target.close()


@contextmanager
def database_coming_back_after(seconds: float) -> Iterator[int]:
    """A TCP port that refuses connections for `seconds`, then forwards them to the test database."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = int(probe.getsockname()[1])
    db = connection.settings_dict
    host = db.get("HOST") or (db.get("OPTIONS") or {}).get("host") or "/tmp"
    target_port = int(db.get("PORT") or 5432)
    stop = threading.Event()

    def serve() -> None:
        time.sleep(seconds)
        with socket.socket() as server:
            server.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            server.bind(("127.0.0.1", port))
            server.listen()
            server.settimeout(0.1)
            while not stop.is_set():
                try:
                    client, _ = server.accept()
                except TimeoutError:
                    continue
                if host.startswith("/"):
                    upstream = socket.socket(socket.AF_UNIX)
                    upstream.connect(f"{host}/.s.PGSQL.{target_port}")
                else:
                    upstream = socket.create_connection((host, target_port))
                threading.Thread(target=_pipe, args=(client, upstream), daemon=True).start()
                threading.Thread(target=_pipe, args=(upstream, client), daemon=True).start()

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    try:
        yield port
    finally:
        stop.set()
        thread.join(timeout=5)


def _connection_through(port: int):  # type: ignore[no-untyped-def]
    settings_dict = {**connection.settings_dict, "HOST": "127.0.0.1", "PORT": str(port), "CONN_MAX_AGE": 0}
    settings_dict["OPTIONS"] = {
        k: v for k, v in settings_dict.get("OPTIONS", {}).items() if k not in ("pool", "host")
    }
    return ConnectionHandler({"default": settings_dict})["default"]


@pytest.mark.django_db
def test_a_connection_opened_while_the_database_restarts_waits_for_it(settings):
    # given a database that accepts connections again after half a second
    settings.MEMORYPR_DB_CONNECT_WAIT_SECONDS = 10
    with database_coming_back_after(0.5) as port:
        patient = _connection_through(port)
        # when a query needs a new connection, then it waits and succeeds
        with patient.cursor() as cursor:
            cursor.execute("SELECT 1")
            assert cursor.fetchone() == (1,)
        patient.close()


@pytest.mark.django_db
def test_without_a_wait_the_restarting_database_is_an_operational_error(settings):
    settings.MEMORYPR_DB_CONNECT_WAIT_SECONDS = 0
    with database_coming_back_after(2.0) as port:
        impatient = _connection_through(port)
        with pytest.raises(OperationalError):
            impatient.ensure_connection()


@pytest.mark.django_db(transaction=True)
def test_a_saturated_pool_is_not_waited_out_again(settings, caplog):
    # given a pool of one connection, already handed out, and a long connect wait
    settings.MEMORYPR_DB_CONNECT_WAIT_SECONDS = 10
    settings_dict = {**connection.settings_dict, "CONN_MAX_AGE": 0}
    settings_dict["OPTIONS"] = {
        **settings_dict.get("OPTIONS", {}),
        "pool": {"min_size": 1, "max_size": 1, "timeout": 0.2},
    }
    handler = ConnectionHandler({"default": settings_dict})
    first = handler["default"]
    first.ensure_connection()
    caplog.set_level("INFO", logger="memorypr.common.db.base")
    raised: list[BaseException] = []

    def ask_for_another() -> None:  # connections are per thread: this one needs the pool's second
        try:
            handler["default"].ensure_connection()
        except BaseException as exc:
            raised.append(exc)

    try:
        # when another thread asks for a connection
        thread = threading.Thread(target=ask_for_another)
        thread.start()
        thread.join(timeout=30)
        # then the pool's refusal reaches it as is: no second wait on top of the pool's own
        assert len(raised) == 1 and isinstance(raised[0], OperationalError)
        assert "not accepting connections" not in caplog.text
    finally:
        first.close()
        first.close_pool()


def _pool_of_one():  # type: ignore[no-untyped-def]
    settings_dict = {**connection.settings_dict, "CONN_MAX_AGE": 0}
    settings_dict["OPTIONS"] = {
        **settings_dict.get("OPTIONS", {}),
        "pool": {"min_size": 1, "max_size": 1, "timeout": 5},
    }
    return ConnectionHandler({"default": settings_dict})["default"]


def _scope_and_backend(wrapper) -> tuple[str, int]:  # type: ignore[no-untyped-def]
    with wrapper.cursor() as cursor:
        cursor.execute("SELECT current_setting('memorypr.namespaces', true), pg_backend_pid()")
        return cursor.fetchone()


@pytest.mark.django_db(transaction=True)
def test_a_pooled_connection_comes_back_without_the_last_requests_scope():
    # given a pool of one connection, handed back while scoped to a namespace
    pooled = _pool_of_one()
    try:
        with pooled.cursor() as cursor:
            cursor.execute("SELECT set_config('memorypr.namespaces', '{\"acme\"}', false)")
        _, backend = _scope_and_backend(pooled)
        pooled.close()
        # when the next request takes it
        scope, again = _scope_and_backend(pooled)
        # then it is the same server connection, with no namespace in scope
        assert again == backend
        assert scope == "{}"
    finally:
        pooled.close()
        pooled.close_pool()


def _wait_returned(pooled) -> None:  # type: ignore[no-untyped-def]
    """Until the pool has the connection back (its reset runs on the pool's own threads)."""
    deadline = time.monotonic() + 5
    while pooled.pool.get_stats().get("pool_available", 0) < 1:
        assert time.monotonic() < deadline, "the connection never came back to the pool"
        time.sleep(0.01)


def _wait_gone(cursor, backend: int) -> None:  # type: ignore[no-untyped-def]
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline:
        cursor.execute("SELECT count(*) FROM pg_stat_activity WHERE pid = %s", [backend])
        if cursor.fetchone()[0] == 0:
            return
        time.sleep(0.01)
    raise AssertionError(f"backend {backend} still running")


@pytest.mark.django_db(transaction=True)
def test_a_live_pooled_connection_is_handed_out_without_a_statement_and_cleared_on_return(monkeypatch):
    # given a pool of one connection, with every clearing of the scope recorded by thread
    from memorypr.common.db import base

    cleared_on: list[str] = []
    clear = base._scope_cleared

    def recorded(conn):  # type: ignore[no-untyped-def]
        cleared_on.append(threading.current_thread().name)
        clear(conn)

    monkeypatch.setattr(base, "_scope_cleared", recorded)
    pooled = _pool_of_one()
    try:
        # when three requests in turn take it, scope it and give it back
        for name in ("acme", "globex", "initech"):
            scope, _ = _scope_and_backend(pooled)
            assert scope in (None, "{}")  # then each finds it without the last one's scope
            with pooled.cursor() as cursor:
                cursor.execute("SELECT set_config('memorypr.namespaces', %s, false)", [f'{{"{name}"}}'])
            pooled.close()
        _scope_and_backend(pooled)  # the fourth waits for the third's return
        # then the scope was cleared on each return, off the requests' thread, and never on checkout
        assert len(cleared_on) == 3
        assert threading.current_thread().name not in cleared_on
    finally:
        pooled.close()
        pooled.close_pool()


@pytest.mark.django_db(transaction=True)
def test_a_pooled_connection_the_server_dropped_is_replaced_on_checkout():
    # given a pooled connection whose server process was terminated while it sat in the pool
    pooled = _pool_of_one()
    try:
        _, backend = _scope_and_backend(pooled)
        pooled.close()
        _wait_returned(pooled)
        with connection.cursor() as cursor:
            cursor.execute("SELECT pg_terminate_backend(%s)", [backend])
            _wait_gone(cursor, backend)
        # when the next request takes a connection, then it gets a live one
        scope, replacement = _scope_and_backend(pooled)
        assert replacement != backend
        assert scope is None  # a new connection, never scoped
    finally:
        pooled.close()
        pooled.close_pool()
