from django.apps import AppConfig


class CommonConfig(AppConfig):
    name = "memorypr.common"
    label = "common"
