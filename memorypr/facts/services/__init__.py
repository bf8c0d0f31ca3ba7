"""Writes to the fact store: the merge of a KPR and stale propagation."""

from memorypr.facts.services.batch import merge_lanes, pull_merge_batch, pull_merge_drain
from memorypr.facts.services.merge import (
    MergeOutcome,
    MergePreparation,
    pull_merge,
    pull_merge_apply,
    pull_merge_prepare,
)
from memorypr.facts.services.stale import StaleChange, fact_stale_propagate

__all__ = [
    "MergeOutcome",
    "MergePreparation",
    "StaleChange",
    "fact_stale_propagate",
    "merge_lanes",
    "pull_merge",
    "pull_merge_apply",
    "pull_merge_batch",
    "pull_merge_drain",
    "pull_merge_prepare",
]
