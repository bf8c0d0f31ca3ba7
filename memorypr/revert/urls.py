from django.urls import path

from memorypr.revert.api import PullRevertApi

urlpatterns = [
    path("pulls/<uuid:pull_id>/revert", PullRevertApi.as_view(), name="pull-revert"),
]
