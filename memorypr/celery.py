import os
import threading

from celery import Celery
from celery.signals import worker_process_init

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "memorypr.settings")

app = Celery("memorypr")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()


@worker_process_init.connect
def _warm_embedding_model(**_: object) -> None:
    """Each new pool child loads the model in the background: a replaced child is ready sooner,
    and the load runs after the fork, never shared across it (torch's pools are not fork-safe)."""
    if os.environ.get("MEMORYPR_WARM_EMBEDDINGS", "1") == "1":
        from memorypr.vectors.embedding import embedding_model_warm

        threading.Thread(target=embedding_model_warm, name="embedding-warm", daemon=True).start()
