"""Tunable numbers of agent authentication."""

from __future__ import annotations

from memorypr.common.conf import AppSettings

conf = AppSettings(
    {
        # a new token expires this many days after it is issued, unless its issuer chose none
        "MEMORYPR_TOKEN_TTL_DAYS": 90,
        # use of a refused (revoked or expired) token is audited at most once per token per this
        # many seconds: a client retrying a dead token must not flood the audit chain's lock
        "MEMORYPR_TOKEN_REFUSAL_AUDIT_SECONDS": 60,
    }
)
