from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandError

from memorypr.agents.models import Agent
from memorypr.agents.services import agent_revoke


class Command(BaseCommand):
    help = "Deactivate an agent and revoke all its tokens at once; its next request is refused (401)."

    def add_arguments(self, parser: Any) -> None:
        parser.add_argument("--name", required=True)
        parser.add_argument("--reason", default="", help="recorded in the audit event")

    def handle(self, *args: Any, **options: Any) -> None:
        agent = Agent.objects.filter(name=options["name"]).first()
        if agent is None:
            raise CommandError(f"no agent named {options['name']!r}")
        revoked = agent_revoke(agent=agent, actor="system:revoke_agent", reason=options["reason"])
        tokens = ", ".join(f"{prefix}…" for prefix in revoked) or "none left"
        self.stdout.write(f"agent {agent.name} revoked; tokens revoked: {tokens}")
