from __future__ import annotations

from typing import Any

from drf_spectacular.extensions import OpenApiAuthenticationExtension


class AgentTokenScheme(OpenApiAuthenticationExtension):
    target_class = "memorypr.agents.authentication.AgentTokenAuthentication"
    name = "bearerAuth"

    def get_security_definition(self, auto_schema: Any) -> dict[str, str]:
        return {
            "type": "http",
            "scheme": "bearer",
            "description": "An agent token from `manage.py create_agent`.",
        }
