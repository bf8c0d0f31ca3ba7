"""Text conventions every app shares: what a fact key may look like, what counts as CJK."""

from __future__ import annotations

import re

# A key is a word character followed by word characters and . : / - (e.g. `home_city`,
# `preference:coffee`, `pets.dog.name`); the API, the merge and the proposer agree on it.
KEY_PATTERN = r"^[\w][\w.:/\-]*$"
KEY_RE = re.compile(KEY_PATTERN)

# CJK Unified Ideographs, Extension A and the Compatibility Ideographs: the characters that
# are tokenised with jieba instead of split on spaces.
CJK_RANGES = "\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff"
CJK_CHAR = re.compile(f"[{CJK_RANGES}]")
CJK_RUN = re.compile(f"[{CJK_RANGES}]+")
