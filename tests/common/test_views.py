from __future__ import annotations

import pytest
import yaml
from openapi_spec_validator import validate

from memorypr.common.tasks import heartbeat


@pytest.mark.django_db
def test_healthz_reports_database_and_broker(client):
    heartbeat()  # a worker is alive: only the database and the broker are under test here
    response = client.get("/healthz")
    assert response.status_code == 200
    body = response.json()
    assert body["database"] == "ok"
    assert body["pgvector"].startswith("0.8")
    assert body["broker"] == "ok"  # the test run's own Redis
    assert body["status"] == "ok"


@pytest.mark.django_db
def test_healthz_reports_an_unreachable_broker(client, settings):
    from memorypr.celery import app

    previous = app.conf.broker_url
    app.conf.broker_url = "redis://127.0.0.1:1/0"
    try:
        body = client.get("/healthz").json()
    finally:
        app.conf.broker_url = previous
    assert body["broker"].startswith("error")
    assert body["status"] == "degraded"
    assert "broker: error: OperationalError" in body["problems"]


@pytest.mark.django_db
def test_openapi_schema_validates_and_lists_the_api(client):
    response = client.get("/api/schema/")
    assert response.status_code == 200
    schema = yaml.safe_load(response.content)
    validate(schema)
    assert "/api/v1/pulls" in schema["paths"]
    assert set(schema["paths"]["/api/v1/pulls"]) >= {"get", "post"}
    assert "put" not in schema["paths"]["/api/v1/pulls/{pull_id}"]
    assert schema["components"]["securitySchemes"]["bearerAuth"] == {
        "type": "http",
        "scheme": "bearer",
        "description": "An agent token from `manage.py create_agent`.",
    }


@pytest.mark.django_db
def test_docs_page_is_served(client):
    response = client.get("/api/docs/")
    assert response.status_code == 200
    assert b"swagger" in response.content.lower()
