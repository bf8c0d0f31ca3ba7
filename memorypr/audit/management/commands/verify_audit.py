from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandError

from memorypr.audit.selectors import audit_chain_verify


class Command(BaseCommand):
    help = "Recompute the audit hash chain; exit non-zero naming the first broken event."

    def handle(self, *args: Any, **options: Any) -> None:
        checked, broken = audit_chain_verify()
        if broken is not None:
            raise CommandError(
                f"audit chain broken at event #{broken.sequence} (id {broken.event_id}): {broken.reason}; "
                f"{checked} events before it are intact"
            )
        self.stdout.write(f"audit chain intact: {checked} events")
