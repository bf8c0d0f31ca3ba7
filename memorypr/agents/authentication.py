from __future__ import annotations

from typing import Any

from django.utils import timezone
from rest_framework import authentication, exceptions
from rest_framework.request import Request

from memorypr.agents.models import Agent, AgentToken
from memorypr.agents.selectors import agent_token_by_hash
from memorypr.agents.services import token_hash, token_refusal_record
from memorypr.common.db.tenancy import tenancy_scope_clear


class AgentTokenAuthentication(authentication.BaseAuthentication):
    """`Authorization: Bearer <token>`; the token is looked up by its SHA-256."""

    keyword = "Bearer"

    def authenticate(self, request: Request) -> tuple[Agent, AgentToken] | None:
        header = authentication.get_authorization_header(request).decode("latin-1")
        if not header:
            return None
        parts = header.split()
        if len(parts) != 2 or parts[0] != self.keyword:
            raise exceptions.AuthenticationFailed("Expected 'Authorization: Bearer <token>'.")
        # The agent's namespaces come with it, and the same statement scopes the connection to
        # them: the namespace the request names is read from them without asking again.
        token = agent_token_by_hash(token_hash=token_hash(parts[1]), scope_connection=True)
        if token is None:
            raise exceptions.AuthenticationFailed("Invalid or revoked token.")
        now = timezone.now()
        refusal = token.refusal(now=now)
        if refusal is not None:
            tenancy_scope_clear()
            # A known token that is dead is someone holding a leaked or forgotten credential: audited.
            # One answer for every refusal, so that a caller learns nothing about the token.
            token_refusal_record(token=token, reason=refusal)
            raise exceptions.AuthenticationFailed("Invalid or revoked token.")
        # One write a minute at most: authentication must not become a write hot spot.
        if token.last_used_at is None or (now - token.last_used_at).total_seconds() > 60:
            AgentToken.objects.filter(pk=token.pk).update(last_used_at=now)
        return token.agent, token

    def authenticate_header(self, request: Any) -> str:
        return self.keyword
