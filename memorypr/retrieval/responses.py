"""A DRF response that runs work after the body has gone to the client.

The WSGI server calls `close()` once the response is sent; bookkeeping such as access
counts runs there, so it never adds to the latency the agent sees.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

from rest_framework.response import Response

logger = logging.getLogger(__name__)


class ResponseThen(Response):
    def __init__(self, *args: Any, after: Callable[[], object] | None = None, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._after = after

    def close(self) -> None:
        after, self._after = self._after, None
        if after is not None:
            try:
                after()
            except Exception:  # bookkeeping after the response must never surface as an error
                logger.warning("post-response work failed", exc_info=True)
        super().close()
