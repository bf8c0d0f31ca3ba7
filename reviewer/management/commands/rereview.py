from __future__ import annotations

from typing import Any

from django.contrib.auth import get_user_model
from django.core.exceptions import PermissionDenied
from django.core.management.base import BaseCommand, CommandError

from memorypr.pulls.models import KnowledgePullRequest
from reviewer.services import RereviewNotAllowed, pull_rereview


class Command(BaseCommand):
    help = "Review a KPR again (e.g. after the rules or the policy changed); earlier verdicts stay on record."

    def add_arguments(self, parser: Any) -> None:
        parser.add_argument("pull_id", help="the KPR's id")
        parser.add_argument("--user", help="the reviewer or admin asking (default: the operator)")

    def handle(self, *args: Any, **options: Any) -> None:
        actor = None
        if options["user"]:
            actor = get_user_model().objects.filter(username=options["user"]).first()
            if actor is None:
                raise CommandError(f"no user {options['user']!r}")
        try:
            outcome = pull_rereview(pull_id=options["pull_id"], actor=actor)
        except KnowledgePullRequest.DoesNotExist as exc:
            raise CommandError(f"no KPR {options['pull_id']}") from exc
        except (RereviewNotAllowed, PermissionDenied) as exc:
            raise CommandError(str(exc)) from exc
        self.stdout.write(f"{outcome.status}\n{outcome.feedback}")
