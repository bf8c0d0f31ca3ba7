from django.apps import AppConfig


class DashboardConfig(AppConfig):
    name = "reviewer.dashboard"
    label = "dashboard"
    verbose_name = "Review dashboard"
