from __future__ import annotations

from django.http import Http404
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework.pagination import PageNumberPagination
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from memorypr.agents.tenancy import request_agent, request_namespace
from memorypr.common.schema import link
from memorypr.common.text import KEY_PATTERN
from memorypr.facts import selectors
from memorypr.facts.bodies import fact_body
from memorypr.facts.serializers import (
    STATUS_ALL,
    FactHistoryOutSerializer,
    FactHistoryQuerySerializer,
    FactHistoryResponseSerializer,
    FactListQuerySerializer,
    FactOutSerializer,
)


class FactPagination(PageNumberPagination):
    page_size = 100
    page_size_query_param = "pageSize"
    max_page_size = 500


class FactListApi(APIView):
    """Facts of a namespace: active ones by default, any status, or what was true at `asOf`."""

    http_method_names = ["get", "head", "options"]
    pagination_class = FactPagination
    openapi_links = {
        "GET 200": {
            "GetFactHistory": link(
                "v1_facts_history_retrieve",
                key="$response.body#/results/0/key",
                subject="$response.body#/results/0/subject",
                namespace="$response.body#/results/0/namespace",
            )
        }
    }

    @extend_schema(parameters=[FactListQuerySerializer], responses=FactOutSerializer(many=True))
    def get(self, request: Request) -> Response:
        query = FactListQuerySerializer(data=request.query_params)
        query.is_valid(raise_exception=True)
        params = query.validated_data
        namespace = request_namespace(agent=request_agent(request), requested=params.get("namespace"))
        wanted = params.get("status") or "active"
        facts = selectors.fact_list(
            namespace_id=namespace.pk,
            subject=params.get("subject"),
            category=params.get("category"),
            status=None if wanted == STATUS_ALL else wanted,
            as_of=params.get("asOf"),
            keys=params.get("key", ()),
            key_prefixes=params.get("keyPrefix", ()),
        )
        paginator = self.pagination_class()
        page = paginator.paginate_queryset(selectors.fact_list_rows(facts), request, view=self)
        as_of = params.get("asOf")
        return paginator.get_paginated_response([fact_body(fact, as_of=as_of) for fact in page or ()])


class FactHistoryApi(APIView):
    """Every version of a key with its status, edges and the KPR that wrote it."""

    http_method_names = ["get", "head", "options"]

    @extend_schema(
        parameters=[
            FactHistoryQuerySerializer,
            OpenApiParameter("key", str, OpenApiParameter.PATH, pattern=KEY_PATTERN),
        ],
        responses=FactHistoryResponseSerializer,
    )
    def get(self, request: Request, key: str) -> Response:
        query = FactHistoryQuerySerializer(data=request.query_params)
        query.is_valid(raise_exception=True)
        params = query.validated_data
        namespace = request_namespace(agent=request_agent(request), requested=params.get("namespace"))
        as_of = params.get("asOf")
        versions = selectors.fact_history(
            namespace_id=namespace.pk,
            subject=params["subject"],
            key=key,
            category=params.get("category"),
            as_of=as_of,
        )
        if not versions and as_of is None:
            raise Http404(
                f"No fact '{key}' for subject '{params['subject']}' in namespace '{namespace.name}'."
            )
        return Response(
            {
                "namespace": namespace.name,
                "subject": params["subject"],
                "key": key,
                "asOf": query.data.get("asOf"),
                "versions": FactHistoryOutSerializer(versions, many=True, context={"as_of": as_of}).data,
            }
        )
