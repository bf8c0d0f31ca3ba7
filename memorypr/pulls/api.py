from __future__ import annotations

import uuid

from django.conf import settings
from django.http import Http404
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema
from rest_framework import status
from rest_framework.pagination import PageNumberPagination
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from memorypr.agents.tenancy import request_agent, request_namespace
from memorypr.common.errors import Conflict
from memorypr.common.prefetch import prefetched_set
from memorypr.common.schema import ErrorSerializer, link
from memorypr.pulls import selectors, services
from memorypr.pulls.bodies import pull_body
from memorypr.pulls.serializers import (
    PullDetailOutSerializer,
    PullInSerializer,
    PullListQuerySerializer,
    PullOutSerializer,
)


class PullPagination(PageNumberPagination):
    page_size = 50
    page_size_query_param = "pageSize"
    max_page_size = 200


PULL_ID = OpenApiParameter("pull_id", OpenApiTypes.UUID, OpenApiParameter.PATH)
# Where a KPR in an answer leads: to its review state, and to the revert of it once merged.
PULL_LINKS = {
    "GetPull": link("v1_pulls_retrieve", "The KPR's review and merge state.", pull_id="$response.body#/id"),
    "RevertPull": link("v1_pulls_revert_create", "Propose its revert.", pull_id="$response.body#/id"),
}


class PullListCreateApi(APIView):
    http_method_names = ["get", "post", "head", "options"]
    pagination_class = PullPagination
    openapi_links = {
        "POST 201": PULL_LINKS,
        "POST 200": PULL_LINKS,
        "GET 200": {"GetPull": link("v1_pulls_retrieve", pull_id="$response.body#/results/0/id")},
    }

    @extend_schema(
        request=PullInSerializer,
        responses={
            200: OpenApiResponse(
                PullOutSerializer, description="The KPR first sent with this idempotencyKey."
            ),
            201: PullOutSerializer,
            409: OpenApiResponse(
                ErrorSerializer, description="idempotencyKey already used for another payload."
            ),
        },
    )
    def post(self, request: Request) -> Response:
        agent = request_agent(request)
        serializer = PullInSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        namespace = request_namespace(agent=agent, requested=serializer.validated_data.get("namespace"))
        try:
            pull, created = services.pull_submit(agent=agent, namespace=namespace, spec=serializer.to_spec())
        except services.IdempotencyConflict as exc:
            raise Conflict(
                f"idempotencyKey was already used for KPR {exc.existing.id} with a different payload."
            ) from exc
        if created and settings.CELERY_TASK_ALWAYS_EAGER:
            # Review and merge ran within this request's commit (tasks run in process): the
            # answer is the KPR as they left it, so the proposer needs no request to learn it.
            pull = selectors.pull_get_for_agent(agent=agent, pull_id=str(pull.pk)) or pull
        elif created:
            # The KPR as submitted: nobody has reviewed it yet, so it has no review comments.
            prefetched_set(pull, "comments", [])
        body = pull_body(pull)
        return Response(body, status=status.HTTP_201_CREATED if created else status.HTTP_200_OK)

    @extend_schema(
        parameters=[PullListQuerySerializer],
        responses=PullOutSerializer(many=True),
    )
    def get(self, request: Request) -> Response:
        agent = request_agent(request)
        query = PullListQuerySerializer(data=request.query_params)
        query.is_valid(raise_exception=True)
        params = query.validated_data
        if params.get("namespace"):
            request_namespace(agent=agent, requested=params["namespace"])  # 403 outside the agent's scope
        qs = selectors.pull_list(
            agent=agent,
            namespace=params.get("namespace"),
            review_status=params.get("reviewStatus"),
            subject=params.get("subject"),
            since=params.get("since"),
        )
        paginator = self.pagination_class()
        page = paginator.paginate_queryset(qs, request, view=self)
        return paginator.get_paginated_response([pull_body(pull) for pull in page or ()])


class PullDetailApi(APIView):
    http_method_names = ["get", "head", "options"]
    openapi_links = {"GET 200": {"RevertPull": PULL_LINKS["RevertPull"]}}

    @extend_schema(
        parameters=[PULL_ID],
        responses=PullDetailOutSerializer,
    )
    def get(self, request: Request, pull_id: uuid.UUID) -> Response:
        pull = selectors.pull_get_for_agent(agent=request_agent(request), pull_id=str(pull_id))
        if pull is None:
            raise Http404("No such KPR in this agent's namespaces.")
        return Response(pull_body(pull, reviews=True))
