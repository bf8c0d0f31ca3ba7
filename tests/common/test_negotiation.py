"""The negotiation shortcut answers exactly as DRF's full negotiation does."""

from __future__ import annotations

import pytest
from django.http import Http404
from drf_spectacular.renderers import OpenApiYamlRenderer
from rest_framework.exceptions import NotAcceptable
from rest_framework.negotiation import DefaultContentNegotiation
from rest_framework.renderers import JSONRenderer
from rest_framework.request import Request
from rest_framework.test import APIRequestFactory

from memorypr.common.negotiation import JsonFirstNegotiation

ACCEPTS = [
    None,
    "",
    "*/*",
    "application/json",
    " application/json ",
    "application/json; indent=4",
    "application/*",
    "text/html",
    "text/html, */*;q=0.1",
    "application/vnd.oai.openapi",
]
QUERIES = ["", "?format=json", "?format=openapi"]
RENDERER_SETS = [[JSONRenderer()], [OpenApiYamlRenderer(), JSONRenderer()]]


def _choice(negotiation, request, renderers):  # type: ignore[no-untyped-def]
    try:
        renderer, media_type = negotiation.select_renderer(request, renderers)
    except NotAcceptable:
        return "406"
    except Http404:  # a ?format= that no renderer has
        return "404"
    return type(renderer).__name__, media_type


@pytest.mark.parametrize("renderers", RENDERER_SETS, ids=["json", "yaml-then-json"])
@pytest.mark.parametrize("query", QUERIES)
@pytest.mark.parametrize("accept", ACCEPTS)
def test_the_shortcut_chooses_what_the_full_negotiation_chooses(accept, query, renderers):
    # given a request with this Accept header and query
    headers = {} if accept is None else {"HTTP_ACCEPT": accept}
    request = Request(APIRequestFactory().get(f"/api/v1/pulls{query}", **headers))
    # when both negotiations choose a renderer
    # then they choose the same one with the same media type, or both refuse
    assert _choice(JsonFirstNegotiation(), request, renderers) == _choice(
        DefaultContentNegotiation(), request, renderers
    )


def test_an_agent_sending_no_accept_header_gets_json():
    request = Request(APIRequestFactory().get("/api/v1/pulls"))
    renderer, media_type = JsonFirstNegotiation().select_renderer(request, [JSONRenderer()])
    assert isinstance(renderer, JSONRenderer)
    assert media_type == "application/json"


def test_the_api_views_negotiate_with_the_shortcut():
    from rest_framework.views import APIView

    assert isinstance(APIView().get_content_negotiator(), JsonFirstNegotiation)
