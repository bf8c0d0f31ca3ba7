"""Every URL pattern, probed by one tenant with another tenant's ids: nothing of the other comes back.

The patterns are read from the resolver, so a new one is probed or named here: a pattern with
no entry in PROBES fails the walk. Each probe runs twice, as the owner role (the application's
own checks) and as the web tier's role (row-level security as well), and must answer 403 or
404, or a list with none of the other tenant's rows, and never carry the other tenant's marker.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

import pytest
from django.contrib import admin
from django.db import models
from django.test import Client
from django.urls import URLPattern, URLResolver, get_resolver
from rest_framework.test import APIClient

from tests.common.tenants import Tenant, tenant_models, tenant_world
from tests.web_role import requests_as_owner

pytestmark = pytest.mark.usefixtures("warm_models")

REFUSED = frozenset({403, 404})
LISTED = frozenset({200})  # a list or a page of the caller's own rows: checked for the victim's
PUBLIC = frozenset({200, 503})  # health answers 503 when no worker runs, as in this test


@dataclass(frozen=True)
class Probe:
    method: str
    # The victim's ids go into the path, the query or the body.
    path: Callable[[Tenant], str]
    body: Callable[[Tenant], dict[str, Any]] | None = None
    # "agent": the attacker's token; "reviewer": the attacker's login; "anyone": no credentials.
    who: str = "agent"
    allowed: frozenset[int] = REFUSED


def get(path: Callable[[Tenant], str], *, who: str = "agent", allowed: frozenset[int] = REFUSED) -> Probe:
    return Probe("GET", path, who=who, allowed=allowed)


def post(
    path: Callable[[Tenant], str],
    body: Callable[[Tenant], dict[str, Any]] | None = None,
    *,
    who: str = "agent",
    allowed: frozenset[int] = REFUSED,
) -> Probe:
    return Probe("POST", path, body or (lambda v: {}), who=who, allowed=allowed)


API = "api/v1/"
SESSION = r"^sessions/(?P<session_id>[\w.:\-]{1,200})"

# pattern (as the resolver spells it) → the probes that attack it
PROBES: dict[str, list[Probe]] = {
    "": [get(lambda v: f"/?namespace={v.name}", who="reviewer", allowed=frozenset({200, 302}))],
    "healthz": [get(lambda v: "/healthz", who="anyone", allowed=PUBLIC)],
    "metrics": [get(lambda v: "/metrics", who="anyone", allowed=PUBLIC)],
    API + "pulls": [
        get(lambda v: f"/api/v1/pulls?namespace={v.name}"),
        get(lambda v: f"/api/v1/pulls?subject={v.subject}", allowed=LISTED),
        post(
            lambda v: "/api/v1/pulls",
            lambda v: {
                "namespace": v.name,
                "subject": v.subject,
                "sourceSessionId": v.session_id,
                "proposedBy": "mallory",
                "operations": [
                    {
                        "action": "UPDATE",
                        "category": "user_profile",
                        "key": v.fact_key,
                        "oldValue": v.fact.value,
                        "newValue": "mallory",
                        "confidence": 0.9,
                        "evidence": {"rawMessageQuote": "mallory", "timestamp": 1732000000000},
                    }
                ],
            },  # fmt: skip
        ),
    ],
    API + "pulls/<uuid:pull_id>": [
        get(lambda v: f"/api/v1/pulls/{v.merged_pull.pk}"),
        get(lambda v: f"/api/v1/pulls/{v.queued_pull.pk}"),
    ],
    API + "pulls/<uuid:pull_id>/revert": [post(lambda v: f"/api/v1/pulls/{v.merged_pull.pk}/revert")],
    API + "facts": [
        get(lambda v: f"/api/v1/facts?namespace={v.name}&subject={v.subject}"),
        get(lambda v: f"/api/v1/facts?subject={v.subject}", allowed=LISTED),
    ],
    API + "facts/<path:key>/history": [
        get(lambda v: f"/api/v1/facts/{v.fact_key}/history?subject={v.subject}&namespace={v.name}"),
        get(lambda v: f"/api/v1/facts/{v.fact_key}/history?subject={v.subject}"),
    ],
    API + "retrieve": [
        post(
            lambda v: "/api/v1/retrieve",
            lambda v: {"namespace": v.name, "subject": v.subject, "query": "city"},
        ),
        post(lambda v: "/api/v1/retrieve", lambda v: {"subject": v.subject, "query": "city"}, allowed=LISTED),
    ],
    API + "verify": [
        post(
            lambda v: "/api/v1/verify",
            lambda v: {"namespace": v.name, "subject": v.subject, "text": "Beijing"},
        ),
        post(lambda v: "/api/v1/verify", lambda v: {"subject": v.subject, "text": "Beijing"}, allowed=LISTED),
    ],
    API + "feedback": [
        post(lambda v: "/api/v1/feedback", lambda v: {"factIds": [v.fact.pk], "outcome": "failure"}),
    ],
    API + SESSION + "/turns$": [
        post(
            lambda v: f"/api/v1/sessions/{v.session_id}/turns",
            lambda v: {"namespace": v.name, "role": "user", "content": "mallory"},
        ),
    ],
    API + SESSION + "/context$": [
        get(lambda v: f"/api/v1/sessions/{v.session_id}/context?namespace={v.name}&query=city"),
        get(lambda v: f"/api/v1/sessions/{v.session_id}/context?query=city"),
    ],
    API + SESSION + "$": [
        get(lambda v: f"/api/v1/sessions/{v.session_id}?namespace={v.name}"),
        get(lambda v: f"/api/v1/sessions/{v.session_id}"),
    ],
    "api/schema/": [get(lambda v: "/api/schema/", who="anyone", allowed=LISTED)],
    "api/docs/": [get(lambda v: "/api/docs/", who="anyone", allowed=LISTED)],
    "api/redoc/": [get(lambda v: "/api/redoc/", who="anyone", allowed=LISTED)],
    "review/": [
        get(lambda v: f"/review/?namespace={v.name}", who="reviewer", allowed=LISTED),
        get(lambda v: f"/review/?tab=mine&namespace={v.name}", who="reviewer", allowed=LISTED),
    ],
    "review/bulk": [
        post(
            lambda v: "/review/bulk",
            lambda v: {"pull": [str(v.queued_pull.pk)], "verdict": "REJECT", "reason": "mallory"},
            who="reviewer",
        ),
    ],
    "review/login/": [get(lambda v: "/review/login/", who="anyone", allowed=LISTED)],
    "review/logout/": [post(lambda v: "/review/logout/", who="reviewer", allowed=frozenset({302}))],
    "review/pulls/<uuid:pull_id>/": [
        get(lambda v: f"/review/pulls/{v.queued_pull.pk}/", who="reviewer"),
        get(lambda v: f"/review/pulls/{v.merged_pull.pk}/", who="reviewer"),
    ],
    "review/pulls/<uuid:pull_id>/decide": [
        post(
            lambda v: f"/review/pulls/{v.queued_pull.pk}/decide",
            lambda v: {"verdict": "APPROVE", "reason": "mallory"},
            who="reviewer",
        ),
    ],
    "review/pulls/<uuid:pull_id>/claim": [
        post(
            lambda v: f"/review/pulls/{v.queued_pull.pk}/claim", lambda v: {"take_over": "1"}, who="reviewer"
        ),
        post(lambda v: f"/review/pulls/{v.queued_pull.pk}/claim", lambda v: {"release": "1"}, who="reviewer"),
    ],
    "review/pulls/<uuid:pull_id>/rereview": [
        post(lambda v: f"/review/pulls/{v.queued_pull.pk}/rereview", who="reviewer"),
    ],
    "review/pulls/<uuid:pull_id>/revert": [
        post(
            lambda v: f"/review/pulls/{v.merged_pull.pk}/revert",
            lambda v: {"reason": "mallory"},
            who="reviewer",
        ),
    ],
    "review/pulls/<uuid:pull_id>/panel": [
        get(lambda v: f"/review/pulls/{v.queued_pull.pk}/panel", who="reviewer")
    ],
    "review/pulls/<uuid:pull_id>/comment": [
        post(
            lambda v: f"/review/pulls/{v.queued_pull.pk}/comment",
            lambda v: {"body": "mallory"},
            who="reviewer",
        ),
    ],
    "review/pulls/<uuid:pull_id>/resolve": [
        post(
            lambda v: f"/review/pulls/{v.queued_pull.pk}/resolve", lambda v: {"comment": "1"}, who="reviewer"
        ),
    ],
    "review/facts/<slug:namespace>/<str:subject>/<path:key>/": [
        get(lambda v: f"/review/facts/{v.name}/{v.subject}/{v.fact_key}/", who="reviewer"),
        get(lambda v: f"/review/facts/attacker/{v.subject}/{v.fact_key}/", who="reviewer"),
    ],
    "review/memory/": [get(lambda v: f"/review/memory/?namespace={v.name}", who="reviewer", allowed=LISTED)],
    "review/memory/<slug:namespace>/facts/<int:fact_id>/": [
        get(lambda v: f"/review/memory/{v.name}/facts/{v.fact.pk}/", who="reviewer"),
        get(lambda v: f"/review/memory/attacker/facts/{v.fact.pk}/", who="reviewer"),
    ],
    "review/memory/<slug:namespace>/<path:subject>/": [
        get(lambda v: f"/review/memory/{v.name}/{v.subject}/", who="reviewer"),
        get(lambda v: f"/review/memory/attacker/{v.subject}/", who="reviewer", allowed=REFUSED | LISTED),
    ],
    "review/audit/": [get(lambda v: f"/review/audit/?namespace={v.name}", who="reviewer", allowed=LISTED)],
    "review/audit/export.<str:fmt>": [
        get(
            lambda v: f"/review/audit/export.json?namespace={v.name}",
            who="reviewer",
            allowed=REFUSED | LISTED,
        ),
        get(
            lambda v: f"/review/audit/export.csv?namespace={v.name}", who="reviewer", allowed=REFUSED | LISTED
        ),
    ],
    "review/insights/": [
        get(lambda v: f"/review/insights/?namespace={v.name}", who="reviewer", allowed=LISTED)
    ],
}

# The admin's patterns come from its registry: each is probed by the attacker (a reviewer, who is
# staff) with the victim's row of the pattern's model, and must show nothing of the victim.
ADMIN = "admin/"
ADMIN_ANSWERS = frozenset({200, 302, 403, 404, 405})


def url_patterns() -> Iterator[tuple[str, URLPattern]]:
    def walk(patterns: list[Any], prefix: str) -> Iterator[tuple[str, URLPattern]]:
        for pattern in patterns:
            if isinstance(pattern, URLResolver):
                yield from walk(pattern.url_patterns, prefix + str(pattern.pattern))
            else:
                yield prefix + str(pattern.pattern), pattern

    yield from walk(get_resolver().url_patterns, "")


def admin_probe(route: str, victim: Tenant) -> Probe:
    """GET the admin page with the victim's row of its model in place of the object id."""
    owner = next(
        (
            m
            for m in admin.site._registry
            if route.startswith(f"{ADMIN}{m._meta.app_label}/{m._meta.model_name}/")
        ),
        None,
    )
    object_id = str(_victim_row(owner, victim)) if owner is not None else "1"
    path = "/" + route
    for placeholder, value in (
        ("<path:object_id>", object_id),
        ("<int:content_type_id>", "1"),
        ("<id>", "1"),
    ):
        path = path.replace(placeholder, value)
    if "(?P<app_label>" in path or "<" in path or "^" in path:
        app = owner._meta.app_label if owner else "audit"
        path = f"/{ADMIN}{app}/"
    return get(lambda v: path, who="reviewer", allowed=ADMIN_ANSWERS)


def _admin_of_tenant_model(route: str) -> bool:
    return any(route.startswith(f"{ADMIN}{m._meta.app_label}/{m._meta.model_name}/") for m in tenant_models())


def _victim_row(model: type[models.Model], victim: Tenant) -> Any:
    lookup = tenant_models().get(model)
    rows = model._base_manager.all()
    if lookup is not None:
        rows = rows.filter(**{lookup: victim.name})
    return rows.values_list("pk", flat=True).first() or 1


def probes_for(victim: Tenant) -> tuple[list[tuple[str, Probe]], list[str]]:
    """Every pattern's probes, and the patterns that have none."""
    planned, unprobed = [], []
    for route, _ in url_patterns():
        if route.startswith(ADMIN):
            planned.append((route, admin_probe(route, victim)))
        elif route in PROBES:
            planned.extend((route, probe) for probe in PROBES[route])
        else:
            unprobed.append(route)
    return planned, unprobed


@pytest.fixture
def world(db: None) -> tuple[Tenant, Tenant]:
    # the attacker's own namespace holds rows too, so that an empty answer is not vacuous
    return tenant_world("attacker"), tenant_world("victim")


def _client(who: str, attacker: Tenant) -> Client:
    if who == "agent":
        client = APIClient()
        client.credentials(HTTP_AUTHORIZATION=f"Bearer {attacker.token}")
        return client
    client = Client()
    if who == "reviewer":
        assert client.login(username=attacker.reviewer, password=attacker.password)
    return client


def _send(client: Client, probe: Probe, victim: Tenant) -> tuple[int, str]:
    """The status and the whole body; a streamed body is read here, while the role still holds."""
    if probe.method == "GET":
        response = client.get(probe.path(victim))
    elif isinstance(client, APIClient):
        response = client.post(probe.path(victim), probe.body(victim) if probe.body else {}, format="json")
    else:
        response = client.post(probe.path(victim), probe.body(victim) if probe.body else {})
    content = b"".join(response.streaming_content) if response.streaming else response.content
    return response.status_code, content.decode(errors="replace")


@pytest.mark.django_db
def test_every_url_pattern_has_a_probe():
    # a pattern nobody knows how to attack would be skipped silently: it must be named in PROBES
    _, unprobed = probes_for_patterns_only()
    assert unprobed == [], f"URL patterns with no tenancy probe in {__name__}.PROBES: {unprobed}"


def probes_for_patterns_only() -> tuple[list[str], list[str]]:
    routes = [route for route, _ in url_patterns()]
    return routes, [r for r in routes if not r.startswith(ADMIN) and r not in PROBES]


@pytest.mark.parametrize("role", ["owner", "app"])
def test_another_tenants_ids_reach_nothing_of_theirs(world, role):
    attacker, victim = world
    planned, unprobed = probes_for(victim)
    assert unprobed == []
    secrets = [victim.marker]
    listed_ids = [str(victim.merged_pull.pk), str(victim.queued_pull.pk)]
    failures = []
    clients: dict[str, Client] = {}
    # when the attacker sends every probe (a logout gets a client of its own: the rest stay logged in)
    for route, probe in planned:
        if role == "owner" and route.startswith(ADMIN) and not _admin_of_tenant_model(route):
            continue  # the application's own checks matter where tenant rows are; the app role walks all
        if probe.path(victim).endswith("/logout/"):
            client = _client(probe.who, attacker)
        else:
            # the same login, without the flash messages of earlier probes (they echo the ids sent)
            logged_in = clients.get(probe.who) or clients.setdefault(probe.who, _client(probe.who, attacker))
            client = copy.copy(logged_in)
            client.cookies = copy.deepcopy(logged_in.cookies)
        if role == "app":  # as every test's requests are (tests/web_role.py)
            status, body = _send(client, probe, victim)
        else:
            with requests_as_owner():
                status, body = _send(client, probe, victim)
        leaked = [s for s in secrets if s in body]
        if probe.allowed == LISTED or 200 in probe.allowed:
            leaked += [pk for pk in listed_ids if pk in body and pk not in probe.path(victim)]
        if status not in probe.allowed or leaked:
            failures.append(f"{probe.method} {probe.path(victim)} [{route}] -> {status} leaked={leaked}")
    # then every probe is refused, or answers with none of the victim's data
    assert failures == [], "\n".join(failures)
    assert len(planned) >= len(PROBES)


def test_the_same_probes_reach_the_callers_own_data(world):
    # given the attacker's own KPRs: the markers are found where the data is, so their absence means something
    attacker, _ = world
    own = [
        (get(lambda v: f"/api/v1/pulls/{v.merged_pull.pk}", allowed=LISTED), "agent"),
        (get(lambda v: f"/review/pulls/{v.queued_pull.pk}/", who="reviewer", allowed=LISTED), "reviewer"),
        (get(lambda v: f"/review/memory/{v.name}/{v.subject}/", who="reviewer", allowed=LISTED), "reviewer"),
    ]
    for probe, who in own:
        # when the attacker asks for their own rows, as the web tier's role
        status, body = _send(_client(who, attacker), probe, attacker)
        # then they come back, marker and all
        assert (status, attacker.marker in body) == (200, True), probe.path(attacker)
