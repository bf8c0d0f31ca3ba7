from django.apps import AppConfig


class WorkingMemoryConfig(AppConfig):
    name = "memorypr.working_memory"
    label = "working_memory"
