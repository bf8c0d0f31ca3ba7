from django.apps import AppConfig


class AgentsConfig(AppConfig):
    name = "memorypr.agents"
    label = "agents"

    def ready(self) -> None:
        from memorypr.agents import schema  # noqa: F401 - registers the OpenAPI auth scheme
