from __future__ import annotations

import json
from typing import Any

from django.core.exceptions import ValidationError
from django.core.management.base import BaseCommand, CommandError

from memorypr.agents.models import Namespace
from reviewer.models import ReviewMode
from reviewer.selectors import review_policy_get
from reviewer.services import POLICY_FIELDS, review_policy_set


def _list(value: str) -> list[str]:
    return [item.strip() for item in value.split(",") if item.strip()]


class Command(BaseCommand):
    help = "Show or change a namespace's review policy (lists are comma-separated; '' clears one)."

    def add_arguments(self, parser: Any) -> None:
        parser.add_argument("namespace")
        parser.add_argument("--mode", choices=ReviewMode.values)
        parser.add_argument("--human-categories", type=_list)
        parser.add_argument("--allowed-categories", type=_list)
        parser.add_argument("--key-patterns", type=_list)
        parser.add_argument("--protected-key-patterns", type=_list)
        parser.add_argument("--protected-importance", type=float)
        parser.add_argument("--confidence-reject-floor", type=float)
        parser.add_argument("--confidence-approve-bar", type=float)
        parser.add_argument("--agent-hourly-limit", type=int)
        parser.add_argument("--disabled-rules", type=_list)
        parser.add_argument(
            "--suggestion-rules", type=_list, help="rules that show findings but hold nothing"
        )

    def handle(self, *args: Any, **options: Any) -> None:
        namespace = Namespace.objects.filter(name=options["namespace"]).first()
        if namespace is None:
            raise CommandError(f"no namespace {options['namespace']!r}")
        changes = {name: options[name] for name in POLICY_FIELDS if options.get(name) is not None}
        if changes:
            try:
                review_policy_set(namespace=namespace, actor="operator:manage.py", **changes)
            except ValidationError as exc:
                raise CommandError(str(exc)) from exc
        view = review_policy_get(namespace_id=namespace.id)
        shown = {k: sorted(v) if isinstance(v, frozenset) else v for k, v in vars(view).items()}
        self.stdout.write(json.dumps(shown, indent=2, ensure_ascii=False, default=list))
