"""The topic threshold of summary compression (`memorypr.formation.summary.TOPIC_SIMILARITY`).

`python -m bench._formation_topics --split valid` (develop), then `--split test` (held out).

Synthetic-Persona-Chat has no topic labels, so the one certain change of topic is used: the
user turns of one conversation followed by those of the next (conversations of at least six
user turns, in file order), grouped by `topic_groups` as the proposer groups them. For each
threshold: how many groups of more than five turns form, and the share of them that stay
inside one conversation (a summary of turns from two conversations mixes topics). The
threshold is the lowest at which at least 95% of those groups stay inside one conversation:
lower mixes topics, higher makes fewer summaries.
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence

from bench.formation import Conversation, load_conversations
from memorypr.formation.extract import Turn
from memorypr.formation.summary import SUMMARY_MIN_TURNS, topic_groups

THRESHOLDS = (0.2, 0.25, 0.28, 0.3, 0.31, 0.32, 0.33, 0.34, 0.35, 0.36, 0.38, 0.4)
PURITY = 0.95


def _users(conversation: Conversation) -> list[Turn]:
    return [turn for turn in conversation.turns if turn.role == "user" and turn.content.strip()]


def measure(conversations: Sequence[Conversation], thresholds: Sequence[float]) -> list[dict[str, float]]:
    from memorypr.vectors.embedding import embed_texts

    sessions = [_users(c) for c in conversations if len(_users(c)) >= SUMMARY_MIN_TURNS]
    texts = sorted({turn.content for session in sessions for turn in session})
    vectors = dict(zip(texts, embed_texts(texts), strict=True))

    def embed(batch: list[str]) -> list[list[float]]:
        return [vectors[text] for text in batch]

    rows = []
    for threshold in thresholds:
        groups = pure = 0
        for first, second in zip(sessions, sessions[1:], strict=False):
            for group in topic_groups([*first, *second], embed=embed, threshold=threshold):
                if len(group) >= SUMMARY_MIN_TURNS:
                    groups += 1
                    pure += group[-1] < len(first) or group[0] >= len(first)
        rows.append(
            {
                "threshold": threshold,
                "sessions": len(sessions) - 1,
                "groups": groups,
                "within_one": pure,
                "purity": pure / groups if groups else 1.0,
            }
        )
    return rows


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m bench._formation_topics")
    parser.add_argument("--split", default="valid")
    args = parser.parse_args(argv)
    rows = measure(load_conversations(args.split), THRESHOLDS)
    print(f"split {args.split}, {rows[0]['sessions']} sessions of two conversations")
    print("| threshold | groups of > 5 turns | inside one conversation |")
    print("| --- | --- | --- |")
    for row in rows:
        print(f"| {row['threshold']:.2f} | {row['groups']} | {row['within_one']} ({row['purity']:.1%}) |")
    chosen = next((row for row in rows if row["purity"] >= PURITY), rows[-1])
    print(f"lowest threshold with at least {PURITY:.0%} inside one conversation: {chosen['threshold']:.2f}")


if __name__ == "__main__":
    main()
