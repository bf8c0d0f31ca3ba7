from django.urls import path

from memorypr.evolution.api import FeedbackApi
from memorypr.retrieval.api import RetrieveApi, VerifyApi

urlpatterns = [
    path("retrieve", RetrieveApi.as_view(), name="retrieve"),
    path("verify", VerifyApi.as_view(), name="verify"),
    path("feedback", FeedbackApi.as_view(), name="feedback"),
]
