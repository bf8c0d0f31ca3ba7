from django.apps import AppConfig


class EvolutionConfig(AppConfig):
    name = "memorypr.evolution"
    label = "evolution"
