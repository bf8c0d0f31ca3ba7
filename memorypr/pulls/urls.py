from django.urls import path

from memorypr.pulls.api import PullDetailApi, PullListCreateApi

urlpatterns = [
    path("pulls", PullListCreateApi.as_view(), name="pull-list"),
    path("pulls/<uuid:pull_id>", PullDetailApi.as_view(), name="pull-detail"),
]
