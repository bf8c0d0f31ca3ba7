import logging
import os
import threading
from typing import Any

from celery import Celery
from celery.signals import task_postrun, task_prerun, worker_init, worker_process_init
from django.conf import settings
from django.db import close_old_connections

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "memorypr.settings")

logger = logging.getLogger(__name__)

app = Celery("memorypr")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()


def celery_publishing_warm() -> bool:
    """Do once, before a process's first request, what its first task sent would do: bind the
    tasks to the app, load the result backend (a scan of every installed package's entry
    points), import the broker's transport, connect a pooled producer and declare the task
    queues on it. A web process's first submit took 194 ms of CPU, and 41 ms after this; the
    next ones take 14 ms. False when the broker does not answer: the first task sent connects
    then, as it would have.
    """
    try:
        app.tasks  # noqa: B018 (the app binds its tasks on first access)
        app.backend  # noqa: B018 (loaded on first access)
        with app.producer_or_acquire() as producer:
            producer.connection.ensure_connection(max_retries=1, interval_start=0, interval_step=0.2)
            for queue in app.amqp.queues.values():
                producer.maybe_declare(queue)
    except Exception as exc:  # noqa: BLE001 (any broker error: the process serves without the warm-up)
        logger.warning("broker not reached before the first request (%s); the first task sent connects", exc)
        return False
    return True


def broker_orphaned_tasks_requeue() -> int:
    """Put every task delivered but not acknowledged back at the head of its queue; their count.

    Only for a worker that consumes its broker alone (`make run`'s own Redis): a worker master
    killed with tasks in hand leaves them unacknowledged, and the broker would hand them out
    again only after its visibility timeout (MEMORYPR_BROKER_VISIBILITY_TIMEOUT, 300 s). When the
    next worker starts, no one else can be holding them. A task run twice is a no-op the second
    time (reviews and merges are idempotent).
    """
    with app.connection_for_write() as conn:
        if conn.transport.driver_type != "redis":
            return 0  # AMQP brokers hand a dead consumer's messages back on their own
        channel = conn.default_channel
        tags = channel.client.hkeys(channel.unacked_key)
        for tag in tags:
            channel.qos.restore_by_tag(tag)
    return len(tags)


@worker_init.connect
def _orphaned_tasks_requeued(**_: object) -> None:
    """In the worker master, before it consumes: see `broker_orphaned_tasks_requeue`."""
    if os.environ.get("MEMORYPR_WORKER_SOLE_CONSUMER") != "1":
        return
    try:
        if count := broker_orphaned_tasks_requeue():
            logger.warning("requeued %d task(s) a previous worker had taken and not finished", count)
    except Exception as exc:  # noqa: BLE001 (the visibility timeout and the sweeps still recover them)
        logger.warning("could not requeue the tasks of a previous worker (%s)", exc)


@worker_init.connect
def _search_segmenter_loaded(**_: object) -> None:
    """In the worker master, before the pool forks: its children share the segmenter's one copy
    (memorypr.vectors.text.search_segmenter_warm), and a replaced child has it at once. A solo
    or thread pool runs in this very process."""
    if os.environ.get("MEMORYPR_WARM_UP", "1") == "1":
        from memorypr.vectors.text import search_segmenter_warm

        search_segmenter_warm()


@worker_process_init.connect
def _warm_embedding_model(**_: object) -> None:
    """Each new pool child loads the model in the background: a replaced child is ready sooner,
    and the load runs after the fork, never shared across it (torch's pools are not fork-safe).
    Then it freezes what start-up built, so that the collector stops walking it."""
    threading.Thread(target=_child_warm, name="embedding-warm", daemon=True).start()


def _child_warm() -> None:
    from memorypr.common.collector import collector_tune_for_serving

    if os.environ.get("MEMORYPR_WARM_EMBEDDINGS", "1") == "1":
        from memorypr.vectors.embedding import embedding_model_warm

        embedding_model_warm(bulk=True)
    if settings.OPENAI_BASE_URL:
        import openai  # noqa: F401 (the first review would import the SDK: about 0.4 s)
    collector_tune_for_serving()


@task_prerun.connect
@task_postrun.connect
def _database_connections_checked(sender: Any = None, **_: object) -> None:
    """Around each task, what Django does around each request: a connection past CONN_MAX_AGE,
    or one that failed, is closed (the next query opens another); a live one is kept, with
    its server process's caches and prepared statements. Celery's own fixup would close every
    connection twice per task (settings.CELERY_DB_REUSE_MAX keeps it from doing so). A task run
    inline belongs to its caller's request or transaction, and is left alone."""
    if sender is not None and getattr(sender.request, "is_eager", False):
        return
    close_old_connections()
