from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand

from memorypr.agents.models import Agent
from memorypr.agents.services import agent_create


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

    def handle(self, *args: Any, **options: Any) -> None:
        agent, token = agent_create(
            name=options["name"], namespaces=options["namespace"], trust=options["trust"]
        )
        spaces = ", ".join(sorted(ns.name for ns in agent.namespaces.all()))
        self.stdout.write(f"agent {agent.name} (trust {agent.trust}) in namespaces: {spaces}")
        self.stdout.write("The token is shown once; store it now.")
        self.stdout.write(f"token: {token}")
