"""Judging a sample of the holes on a real collection: how close are the sampled estimates
(judged.analyses.holes.inference) to the full-judgment values, do their intervals hold, and is the
"when to stop judging" rule right?

Protocols (the collection's qrels play the assessors; a hole they never judged is not
relevant, as in the full-judgment value):

* ``half``: a random half of the judged pairs in the runs' top DEPTH is removed (seeded);
  the holes of the runs' top DEPTH are sampled (SHARE of them, ``judged pool --strategy
  sample``) and "judged" with the full qrels; every run is estimated from that one sample.
* ``scratch``: every judged pair in the runs' top DEPTH is removed: the sample is the only
  judging of the pool (statAP's own setting, Aslam, Pavlu & Yilmaz 2006); one reduced
  collection, each seed a fresh sample of SHARE of its holes, every run estimated from it.
* ``loro``: leave one run out: the judgments only that run contributed to the top-DEPTH
  pool of the runs are removed, SHARE of that run's holes is sampled, and that run is
  estimated.

For each protocol and seed: per run the full-qrels value, the estimate and its interval.
Summary: interval coverage, mean error, mean absolute error, mean half-width, and how
often every run is inside its interval, marginal (95% each) and simultaneous (95% for
all runs of an estimator together, ``Estimates.simultaneous``; with the width ratio).
``--bias N`` measures the estimators' bias on one reduced collection over N samples.
``--stop`` checks the stopping rule on the first seeds of ``half``: pairs said to be
decided (is the full-judgment order the estimated one?), and pairs said to need m more
judgments (judged again with the sample grown by m: how often is the order then decided,
and decided right?).

    python benchmarks/sample_inference.py --qrels ../shared/data/robust03/qrels.txt \\
        --runs ../shared/data/robust03/runs/*.gz --depth 100 --share 0.1 --seeds 20 --stop
    python benchmarks/sample_inference.py --qrels /work/data/dl19/qrels.txt --runs /work/data/dl19/runs/*.gz \\
        --depth 10 --share 0.1 --seeds 20 --stop
    python benchmarks/sample_inference.py --qrels ../shared/data/robust03/qrels.txt \\
        --runs ../shared/data/robust03/runs/*.gz --depth 10 --share 0.1 --seeds 20 --protocols half scratch
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "src"))

from judged.core.align import align  # noqa: E402
from judged.core.data import Qrels  # noqa: E402
from judged.analyses.holes.inference import judgments_to_decide, projected_variance, repeated_samples  # noqa: E402
from judged.core.io import read_qrels, read_run  # noqa: E402
from judged.analyses.pooling.strategies import candidates  # noqa: E402


def run_name(path: str) -> str:
    base = os.path.basename(path)
    for prefix in ("input.", "dl-19-official-input."):
        if base.startswith(prefix):
            base = base[len(prefix):]
    return base[:-3] if base.endswith(".gz") else base


def judged_top(full, runs: dict, depth: int) -> dict:
    """(qid, docid) -> the runs whose top ``depth`` hold this judged pair."""
    out: dict = {}
    for name, run in runs.items():
        a = align(full, run)
        top = a.ranked.top(depth)
        j = top.judged
        for key in zip(a.qids[top.q[j]].tolist(), a.docids(top.row[j])):
            out.setdefault(key, set()).add(name)
    return out


def without(full, drop: set) -> Qrels:
    q, d, g = full.qid.to_pylist(), full.docid.to_pylist(), full.grade.tolist()
    keep = [i for i, k in enumerate(zip(q, d)) if k not in drop]
    return Qrels([q[i] for i in keep], [d[i] for i in keep], np.array([g[i] for i in keep], np.int64), source="base")


def summarise(rows: list) -> dict:
    """rows: dicts estimator, run, seed, truth, estimate, low, high. Per estimator: coverage
    (and the misses with the truth above the interval and below it), errors, widths."""
    out = {}
    for e in sorted({r["estimator"] for r in rows}):
        rs = [r for r in rows if r["estimator"] == e]
        err = np.array([r["estimate"] - r["truth"] for r in rs])
        cov = np.array([r["low"] <= r["truth"] <= r["high"] for r in rs])
        half = np.array([(r["high"] - r["low"]) / 2 for r in rs])
        seeds = sorted({r["seed"] for r in rs})
        every = np.mean([all(r["low"] <= r["truth"] <= r["high"] for r in rs if r["seed"] == s) for s in seeds])
        out[e] = {"intervals": len(rs), "coverage": float(cov.mean()),
                  "misses_truth_above": int(sum(r["truth"] > r["high"] for r in rs)),
                  "misses_truth_below": int(sum(r["truth"] < r["low"] for r in rs)), "mean_error": float(err.mean()),
                  "mae": float(np.abs(err).mean()), "mean_half_width": float(half.mean()),
                  "seeds_with_every_run_covered": float(every), "seeds": len(seeds)}
        if "simultaneous_low" in rs[0]:
            inside = lambda r: r["simultaneous_low"] <= r["truth"] <= r["simultaneous_high"]  # noqa: E731
            sim_half = np.array([(r["simultaneous_high"] - r["simultaneous_low"]) / 2 for r in rs])
            out[e].update({
                "simultaneous_coverage": float(np.mean([inside(r) for r in rs])),
                "seeds_with_every_run_in_simultaneous": float(np.mean([all(inside(r) for r in rs if r["seed"] == s)
                                                                       for s in seeds])),
                "simultaneous_mean_half_width": float(sim_half.mean()),
                "width_vs_marginal": float(sim_half.mean() / half.mean()),
                "mean_critical_value": float(np.mean([r["critical"] for r in rs])),
                "simultaneous_methods": sorted({r["simultaneous_method"] for r in rs})})
    if rows and "simultaneous_low" in rows[0]:
        seeds = sorted({r["seed"] for r in rows})
        out["every_estimator"] = {
            "seeds_with_every_interval_marginal": float(np.mean([all(r["low"] <= r["truth"] <= r["high"]
                                                                     for r in rows if r["seed"] == s)
                                                                 for s in seeds])),
            "seeds_with_every_interval_simultaneous": float(np.mean([
                all(r["simultaneous_low"] <= r["truth"] <= r["simultaneous_high"] for r in rows if r["seed"] == s)
                for s in seeds]))}
    return out


def pair_summary(E, truth: dict, level: float = 0.95) -> dict:
    """Per estimator, over every pair of runs a, b and every state (sample): the interval of
    the difference a - b that ``judged infer`` decides the order by (Inference.decide:
    d -+ c se, symmetric, c the bias-aware t critical value with Satterthwaite's df), against
    the full-judgment difference: coverage, misses with the truth above and below, the
    share decided (the interval excludes 0) and decided the wrong way (the truth's sign
    not the estimate's, or the truth 0). With the degrees of freedom: the share of pair
    and of run intervals with df < 3, and their medians."""
    out = {}
    for e in E.estimators:
        key = str(e)
        cover, above, decided, wrong, pair_df, run_df = [], [], [], [], [], []
        for i, a in enumerate(E.runs):
            run_df.append(E.interval(e, a, level)[4])
            for b in E.runs[i + 1:]:
                d, v_h = E.difference(e, a, b)
                se, df = np.sqrt(v_h.sum(1)), E.df(v_h)
                half = E.half_width(se, df, E.difference_bias(e, a, b), level)
                t = truth[key][a] - truth[key][b]
                cover.append(np.abs(d - t) <= half)
                above.append(t > d + half)
                yes = np.abs(d) > half
                decided.append(yes)
                wrong.append(yes & (np.sign(d) != np.sign(t)))
                pair_df.append(df)
        cover, above, decided, wrong = (np.concatenate(x) for x in (cover, above, decided, wrong))
        pair_df, run_df = np.concatenate(pair_df), np.concatenate(run_df)
        out[key] = {"pair_intervals": int(cover.size), "pair_coverage": float(cover.mean()),
                    "misses_truth_above": int(above.sum()), "misses_truth_below": int((~cover & ~above).sum()),
                    "decided": float(decided.mean()), "decided_wrong": int(wrong.sum()),
                    "pair_df_below_3": float(np.mean(pair_df < 3)), "pair_df_median": float(np.median(pair_df)),
                    "run_df_below_3": float(np.mean(run_df < 3)), "run_df_median": float(np.median(run_df))}
    return out


def protocol_half(full, runs, depth, share, seeds, estimators, stop: int, power: float):
    pooled = sorted(judged_top(full, runs, depth))
    rows, stop_rows = [], []
    for seed in seeds:
        rng = np.random.default_rng(10_000 + seed)
        drop = {pooled[i] for i in np.flatnonzero(rng.random(len(pooled)) < 0.5)}
        base = without(full, drop)
        holes = len(candidates({n: align(base, r) for n, r in runs.items()}, depth))
        budget = max(3, int(round(share * holes)))
        t = time.perf_counter()
        E, truth, design = repeated_samples(base, full, runs, depth, budget, [seed], estimators)
        secs = time.perf_counter() - t
        for e in E.estimators:
            joint = E.simultaneous(e)
            for j, r in enumerate(E.runs):
                est, se, lo, hi, df = E.interval(e, r)
                rows.append({"estimator": str(e), "run": r, "seed": seed, "truth": truth[str(e)][r],
                             "estimate": float(est[0]), "low": float(lo[0]), "high": float(hi[0]),
                             "simultaneous_low": float(joint.low[0, j]), "simultaneous_high": float(joint.high[0, j]),
                             "critical": float(joint.critical[0]), "simultaneous_method": joint.method[0],
                             "holes": holes, "judged": budget, "removed": len(drop), "seconds": secs,
                             "strata": len(design.strata)})
        if seed < seeds[0] + stop:
            stop_rows += check_stop(E, truth, base, full, runs, depth, budget, seed, power)
        print(f"half seed {seed}: {holes} holes, {budget} judged, {len(design.strata)} strata, {secs:.1f}s",
              file=sys.stderr)
    return rows, stop_rows


def scratch_samples(full, runs, depth, share, seeds, estimators, pairs: bool = False):
    """Nothing of the runs' top-``depth`` pool judged before the sample: one reduced
    collection, one sample of ``share`` of its holes per seed (drawn together). Returns
    (rows, design: holes, judged, strata, seconds; with ``pairs`` also ``pairs``, the
    intervals of the runs' differences, :func:`pair_summary`)."""
    base = without(full, set(judged_top(full, runs, depth)))
    holes = len(candidates({n: align(base, r) for n, r in runs.items()}, depth))
    budget = max(3, int(round(share * holes)))
    t = time.perf_counter()
    E, truth, design = repeated_samples(base, full, runs, depth, budget, seeds, estimators)
    secs = time.perf_counter() - t
    rows = []
    for e in E.estimators:
        joint = E.simultaneous(e)
        for j, r in enumerate(E.runs):
            est, se, lo, hi, df = E.interval(e, r)
            for s, seed in enumerate(seeds):
                rows.append({"estimator": str(e), "run": r, "seed": seed, "truth": truth[str(e)][r],
                             "estimate": float(est[s]), "low": float(lo[s]), "high": float(hi[s]),
                             "simultaneous_low": float(joint.low[s, j]), "simultaneous_high": float(joint.high[s, j]),
                             "critical": float(joint.critical[s]), "simultaneous_method": joint.method[s],
                             "holes": holes, "judged": budget, "removed": holes, "seconds": secs / len(seeds),
                             "strata": len(design.strata)})
    out = {"holes": holes, "judged": budget, "strata": len(design.strata), "samples": len(seeds),
           "seconds": round(secs, 1)}
    return rows, {**out, "pairs": pair_summary(E, truth)} if pairs else out


def protocol_scratch(full, runs, depth, share, seeds, estimators):
    rows, d = scratch_samples(full, runs, depth, share, seeds, estimators)
    print(f"scratch: {d['holes']} holes, {d['judged']} judged per sample, {d['strata']} strata, {len(seeds)} samples, "
          f"{d['seconds']:.1f}s", file=sys.stderr)
    return rows


def growth(n, N, more: int) -> float:
    """The factor by which every stratum's sample grows (capped at N_h) to add ``more``
    judgments: the rule's projection (judged.analyses.holes.inference.projected_variance)."""
    lo, hi = 0.0, float(np.max(N / np.maximum(n, 1)))
    for _ in range(60):
        mid = (lo + hi) / 2
        if projected_variance(np.zeros(len(n)), n, N, mid)[1] < more:
            lo = mid
        else:
            hi = mid
    return hi


def check_stop(E, truth, base, full, runs, depth, budget, seed, power, repeats: int = 10, most: int = 6):
    """Decided pairs: is the full-judgment order the estimated one? Undecided pairs with a
    finite m: ``repeats`` fresh samples of the same strata grown by m judgments (as the rule
    projects): decided, and right?"""
    out = []
    for e in E.estimators:
        key = str(e)
        names = E.runs
        undecided = []
        for i, a in enumerate(names):
            for b in names[i + 1:]:
                d, vh = E.difference(e, a, b)
                dec = judgments_to_decide(float(d[0]), vh[0], E.n[0], E.N, power=power, df=E.df(vh)[0],
                                          bias=float(E.difference_bias(e, a, b)[0]),
                                          v_projected=E.difference(e, a, b, plain=True, floor=False)[1][0])
                true_sign = np.sign(truth[key][a] - truth[key][b])
                if dec["decided"]:
                    out.append({"estimator": key, "seed": seed, "kind": "decided", "a": a, "b": b,
                                "right": bool(np.sign(dec["difference"]) == true_sign)})
                elif dec["more"] is not None:
                    undecided.append((abs(dec["difference"]) / max(dec["se"], 1e-12), a, b, dec, true_sign))
        # the pairs nearest to being decided first (the rule's premise: difference as estimated)
        for _, a, b, dec, true_sign in sorted(undecided, reverse=True)[:most]:
            E2, _, _ = repeated_samples(base, full, runs, depth, budget,
                                        range(50_000 + seed * 100, 50_000 + seed * 100 + repeats), [key],
                                        estimate={a, b}, grow=growth(E.n[0], E.N, dec["more"]))
            d2, vh2 = E2.difference(key, a, b)
            b2 = E2.difference_bias(key, a, b)
            decided = [judgments_to_decide(float(d2[s]), vh2[s], E2.n[s], E2.N, power=power, df=E2.df(vh2)[s],
                                           bias=float(b2[s]))["decided"] for s in range(repeats)]
            right = [dd and np.sign(d2[s]) == true_sign for s, dd in enumerate(decided)]
            out.append({"estimator": key, "seed": seed, "kind": "more", "a": a, "b": b, "more": dec["more"],
                        "decided": float(np.mean(decided)), "decided_right": float(np.mean(right)),
                        "estimated_difference": dec["difference"], "true_difference": truth[key][a] - truth[key][b]})
    return out


def protocol_bias(full, runs, depth, share, samples: int, estimators):
    """The estimators' bias at this sample size: one reduced collection (``half``'s seed 0),
    ``samples`` samples of its holes; per run the mean estimate minus the truth, with and
    without the jackknife bias correction, in standard errors of that mean and in standard
    deviations of one sample's estimate."""
    pooled = sorted(judged_top(full, runs, depth))
    rng = np.random.default_rng(10_000)
    base = without(full, {pooled[i] for i in np.flatnonzero(rng.random(len(pooled)) < 0.5)})
    holes = len(candidates({n: align(base, r) for n, r in runs.items()}, depth))
    budget = max(3, int(round(share * holes)))
    E, truth, _ = repeated_samples(base, full, runs, depth, budget, range(samples), estimators)
    out = {"holes": holes, "judged": budget, "samples": samples}
    for e in E.estimators:
        key = str(e)
        for kind, values in (("corrected", E.mean[key]), ("uncorrected", E.plain[key])):
            err = np.array([values[r].mean() - truth[key][r] for r in E.runs])
            sd = np.array([values[r].std(ddof=1) for r in E.runs])
            z = err / (sd / np.sqrt(samples))
            out[f"{key} {kind}"] = {"mean_error": float(err.mean()), "bias_in_sd": float(np.mean(err / sd)),
                                    "runs_beyond_3_se": int((np.abs(z) > 3).sum()), "runs": len(z),
                                    "runs_below_truth": int((err < 0).sum())}
    return out


def protocol_loro(full, runs, depth, share, seeds, estimators):
    contributors = judged_top(full, runs, depth)
    rows = []
    for name, run in runs.items():
        unique = {k for k, who in contributors.items() if who == {name}}
        base = without(full, unique)
        holes = len(candidates({name: align(base, run)}, depth))
        if holes < 3:
            continue
        budget = max(3, int(round(share * holes)))
        t = time.perf_counter()
        E, truth, design = repeated_samples(base, full, {name: run}, depth, budget, list(seeds), estimators)
        secs = time.perf_counter() - t
        for e in E.estimators:
            est, se, lo, hi, df = E.interval(e, name)
            for s, seed in enumerate(seeds):
                rows.append({"estimator": str(e), "run": name, "seed": seed, "truth": truth[str(e)][name],
                             "estimate": float(est[s]), "low": float(lo[s]), "high": float(hi[s]),
                             "holes": holes, "judged": budget, "removed": len(unique), "seconds": secs})
        print(f"loro {name}: {len(unique)} removed, {holes} holes, {budget} judged, {secs:.1f}s", file=sys.stderr)
    return rows


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--qrels", required=True)
    p.add_argument("--runs", nargs="+", required=True)
    p.add_argument("--depth", type=int, default=100, help="pool depth (holes are counted in the runs' top DEPTH)")
    p.add_argument("--share", type=float, default=0.1, help="share of the holes judged (default 0.1)")
    p.add_argument("--seeds", type=int, default=20)
    p.add_argument("--estimators", nargs="+", default=["statNDCG@10", "statAP"])
    p.add_argument("--protocols", nargs="+", default=["half", "loro"], choices=["half", "scratch", "loro"])
    p.add_argument("--stop", type=int, default=0, metavar="S", help="check the stopping rule on the first S seeds")
    p.add_argument("--power", type=float, default=0.8)
    p.add_argument("--bias", type=int, default=0, metavar="N",
                   help="also measure the bias: N samples of half's seed-0 collection, corrected and not")
    p.add_argument("--json", default=None, help="write every row and the summaries here")
    args = p.parse_args(argv)

    full = read_qrels(args.qrels)
    runs = {run_name(path): read_run(path) for path in sorted(args.runs)}
    seeds = list(range(args.seeds))
    report = {"qrels": args.qrels, "runs": len(runs), "depth": args.depth, "share": args.share, "seeds": args.seeds}
    if "half" in args.protocols:
        rows, stop_rows = protocol_half(full, runs, args.depth, args.share, seeds, args.estimators, args.stop,
                                        args.power)
        report["half"] = {"summary": summarise(rows), "rows": rows, "stop": stop_rows}
        print_table("half of the judged top-%d pool removed, seed %d" % (args.depth, seeds[0]),
                    [r for r in rows if r["seed"] == seeds[0]])
        print_summary("half", report["half"]["summary"], rows)
        if stop_rows:
            print_stop(stop_rows)
    if "scratch" in args.protocols:
        rows = protocol_scratch(full, runs, args.depth, args.share, seeds, args.estimators)
        report["scratch"] = {"summary": summarise(rows), "rows": rows}
        print_table("nothing of the top-%d pool judged before, seed %d" % (args.depth, seeds[0]),
                    [r for r in rows if r["seed"] == seeds[0]])
        print_summary("scratch", report["scratch"]["summary"], rows)
    if "loro" in args.protocols:
        rows = protocol_loro(full, runs, args.depth, args.share, seeds, args.estimators)
        report["loro"] = {"summary": summarise(rows), "rows": rows}
        print_table("leave one run out, seed %d" % seeds[0], [r for r in rows if r["seed"] == seeds[0]])
        print_summary("loro", report["loro"]["summary"], rows)
    if args.bias:
        report["bias"] = protocol_bias(full, runs, args.depth, args.share, args.bias, args.estimators)
        b = report["bias"]
        print(f"\nbias: {b['samples']} samples of {b['judged']} of {b['holes']} holes (half's seed-0 collection)")
        for name, x in b.items():
            if isinstance(x, dict):
                print(f"  {name:24s} mean error {x['mean_error']:+.4f} ({x['bias_in_sd']:+.2f} sd of one sample); "
                      f"{x['runs_beyond_3_se']}/{x['runs']} runs beyond 3 SE, {x['runs_below_truth']} below the truth")
    if args.json:
        with open(args.json, "w") as fh:
            json.dump(report, fh, indent=1)
    return 0


def print_table(title: str, rows: list) -> None:
    print(f"\n{title}")
    joint = bool(rows) and "simultaneous_low" in rows[0]
    print(f"{'estimator':12s} {'run':22s} {'full':>7s} {'estimate':>8s} {'marginal 95%':>18s}  in"
          + (f" {'simultaneous 95%':>18s}  in" if joint else ""))
    for r in rows:
        inside = r["low"] <= r["truth"] <= r["high"]
        line = (f"{r['estimator']:12s} {r['run'][:22]:22s} {r['truth']:7.4f} {r['estimate']:8.4f} "
                f"[{r['low']:.4f}, {r['high']:.4f}]  {'yes' if inside else 'NO '}")
        if joint:
            inside = r["simultaneous_low"] <= r["truth"] <= r["simultaneous_high"]
            line += f" [{r['simultaneous_low']:.4f}, {r['simultaneous_high']:.4f}]  {'yes' if inside else 'NO'}"
        print(line)


def print_summary(protocol: str, summary: dict, rows: list) -> None:
    judged = np.mean([r["judged"] for r in rows])
    holes = np.mean([r["holes"] for r in rows])
    print(f"\n{protocol}: {len({r['seed'] for r in rows})} seeds, on average {judged:.0f} of {holes:.0f} holes judged")
    for e, s in summary.items():
        if e == "every_estimator":
            print(f"  every interval of every estimator inside: {s['seeds_with_every_interval_marginal']:.0%} of "
                  f"seeds (marginal), {s['seeds_with_every_interval_simultaneous']:.0%} (simultaneous per estimator)")
            continue
        print(f"  {e:12s} coverage {s['coverage']:.3f} of {s['intervals']} intervals; mean error "
              f"{s['mean_error']:+.4f}, MAE {s['mae']:.4f}, mean half-width {s['mean_half_width']:.4f}; "
              f"every run covered in {s['seeds_with_every_run_covered']:.0%} of seeds")
        if "simultaneous_coverage" in s:
            print(f"  {'':12s} simultaneous: every run covered in {s['seeds_with_every_run_in_simultaneous']:.0%} of "
                  f"seeds (coverage {s['simultaneous_coverage']:.3f}), mean half-width "
                  f"{s['simultaneous_mean_half_width']:.4f} ({s['width_vs_marginal']:.2f} x marginal), mean critical "
                  f"value {s['mean_critical_value']:.2f} ({', '.join(s['simultaneous_methods'])})")


def print_stop(rows: list) -> None:
    print("\nwhen to stop judging")
    for e in sorted({r["estimator"] for r in rows}):
        dec = [r for r in rows if r["estimator"] == e and r["kind"] == "decided"]
        more = [r for r in rows if r["estimator"] == e and r["kind"] == "more"]
        if dec:
            print(f"  {e}: {len(dec)} pairs decided at 95%: full-judgment order agrees for "
                  f"{np.mean([r['right'] for r in dec]):.1%}")
        if more:
            print(f"  {e}: {len(more)} undecided pairs, sample grown by the m said (median m "
                  f"{np.median([r['more'] for r in more]):.0f}): decided in {np.mean([r['decided'] for r in more]):.0%}"
                  f" of fresh samples, decided the right way in {np.mean([r['decided_right'] for r in more]):.0%}")


if __name__ == "__main__":
    sys.exit(main())
