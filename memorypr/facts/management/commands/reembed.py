from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandError
from django.db import transaction
from tqdm import tqdm

from memorypr.agents.models import Namespace
from memorypr.audit.services import audit_record
from memorypr.facts.models import FactVersion
from memorypr.vectors.store import (
    hnsw_parameters,
    search_index_rebuild,
    vector_documents,
    vector_index_rebuild,
    vector_upsert,
)


class Command(BaseCommand):
    help = "Rebuild the embeddings and search text of fact versions (all, or one namespace's)."

    def add_arguments(self, parser: Any) -> None:
        parser.add_argument("--namespace", help="only this namespace")
        parser.add_argument("--batch-size", type=int, default=256)
        parser.add_argument("--missing-only", action="store_true", help="only versions without an embedding")
        parser.add_argument(
            "--reindex",
            action="store_true",
            help="then rebuild the HNSW index (with MEMORYPR_HNSW_M / _EF_CONSTRUCTION) and the full-text index",
        )
        parser.add_argument("--no-progress", action="store_true")

    def handle(self, *args: Any, **options: Any) -> None:
        qs = FactVersion.objects.all()
        namespace = options.get("namespace")
        if namespace:
            if not Namespace.objects.filter(name=namespace).exists():
                raise CommandError(f"unknown namespace {namespace!r}")
            qs = qs.filter(namespace__name=namespace)
        if options["missing_only"]:
            qs = qs.filter(embedding__isnull=True)
        batch_size = max(1, options["batch_size"])
        total = qs.count()
        done, last_id = 0, 0
        with tqdm(total=total, unit="fact", desc="reembed", disable=options["no_progress"]) as progress:
            while True:
                # keyset pagination: versions written meanwhile are picked up, none twice
                batch = list(
                    qs.filter(pk__gt=last_id).order_by("pk").values_list("pk", "key", "value")[:batch_size]
                )
                if not batch:
                    break
                documents = vector_documents(items=[(key, value) for _, key, value in batch])
                with transaction.atomic():
                    done += vector_upsert(
                        documents={pk: doc for (pk, _, _), doc in zip(batch, documents, strict=True)}
                    )
                last_id = batch[-1][0]
                progress.update(len(batch))
        index = vector_index_rebuild() if options["reindex"] else None
        if options["reindex"]:
            # every version's search text was just rewritten: its GIN entries too, one by one
            search_index_rebuild()
        with transaction.atomic():
            audit_record(
                event_type="vectors.reembedded",
                actor="system:reembed",
                namespace=namespace or "",
                payload={"versions": done, "missingOnly": options["missing_only"], "index": index},
            )
        params = hnsw_parameters()
        self.stdout.write(
            f"re-embedded {done} fact version(s)"
            + (
                f"; HNSW graphs rebuilt (m={params['m']}, ef_construction={params['ef_construction']})"
                " and full-text index rebuilt"
                if index
                else ""
            )
        )
