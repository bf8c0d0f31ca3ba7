"""gunicorn settings for every web node (`make run`, `make web`): bounded processes and pools.

By default (`WEB_WORKER_CLASS=sync`) WEB_CONCURRENCY processes (default: two per core) each
serve one request at a time, with one database connection each: a node holds at most
WEB_CONCURRENCY connections, whatever the load. With `WEB_WORKER_CLASS=gthread`, WEB_CONCURRENCY
processes (default: one per core) each run WEB_THREADS threads (default 4), with a pool of
WEB_THREADS connections each.
"""

from __future__ import annotations

import os

bind = os.environ.get("BIND", f"127.0.0.1:{os.environ.get('PORT', '8000')}")
# One request per process, taken from the kernel's queue of connections by whichever process
# is free: requests are served in arrival order, and a process never waits on another request's
# Python (one interpreter lock each). Measured on 2 cores, 32 agents: each endpoint's p95 is
# 1.3x its median, against 2-3x with 2 processes of 4 threads, where a connection stays with
# the process that accepted it and every thread waits its turn for the process's lock. The
# cost: no keep-alive (each request is a connection; loopback makes that cheap, and a proxy in
# front keeps its own), and a slow client holds a process: facing slow or untrusted networks,
# put a buffering proxy (nginx) in front, or use gthread.
worker_class = os.environ.get("WEB_WORKER_CLASS", "sync")
_cores = os.cpu_count() or 2
if worker_class == "sync":
    # Two per core: one computes while the other waits on the database. More processes only
    # take turns on the same cores, each finding its caches cold: with three per core the same
    # soak (2 cores, 32 agents) served 9% fewer requests per second (four interleaved pairs,
    # 141-176 against 160-186 requests/s) at the same p95.
    workers = int(os.environ.get("WEB_CONCURRENCY") or 2 * _cores)
    threads = 1
else:
    workers = int(os.environ.get("WEB_CONCURRENCY") or _cores)
    # Few threads per process: Python runs one at a time, so more threads share the same core
    # and stretch every request's latency; four keep the core busy while others wait on the database.
    threads = int(os.environ.get("WEB_THREADS", "4"))
# Requests queue in the kernel while every process is busy; a full backlog refuses at once.
backlog = int(os.environ.get("WEB_BACKLOG", "256"))
timeout = int(os.environ.get("WEB_TIMEOUT", "60"))
graceful_timeout = 10
keepalive = 5
# A worker is replaced after this many requests (with jitter), bounding any slow leak.
max_requests = int(os.environ.get("WEB_MAX_REQUESTS", "20000"))
max_requests_jitter = max_requests // 10
accesslog = os.environ.get("WEB_ACCESS_LOG") or None
errorlog = "-"
loglevel = os.environ.get("WEB_LOG_LEVEL", "warning")
proc_name = "memorypr-web"
# No preload: each worker process opens its own connections and loads its own model after the fork.
preload_app = False

os.environ.setdefault("MEMORYPR_DB_POOL_MAX", str(threads))
# The web tier connects as the role that owns no table: row-level security binds every request.
os.environ.setdefault("MEMORYPR_DB_ROLE", "app")


# gthread only (a sync worker closes every connection): a keep-alive connection serves this
# many requests, then closes ("Connection: close"; 0: no limit). The processes share one
# listening socket and a connection stays with the process that accepted it: clients that
# connect at once and keep their connections (as agents do) can pile onto one process and wait
# several times longer than the others. Reconnecting now and then hands them to whichever
# process is free to accept first, the least busy one.
keepalive_requests = int(os.environ.get("WEB_KEEPALIVE_REQUESTS", "50"))


def pre_request(worker, req):  # type: ignore[no-untyped-def]
    if keepalive_requests and req.req_number >= keepalive_requests:
        req.must_close = True


def on_starting(server):  # type: ignore[no-untyped-def]
    """In the master, before the first fork: the Chinese word segmenter, loaded once for all
    processes (memorypr.vectors.text.search_segmenter_warm), each worker replaced too.
    MEMORYPR_WARM_UP=0 skips it, as it skips the workers' own warm-up."""
    if os.environ.get("MEMORYPR_WARM_UP", "1") == "1":
        from memorypr.vectors.text import search_segmenter_warm

        search_segmenter_warm()


def post_worker_init(worker):  # type: ignore[no-untyped-def]
    """Before the first request: the embedding model loaded (retrieval embeds every query), the
    broker connected, then what start-up built frozen (memorypr.warm)."""
    from memorypr.warm import web_process_warm

    web_process_warm()


def child_exit(server, worker):  # type: ignore[no-untyped-def]
    """A dead worker's Prometheus samples leave the shared multiprocess folder with it."""
    if os.environ.get("PROMETHEUS_MULTIPROC_DIR"):
        from prometheus_client import multiprocess

        multiprocess.mark_process_dead(worker.pid)
