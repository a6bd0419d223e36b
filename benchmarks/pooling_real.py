"""Pooling strategies against depth pooling on judged collections: the table of docs/pooling.md
and the rule that chooses `judged pool --budget`'s default strategy.

    python benchmarks/pooling_real.py NAME=QRELS:RUNDIR [NAME=QRELS:RUNDIR ...] --out DIR

e.g. robust03=../shared/data/robust03/qrels.txt:../shared/data/robust03/runs. For each
collection (every file of RUNDIR is a run) and each protocol (leave-one-run-out, from
scratch) it replays every strategy with `judged meta pooling` (nDCG@10, pool depth 100,
the default checkpoints), the judgments to recover the ranking at each tolerance (0.005,
0.01, 0.02), and keeps the JSON (with --curve) of each strategy in
DIR/NAME.PROTOCOL.STRATEGY.json with its CPU time; a file already there is read back, not
replayed again (--fresh: replay; --strategy S: only S, e.g. a slow one on its own). Then it prints the
markdown table (collection x protocol x tolerance x strategy: judgments, change against
depth pooling), which strategies beat depth pooling in every cell, and the default the rule
gives: a strategy is the default only if it beats depth pooling in every cell, else depth.
No data is embedded here; the collections are read from the paths given.

JUDGED_THREADS sets the replay's threads (the strategies of one pool run side by side).
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import time
from pathlib import Path

PROTOCOLS = ("leave-one-run-out", "from-scratch")
TOLERANCES = (0.005, 0.01, 0.02)
BUDGETS = (1000, 2000, 5000, 10000)


def collection(text: str) -> tuple[str, Path, list]:
    try:
        name, rest = text.split("=", 1)
        qrels, rundir = rest.split(":", 1)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected NAME=QRELS:RUNDIR, got {text!r}")
    runs = sorted(p for p in Path(rundir).iterdir() if p.is_file())
    if not runs:
        raise argparse.ArgumentTypeError(f"no run files in {rundir}")
    return name, Path(qrels), runs


def replay(name, qrels, runs, protocol, out: Path, strategies: list, fresh: bool, extra: list) -> dict:
    """The replay's JSON: every strategy's part read from DIR/NAME.PROTOCOL.STRATEGY.json,
    those missing (or all, ``fresh``) replayed together by one judged meta pooling and
    kept so."""
    def path(s):
        return out / f"{name}.{protocol}.{s}.json"

    missing = [s for s in strategies if fresh or not path(s).exists()]
    if missing:
        cmd = [sys.executable, "-m", "judged", "meta", "pooling", str(qrels), *map(str, runs), "--protocol", protocol,
               *(f"--budget={b}" for b in BUDGETS), *(f"--tolerance={t}" for t in TOLERANCES),
               *(f"--strategy={s}" for s in missing), "--format", "json", "--curve", *extra]
        before, start = resource.getrusage(resource.RUSAGE_CHILDREN), time.time()
        print(f"{name} {protocol}: replaying {' '.join(missing)} ...", file=sys.stderr, flush=True)
        done = subprocess.run(cmd, capture_output=True, text=True)
        if done.returncode:
            raise SystemExit(f"{name} {protocol}: judged meta pooling failed: {done.stderr.strip()}")
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        result = json.loads(done.stdout)
        timing = {"wall_s": round(time.time() - start, 1),
                  "cpu_s": round(after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime, 1),
                  "threads": os.environ.get("JUDGED_THREADS", "default"), "replayed_with": missing}
        print(f"{name} {protocol}: {timing['cpu_s']} CPU-s, {timing['wall_s']} s", file=sys.stderr, flush=True)
        for s in missing:
            one = {**result, "strategies": {s: result["strategies"][s]}, "timing": timing}
            tmp = path(s).with_suffix(".tmp")
            tmp.write_text(json.dumps(one))
            tmp.replace(path(s))
    parts = [json.loads(path(s).read_text()) for s in strategies]
    merged = {**parts[0], "strategies": {s: p["strategies"][s] for s, p in zip(strategies, parts)},
              "timing": {s: p["timing"] for s, p in zip(strategies, parts)}}
    for k in ("runs", "tolerances", "step", "depth", "measure", "qrels"):
        if any(p[k] != parts[0][k] for p in parts):
            raise SystemExit(f"{name} {protocol}: the strategies' replays differ in {k}; replay them again (--fresh)")
    return merged


def cell(r: dict, strategy: str, base: int | None) -> str:
    at = r["recovered_at"]
    v = None if at is None or not base else (at - base) / base
    if at is None:
        return "never"
    text = f"{at:,}"
    if strategy != "depth":
        text += " (depth never)" if v is None else f" ({v:+.1%})"
        if v is not None and v < 0:
            text = f"**{text}**"
    return text + (" τ" if (r["recovered_by"] or "").split(" (")[0] == "tau = 1" else "")


def within_only(res: dict, strategy: str, tolerance: float) -> dict:
    """Recovery by "every run within the tolerance" alone (Kendall's tau = 1 not counted),
    read off the replay's curve: the first checkpoint from which every later one has every
    run within the tolerance (None: not even at the end; a replay stopped by --max-judgments
    must show it before its last checkpoint), as judged.analyses.pooling.replay reads its own."""
    curve = res["strategies"][strategy]["curve"]
    ok = [e <= tolerance + 1e-12 for e in curve["max_abs_error"]]
    bad = [i for i, x in enumerate(ok) if not x]
    first = bad[-1] + 1 if bad else 0
    limit = res.get("max_judgments")
    stopped = limit is not None and curve["judgments"][-1] >= limit
    if first >= len(ok) or (stopped and first == len(ok) - 1):
        return {"tolerance": tolerance, "recovered_at": None, "recovered_by": None}
    return {"tolerance": tolerance, "recovered_at": curve["judgments"][first],
            "recovered_by": f"every run within {tolerance:g}"}


def recovery(res: dict, strategy: str, tolerance: float, view: str) -> dict:
    if view == "within":
        return within_only(res, strategy, tolerance)
    return next(x for x in res["strategies"][strategy]["recovery"] if x["tolerance"] == tolerance)


def table(results: dict, view: str = "meta") -> tuple[str, dict]:
    """The markdown table and, per strategy, the cells where it beat depth pooling; ``view``
    "meta": recovery as judged meta pooling has it (tau = 1 or every run within the
    tolerance), "within": every run within the tolerance alone."""
    strategies = list(next(iter(results.values()))["strategies"])
    lines = ["| collection | protocol | runs | candidates (largest pool) | tolerance | " + " | ".join(f"`{s}`" for s in strategies)
             + " |", "|---" * (5 + len(strategies)) + "|"]
    wins = {s: [] for s in strategies if s != "depth"}
    cells = 0
    for (name, protocol), res in results.items():
        cands = _candidates(res)
        for i, t in enumerate(res["tolerances"]):
            row = [name if i == 0 else "", protocol if i == 0 else "", str(len(res["runs"])) if i == 0 else "",
                   cands if i == 0 else "", f"{t:g}"]
            cells += 1
            base = recovery(res, "depth", t, view)["recovered_at"]
            for s in strategies:
                r = recovery(res, s, t, view)
                row.append(cell(r, s, base))
                if s != "depth" and r["recovered_at"] is not None and (base is None or r["recovered_at"] < base):
                    wins[s].append((name, protocol, t))
            lines.append("| " + " | ".join(row) + " |")
    return "\n".join(lines), {"cells": cells, "wins": wins}


def rule(results: dict, view: str = "meta"):
    """judged's rule (:func:`judged.analyses.pooling.choice.choose`) over every cell: a
    strategy that beat depth pooling in each, else depth."""
    from judged.analyses.pooling.choice import choose

    cells = [(name, protocol, t) for (name, protocol), res in results.items() for t in res["tolerances"]]
    recovered = {}
    for (name, protocol), res in results.items():
        for s in res["strategies"]:
            for t in res["tolerances"]:
                recovered.setdefault(s, {})[(name, protocol, t)] = recovery(res, s, t, view)["recovered_at"]
    return choose(recovered, cells)


def _candidates(res: dict) -> str:
    sizes = res["strategies"]["depth"].get("candidates")
    if sizes:
        return f"{max(sizes):,}"
    return "-"


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("collections", nargs="+", type=collection, metavar="NAME=QRELS:RUNDIR")
    p.add_argument("--out", type=Path, required=True, help="where the replays' JSON is kept (and read back)")
    p.add_argument("--protocol", action="append", choices=PROTOCOLS, help="default: both")
    p.add_argument("--strategy", action="append", metavar="S", help="replay only these (default: every one, "
                   "depth included; the rule reads every strategy found)")
    p.add_argument("--fresh", action="store_true", help="replay even if DIR/NAME.PROTOCOL.STRATEGY.json exists")
    p.add_argument("--replay-option", action="append", default=[], metavar="OPTION",
                   help="passed to judged meta pooling, e.g. --replay-option=--max-judgments=20000")
    args = p.parse_args(argv)
    args.out.mkdir(parents=True, exist_ok=True)
    from judged.analyses.pooling.replay import replayable

    results = {}
    for name, qrels, runs in args.collections:
        for protocol in args.protocol or PROTOCOLS:
            if args.strategy:  # replay these, then report every strategy already kept
                replay(name, qrels, runs, protocol, args.out, args.strategy, args.fresh, args.replay_option)
            kept = [s for s in replayable() if (args.out / f"{name}.{protocol}.{s}.json").exists()]
            if "depth" not in kept and args.strategy:
                raise SystemExit(f"{name} {protocol}: depth pooling not replayed yet (add --strategy depth)")
            results[(name, protocol)] = replay(name, qrels, runs, protocol, args.out, kept if args.strategy else
                                               replayable(), args.fresh and not args.strategy, args.replay_option)
    for view, title in (("meta", "Recovered as judged meta pooling reports it: from that checkpoint on, Kendall's "
                                 "tau over the scored runs is 1 or every scored run is within the tolerance of its "
                                 "full-qrels nDCG@10 (τ: by tau = 1 before every run was within it)"),
                        ("within", "Recovered by every scored run within the tolerance alone (tau = 1 not counted)")):
        text, verdict = table(results, view)
        print(f"### {title}")
        print()
        print(text)
        print()
        n = verdict["cells"]
        print(f"| strategy | cells where it needed fewer judgments than depth pooling (of {n}) |")
        print("|---|---|")
        for s, won in verdict["wins"].items():
            print(f"| `{s}` | {len(won)} |")
        choice = rule(results, view)
        most = max(len(w) for w in verdict["wins"].values())
        best = ", ".join(f"`{s}`" for s, w in verdict["wins"].items() if len(w) == most)
        print()
        if choice.strategy == "depth":
            print(f"By the rule: `depth`. No strategy needed fewer judgments than depth pooling in all {n} cells "
                  f"(the most: {best}, {most}).")
        else:
            print(f"By the rule: `{choice.strategy}`: {choice.reason}.")
        print()
    for (name, protocol), r in results.items():
        seen = {}
        for s, t in r["timing"].items():
            seen.setdefault(json.dumps(t, sort_keys=True), t)
        print(f"time, {name} {protocol}: " + "; ".join(f"{' '.join(t['replayed_with'])}: {t['cpu_s']} CPU-s, "
                                                     f"{t['wall_s']} s" for t in seen.values()))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
