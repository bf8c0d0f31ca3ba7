from django.apps import AppConfig


class AgentsConfig(AppConfig):
    name = "memorypr.agents"
    label = "agents"
