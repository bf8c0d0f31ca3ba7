from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandError

from memorypr.agents.management.commands._expiry import expiry_arguments, expiry_from, expiry_text
from memorypr.agents.models import Agent
from memorypr.agents.services import AgentRevoked, token_rotate


class Command(BaseCommand):
    help = (
        "Issue an agent a new token and revoke its old ones at once; prints the new token once "
        "(last word of the last line)."
    )

    def add_arguments(self, parser: Any) -> None:
        parser.add_argument("--name", required=True)
        expiry_arguments(parser)

    def handle(self, *args: Any, **options: Any) -> None:
        agent = Agent.objects.filter(name=options["name"]).first()
        if agent is None:
            raise CommandError(f"no agent named {options['name']!r}")
        try:
            issued, token = token_rotate(
                agent=agent, actor="system:rotate_token", expires_in=expiry_from(options)
            )
        except AgentRevoked as exc:
            raise CommandError(str(exc)) from exc
        self.stdout.write(f"agent {agent.name}: every earlier token is revoked.")
        self.stdout.write(f"The token is shown once; store it now. It {expiry_text(issued.expires_at)}.")
        self.stdout.write(f"token: {token}")
