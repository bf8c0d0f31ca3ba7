"""A bounded, thread-safe LRU of embeddings keyed by the exact text embedded.

Retrieval embeds the same queries again and again (an agent asks for its profile on every
turn), and a merge embeds values that earlier KPRs already wrote; the model is deterministic,
so the vector of a text seen before is read back rather than computed.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Iterable

import numpy as np

# A text longer than this is embedded from its first 256 tokens anyway and is rarely seen
# twice; leaving it out keeps the cache's memory bounded by entries, not by what agents send.
MAX_CACHED_TEXT_CHARS = 4096


class EmbeddingCache:
    def __init__(self, maxsize: int) -> None:
        self.maxsize = max(0, maxsize)
        self.hits = 0
        self.misses = 0
        self._entries: OrderedDict[str, np.ndarray] = OrderedDict()
        self._lock = threading.Lock()

    def __len__(self) -> int:
        with self._lock:
            return len(self._entries)

    def get_many(self, texts: Iterable[str]) -> list[np.ndarray | None]:
        """The cached vector of each text, or None; a hit becomes the most recently used."""
        found: list[np.ndarray | None] = []
        with self._lock:
            for text in texts:
                vector = self._entries.get(text)
                if vector is None:
                    self.misses += 1
                else:
                    self._entries.move_to_end(text)
                    self.hits += 1
                found.append(vector)
        return found

    def put_many(self, items: Iterable[tuple[str, np.ndarray]]) -> None:
        if self.maxsize == 0:
            return
        with self._lock:
            for text, vector in items:
                if len(text) > MAX_CACHED_TEXT_CHARS:
                    continue
                # Read-only: every caller shares the one array.
                stored = np.array(vector, dtype=np.float32, copy=True)
                stored.setflags(write=False)
                self._entries[text] = stored
                self._entries.move_to_end(text)
                while len(self._entries) > self.maxsize:
                    self._entries.popitem(last=False)

    def clear(self) -> None:
        with self._lock:
            self._entries.clear()
            self.hits = self.misses = 0
