"""`python -m memorypr.formation --url URL --token TOKEN --subject S --session ID < transcript.txt`

Reads a transcript (one turn per line, `user:` / `assistant:` prefixes optional), posts
its turns to the session's working memory, proposes a KPR of what changed, and prints the
KPR id and its decision. Exit status: 0 proposed (or nothing to propose), 1 an API error
(its field paths on stderr), 3 a KPR not decided within --wait seconds.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Sequence
from typing import Any

from memorypr.formation.client import ApiError, Decision, MemoryprClient
from memorypr.formation.extract import parse_transcript
from memorypr.formation.llm import LlmExtractor
from memorypr.formation.proposer import Proposal, propose
from memorypr.formation.vocabulary import Embedder


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m memorypr.formation", description=__doc__.split("\n\n")[1]
    )
    parser.add_argument("--url", default=os.environ.get("MEMORYPR_URL", "http://127.0.0.1:8000"))
    parser.add_argument(
        "--token", default=os.environ.get("MEMORYPR_TOKEN"), help="agent token (or MEMORYPR_TOKEN)"
    )
    parser.add_argument("--namespace", default=os.environ.get("MEMORYPR_NAMESPACE"))
    parser.add_argument("--subject", required=True, help="whose memory (the end user)")
    parser.add_argument("--session", required=True, help="the conversation's session id")
    parser.add_argument(
        "--wait", type=float, default=30.0, help="seconds to wait for the decision (0: don't)"
    )
    parser.add_argument("--no-turns", action="store_true", help="do not post the turns to working memory")
    parser.add_argument("--no-llm", action="store_true", help="rules only, even when OPENAI_BASE_URL is set")
    parser.add_argument(
        "--embed",
        action="store_true",
        help="resolve keys also by embedding similarity (the local sentence-embedding model)",
    )
    parser.add_argument("--json", action="store_true", help="print the proposal as JSON")
    return parser


def _report(proposal: Proposal) -> dict[str, Any]:
    decisions: list[Decision | None] = list(proposal.decisions) or [None] * len(proposal.pulls)
    return {
        "pulls": [
            {
                "id": pull["id"],
                "operations": [
                    f"{op['action']} {op['category']}/{op['key']}" for op in pull.get("operations", [])
                ],
                "reviewStatus": decision.review_status if decision else pull.get("reviewStatus"),
                "mergeStatus": decision.merge_status if decision else pull.get("mergeStatus"),
                "feedback": decision.feedback if decision else "",
                "settled": decision.settled if decision else False,
            }
            for pull, decision in zip(proposal.pulls, decisions, strict=True)
        ],
        "skipped": [f"{s.fact.key}: {s.reason}" for s in proposal.diff.skipped],
        "dropped": [
            f"{f.key}: importance {f.importance} ({'; '.join(f.reasons)})"
            for f in proposal.extraction.dropped
        ],
        "llmError": proposal.extraction.llm_error,
        "notes": proposal.diff.notes,
        "summary": {
            "skipped": proposal.summaries.skipped,
            "facts": [f"{f.category}/{f.key} = {f.value!r}" for f in proposal.summaries.facts],
            "dropped": [f"{f.key}: {'; '.join(f.reasons)}" for f in proposal.summaries.dropped],
            "errors": proposal.summaries.errors,
        },
    }


def _embedder() -> Embedder:
    # Imported only when asked for: the model is large, and the rules need none of it.
    from memorypr.vectors.embedding import embed_texts

    return embed_texts


def main(argv: Sequence[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    if not args.token:
        print("error: --token (or MEMORYPR_TOKEN) is required", file=sys.stderr)
        return 2
    turns = parse_transcript(sys.stdin.read())
    llm = None if args.no_llm else LlmExtractor.from_env()
    with MemoryprClient(args.url, args.token, namespace=args.namespace) as client:
        try:
            proposal = propose(
                client=client,
                subject=args.subject,
                session_id=args.session,
                turns=turns,
                post_turns=not args.no_turns,
                wait_seconds=args.wait,
                llm=llm,
                embed=_embedder() if args.embed else None,
                # Summaries group turns by topic with the embedder; without a model they are skipped.
                topics=_embedder() if llm is not None else None,
            )
        except ApiError as exc:
            print(f"error: {exc}", file=sys.stderr)
            for error in exc.errors:
                print(f"  {error.field}: {error.message}", file=sys.stderr)
            return 1
    report = _report(proposal)
    if args.json:
        print(json.dumps(report, ensure_ascii=False, indent=2))
    else:
        if not proposal.pulls:
            print("nothing to propose")
        for pull in report["pulls"]:
            print(f"KPR {pull['id']}: {pull['reviewStatus']} / {pull['mergeStatus']}")
            for line in pull["operations"]:
                print(f"  {line}")
            if pull["feedback"]:
                print(f"  feedback: {pull['feedback']}")
        for note in report["notes"]:
            print(f"note: {note}")
        # What was not summarised, and why, is said on stderr: stdout stays what was proposed.
        summary = report["summary"]
        if summary["skipped"]:
            print(summary["skipped"], file=sys.stderr)
        for line in [*summary["dropped"], *summary["errors"]]:
            print(f"summary not proposed: {line}", file=sys.stderr)
    undecided = any(not d.settled for d in proposal.decisions)
    return 3 if undecided else 0


if __name__ == "__main__":
    sys.exit(main())
