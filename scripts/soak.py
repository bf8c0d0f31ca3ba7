"""`make soak`: load and faults against the processes `make run` starts, then one table.

Profiles:
- `single` (default): `scripts/run.py` on a throwaway data folder, exactly as `make run`.
- `scale-out`: two web nodes, two workers and one beat on a shared broker (RabbitMQ when one
  answers on 127.0.0.1:5672, else Redis), against a PostgreSQL reached only through
  DATABASE_URL (a second embedded server listening on a loopback TCP port).

N agents (default 32) send mixed traffic for --seconds while, with --faults, worker masters
and children are SIGKILLed (--kill-cycles), Redis is restarted once and PostgreSQL once. Then
it waits for every KPR to reach a final state and prints requests, 4xx, 5xx, latency per
endpoint, and KPRs sent / merged / rejected / escalated / lost / applied twice, and the
audit chain check. Traffic goes to 127.0.0.1 only, and every loop is bounded in time.
"""

from __future__ import annotations

import argparse
import json
import shutil
import signal
import sys
import tempfile
import threading
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from scripts.soak_cpu import CpuMeter  # noqa: E402
from scripts.soak_stack import ScaleOutStack, SingleStack, Stack, free_port_pair  # noqa: E402
from scripts.soak_traffic import Agent, Stats, percentile  # noqa: E402
from scripts.supervisor import log  # noqa: E402

NAMESPACE = "soak"


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--profile", choices=["single", "scale-out"], default="single")
    parser.add_argument("--agents", type=int, default=32)
    parser.add_argument("--seconds", type=float, default=60.0)
    parser.add_argument("--think-ms", type=float, default=0.0, help="mean pause between an agent's requests")
    parser.add_argument(
        "--no-proposals",
        action="store_true",
        help="agents only post turns and retrieve (no KPRs, no feedback): the read path alone",
    )
    parser.add_argument("--faults", action="store_true", help="kill workers, restart Redis and PostgreSQL")
    parser.add_argument("--kill-cycles", type=int, default=10)
    parser.add_argument(
        "--settle-seconds",
        type=float,
        default=150.0,
        help="how long after the last fault every KPR has to be final (two sweep periods + margin)",
    )
    parser.add_argument(
        "--port", type=int, default=0, help="first port of the web nodes (default: a free one)"
    )
    parser.add_argument("--json", help="also write the results to this file")
    parser.add_argument(
        "--keep-data", action="store_true", help="keep the run's data folder (kept anyway when a run fails)"
    )
    return parser.parse_args(argv)  # fmt: skip


def run_faults(stack: Stack, *, seconds: float, kill_cycles: int, stop: threading.Event) -> list[str]:
    """Spread the kill cycles over the run; one Redis restart at 40 %, one PostgreSQL restart at 70 %."""
    plan: list[tuple[float, str]] = [
        (seconds * (i + 0.5) / max(kill_cycles, 1), "kill-child" if i % 2 == 0 else "kill-master")
        for i in range(kill_cycles)
    ]
    plan += [(seconds * 0.4, "restart-redis"), (seconds * 0.7, "restart-postgres")]
    plan.sort()
    started = time.monotonic()
    done: list[str] = []
    for at, fault in plan:
        if stop.wait(max(0.0, started + at - time.monotonic())):
            break
        try:
            what = stack.inject(fault)
        except Exception as exc:  # a fault that could not be injected is reported, not fatal
            what = f"{fault} failed: {exc}"
        log(f"fault at {time.monotonic() - started:5.1f} s: {what}")
        done.append(what)
    return done


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    data = Path(tempfile.mkdtemp(prefix="memorypr-soak-"))
    if not args.port:
        args.port = free_port_pair()
    stack: Stack = (
        SingleStack(data=data, port=args.port)
        if args.profile == "single"
        else ScaleOutStack(data=data, port=args.port)
    )
    interrupted = threading.Event()
    signal.signal(signal.SIGINT, lambda *_: interrupted.set())
    failed = True
    try:
        stack.start()
        tokens = stack.create_agents(namespace=NAMESPACE, count=args.agents)
        log(
            f"{args.agents} agents, {args.seconds:.0f} s, profile {args.profile}, faults {'on' if args.faults else 'off'}"
        )
        stats = Stats()
        stop_at = time.monotonic() + args.seconds
        agents = [
            Agent(index=i, base_urls=stack.base_urls, token=token, namespace=NAMESPACE, stats=stats,
                  stop_at=stop_at, think=args.think_ms / 1000, audited_writes=not args.no_proposals)
            for i, token in enumerate(tokens)
        ]  # fmt: skip
        cpu_meter = CpuMeter(roots=stack.process_roots)
        cpu_meter.start()
        started = time.monotonic()
        # The clock starts once every agent is built (building an HTTP client is not free).
        stop_at = started + args.seconds
        for agent in agents:
            agent.stop_at = stop_at
            agent.start()
        faults: list[str] = []
        fault_thread = None
        if args.faults:
            fault_thread = threading.Thread(
                target=lambda: faults.extend(
                    run_faults(
                        stack, seconds=args.seconds * 0.8, kill_cycles=args.kill_cycles, stop=interrupted
                    )
                ),
                daemon=True,
            )
            fault_thread.start()
        for agent in agents:
            agent.join(timeout=max(0.0, stop_at - time.monotonic()) + 90)
        if fault_thread is not None:
            fault_thread.join()
        elapsed = time.monotonic() - started
        cpu = cpu_meter.stop()
        last_fault = time.monotonic()
        log("traffic done; waiting for every KPR to be final")
        settle = stack.settle(namespace=NAMESPACE, deadline=last_fault + args.settle_seconds)
        accounting = stack.account(namespace=NAMESPACE, accepted=dict(stats.accepted))
        audit_ok, audit_text = stack.verify_audit()
        report = build_report(
            args=args, stats=stats, elapsed=elapsed, faults=faults, settle=settle,
            accounting=accounting, audit=(audit_ok, audit_text), cpu=cpu,
        )  # fmt: skip
        print(render(report), flush=True)
        if args.json:
            Path(args.json).write_text(json.dumps(report, indent=2))
        failed = bool(report["kprs"]["lost"] or report["kprs"]["appliedTwice"] or not audit_ok)
        return 1 if failed else 0
    finally:
        stack.stop()
        data_folder_clean_up(data, keep=failed or args.keep_data)


def data_folder_clean_up(data: Path, *, keep: bool) -> None:
    """A run leaves a database of ~100 MB: removed once it has passed, kept to inspect otherwise."""
    if keep or (data / "pg" / "postmaster.pid").exists():  # a server still running keeps its files
        log(f"data kept in {data}")
        return
    shutil.rmtree(data, ignore_errors=True)


def build_report(*, args, stats: Stats, elapsed, faults, settle, accounting, audit, cpu) -> dict:  # type: ignore[no-untyped-def]
    endpoints = {}
    total = sum(len(v) for v in stats.latencies.values())
    for endpoint in sorted(set(stats.latencies) | set(stats.errors)):
        codes = stats.statuses[endpoint]
        latencies = stats.latencies[endpoint]
        endpoints[endpoint] = {
            "requests": len(latencies) + stats.errors[endpoint],
            "4xx": sum(n for code, n in codes.items() if 400 <= code < 500),
            "5xx": sum(n for code, n in codes.items() if code >= 500),
            "5xxByCode": {str(code): n for code, n in sorted(codes.items()) if code >= 500},
            "connectionErrors": stats.errors[endpoint],
            "p50ms": round(percentile(latencies, 0.5) * 1000, 1),
            "p95ms": round(percentile(latencies, 0.95) * 1000, 1),
        }
    # Fairness: each agent's median latency; a server that favours some connections shows a spread.
    agent_medians = sorted(percentile(latencies, 0.5) * 1000 for latencies in stats.by_agent.values())
    sent = len(stats.sent_keys)
    return {
        "profile": args.profile, "agents": args.agents, "seconds": round(elapsed, 1), "thinkMs": args.think_ms,
        "requestsPerSecond": round(total / elapsed, 1) if elapsed else 0.0,
        "endpoints": endpoints, "faults": faults,
        "agentMedianMs": {"min": round(agent_medians[0], 1), "median": round(percentile(agent_medians, 0.5), 1),
                          "max": round(agent_medians[-1], 1)} if agent_medians else None,
        "kprs": {"sent": sent, "accepted": len(stats.accepted), **accounting,
                 "lost": (sent - len(stats.accepted)) + accounting["notFinal"] + accounting["missing"]},
        "settledSeconds": settle, "auditChain": {"intact": audit[0], "detail": audit[1]},
        "cpuSeconds": cpu, "cpuMsPerRequest": round(sum(cpu.values()) * 1000 / total, 1) if total else None,
    }  # fmt: skip


def render(report: dict) -> str:  # type: ignore[type-arg]
    lines = [
        f"\nsoak: profile {report['profile']}, {report['agents']} agents, {report['seconds']} s, "
        f"{report['requestsPerSecond']} requests/s, think {report['thinkMs']} ms, {len(report['faults'])} faults",
        f"{'endpoint':<16}{'requests':>9}{'4xx':>6}{'5xx':>6}{'conn err':>9}{'p50 ms':>9}{'p95 ms':>9}",
    ]
    totals = {"requests": 0, "4xx": 0, "5xx": 0, "connectionErrors": 0}
    for name, row in report["endpoints"].items():
        lines.append(f"{name:<16}{row['requests']:>9}{row['4xx']:>6}{row['5xx']:>6}{row['connectionErrors']:>9}"
                     f"{row['p50ms']:>9}{row['p95ms']:>9}")  # fmt: skip
        for key in totals:
            totals[key] += row[key]
    lines.append(
        f"{'all':<16}{totals['requests']:>9}{totals['4xx']:>6}{totals['5xx']:>6}{totals['connectionErrors']:>9}"
    )
    server_errors: dict[str, int] = {}
    for row in report["endpoints"].values():
        for code, n in row["5xxByCode"].items():
            server_errors[code] = server_errors.get(code, 0) + n
    if server_errors:
        lines.append(
            "5xx by status: " + ", ".join(f"{code} x{n}" for code, n in sorted(server_errors.items()))
        )
    spread = report["agentMedianMs"]
    if spread:
        lines.append(
            f"each agent's median ms: min {spread['min']}, median {spread['median']}, max {spread['max']}"
        )
    k = report["kprs"]
    lines.append(
        f"KPRs sent {k['sent']}, accepted {k['accepted']}, merged {k['merged']}, rejected {k['rejected']}, "
        f"escalated {k['escalated']}, conflict {k['conflict']}, failed {k['failed']}, lost {k['lost']}, "
        f"applied twice {k['appliedTwice']}"
    )
    if k.get("submitToMergedMs"):
        latency = k["submitToMergedMs"]
        lines.append(f"submit -> merged ms: p50 {latency['p50']}, p95 {latency['p95']}, max {latency['max']}")
    settled = report["settledSeconds"]
    lines.append(
        f"every KPR final {settled:.1f} s after the traffic" if settled is not None else "KPRs NOT all final"
    )
    cpu = report["cpuSeconds"]
    lines.append(
        "CPU s during traffic: "
        + ", ".join(f"{role} {seconds}" for role, seconds in cpu.items())
        + f"; {report['cpuMsPerRequest']} ms of CPU per request"
    )
    audit = report["auditChain"]
    lines.append(f"audit chain: {'intact' if audit['intact'] else 'BROKEN'} ({audit['detail']})")
    for fault in report["faults"]:
        lines.append(f"  fault: {fault}")
    return "\n".join(lines)


if __name__ == "__main__":
    sys.exit(main())
