"""Which database role a process connects as: the owner, or the web tier's role that owns nothing."""

from __future__ import annotations

from urllib.parse import quote, urlsplit, urlunsplit


def database_url_as_role(url: str, *, role: str) -> str:
    """The same server and database as `url`, logged in as `role` without the owner's password.

    Fits servers that trust local connections (the embedded one); elsewhere DATABASE_APP_URL
    carries the role's own credentials.
    """
    parts = urlsplit(url)
    host = parts.netloc.rpartition("@")[2]
    return urlunsplit(parts._replace(netloc=f"{quote(role, safe='')}@{host}"))
