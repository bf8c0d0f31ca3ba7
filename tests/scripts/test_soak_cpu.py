"""The soak charges each role the CPU it used during the run, also for processes killed meanwhile."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

import psutil

from scripts.soak_cpu import LOAD_GENERATOR, CpuMeter, ProcessCpu, cpu_delta

BURN = "import sys, time\nt=time.process_time()\nwhile time.process_time()-t<float(sys.argv[1]): pass\ntime.sleep(60)"


def test_each_process_is_charged_to_its_role_up_to_its_last_reading():
    # given a worker master and a web server at the start
    start = {2: ProcessCpu("worker", 5.0), 4: ProcessCpu("web", 10.0), 9: ProcessCpu(LOAD_GENERATOR, 1.0)}
    # when the master was last seen at 6 s before it was killed, its replacement (born during
    # the run) at 0.5 s, the web server at 14 s
    last_seen = {2: ProcessCpu("worker", 6.0), 5: ProcessCpu("worker", 0.5), 4: ProcessCpu("web", 14.0),
                 9: ProcessCpu(LOAD_GENERATOR, 1.5)}  # fmt: skip
    # then each role is charged what it used during the run, and none below zero
    assert cpu_delta(start, last_seen) == {LOAD_GENERATOR: 0.5, "web": 4.0, "worker": 1.5}


def test_the_meter_keeps_what_a_killed_process_used_before_it_died():
    # given a meter on this test's process tree, and a child that burns CPU once the run started
    meter = CpuMeter(roots=lambda: [psutil.Process(os.getpid())], interval=0.1)
    meter.start()
    child = subprocess.Popen([sys.executable, "-c", BURN, "0.3"])
    try:
        deadline = time.monotonic() + 20
        while (seen := meter.last_seen.get(child.pid)) is None or seen.seconds < 0.3:
            assert time.monotonic() < deadline, "the meter never saw the child's CPU"
            time.sleep(0.05)
    finally:
        # when the child is killed before the run ends
        child.send_signal(signal.SIGKILL)
        child.wait()
    cpu = meter.stop()
    # then its CPU is still counted, to its role
    assert cpu["launcher"] >= 0.3
