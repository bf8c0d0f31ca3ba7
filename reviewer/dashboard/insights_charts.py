"""The insights page's content: the selectors' figures shaped into charts and a summary."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from reviewer.dashboard import insights_selectors as selectors
from reviewer.dashboard.charts import Chart, Series, columns_chart, hbars_chart, line_chart


@dataclass(frozen=True)
class InsightsPage:
    charts: list[Chart]
    summary: dict[str, Any]
    window: selectors.Window
    percentiles: dict[str, tuple[str, str] | None]


def _seconds(value: float) -> str:
    for unit, size in (("d", 86400), ("h", 3600), ("min", 60)):
        if value >= size:
            return f"{value / size:.1f} {unit}"
    return f"{value:.1f} s"


def insights_page(*, namespace_ids: list[int], namespace_names: list[str], range_name: str) -> InsightsPage:
    ids, names = namespace_ids, namespace_names
    window = selectors.insights_window(name=range_name)
    labels = [window.label(bucket) for bucket in window.buckets]

    queue = selectors.insights_queue(namespace_ids=ids, window=window)
    sources = selectors.insights_verdicts_by_source(namespace_ids=ids, window=window)
    rules = selectors.insights_rules(namespace_ids=ids, window=window)
    agents = selectors.insights_agents(namespace_ids=ids, window=window)
    times = selectors.insights_decision_times(namespace_ids=ids, window=window)
    automatic = selectors.insights_automatic_decisions(namespace_ids=ids, window=window)
    troubles = selectors.insights_conflicts_and_reverts(
        namespace_ids=ids, namespace_names=names, window=window
    )

    decided = sum(b.values["APPROVE"] + b.values["ESCALATE"] + b.values["REJECT"] for b in automatic)
    approved = sum(b.values["APPROVE"] for b in automatic)
    rate: list[float | None] = [
        round(100 * b.values["APPROVE"] / total, 1) if (total := sum(b.values.values())) else None
        for b in automatic
    ]
    verdicts = ("APPROVE", "ESCALATE", "REJECT")
    charts: list[Chart] = [
        columns_chart(
            id="queue-size",
            title="Queue size",
            description="KPRs waiting for a person at the end of each period.",
            categories=labels,
            series=[Series("waiting", [p.size for p in queue], "c-wait")],
        ),
        line_chart(
            id="queue-age",
            title="Queue age",
            description="How long the oldest and the median waiting KPR had waited, in hours.",
            categories=labels,
            series=[
                Series("oldest", [round(p.oldest_hours, 1) for p in queue], "c-reject"),
                Series("median", [round(p.median_hours, 1) for p in queue], "c-wait"),
            ],
            unit=" h",
        ),
        hbars_chart(
            id="by-source",
            title="Verdicts by source",
            description="Verdicts given by the rule checks, the LLM reviewer and people.",
            categories=["Rules", "LLM", "Person"],
            series=[
                Series(v.lower(), [sources[k].get(v, 0) for k in ("rules", "llm", "human")], f"c-{v.lower()}")
                for v in verdicts
            ],
            category_header="Source",
        ),
        hbars_chart(
            id="by-rule",
            title="Held by rule",
            description="Operations each rule escalated to a person or rejected.",
            categories=[rule for rule, _, _ in rules],
            series=[
                Series("escalate", [e for _, e, _ in rules], "c-escalate"),
                Series("reject", [r for _, _, r in rules], "c-reject"),
            ],
            category_header="Rule",
        ),
        hbars_chart(
            id="by-agent",
            title="KPRs by agent",
            description="KPRs proposed in the period, by where they stand now.",
            categories=[agent for agent, _ in agents],
            series=[
                Series(label, [counts[i] for _, counts in agents], css)
                for i, (label, css) in enumerate(
                    [
                        ("approved", "c-approve"),
                        ("rejected", "c-reject"),
                        ("waiting for a person", "c-escalate"),
                        ("pending", "c-pending"),
                    ]
                )
            ],  # fmt: skip
            category_header="Agent",
        ),
        columns_chart(
            id="time-to-decision",
            title="Time to decision",
            description="From submission to approval or rejection, for KPRs decided in the period.",
            categories=times.bins,
            series=[
                Series("automatic", times.automatic, "c-approve"),
                Series("by a person", times.person, "c-human"),
            ],
            category_header="Time taken",
        ),
        line_chart(
            id="auto-approval",
            title="Auto-approval rate",
            description="Share of the automatic review's decisions that approved, in percent.",
            categories=labels,
            series=[Series("approved automatically", rate, "c-approve")],
            unit="%",
            top=100,
        ),
        columns_chart(
            id="conflicts-reverts",
            title="Conflicts and reverts",
            description="Merges refused because a base had moved, and reverts proposed.",
            categories=labels,
            series=[
                Series("conflicts", [b.values["conflicts"] for b in troubles], "c-reject"),
                Series("reverts", [b.values["reverts"] for b in troubles], "c-revert"),
            ],
        ),
    ]
    summary = {
        "waiting": queue[-1].size if queue else 0,
        "decided": decided,
        "auto_rate": f"{100 * approved / decided:.0f}%" if decided else "—",
        "person_p50": _seconds(times.percentiles["person"][0]) if times.percentiles["person"] else "—",
        "automatic_p50": _seconds(times.percentiles["automatic"][0])
        if times.percentiles["automatic"]
        else "—",
        "conflicts": sum(b.values["conflicts"] for b in troubles),
        "reverts": sum(b.values["reverts"] for b in troubles),
    }
    percentiles = {
        source: (_seconds(pair[0]), _seconds(pair[1])) if pair else None
        for source, pair in times.percentiles.items()
    }
    return InsightsPage(charts=charts, summary=summary, window=window, percentiles=percentiles)
