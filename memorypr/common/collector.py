"""Python's cyclic garbage collector, set for long-running server processes (web and worker).

A process holds some 180,000 objects once Django, the URL map, the serializers and the
embedding model are loaded, and they live as long as the process. With the interpreter's
defaults, every full collection walks all of them (about 0.1 s with the GIL held, which
stalls every thread of a web process), and a young-generation pass runs every 700 net
allocations, a few times in each request. So, once start-up is done:

- what start-up built is frozen (`gc.freeze()`): collections no longer walk it, and in a
  forked child its pages are no longer written by the collector's bookkeeping;
- the young generation is collected every MEMORYPR_GC_YOUNG_THRESHOLD net allocations
  (default 50,000) rather than 700: cycles are still collected, in fewer, larger passes.

MEMORYPR_GC_TUNING=off leaves the interpreter's defaults.
"""

from __future__ import annotations

import gc
import os

DEFAULT_YOUNG_THRESHOLD = 50_000


def collector_tune_for_serving() -> bool:
    """Freeze what the process has built so far and space out young collections; False when off."""
    if os.environ.get("MEMORYPR_GC_TUNING", "on").strip().lower() in ("off", "0", "false", "no"):
        return False
    young = int(os.environ.get("MEMORYPR_GC_YOUNG_THRESHOLD") or DEFAULT_YOUNG_THRESHOLD)
    # Garbage left by start-up is collected first, so that it is not frozen with the rest.
    gc.collect()
    gc.freeze()
    _, middle, old = gc.get_threshold()
    gc.set_threshold(max(young, 1), middle, old)
    return True
