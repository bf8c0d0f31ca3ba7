"""Server processes freeze what start-up built and collect the young generation less often.

Each case runs in a fresh interpreter: the collector's state is process-wide, and the test
run's own must stay as it is.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]

PROBE = """
import gc, json
from memorypr.common.collector import collector_tune_for_serving
built = [{"start-up": i} for i in range(20000)]
tuned = collector_tune_for_serving()
print(json.dumps({"tuned": tuned, "frozen": gc.get_freeze_count(), "threshold": gc.get_threshold()}))
"""


def _probe(**env: str) -> dict:  # type: ignore[type-arg]
    clean = {k: v for k, v in os.environ.items() if not k.startswith("MEMORYPR_GC_")}
    done = subprocess.run(
        [sys.executable, "-c", PROBE], env=clean | env, cwd=REPO, capture_output=True, text=True, check=True
    )
    return json.loads(done.stdout)


def test_start_up_objects_are_frozen_and_young_collections_spaced_out():
    # given a process that built its long-lived objects
    # when it is tuned for serving
    state = _probe()
    # then those objects are out of the collector's walks, and young passes are rarer
    assert state["tuned"] is True
    assert state["frozen"] >= 20000
    assert state["threshold"][0] == 50_000


def test_the_young_threshold_is_a_setting():
    state = _probe(MEMORYPR_GC_YOUNG_THRESHOLD="20000")
    assert state["threshold"][0] == 20_000


def test_tuning_off_leaves_the_interpreter_defaults():
    state = _probe(MEMORYPR_GC_TUNING="off")
    assert state["tuned"] is False
    assert state["frozen"] == 0
    assert state["threshold"][0] == 700
