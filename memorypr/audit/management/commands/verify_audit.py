from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError

from memorypr.audit.anchors import ChainHead, audit_anchor_check, audit_chain_head
from memorypr.audit.selectors import audit_chain_verify


class Command(BaseCommand):
    help = (
        "Recompute the audit hash chain; exit non-zero naming the first broken event. With --anchor "
        "FILE, also check that the chain still holds the head recorded in FILE, then record the "
        "current head there: keep FILE outside the database (another machine, write-once storage)."
    )

    def add_arguments(self, parser: Any) -> None:
        parser.add_argument("--anchor", type=Path, help="file holding the last verified chain head")

    def handle(self, *args: Any, **options: Any) -> None:
        # The head is read before the walk: events appended meanwhile are verified next time.
        head = audit_chain_head()
        checked, broken = audit_chain_verify()
        if broken is not None:
            raise CommandError(
                f"audit chain broken at event #{broken.sequence} (id {broken.event_id}): {broken.reason}; "
                f"{checked} events before it are intact"
            )
        anchor_path: Path | None = options["anchor"]
        if anchor_path is not None:
            anchored = _anchor_read(anchor_path)
            if anchored is not None:
                problem = audit_anchor_check(anchor=anchored)
                if problem is not None:
                    raise CommandError(f"audit chain does not match the anchor {anchor_path}: {problem}")
            if head is not None:
                _anchor_write(anchor_path, head)
        self.stdout.write(f"audit chain intact: {checked} events")
        if head is not None:
            self.stdout.write(f"head: #{head.sequence} {head.hash}")


def _anchor_read(path: Path) -> ChainHead | None:
    if not path.exists():
        return None
    try:
        body = json.loads(path.read_text())
        return ChainHead(sequence=int(body["sequence"]), hash=str(body["hash"]))
    except (ValueError, KeyError, TypeError) as exc:
        raise CommandError(f"anchor {path} is unreadable: {exc}") from exc


def _anchor_write(path: Path, head: ChainHead) -> None:
    # Written beside the target and renamed over it: a crash leaves the old anchor or the new one.
    path.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.NamedTemporaryFile("w", dir=path.parent, delete=False, suffix=".tmp") as handle:
        json.dump({"sequence": head.sequence, "hash": head.hash}, handle)
        handle.write("\n")
    os.replace(handle.name, path)
