"""Do the sampled intervals hold at a tenth of the holes? Coverage tables per collection
(docs/holes.md, *Intervals at a tenth of the holes*, is regenerated from this script).

    python benchmarks/sampled_coverage.py robust03=../shared/data/robust03 dl19=/work/data/dl19 \\
        tar17=/work/data/tar17 --seeds 100 --shares 0.05,0.1,0.2 --json coverage.json > coverage.md

Each collection is a folder with ``qrels.txt`` and ``runs/`` (run files, gzipped or not); its qrels play the
assessors and the truth. Two designs, each drawn ``--seeds`` times per share:

* **Holes sampled, nothing judged before** (statAP's own setting, Aslam, Pavlu & Yilmaz
  2006; ``sample_inference.py``'s ``scratch``): every judged pair in the runs' top DEPTH is
  removed, SHARE of those holes drawn (``judged pool --strategy sample``) and "judged" from
  the full qrels, every run estimated from the one sample (``judged infer``). Per estimator
  (statAP, statNDCG@10): coverage of the 95% marginal intervals over runs x samples, the
  mean error and MAE against the full-judgment value, the mean half-width; the share of
  samples in which every run is inside its 95% simultaneous interval (the default of
  ``judged infer``) and their width against the marginal ones.
* **A machine-labelled pool corrected by people** (judged.analyses.holes.ppi, docs/machine-labels.md):
  a machine labels the depth-DEPTH pool, people judge a sample, P@10 is estimated. Samples of
  queries (every pool pair of a drawn query judged; SHARE of the queries, at least
  MIN_QUERIES) and of pairs (stratified by best rank; SHARE of the pool). Human-only and
  PPI++ with two stated machines, ``good`` (kappa about 0.7) and ``weak`` (kappa about 0.25,
  as low as real LLM labels against TREC assessors can be): coverage of the 95% intervals,
  over every run and over the runs near the ceiling (true P@10 >= 0.8), mean width, and the
  share of intervals of width 0.

Figures go to stdout as Markdown tables (``--json`` keeps every summary). Nothing here is
tuned: the seeds are 0..SEEDS-1 for every share and collection.
"""

from __future__ import annotations

import argparse
import glob
import json
import os
import sys
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "src"))
sys.path.insert(0, HERE)

from judged.core.conventions import Settings  # noqa: E402
from judged.core.data import Qrels  # noqa: E402
from judged.core.io import read_qrels, read_run  # noqa: E402
from judged.core.measures import Measure  # noqa: E402
from judged.analyses.holes.machine import MachineLabels  # noqa: E402
from judged.analyses.pooling.poolfile import PoolPair  # noqa: E402
from judged.analyses.holes.ppi import Design, Labels, units  # noqa: E402
from judged.analyses.holes.sampling import draw  # noqa: E402

import machine_labels as ml  # noqa: E402
from sample_inference import run_name, scratch_samples, summarise  # noqa: E402

DEPTH = 10
ESTIMATORS = ("statAP", "statNDCG@10")
PPI_MEASURE = "P@10"
MIN_QUERIES = 5
WEAK = {3: [[0.70, 0.20, 0.10], [0.35, 0.35, 0.30], [0.25, 0.30, 0.45]],
        4: [[0.70, 0.15, 0.10, 0.05], [0.35, 0.30, 0.25, 0.10], [0.20, 0.25, 0.35, 0.20],
            [0.15, 0.20, 0.30, 0.35]]}  # rows: the qrels' grade, columns: the weak machine's


def load(path: str):
    qrels = read_qrels(os.path.join(path, "qrels.txt"))
    files = sorted(glob.glob(os.path.join(path, "runs", "*")))
    if not files:
        raise SystemExit(f"{path}: no runs/*")
    return qrels, {run_name(f): read_run(f) for f in files}


def holes_sampled(full, runs: dict, share: float, seeds: list) -> dict:
    """The scratch protocol at one share: per estimator the summary of every run x sample."""
    rows, design = scratch_samples(full, runs, DEPTH, share, seeds, list(ESTIMATORS), pairs=True)
    out = summarise(rows)
    out["pairs"] = design.pop("pairs")
    out["design"] = design
    return out


def machine_grades(qrels, runs: list, seed: int = 0):
    """The depth pool's pairs, their qrels grade and two stated machines' grades."""
    rng = np.random.default_rng(seed)
    pool = ml.depth_pool(qrels, runs)
    nist = dict(zip(zip(qrels.qid.to_pylist(), qrels.docid.to_pylist()), qrels.grade.tolist()))
    keys = [k for k in pool if k in nist]
    truth = np.array([max(nist[k], 0) for k in keys])
    top = int(truth.max())
    judges = {}
    for name, C in (("good", ml.confusion_matrix("good", top + 1)), ("weak", np.array(WEAK[top + 1]))):
        u = rng.random(len(keys))
        judges[name] = (u[:, None] > C.cumsum(axis=1)[truth]).sum(axis=1).clip(0, top)
    return pool, keys, truth, judges


def ppi_p10(qrels, runs: list, shares, seeds: int) -> dict:
    """P@10 from a machine-labelled pool and a sample of queries or of pairs judged by people."""
    settings = Settings()
    m = Measure.parse(PPI_MEASURE)
    pool, keys, truth, judges = machine_grades(qrels, runs)
    qid = np.array([k[0] for k in keys], dtype=object)
    docid = np.array([k[1] for k in keys], dtype=object)
    truth_qrels = Qrels(qid, docid, truth, source="the qrels' labels of the depth pool")
    qlist = sorted(set(qid.tolist()))
    out = {"queries": len(qlist), "pool_pairs": len(keys), "samples": seeds, "machines": {}, "query_samples": {},
           "pair_samples": {}}
    rng = np.random.default_rng(1)
    cands = [PoolPair(q, d, pool[(q, d)][0], []) for q, d in keys]
    for name, grades in judges.items():
        out["machines"][name] = {"kappa": ml.kappa(truth, grades)[0]}
        machine = MachineLabels(Qrels(qid, docid, grades, source=f"machine-{name}"))
        per_run = [(units(Labels(truth_qrels, machine, Design.queries(qid, docid, qlist)), r, m, settings),
                    ml._truth(truth_qrels, r, m, settings)) for r in runs]
        for share in shares:
            count = max(MIN_QUERIES, int(round(share * len(qlist))))
            res = ml._score_queries(per_run, count, seeds, rng)
            out["query_samples"].setdefault(f"{share:.0%}", {"queries": count})[name] = {PPI_MEASURE: res}
        labels = Labels(truth_qrels, machine, Design.pairs(qid, docid, np.ones(len(keys), bool)))
        per_run = [(units(labels, r, m, settings), ml._truth(truth_qrels, r, m, settings)) for r in runs]
        for share in shares:
            budget = int(round(share * len(keys)))
            _, design = draw(cands, budget, 0, DEPTH)
            index = {(u.qid, u.docid): i for i, u in enumerate(design.units)}
            strata = np.array([design.units[index[k]].stratum for k in keys])
            sampled = ml._stratified_draws(strata, {sid: s.sampled for sid, s in design.strata.items()}, seeds, rng)
            res = ml._score(per_run, sampled, strata)
            out["pair_samples"].setdefault(f"{share:.0%}", {"pairs": budget})[name] = {PPI_MEASURE: res}
    return out


def collection(name: str, path: str, shares, seeds: int, designs, save) -> dict:
    """Every design at every share on one collection; ``save(out)`` after each step."""
    full, runs = load(path)
    out = {"path": path, "runs": len(runs), "queries": len(set(full.qid.to_pylist())), "holes": {}}
    if "p10" in designs:
        t = time.perf_counter()
        out["p10"] = ppi_p10(full, list(runs.values()), shares, seeds)
        save(out)
        print(f"{name}: P@10 from samples of queries and pairs, {time.perf_counter() - t:.0f}s", file=sys.stderr)
    for share in shares if "holes" in designs else ():
        t = time.perf_counter()
        out["holes"][f"{share:.0%}"] = holes_sampled(full, runs, share, list(range(seeds)))
        save(out)
        print(f"{name}: holes sampled at {share:.0%}, {seeds} samples, {time.perf_counter() - t:.0f}s", file=sys.stderr)
    return out


def merged(files) -> tuple:
    """(seeds, results) of several ``--json`` files, later ones adding shares and designs."""
    seeds, results = set(), {}
    for f in files:
        with open(f) as fh:
            data = json.load(fh)
        seeds.add(data["seeds"])
        for name, res in data["collections"].items():
            if "p10" in res:
                res["p10"].setdefault("samples", data["seeds"])
            into = results.setdefault(name, {"holes": {}})
            holes = {**into["holes"], **res.get("holes", {})}
            p10 = into.get("p10")
            if "p10" in res and p10:
                for design in ("query_samples", "pair_samples"):
                    res["p10"][design] = {**p10[design], **res["p10"][design]}
            into.update(res)
            into["holes"] = holes
    return "/".join(str(s) for s in sorted(seeds)), results


def misses(s: dict) -> str:
    """' (above / below)': the marginal misses by where the truth was (files saved before they were counted: '')."""
    return f" ({s['misses_truth_above']} / {s['misses_truth_below']})" if "misses_truth_above" in s else ""


def markdown(results: dict, seeds: int) -> str:
    lines = [f"Holes sampled (depth {DEPTH}, nothing judged before): coverage of the 95% marginal intervals, "
             "mean error, MAE, mean half-width; simultaneous: samples with every run inside (coverage of the "
             "intervals, width x marginal).", "",
             "| collection | share (judged of holes; samples) | estimator | marginal coverage (misses: truth above / below) | mean error | MAE | "
             "half-width | simultaneous: every run inside | simultaneous coverage (width x) |",
             "|---|---|---|---|---|---|---|---|---|"]
    for name, res in results.items():
        for share, block in sorted(res["holes"].items(), key=lambda kv: float(kv[0].rstrip("%"))):
            d = block["design"]
            for e in ESTIMATORS:
                s = block[e]
                lines.append(f"| {name} ({res['runs']} runs) | {share} ({d['judged']:,} of {d['holes']:,}; "
                             f"{d['samples']}) | {e} | "
                             f"{s['coverage']:.3f}{misses(s)} | {s['mean_error']:+.4f} | {s['mae']:.4f} | "
                             f"{s['mean_half_width']:.4f} | {s['seeds_with_every_run_in_simultaneous']:.0%} | "
                             f"{s['simultaneous_coverage']:.3f} ({s['width_vs_marginal']:.2f}) |")
    lines += ["", "Holes sampled: the intervals of the pairs' differences (`judged infer`'s decisions, symmetric): "
              "coverage over pairs x samples, misses with the truth above / below, share of pairs decided, "
              "decided the wrong way; share of intervals with Satterthwaite df < 3 (pairs, runs).", "",
              "| collection | share | estimator | pair intervals | coverage | misses above / below | decided | "
              "decided wrong | df < 3: pairs, runs |", "|---|---|---|---|---|---|---|---|---|"]
    for name, res in results.items():
        for share, block in sorted(res["holes"].items(), key=lambda kv: float(kv[0].rstrip("%"))):
            for e, s in block.get("pairs", {}).items():
                lines.append(f"| {name} | {share} | {e} | {s['pair_intervals']:,} | {s['pair_coverage']:.3f} | "
                             f"{s['misses_truth_above']} / {s['misses_truth_below']} | {s['decided']:.3f} | "
                             f"{s['decided_wrong']} | {s['pair_df_below_3']:.3f}, {s['run_df_below_3']:.3f} |")
    lines += ["", f"{PPI_MEASURE} from a machine-labelled pool: coverage of the 95% intervals over every run x "
              "sample and over the runs with true P@10 >= 0.8 (how many), mean width, share of width 0.", "",
              "| collection | people judged (share; samples) | estimator | machine (kappa) | coverage | at the ceiling | width | "
              "width 0 |", "|---|---|---|---|---|---|---|---|"]
    for name, res in results.items():
        p = res.get("p10")
        for design, size in (("query_samples", "queries"), ("pair_samples", "pairs")) if p else ():
            for share, block in sorted(p[design].items(), key=lambda kv: float(kv[0].rstrip("%"))):
                for machine in p["machines"]:
                    for e in (("human", "ppi++") if machine == "good" else ("ppi++",)):
                        s = block[machine][PPI_MEASURE][e]
                        c = s.get("ceiling")
                        at = f"{c['coverage']:.3f} ({c['runs']})" if c else "none"
                        who = "human-only" if e == "human" else e
                        mach = "" if e == "human" else f"{machine} ({p['machines'][machine]['kappa']:.2f})"
                        lines.append(f"| {name} | {block[size]} {size} ({share}; {p.get('samples', seeds)}) | "
                                     f"{who} | {mach} | "
                                     f"{s['coverage']:.3f} | {at} | {s['width']:.3f} | {s['zero_width']:.3f} |")
    return "\n".join(lines)


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("collections", nargs="*", metavar="NAME=PATH", help="a folder with qrels.txt and runs/ (run files)")
    p.add_argument("--seeds", type=int, default=100)
    p.add_argument("--shares", default="0.05,0.1,0.2")
    p.add_argument("--designs", default="p10,holes", help="p10 (machine-labelled pool), holes (statAP, statNDCG)")
    p.add_argument("--json", default=None, help="write every summary here (after every step)")
    p.add_argument("--tables", nargs="+", metavar="JSON", help="print the tables of these --json files, run nothing")
    args = p.parse_args(argv)
    if args.tables:
        seeds, results = merged(args.tables)
        print(markdown(results, seeds))
        return 0
    if not args.collections:
        p.error("give NAME=PATH collections, or --tables")
    shares = [float(x) for x in args.shares.split(",")]
    designs = set(args.designs.split(","))
    results = {}

    def save(out):
        results[name] = out
        if args.json:
            with open(args.json, "w") as fh:
                json.dump({"seeds": args.seeds, "depth": DEPTH, "collections": results}, fh, indent=1)

    for spec in args.collections:
        name, _, path = spec.partition("=")
        if not path:
            p.error(f"{spec}: expected NAME=PATH")
        results[name] = collection(name, path, shares, args.seeds, designs, save)
    print(markdown(results, args.seeds))
    return 0


if __name__ == "__main__":
    sys.exit(main())
