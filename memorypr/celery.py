import os

from celery import Celery

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "memorypr.settings")

app = Celery("memorypr")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()
