"""The revert endpoint: an agent proposes the undoing of a merged KPR."""

from __future__ import annotations

import uuid

from django.http import Http404
from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework import status
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from memorypr.agents.tenancy import request_agent
from memorypr.common.errors import Conflict
from memorypr.common.schema import ErrorSerializer
from memorypr.pulls.api import PULL_ID, PULL_LINKS
from memorypr.pulls.selectors import pull_get_for_agent
from memorypr.pulls.serializers import PullOutSerializer
from memorypr.pulls.services import IdempotencyConflict
from memorypr.revert.serializers import RevertInSerializer
from memorypr.revert.services import RevertRefused, pull_revert


class PullRevertApi(APIView):
    """Propose the revert of a merged KPR: a new KPR that restores the previous versions."""

    http_method_names = ["post", "options"]
    openapi_links = {"POST 201": PULL_LINKS, "POST 200": PULL_LINKS}

    @extend_schema(
        request=RevertInSerializer,
        parameters=[PULL_ID],
        responses={
            200: OpenApiResponse(
                PullOutSerializer, description="The revert first sent with this idempotencyKey."
            ),
            201: PullOutSerializer,
            409: OpenApiResponse(
                ErrorSerializer,
                description="Not revertible (not merged, already reverted, or its facts changed since), "
                "or idempotencyKey already used for another payload.",
            ),
        },
    )
    def post(self, request: Request, pull_id: uuid.UUID) -> Response:
        agent = request_agent(request)
        body = RevertInSerializer(data=request.data or {})
        body.is_valid(raise_exception=True)
        pull = pull_get_for_agent(agent=agent, pull_id=str(pull_id))
        if pull is None:
            raise Http404("No such KPR in this agent's namespaces.")
        try:
            revert, created = pull_revert(
                pull=pull,
                agent=agent,
                reason=body.validated_data["reason"],
                idempotency_key=body.validated_data["idempotencyKey"],
            )
        except RevertRefused as exc:
            raise Conflict(str(exc)) from exc
        except IdempotencyConflict as exc:
            raise Conflict(
                f"idempotencyKey was already used for KPR {exc.existing.id} with a different payload."
            ) from exc
        return Response(
            PullOutSerializer(revert).data, status=status.HTTP_201_CREATED if created else status.HTTP_200_OK
        )
