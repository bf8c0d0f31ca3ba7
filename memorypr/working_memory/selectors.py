from __future__ import annotations


def session_transcript(*, namespace_id: int, session_id: str) -> str | None:
    """The known transcript of a session (all turns, in order), or None when it is unknown."""
    return None
