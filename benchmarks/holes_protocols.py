"""Hole bounds and estimates under every protocol of `judged meta holdout`, on real collections.

    python benchmarks/holes_protocols.py COLLECTION [COLLECTION ...] [--measure nDCG@10] [-k 10]
        [--seeds 5] [--kind-pool trad] [--json out.json]
        [--methods loro-logit:run,loro-logit:pool,run-prior:pool]

    python benchmarks/holes_protocols.py COLLECTION ... --kind-pool trad --per-run

A COLLECTION is a folder with ``qrels.txt``, ``runs/*`` (TREC run files, gzip'ed or not) and,
optionally, ``runs.tsv`` (tab-separated, a header line with at least ``file`` and ``group``
columns, and ``kind``: e.g. trad / nn / nnlm). The groups of ``runs.tsv`` drive the group
protocol (else the runs' leading letters); with ``--kind-pool KIND`` one more shift cell pools
from the runs of that kind and scores the others (a change of kind: e.g. traditional runs
pooled, neural ones scored), and ``--kind-triples N`` (default 8) few cells each score three
runs of other kinds and three different groups, drawn at random, alone on that pool (the
seed's scenario: new systems on old qrels; `judged meta holdout --protocol few --pool-runs ...
--scored-runs ...`).

Per collection it prints one row per (protocol, cell): runs counted (with a truth) and
estimated, abstentions, MAE of holes-as-zero, condensed and the estimate, interval coverage
and width, and the bound violations (run means, run x query cells); then, per cell, the share of
the estimated runs' holes the estimate reads as relevant against the share the truth judges
relevant (the grade model's assumption, checked). With ``--methods`` (estimate:over, comma-separated) each estimate configuration runs in
turn and one more table compares their MAE per cell with holes-as-zero's and condensed's,
marking with * each configuration that beats both there, and the configuration `judged meta
holdout --estimates` would recommend on that collection over all its cells (or none). The collections'
files are never part of this repository (robust03 is in ../shared/data; DL 2019 and
CLEF TAR 2017 are built by benchmarks/real_collections.py from pinned commits of their
public repositories, see docs/holes.md "On real collections").
"""

from __future__ import annotations

import argparse
import csv
import glob
import json
import os
import sys
import tempfile
import time

import numpy as np

from judged.analyses.meta.estimate_choice import choose
from judged.analyses.meta.holdout import holdout
from judged.analyses.meta.protocols import summarize


def collection(path: str):
    runs = sorted(glob.glob(os.path.join(path, "runs", "*")))
    table = os.path.join(path, "runs.tsv")
    rows = []
    if os.path.exists(table):
        with open(table, encoding="utf-8") as f:
            rows = list(csv.DictReader(f, delimiter="\t"))
    return os.path.join(path, "qrels.txt"), runs, rows


def row_of(cell: str, s: dict, unit: str = "") -> dict:
    return {"cell": cell, "runs": s["runs"], "counted": s["counted"], "estimated": s["estimated"],
            "abstained": len(s["abstained"]), "left_out": len(s["left_out"]),
            "mae_zero": s["mae"]["zero"], "mae_condensed": s["mae"]["condensed"], "mae_estimate": s["mae"]["estimate"],
            "own_zero": s.get("mae_own", {}).get("zero", float("nan")),
            "own_condensed": s.get("mae_own", {}).get("condensed", float("nan")),
            "own_estimate": s.get("mae_own", {}).get("estimate", float("nan")),
            "covered": s["covered"], "covered_own": s.get("covered_own"), "intervals": s["intervals"],
            "width": s["mean_width"],
            "violations": s["violations"], "cell_violations": s["cell_violations"], "cells": s["cells"],
            "holes_relevant": s.get("holes_relevant")}


def run_collection(path: str, args) -> list:
    qrels, runs, table = collection(path)
    common = dict(k=args.k, measure=args.measure, samples=args.samples, seed=0, estimate=args.estimate,
                  estimate_over=args.estimate_over)
    out = []
    t = time.time()
    res = holdout(qrels, runs, protocol="loro", **common)
    out.append(row_of("loro", res.summary()))
    groups = None
    if table and "group" in table[0]:
        fd, groups = tempfile.mkstemp(suffix=".txt")
        with os.fdopen(fd, "w") as f:
            for r in table:
                f.write(f"{r['file']} {r['group']}\n")
    res = holdout(qrels, runs, protocol="group", groups=groups, **common)
    out.append(row_of("group", res.summary()))
    for protocol in ("shift", "few"):
        res = holdout(qrels, runs, protocol=protocol, seeds=args.seeds, **common)
        for cell in res.cells:
            out.append(row_of(f"{protocol}: {cell.name}", cell.summary()))
        out.append(row_of(f"{protocol}: all cells", res.summary()["all"]))
        if args.kind_pool and table and "kind" in table[0]:
            pool = [r["file"] for r in table if r.get("kind") == args.kind_pool]
            if pool and len(pool) < len(table):
                res = holdout(qrels, runs, protocol=protocol, pool_runs=pool, **common)
                out.append(row_of(f"{protocol}: pool = {args.kind_pool} runs", res.cells[0].summary()))
                if protocol == "few" and "group" in table[0] and args.kind_triples:
                    out += kind_triples(qrels, runs, table, pool, args, common)
    print(f"# {path}: {len(runs)} runs, {time.time() - t:.0f} s", file=sys.stderr)
    return out


def kind_triples(qrels, runs, table, pool, args, common) -> list:
    """The seed's scenario: three new systems (runs of the other kinds, of three different
    groups, drawn at random) scored alone on qrels pooled from ``pool``; one row per triple
    and one over them all ('all cells': left out of the recommendation, as the others)."""
    new = [r for r in table if r["file"] not in pool]
    rng = np.random.default_rng(7)
    triples = []
    for _ in range(1000):
        if len(triples) == args.kind_triples:
            break
        chosen, groups = [], set()
        for i in rng.permutation(len(new)).tolist():
            if new[i]["group"] not in groups:
                chosen.append(new[i]["file"])
                groups.add(new[i]["group"])
            if len(chosen) == 3:
                break
        if len(chosen) == 3 and sorted(chosen) not in triples:
            triples.append(sorted(chosen))
    rows, every, per_run = [], [], []
    for j, triple in enumerate(triples, 1):
        cell = holdout(qrels, runs, protocol="few", pool_runs=pool, scored_runs=triple, **common).cells[0]
        rows.append(row_of(f"few: new kind, triple {j}", cell.summary()))
        every += cell.runs
        per_run += [(j, r) for r in cell.runs]
    if args.per_run:  # each run of each triple: its holes read as relevant against judged relevant
        print(f"**{os.path.basename(os.path.normpath(os.path.dirname(qrels)))}**: the new-kind triples run by run "
              "(holes the estimate fills; read as relevant, judged relevant in the truth)\n\n"
              "| triple | run | holes | read as relevant | judged relevant | error of the estimate |\n"
              "|---|---|---:|---:|---:|---:|", flush=True)
        for j, r in per_run:
            if r.read_holes and r.estimate_relevant_holes is not None:
                print(f"| {j} | {os.path.basename(r.run)} | {r.read_holes} | {r.estimate_relevant_holes / r.read_holes:.1%} | "
                      f"{r.truth_relevant_holes / r.read_holes:.1%} | {r.estimate - r.truth:+.4f} |", flush=True)
        print(flush=True)
    rows.append(row_of("few: new kind, all cells", summarize(every)))
    return rows


def comparison(name: str, by_method: dict, truth: str = "mae") -> str:
    """MAE per cell of every configuration beside zero's and condensed's; * beats both.
    ``truth``: 'mae', against judging every scored run's holes (the protocol's truth); 'own',
    against judging each run's own holes alone (shift and few cells only: what --estimate-over
    run predicts)."""
    methods = list(by_method)
    first = by_method[methods[0]]
    against = ("judging every scored run's holes" if truth == "mae" else
               "judging each run's own holes alone (shift and few cells)")
    lines = [f"**{name}**: MAE per cell against {against} (runs with a truth, estimated; * below both holes-as-zero "
             f"and condensed)", "",
             "| protocol / cell | zero | condensed | " + " | ".join(methods) + " |",
             "|---|---:|---:|" + "---:|" * len(methods)]
    for i, r in enumerate(first):
        if truth == "own" and not r["cell"].startswith(("shift", "few")):
            continue
        cells = []
        for m in methods:
            x = by_method[m][i]
            est, zero, cond = x[f"{truth}_estimate"], x[f"{truth}_zero"], x[f"{truth}_condensed"]
            best = est < min(zero, cond)
            abst = f" ({x['abstained']} abst.)" if x["abstained"] else ""
            cells.append("-" if est != est else f"{est:.4f}{'*' if best else ''}{abst}")
        lines.append(f"| {r['cell']} | {r[f'{truth}_zero']:.4f} | {r[f'{truth}_condensed']:.4f} | " + " | ".join(cells)
                     + " |")
    return "\n".join(lines)


def recommendation(by_method: dict) -> str:
    """`judged meta holdout --estimates`' rule (judged.analyses.meta.estimate_choice) over every
    cell of every protocol of one collection (the 'all cells' rows are sums of the others)."""
    cells, protocols = {}, {}
    for config, rows in by_method.items():
        for r in rows:
            if r["cell"].endswith("all cells"):
                continue
            protocols[r["cell"]] = r["cell"].split(":")[0]
            cells.setdefault(config, {})[r["cell"]] = {
                "mae": {"zero": r["mae_zero"], "condensed": r["mae_condensed"], "estimate": r["mae_estimate"]},
                "estimated": r["estimated"], "abstained": r["abstained"]}
    choice, reason, _ = choose(cells, protocols)
    return f"use: {choice or 'none'} ({reason})"


def own_cover(row: dict) -> str:
    """' (n)': the intervals holding the truth of judging each run's own holes (shift and few cells)."""
    return "" if row.get("covered_own") is None else f" ({row['covered_own']})"


def markdown(name: str, rows: list) -> str:
    lines = [f"**{name}**", "",
             "| protocol / cell | runs (truth, estimated) | abstained | MAE zero | MAE condensed | MAE estimate | "
             "90% coverage (own holes) | width | violations (means, cells) |",
             "|---|---|---:|---:|---:|---:|---:|---:|---|"]
    for r in rows:
        lines.append(f"| {r['cell']} | {r['runs']} ({r['counted']}, {r['estimated']}) | {r['abstained']} | "
                     f"{r['mae_zero']:.4f} | {r['mae_condensed']:.4f} | {r['mae_estimate']:.4f} | "
                     f"{r['covered']}/{r['intervals']}{own_cover(r)} | {r['width']:.3f} | {r['violations']}, "
                     f"{r['cell_violations']}/{r['cells']} |")
    return "\n".join(lines)


def hole_grades(name: str, rows: list) -> str:
    """The grade source's assumption, checked: per cell, the share of the estimated runs' holes
    it reads as relevant (expected) against the share the truth judges relevant."""
    lines = [f"**{name}**: holes of the estimated runs read as relevant by the estimate, against judged relevant "
             "in the truth", "", "| protocol / cell | holes | read as relevant | judged relevant | ratio |",
             "|---|---:|---:|---:|---:|"]
    for r in rows:
        h = r.get("holes_relevant")
        if h:
            ratio = f"{h['estimate'] / h['truth']:.2f}" if h["truth"] > 0 else "-"
            lines.append(f"| {r['cell']} | {h['holes']} | {h['estimate']:.1%} | {h['truth']:.1%} | {ratio} |")
    return "\n".join(lines)


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("collections", nargs="+")
    p.add_argument("-m", "--measure", default="nDCG@10")
    p.add_argument("-k", type=int, default=10)
    p.add_argument("--seeds", type=int, default=5)
    p.add_argument("--samples", type=int, default=200)
    p.add_argument("--kind-pool", default=None)
    p.add_argument("--kind-triples", type=int, default=8,
                   help="with --kind-pool and a group column: random triples of other-kind runs of three groups "
                        "scored alone (few) on the kind's pool (default 8)")
    p.add_argument("--per-run", action="store_true",
                   help="also print the new-kind triples run by run: holes read as relevant against judged relevant")
    p.add_argument("--estimate", default=None, help="the estimate's method (default: judged's)")
    p.add_argument("--estimate-over", default=None, choices=["pool", "run", "midpoint"])
    p.add_argument("--methods", default=None, help="estimate:over configurations to compare, comma-separated")
    p.add_argument("--json", default=None)
    args = p.parse_args()
    every = {}
    for path in args.collections:
        name = os.path.basename(os.path.normpath(path))
        if not args.methods:
            every[path] = run_collection(path, args)
            print(markdown(name, every[path]) + "\n", flush=True)
            print(hole_grades(name, every[path]) + "\n", flush=True)
            continue
        by_method = {}
        for config in args.methods.split(","):
            args.estimate, _, over = config.partition(":")
            args.estimate_over = over or None
            by_method[config] = run_collection(path, args)
            print(markdown(f"{name}, {config}", by_method[config]) + "\n", flush=True)
            print(hole_grades(f"{name}, {config}", by_method[config]) + "\n", flush=True)
        every[path] = by_method
        print(comparison(name, by_method) + "\n", flush=True)
        print(comparison(name, by_method, truth="own") + "\n", flush=True)
        print(f"{name}: {recommendation(by_method)}\n", flush=True)
    if args.json:
        with open(args.json, "w") as f:
            json.dump(every, f, indent=1)


if __name__ == "__main__":
    main()
