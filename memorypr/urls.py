from django.contrib import admin
from django.urls import include, path
from drf_spectacular.views import SpectacularAPIView, SpectacularRedocView, SpectacularSwaggerView

from memorypr.monitoring.views import healthz, metrics
from reviewer.dashboard.views import home

api_v1 = [
    path("", include("memorypr.pulls.urls")),
    path("", include("memorypr.facts.urls")),
    path("", include("memorypr.revert.urls")),
    path("", include("memorypr.retrieval.urls")),
    path("", include("memorypr.working_memory.urls")),
]

urlpatterns = [
    path("", home, name="home"),
    path("healthz", healthz, name="healthz"),
    path("metrics", metrics, name="metrics"),
    path("api/v1/", include(api_v1)),
    path("api/schema/", SpectacularAPIView.as_view(), name="schema"),
    path("api/docs/", SpectacularSwaggerView.as_view(url_name="schema"), name="docs"),
    path("api/redoc/", SpectacularRedocView.as_view(url_name="schema"), name="redoc"),
    path("review/", include("reviewer.dashboard.urls")),
    path("admin/", admin.site.urls),
]

handler404 = "memorypr.common.not_found.not_found"
