from django.apps import AppConfig


class AuditConfig(AppConfig):
    name = "memorypr.audit"
    label = "audit"
