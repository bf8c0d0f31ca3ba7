from __future__ import annotations

from functools import partial

from drf_spectacular.utils import extend_schema
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from memorypr.agents.tenancy import request_agent, request_namespace
from memorypr.retrieval.bodies import retrieval_body
from memorypr.retrieval.responses import ResponseThen
from memorypr.retrieval.selectors import retrieve
from memorypr.retrieval.serializers import (
    RetrieveInSerializer,
    RetrieveOutSerializer,
    VerifyInSerializer,
    VerifyOutSerializer,
)
from memorypr.retrieval.services import fact_accesses_record
from memorypr.retrieval.verification import draft_verify


class RetrieveApi(APIView):
    http_method_names = ["post", "options"]

    @extend_schema(request=RetrieveInSerializer, responses=RetrieveOutSerializer)
    def post(self, request: Request) -> Response:
        data = RetrieveInSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        params = data.validated_data
        namespace = request_namespace(agent=request_agent(request), requested=params.get("namespace"))
        found = retrieve(
            namespace=namespace,
            subject=params["subject"],
            query=params["query"],
            top_k=params["topK"],
            categories=tuple(params["categories"]),
            as_of=params["asOf"],
            include_history=params["includeHistory"],
        )
        body = retrieval_body(found, history=params["includeHistory"])
        # Access counts describe use of what is true now; a look into the past is no use of it.
        accessed = [item.fact.pk for item in found.results] if found.as_of is None else []
        return ResponseThen(body, after=partial(fact_accesses_record, fact_ids=accessed))


class VerifyApi(APIView):
    http_method_names = ["post", "options"]

    @extend_schema(request=VerifyInSerializer, responses=VerifyOutSerializer)
    def post(self, request: Request) -> Response:
        data = VerifyInSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        params = data.validated_data
        namespace = request_namespace(agent=request_agent(request), requested=params.get("namespace"))
        checked = draft_verify(namespace=namespace, subject=params["subject"], text=params["text"])
        return Response(VerifyOutSerializer(checked).data)
