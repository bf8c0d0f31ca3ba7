from django.apps import AppConfig


class FactsConfig(AppConfig):
    name = "memorypr.facts"
    label = "facts"
