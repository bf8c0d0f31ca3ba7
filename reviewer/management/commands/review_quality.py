from __future__ import annotations

import json
from typing import Any

from django.core.management.base import BaseCommand


class Command(BaseCommand):
    help = (
        "Review quality on the labelled corpus (bench.review_quality): auto-approval of true facts, "
        "catch rate per negative class, unsafe approvals, per rule and overall. Tune on valid, report test."
    )

    def add_arguments(self, parser: Any) -> None:
        parser.add_argument("--split", choices=["valid", "test"], default="test")
        parser.add_argument("--conversations", type=int, default=160, help="English conversations to use")
        parser.add_argument("--lang", action="append", choices=["en", "zh"], help="default: both")
        parser.add_argument(
            "--llm",
            nargs="?",
            const="configured",
            choices=["configured", "local"],
            help="ask the configured LLM reviewer as well; 'local': a local careful-reader model over HTTP, "
            "run after the rules alone, to evaluate the prompt",
        )
        parser.add_argument("--json", action="store_true", help="print the full report as JSON")

    def handle(self, *args: Any, **options: Any) -> None:
        from bench import review_quality

        report = review_quality.run(
            {
                "split": options["split"],
                "conversations": options["conversations"],
                "langs": options["lang"] or ["en", "zh"],
                "llm": "local" if options["llm"] == "local" else bool(options["llm"]),
            }
        )
        if options["json"]:
            self.stdout.write(json.dumps(report, indent=2, ensure_ascii=False))
            return
        if "llmPrompt" in report:
            prompt = report["llmPrompt"]
            self.stdout.write(
                f"LLM prompt: {prompt['operations']} operations in {prompt['requests']} requests, "
                f"{prompt['operationsWithClausePct']}% with their evidence clause, prompt p50 "
                f"{prompt['promptCharsP50']} chars (max {prompt['promptCharsMax']}); decisions the model "
                f"loosened: {prompt['loosenedByLlm']}"
            )
        for lang in options["lang"] or ["en", "zh"]:
            summary = report[lang]
            if "rulesOnly" in report:
                before = report["rulesOnly"][lang]
                self.stdout.write(
                    f"\n== {lang} rules alone: true facts approved {before['autoApprovalOfTrueFactsPct']}%, "
                    f"negatives held {before['negativesHeldPct']}%, unsafe approvals {before['unsafeApprovals']}"
                )
            self.stdout.write(
                f"\n== {lang} ({report['split']}): {summary['positives']} positives, {summary['negatives']} negatives"
            )
            self.stdout.write(
                f"true facts approved without a person: {summary['autoApprovalOfTrueFactsPct']}% "
                f"(false escalations {summary['falseEscalationPct']}%); negatives held "
                f"{summary['negativesHeldPct']}%; unsafe approvals {summary['unsafeApprovals']} "
                f"(of never-approve classes: {summary['unsafeApprovalsNeverAllowed']})"
            )
            self.stdout.write(review_quality.table(summary))
            for example in summary["falseEscalationExamples"]:
                self.stdout.write(f"  held true fact [{example['heldBy']}]: {example['quote'][:160]!r}")
            for example in summary["unsafeApprovalExamples"]:
                self.stdout.write(f"  unsafe approval [{example['class']}]: {example['quote'][:160]!r}")
