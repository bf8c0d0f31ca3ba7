from __future__ import annotations

from django.contrib.postgres.indexes import GinIndex
from django.contrib.postgres.search import SearchVector, SearchVectorField
from django.db import models
from django.utils import timezone

from memorypr.agents.models import Namespace
from memorypr.vectors.fields import EmbeddingField

EMBEDDING_DIMENSIONS = 384

# A QUALIFIES update keeps the qualified fact active; the qualifier is stored beside it
# under this derived key (one active version per key still holds for both).
QUALIFIER_SUFFIX = ":qualifier"
# The vector store's columns: most of a row's bytes (the vector alone is about 4.6 kB of text on
# the wire, parsed float by float), and nothing that reasons about a fact's value needs them.
VECTOR_STORE_FIELDS = ("embedding", "search_text", "search_vector")


class ScopeVector(models.Func):
    """memorypr_scope_vector(namespace_id, subject, status): the row's scope lexeme (facts
    migrations 0006, 0008).

    Indexed beside the document, it makes the full-text index answer within one subject, and
    for what is true now within its active versions only.
    """

    function = "memorypr_scope_vector"
    output_field = SearchVectorField()


class ScopedDocument(models.Func):
    """memorypr_scoped_document(search_vector, namespace_id, subject, status): each word of the
    document prefixed with its subject's scope, and for a retired version marked so (facts
    migration 0015).

    Indexed, it makes each word's posting list the list of its subject's active versions alone.
    """

    function = "memorypr_scoped_document"
    output_field = SearchVectorField()


class FactStatus(models.TextChoices):
    ACTIVE = "active"
    SUPERSEDED = "superseded"
    RETRACTED = "retracted"
    EXPIRED = "expired"
    STALE = "stale"


class FactVersion(models.Model):
    """One version of a fact keyed by (namespace, subject, category, key).

    History is never overwritten: an UPDATE writes a new version and supersedes the old
    one; at most one version per key is active (partial unique index). A version is active
    from `created_at` until `retired_at` (when it became superseded, retracted, expired or
    stale), and never active again: the trigger in migration 0003 refuses content changes
    and a way back, so "what was true at t" is `created_at <= t < retired_at`.
    """

    # Not indexed alone: every index below starts with the namespace (a merge writes each index).
    namespace = models.ForeignKey(Namespace, on_delete=models.PROTECT, related_name="facts", db_index=False)
    subject = models.CharField(max_length=200)
    category = models.CharField(max_length=32)
    key = models.CharField(max_length=200)
    value = models.JSONField(null=True)
    version = models.PositiveIntegerField()
    status = models.CharField(max_length=12, choices=FactStatus.choices, default=FactStatus.ACTIVE)
    confidence = models.FloatField()
    importance = models.FloatField(default=0.5)
    valid_from = models.DateTimeField(null=True, blank=True)
    valid_to = models.DateTimeField(null=True, blank=True)
    access_count = models.PositiveIntegerField(default=0)
    last_accessed_at = models.DateTimeField(null=True, blank=True)
    operation = models.ForeignKey(
        "pulls.Operation", null=True, blank=True, on_delete=models.PROTECT, related_name="fact_versions"
    )
    pull = models.ForeignKey(
        "pulls.KnowledgePullRequest",
        null=True,
        blank=True,
        on_delete=models.PROTECT,
        related_name="fact_versions",
    )
    retired_by_pull = models.ForeignKey(
        "pulls.KnowledgePullRequest",
        null=True,
        blank=True,
        on_delete=models.PROTECT,
        related_name="retired_facts",
    )
    # Set by the merge to its one timestamp, so a version starts exactly when its predecessor ends.
    created_at = models.DateTimeField(default=timezone.now)
    updated_at = models.DateTimeField(auto_now=True)
    retired_at = models.DateTimeField(null=True, blank=True)

    embedding = EmbeddingField(dimensions=EMBEDDING_DIMENSIONS, null=True, blank=True)
    # Tokens made by the application (words, and jieba words for Chinese) for the `simple`
    # configuration: PostgreSQL's parsers do not segment Chinese.
    search_text = models.TextField(blank=True, default="")
    search_vector = models.GeneratedField(
        expression=SearchVector("search_text", config="simple"),
        output_field=SearchVectorField(),
        db_persist=True,
    )

    class Meta:
        ordering = ["namespace", "subject", "category", "key", "version"]
        constraints = [
            models.UniqueConstraint(
                fields=["namespace", "subject", "category", "key"],
                condition=models.Q(status="active"),
                name="fact_one_active_version_per_key",
            ),
            models.UniqueConstraint(
                fields=["namespace", "subject", "category", "key", "version"], name="fact_version_unique"
            ),
            models.CheckConstraint(
                condition=models.Q(confidence__gte=0) & models.Q(confidence__lte=1),
                name="fact_confidence_0_1",
            ),
            models.CheckConstraint(
                condition=models.Q(importance__gte=0) & models.Q(importance__lte=1),
                name="fact_importance_0_1",
            ),
            models.CheckConstraint(
                condition=models.Q(status__in=FactStatus.values), name="fact_status_valid"
            ),
            models.CheckConstraint(
                condition=models.Q(status=FactStatus.ACTIVE, retired_at__isnull=True)
                | (~models.Q(status=FactStatus.ACTIVE) & models.Q(retired_at__isnull=False)),
                name="fact_retired_iff_inactive",
            ),
            models.CheckConstraint(condition=models.Q(version__gte=1), name="fact_version_positive"),
            models.CheckConstraint(
                condition=models.Q(valid_from__isnull=True)
                | models.Q(valid_to__isnull=True)
                | models.Q(valid_to__gt=models.F("valid_from")),
                name="fact_valid_to_after_valid_from",
            ),
        ]
        indexes = [
            models.Index(fields=["namespace", "subject", "status"], name="fact_ns_subject_status"),
            models.Index(fields=["namespace", "subject", "key"], name="fact_ns_subject_key"),
            # The document's words scoped to the subject: fact_text_matches() asks for the
            # query's words as scoped, so a common word costs what it matches among the
            # subject's active versions, not in the whole table, in every version the subject
            # ever had, or in an AND with the list of the whole subject (migration 0015). No
            # pending list (fastupdate): every search would read it whole (migration 0013).
            GinIndex(
                ScopedDocument(
                    *(models.F(field) for field in ("search_vector", "namespace_id", "subject", "status"))
                ),
                name="fact_scoped_search_gin",
                fastupdate=False,
            ),
            # The active versions' HNSW graphs are partial indexes made in SQL, one per group of
            # subjects (migration 0014, memorypr.vectors.store.GRAPH_GROUPS): a walk for one
            # subject passes over its group's rows only. History and retired versions are searched
            # exactly, within their subject, so retiring a version costs no graph insertion for its
            # new row version. MEMORYPR_HNSW_M and MEMORYPR_HNSW_EF_CONSTRUCTION
            # rebuild them with other values (`reembed --reindex`).
        ]

    def __str__(self) -> str:
        return f"{self.subject}/{self.category}/{self.key} v{self.version} ({self.status})"


class EdgeType(models.TextChoices):
    UPDATES = "UPDATES"
    DERIVED_FROM = "DERIVED_FROM"
    CONTRADICTS = "CONTRADICTS"
    SUPPORTS = "SUPPORTS"
    QUALIFIES = "QUALIFIES"
    CONTEXT_FOR = "CONTEXT_FOR"


class FactEdge(models.Model):
    """A typed link from one fact version to another (`source` UPDATES / DERIVED_FROM … `target`)."""

    # Not indexed alone: `fact_edge_unique` starts with the source, `fact_edge_target_type` with the target.
    source = models.ForeignKey(
        FactVersion, on_delete=models.CASCADE, related_name="out_edges", db_index=False
    )
    target = models.ForeignKey(FactVersion, on_delete=models.CASCADE, related_name="in_edges", db_index=False)
    edge_type = models.CharField(max_length=16, choices=EdgeType.choices)
    pull = models.ForeignKey(
        "pulls.KnowledgePullRequest", null=True, on_delete=models.PROTECT, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["source", "target", "edge_type"], name="fact_edge_unique"),
            models.CheckConstraint(condition=~models.Q(source=models.F("target")), name="fact_edge_not_self"),
            models.CheckConstraint(
                condition=models.Q(edge_type__in=EdgeType.values), name="fact_edge_type_valid"
            ),
        ]
        indexes = [
            models.Index(fields=["target", "edge_type"], name="fact_edge_target_type"),
            # Retrieval asks of every candidate whether it rests on a retired fact: the few
            # DERIVED_FROM edges, never the UPDATES edge that every update leaves (facts 0019).
            models.Index(
                fields=["source"],
                condition=models.Q(edge_type=EdgeType.DERIVED_FROM),
                name="fact_edge_derived_source",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.source_id} {self.edge_type} {self.target_id}"
