from django.urls import path

from memorypr.facts.api import FactHistoryApi, FactListApi

urlpatterns = [
    path("facts", FactListApi.as_view(), name="fact-list"),
    # keys may contain "/", so the key is a path; "/history" ends it
    path("facts/<path:key>/history", FactHistoryApi.as_view(), name="fact-history"),
]
