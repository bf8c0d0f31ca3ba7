from django.apps import AppConfig


class PullsConfig(AppConfig):
    name = "memorypr.pulls"
    label = "pulls"
