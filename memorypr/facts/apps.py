from django.apps import AppConfig


class FactsConfig(AppConfig):
    name = "memorypr.facts"
    label = "facts"

    def ready(self) -> None:
        from memorypr.facts.receivers import merge_enqueue
        from memorypr.pulls.signals import pull_approved

        pull_approved.connect(merge_enqueue, dispatch_uid="facts.merge_enqueue")
