from django.contrib.auth import views as auth_views
from django.urls import path

from reviewer.dashboard import views, views_audit, views_insights, views_memory

app_name = "reviewer"

urlpatterns = [
    path("", views.queue, name="queue"),
    path("bulk", views.queue_bulk, name="queue-bulk"),
    path("login/", auth_views.LoginView.as_view(template_name="reviewer/login.html"), name="login"),
    path("logout/", auth_views.LogoutView.as_view(next_page="reviewer:login"), name="logout"),
    path("pulls/<uuid:pull_id>/", views.pull_detail, name="pull-detail"),
    path("pulls/<uuid:pull_id>/decide", views.pull_decide, name="pull-decide"),
    path("pulls/<uuid:pull_id>/claim", views.pull_claim, name="pull-claim"),
    path("pulls/<uuid:pull_id>/rereview", views.pull_rereview, name="pull-rereview"),
    path("pulls/<uuid:pull_id>/revert", views.pull_revert, name="pull-revert"),
    path("pulls/<uuid:pull_id>/panel", views.pull_panel, name="pull-panel"),
    path("pulls/<uuid:pull_id>/comment", views.pull_comment, name="pull-comment"),
    path("pulls/<uuid:pull_id>/resolve", views.pull_resolve, name="pull-resolve"),
    path("facts/<slug:namespace>/<str:subject>/<path:key>/", views.fact_history, name="fact-history"),
    path("memory/", views_memory.memory_subjects, name="memory-subjects"),
    path("memory/<slug:namespace>/facts/<int:fact_id>/", views_memory.memory_fact, name="memory-fact"),
    path("memory/<slug:namespace>/<path:subject>/", views_memory.memory_subject, name="memory-subject"),
    path("audit/", views_audit.audit_events, name="audit"),
    path("audit/export.<str:fmt>", views_audit.audit_export, name="audit-export"),
    path("insights/", views_insights.insights, name="insights"),
]
