from __future__ import annotations

from functools import partial
from typing import Any

from django.http import Http404
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import status
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from memorypr.agents.tenancy import request_agent, request_namespace
from memorypr.common.schema import link
from memorypr.retrieval.responses import ResponseThen
from memorypr.retrieval.selectors import retrieve
from memorypr.retrieval.services import fact_accesses_record
from memorypr.working_memory.selectors import SessionView, session_view
from memorypr.working_memory.serializers import (
    ContextOutSerializer,
    ContextQuerySerializer,
    SessionOutSerializer,
    SessionQuerySerializer,
    TurnInSerializer,
    TurnOutSerializer,
)
from memorypr.working_memory.services import turn_append
from memorypr.working_memory.stores import Turn

SESSION_PARAM = OpenApiParameter(
    "session_id", str, OpenApiParameter.PATH, pattern=r"^[\w.:\-]{1,200}$", description="The session's id."
)


def _view_or_404(*, request: Request, session_id: str, requested: str | None) -> SessionView:
    namespace = request_namespace(agent=request_agent(request), requested=requested)
    view = session_view(namespace=namespace, session_id=session_id)
    if view is None:
        raise Http404("No such session in this namespace.")
    return view


class TurnCreateApi(APIView):
    http_method_names = ["post", "options"]
    openapi_links = {
        "POST 201": {
            "GetSession": link("v1_sessions_retrieve", session_id="$request.path.session_id"),
            "GetContext": link("v1_sessions_context_retrieve", session_id="$request.path.session_id"),
        }
    }

    @extend_schema(parameters=[SESSION_PARAM], request=TurnInSerializer, responses={201: TurnOutSerializer})
    def post(self, request: Request, session_id: str) -> Response:
        data = TurnInSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        agent = request_agent(request)
        namespace = request_namespace(agent=agent, requested=data.validated_data.get("namespace"))
        row = turn_append(
            namespace=namespace,
            session_id=session_id,
            role=data.validated_data["role"],
            content=data.validated_data["content"],
            agent=agent,
        )
        return Response(TurnOutSerializer(Turn.of(row)).data, status=status.HTTP_201_CREATED)


class SessionDetailApi(APIView):
    http_method_names = ["get", "head", "options"]

    @extend_schema(parameters=[SESSION_PARAM, SessionQuerySerializer], responses=SessionOutSerializer)
    def get(self, request: Request, session_id: str) -> Response:
        query = SessionQuerySerializer(data=request.query_params)
        query.is_valid(raise_exception=True)
        view = _view_or_404(
            request=request, session_id=session_id, requested=query.validated_data.get("namespace")
        )
        return Response(SessionOutSerializer(view).data)


def _working_memory_text(view: SessionView) -> str:
    turns = view.window.turns
    if not turns:
        return f"Working memory (session {view.session_id}): no recent turns."
    lines = [f"Working memory (session {view.session_id}, last {len(turns)} turns):"]
    lines.extend(f"{turn.role}: {turn.content}" for turn in turns)
    return "\n".join(lines)


class SessionContextApi(APIView):
    """Working memory and long-term retrieval in one block, ready for the agent's prompt."""

    http_method_names = ["get", "head", "options"]

    @extend_schema(parameters=[SESSION_PARAM, ContextQuerySerializer], responses=ContextOutSerializer)
    def get(self, request: Request, session_id: str) -> Response:
        query = ContextQuerySerializer(data=request.query_params)
        query.is_valid(raise_exception=True)
        params = query.validated_data
        view = _view_or_404(request=request, session_id=session_id, requested=params.get("namespace"))
        text = params["query"].strip() or _last_user_turn(view)
        found = (
            retrieve(namespace=view.namespace, subject=params["subject"], query=text, top_k=params["topK"])
            if text
            else None
        )
        blocks = [_working_memory_text(view)]
        if found is not None:
            blocks.append(found.context)
        body: dict[str, Any] = {"session": view, "retrieval": found, "context": "\n\n".join(blocks)}
        accessed = [item.fact.pk for item in found.results] if found else []
        return ResponseThen(
            ContextOutSerializer(body).data, after=partial(fact_accesses_record, fact_ids=accessed)
        )


def _last_user_turn(view: SessionView) -> str:
    users = [turn for turn in view.window.turns if turn.role == "user"]
    return users[-1].content[:2000] if users else ""
