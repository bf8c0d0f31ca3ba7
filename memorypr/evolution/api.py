from __future__ import annotations

from django.http import Http404
from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from memorypr.agents.tenancy import request_agent
from memorypr.common.schema import ErrorSerializer
from memorypr.evolution.serializers import FeedbackInSerializer, FeedbackOutSerializer
from memorypr.evolution.services.feedback import FactsNotFound, feedback_record


class FeedbackApi(APIView):
    """POST /api/v1/feedback: a task's outcome moves the confidence of the facts it used."""

    http_method_names = ["post", "options"]

    @extend_schema(
        request=FeedbackInSerializer,
        responses={
            200: FeedbackOutSerializer,
            404: OpenApiResponse(ErrorSerializer, description="A fact id not in this agent's namespaces."),
        },
    )
    def post(self, request: Request) -> Response:
        data = FeedbackInSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        params = data.validated_data
        try:
            applied = feedback_record(
                agent=request_agent(request),
                fact_ids=params["factIds"],
                outcome=params["outcome"],
                session_id=params["sessionId"],
            )
        except FactsNotFound as exc:
            raise Http404(f"No such facts in this agent's namespaces: {exc.missing}") from exc
        return Response(FeedbackOutSerializer({"outcome": params["outcome"], "facts": applied}).data)
