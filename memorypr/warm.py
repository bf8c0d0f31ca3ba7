"""What a new server process does before its first request, so that the request does not.

Agents that start together send their first submits together: every web process then pays
for its first-time work at once, and the whole burst waits behind it. Measured on one web
process: the first submit took 194 ms of CPU (41 ms after the warm-up) and the next ones
14 ms; the first retrieval loaded the embedding model. After the warm-up, what start-up
built is frozen, so that the collector never walks it (`memorypr.common.collector`).
"""

from __future__ import annotations

import os

# A body with each kind of JSON value: the parser's first type checks fill the ABC caches.
_SAMPLE_BODY = b'{"text": "x", "n": 1, "x": 0.5, "yes": true, "none": null, "list": [{"nested": {}}]}'


def web_process_warm() -> None:
    """Model, broker and parser warmed (each step that cannot be done is left to the first
    request), then the collector tuned for serving. MEMORYPR_WARM_UP=0 skips the warm-up, and
    MEMORYPR_WARM_EMBEDDINGS=0 its model."""
    from memorypr.common.collector import collector_tune_for_serving

    if os.environ.get("MEMORYPR_WARM_UP", "1") != "1":
        collector_tune_for_serving()
        return
    if os.environ.get("MEMORYPR_WARM_EMBEDDINGS", "1") == "1":
        from memorypr.vectors.embedding import embedding_model_warm

        embedding_model_warm()
    from memorypr.celery import celery_publishing_warm
    from memorypr.common.parsers import loads_strict

    celery_publishing_warm()
    loads_strict(_SAMPLE_BODY)
    collector_tune_for_serving()
