from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand

from memorypr.agents.services import reviewer_create


class Command(BaseCommand):
    help = "Create (or update) a human reviewer who works the queue of the given namespaces."

    def add_arguments(self, parser: Any) -> None:
        parser.add_argument("--username", required=True)
        parser.add_argument("--password", required=True)
        parser.add_argument(
            "--namespace", action="append", required=True, help="repeat for several namespaces"
        )
        parser.add_argument("--admin", action="store_true", help="also a superuser (admin site, take-overs)")

    def handle(self, *args: Any, **options: Any) -> None:
        user = reviewer_create(
            username=options["username"],
            password=options["password"],
            namespaces=options["namespace"],
            is_admin=options["admin"],
        )
        role = "admin reviewer" if user.is_superuser else "reviewer"
        self.stdout.write(f"{role} {user.username} in namespaces: {', '.join(options['namespace'])}")
