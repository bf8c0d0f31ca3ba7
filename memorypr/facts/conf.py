"""Tunable numbers of the fact store and the merge."""

from __future__ import annotations

from memorypr.common.conf import AppSettings

conf = AppSettings(
    {
        # how many DERIVED_FROM hops a retired fact's staleness travels
        "MEMORYPR_STALE_MAX_DEPTH": 3,
        # an APPROVED KPR unmerged for this long is handed to the merge again (the sweep runs
        # every 15 s and sends one task per lane, so a short wait costs no flood of duplicates)
        "MEMORYPR_MERGE_SWEEP_AFTER_SECONDS": 15,
        # a merge task merges up to this many waiting KPRs, their values embedded in one batch
        "MEMORYPR_MERGE_BATCH": 20,
        # a merge task that finds another draining embeds ahead, for the drain, the values of
        # KPRs up to this many batches past the two it works on (0: it only waits)
        "MEMORYPR_MERGE_EMBED_AHEAD_BATCHES": 4,
        # merge lanes drained side by side, one task each; a subject's KPRs always share a lane.
        # One on a small machine: on 2 cores a merge is bound by the CPU (embedding is most of
        # it), and two lanes merged 48.9 KPRs/s against 51.4 for one (four alternated pairs).
        # With more cores and worker processes, about one lane per process. Every worker should
        # use the same number (a KPR that finds an earlier one of its subject still waiting is
        # not merged before it, whatever the lanes).
        "MEMORYPR_MERGE_LANES": 1,
    }
)
