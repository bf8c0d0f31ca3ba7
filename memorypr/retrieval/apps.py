from django.apps import AppConfig


class RetrievalConfig(AppConfig):
    name = "memorypr.retrieval"
    label = "retrieval"
