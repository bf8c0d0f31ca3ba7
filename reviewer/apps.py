from django.apps import AppConfig


class ReviewerConfig(AppConfig):
    name = "reviewer"
    label = "reviewer"

    def ready(self) -> None:
        from memorypr.pulls.signals import pull_submitted
        from reviewer.receivers import review_enqueue

        pull_submitted.connect(review_enqueue, dispatch_uid="reviewer.review_enqueue")
