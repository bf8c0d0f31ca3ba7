import os
import threading
from typing import Any

from celery import Celery
from celery.signals import task_postrun, task_prerun, worker_process_init
from django.db import close_old_connections

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "memorypr.settings")

app = Celery("memorypr")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()


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

        embedding_model_warm()
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
