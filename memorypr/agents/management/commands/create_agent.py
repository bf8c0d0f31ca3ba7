from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand

from memorypr.agents.management.commands._expiry import expiry_arguments, expiry_from, expiry_text
from memorypr.agents.models import Agent, AgentToken
from memorypr.agents.services import agent_create, token_hash


class Command(BaseCommand):
    help = (
        "Create a proposer agent scoped to namespaces and print its new token (last word of the last line)."
    )

    def add_arguments(self, parser: Any) -> None:
        parser.add_argument("--name", required=True)
        parser.add_argument(
            "--namespace", action="append", required=True, help="repeat for several namespaces"
        )
        parser.add_argument(
            "--trust", choices=[choice.value for choice in Agent.Trust], default=Agent.Trust.NORMAL
        )
        expiry_arguments(parser)

    def handle(self, *args: Any, **options: Any) -> None:
        agent, token = agent_create(
            name=options["name"],
            namespaces=options["namespace"],
            trust=options["trust"],
            expires_in=expiry_from(options),
        )
        issued = AgentToken.objects.get(token_hash=token_hash(token))
        spaces = ", ".join(sorted(ns.name for ns in agent.namespaces.all()))
        self.stdout.write(f"agent {agent.name} (trust {agent.trust}) in namespaces: {spaces}")
        self.stdout.write(f"The token is shown once; store it now. It {expiry_text(issued.expires_at)}.")
        self.stdout.write(f"token: {token}")
