"""Writes to the fact store: the merge of a KPR, stale propagation, and reverts."""

from memorypr.facts.services.merge import (
    MergeOutcome,
    MergePreparation,
    pull_merge,
    pull_merge_apply,
    pull_merge_prepare,
)
from memorypr.facts.services.revert import RevertRefused, pull_revert, revert_operations
from memorypr.facts.services.stale import StaleChange, fact_stale_propagate

__all__ = [
    "MergeOutcome",
    "MergePreparation",
    "RevertRefused",
    "StaleChange",
    "fact_stale_propagate",
    "pull_merge",
    "pull_merge_apply",
    "pull_merge_prepare",
    "pull_revert",
    "revert_operations",
]
