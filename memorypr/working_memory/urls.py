from django.urls import re_path

from memorypr.working_memory.api import SessionContextApi, SessionDetailApi, TurnCreateApi

SESSION = r"(?P<session_id>[\w.:\-]{1,200})"

urlpatterns = [
    re_path(rf"^sessions/{SESSION}/turns$", TurnCreateApi.as_view(), name="session-turns"),
    re_path(rf"^sessions/{SESSION}/context$", SessionContextApi.as_view(), name="session-context"),
    re_path(rf"^sessions/{SESSION}$", SessionDetailApi.as_view(), name="session-detail"),
]
