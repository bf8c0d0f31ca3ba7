from __future__ import annotations

from pathlib import Path
from typing import Any

from django.core.exceptions import ValidationError
from django.core.management.base import BaseCommand, CommandError

from memorypr.agents.models import Namespace
from reviewer.services import transcript_upload


class Command(BaseCommand):
    help = "Hand in a session transcript (a UTF-8 text file) to check evidence quotes against."

    def add_arguments(self, parser: Any) -> None:
        parser.add_argument("namespace")
        parser.add_argument("session_id")
        parser.add_argument("path", type=Path)

    def handle(self, *args: Any, **options: Any) -> None:
        namespace = Namespace.objects.filter(name=options["namespace"]).first()
        if namespace is None:
            raise CommandError(f"no namespace {options['namespace']!r}")
        try:
            text = options["path"].read_text(encoding="utf-8")
            transcript = transcript_upload(
                namespace=namespace, session_id=options["session_id"], text=text, actor="operator:manage.py"
            )
        except (OSError, ValidationError) as exc:
            raise CommandError(str(exc)) from exc
        self.stdout.write(
            f"transcript {transcript.id}: {len(text)} characters for session {transcript.session_id}"
        )
