"""A machine-labelled judging campaign replayed on a real collection (an experiment, not a test).

    python benchmarks/machine_labels.py robust03 [--seeds 300] [--plot docs/img]
    python benchmarks/machine_labels.py /work/data/dl19 --qrels qrels.txt --runs 'runs/*.gz'

The situation of a new test collection judged the way TREC RAG 2024 did: a machine judge
labels the whole depth-10 pool of the runs, people judge a random sample of it, and the
measures are estimated from both. The people are simulated by the collection's own qrels
(NIST's labels of the pool pairs: the truth, and what an assessor answers when asked); a
pool pair NIST never judged stays a hole. The estimand is each run's measure with the
whole pool judged by the people (qrels = NIST's labels of the depth-10 pool).

Machine judges (seeded, stated):

* ``good`` and ``lenient``: each label drawn from a stated confusion matrix (rows: NIST's
  grade; :data:`CONFUSION`), the lenient one calling far too much relevant;
* ``popular``: errors that depend on the document: a document many runs retrieved is called
  relevant more often when it is not, one few runs retrieved is missed more often when it is
  (P(false relevant) = 0.05 + 0.35 s, P(missed) = 0.05 + 0.35 (1 - s), s the share of runs
  with it in their top 10); a relevant label keeps NIST's grade 70% of the time, else a
  neighbouring relevant grade; a false relevant label is grade 1.

Designs, each replayed over ``--seeds`` draws: pairs (``judged pool --strategy sample``'s
stratified design, share of the pool) for P@10 and DCG@10; queries (``--strategy
sample-queries``) for nDCG@10 and AP@10. Per design and machine: the agreement (kappa), and
per estimator (human-only, PPI, PPI++) the coverage of the 95% intervals over runs x seeds,
the mean width, and the mean absolute error of the point estimate.

Machine-ordered pools (``pools``): the people first judge a warm-up of WARMUP_PER_QUERY
random pool pairs per query (the same for every strategy; ``disagreement`` learns the
machine's errors from it), then the rest of the pool in the order of ``judged pool
--strategy depth | machine | disagreement``. Per total budget: the mean absolute nDCG@10
error over the runs (holes as not relevant, the judged score), Kendall's tau of the run
ranking, the share of the pool's relevant pairs found, all against the whole pool judged,
and the same error when the pairs not yet judged are machine-filled (the plug-in).
"""

from __future__ import annotations

import argparse
import glob
import json
import os
import sys
import time

import numpy as np

from judged.core.align import align
from judged.core.conventions import Settings
from judged.core.data import Qrels
from judged.core.io import read_qrels, read_run
from judged.analyses.assessor_agreement import kappa_from_confusion
from judged.analyses.holes.machine import MachineLabels
from judged.core.measures import Measure
from judged.analyses.pooling.poolfile import PoolPair
from judged.analyses.holes.ppi import Design, Labels, estimate, units
from judged.analyses.holes.sampling import draw

ROBUST03 = "/work/shared/data/robust03"
DEPTH = 10
ESTIMATORS = ("human", "ppi", "ppi++")
PAIR_MEASURES = ("P@10", "DCG@10")
QUERY_MEASURES = ("nDCG@10", "AP@10", "P@10")
POOL_STRATEGIES = ("depth", "machine", "disagreement")
POOL_MEASURE = "nDCG@10"
WARMUP_PER_QUERY = 2


CONFUSION = {  # stated machines, rows: NIST's grade, columns: the machine's
    ("good", 3): [[0.93, 0.05, 0.02], [0.15, 0.70, 0.15], [0.03, 0.17, 0.80]],
    ("lenient", 3): [[0.80, 0.15, 0.05], [0.20, 0.55, 0.25], [0.05, 0.25, 0.70]],
    ("good", 4): [[0.90, 0.07, 0.02, 0.01], [0.12, 0.70, 0.15, 0.03], [0.03, 0.12, 0.72, 0.13],
                  [0.01, 0.04, 0.20, 0.75]],
    ("lenient", 4): [[0.80, 0.12, 0.06, 0.02], [0.25, 0.45, 0.25, 0.05], [0.08, 0.20, 0.55, 0.17],
                     [0.03, 0.07, 0.30, 0.60]],
}


def confusion_matrix(name: str, grades: int) -> np.ndarray:
    return np.array(CONFUSION[(name, grades)])


def load(path, qrels_name, runs_glob):
    qrels = read_qrels(os.path.join(path, qrels_name))
    runs = [read_run(f) for f in sorted(glob.glob(os.path.join(path, runs_glob)))]
    return qrels, runs


def depth_pool(qrels, runs):
    """The depth-10 pool: (qid, docid) -> (best rank, runs that ranked it in their top 10)."""
    pool = {}
    for r in runs:
        a = align(qrels, r, Settings())
        top = a.ranked.top(DEPTH)
        for q, rank, d in zip(a.qids[top.q].tolist(), (top.pos + 1).tolist(), a.docids(top.row)):
            best, n = pool.get((q, d), (rank, 0))
            pool[(q, d)] = (min(best, rank), n + 1)
    return pool


def machines(qrels, pool, n_runs, rng):
    """The two simulated judges' grades for every pool pair NIST judged."""
    nist = dict(zip(zip(qrels.qid.to_pylist(), qrels.docid.to_pylist()), qrels.grade.tolist()))
    keys = [k for k in pool if k in nist]
    truth = np.array([max(nist[k], 0) for k in keys])
    top = int(truth.max())
    out = {}
    for name in ("good", "lenient"):
        C = confusion_matrix(name, top + 1)
        u = rng.random(len(keys))
        out[name] = (u[:, None] > C.cumsum(axis=1)[truth]).sum(axis=1).clip(0, top)
    share = np.array([pool[k][1] / n_runs for k in keys])
    rel = truth >= 1
    p_rel = np.where(rel, 1 - (0.05 + 0.35 * (1 - share)), 0.05 + 0.35 * share)
    says = rng.random(len(keys)) < p_rel
    keep = rng.random(len(keys)) < 0.7
    shift = np.where(rng.random(len(keys)) < 0.5, -1, 1)
    graded = np.where(keep, truth, np.clip(truth + shift, 1, top))
    out["popular"] = np.where(says, np.where(rel, graded, 1), 0)
    return keys, truth, out


def kappa(truth, machine):
    k = int(max(truth.max(), machine.max())) + 1
    c = np.zeros((k, k))
    np.add.at(c, (truth, machine), 1)
    return float(kappa_from_confusion(c)), float(kappa_from_confusion(c, "linear"))


def replay(qrels, runs, seeds: int, shares, query_counts, seed: int = 0) -> dict:
    rng = np.random.default_rng(seed)
    pool = depth_pool(qrels, runs)
    keys, truth, judges = machines(qrels, pool, len(runs), rng)
    qid = np.array([k[0] for k in keys], dtype=object)
    docid = np.array([k[1] for k in keys], dtype=object)
    truth_qrels = Qrels(qid, docid, truth, source="NIST labels of the depth-10 pool")
    out = {"runs": len(runs), "queries": len(set(qid.tolist())), "pool_pairs": len(pool), "population": len(keys),
           "relevant_share": float((truth >= 1).mean()), "machines": {}, "pairs": {}, "queries_design": {}}
    settings = Settings()
    everyone = Design.pairs(qid, docid, np.ones(len(keys), bool))
    for name, grades in judges.items():
        ku, kl = kappa(truth, grades)
        out["machines"][name] = {"kappa": ku, "kappa_linear": kl,
                                 "relevant_share": float((grades >= 1).mean())}
        machine = MachineLabels(Qrels(qid, docid, grades, source=f"machine-{name}"))
        labels = Labels(truth_qrels, machine, everyone)
        # pairs: the units are the same for every draw; only the sample changes
        cands = [PoolPair(q, d, pool[(q, d)][0], []) for q, d in keys]
        cache = {mname: [(units(labels, r, Measure.parse(mname), settings),
                          _truth(truth_qrels, r, Measure.parse(mname), settings)) for r in runs]
                 for mname in PAIR_MEASURES}
        for share in shares:
            budget = int(round(share * len(keys)))
            _, design = draw(cands, budget, 0, DEPTH)
            index = {(u.qid, u.docid): i for i, u in enumerate(design.units)}
            order = np.array([index[k] for k in keys])
            strata = np.array([design.units[i].stratum for i in order])
            n_h = {sid: s.sampled for sid, s in design.strata.items()}
            sampled = _stratified_draws(strata, n_h, seeds, rng)
            res = {mname: _score(cache[mname], sampled, strata) for mname in PAIR_MEASURES}
            out["pairs"].setdefault(f"{share:.0%}", {"sampled_pairs": budget, "strata": len(n_h)})[name] = res
        # queries
        qlist = sorted(set(qid.tolist()))
        labels_q = Labels(truth_qrels, machine, Design.queries(qid, docid, qlist))
        cache = {mname: [(units(labels_q, r, Measure.parse(mname), settings),
                          _truth(truth_qrels, r, Measure.parse(mname), settings)) for r in runs]
                 for mname in QUERY_MEASURES}
        for count in query_counts:
            res = {mname: _score_queries(cache[mname], count, seeds, rng) for mname in QUERY_MEASURES}
            out["queries_design"].setdefault(f"{count}", {"sampled_queries": count})[name] = res
    return out


def replay_pools(qrels, runs, budgets, seed: int = 0) -> dict:
    """Machine-ordered pools against depth pooling (see the module doc): per machine,
    strategy and total budget, nDCG@10 error, tau and relevant found."""
    from scipy.stats import kendalltau

    from judged.analyses.pooling.strategies import pool as make_pool

    rng = np.random.default_rng(seed)
    pool = depth_pool(qrels, runs)
    keys, truth, judges = machines(qrels, pool, len(runs), rng)  # the same judges as replay() (same seed)
    nist = dict(zip(keys, truth.tolist()))
    qid = np.array([k[0] for k in keys], dtype=object)
    docid = np.array([k[1] for k in keys], dtype=object)
    settings = Settings()
    m = Measure.parse(POOL_MEASURE)
    full = Qrels(qid, docid, truth, source="NIST labels of the depth-10 pool")
    want = np.array([_truth(full, r, m, settings) for r in runs])
    # the warm-up: WARMUP_PER_QUERY random pool pairs of every query
    by_q = {}
    for i, q in enumerate(qid.tolist()):
        by_q.setdefault(q, []).append(i)
    warm = sorted(i for q, idx in by_q.items()
                  for i in rng.choice(idx, size=min(WARMUP_PER_QUERY, len(idx)), replace=False).tolist())
    warm_keys = [keys[i] for i in warm]
    warm_qrels = Qrels(qid[warm], docid[warm], truth[warm], source="warm-up sample")
    relevant = int((truth >= 1).sum())
    out = {"measure": POOL_MEASURE, "warmup": len(warm), "population": len(keys), "relevant": relevant,
           "budgets": [b for b in budgets if b >= len(warm)], "machines": {}}
    for name, grades in judges.items():
        machine = MachineLabels(Qrels(qid, docid, grades, source=f"machine-{name}"))
        mgrade = dict(zip(keys, grades.tolist()))
        res = {}
        for strategy in POOL_STRATEGIES:
            p = make_pool(warm_qrels, runs, DEPTH, strategy=strategy,
                          **({} if strategy == "depth" else {"machine": machine}))
            order = warm_keys + [(x.qid, x.docid) for x in p.pairs if (x.qid, x.docid) in nist]
            rows = []
            for b in out["budgets"]:
                judged_keys = order[:b]
                q = Qrels([k[0] for k in judged_keys], [k[1] for k in judged_keys],
                          [nist[k] for k in judged_keys], source=f"{strategy} first {b}")
                got = np.array([_truth(q, r, m, settings) for r in runs])
                seen = set(judged_keys)
                rest = [k for k in keys if k not in seen]
                filled = Qrels([k[0] for k in judged_keys + rest], [k[1] for k in judged_keys + rest],
                               [nist[k] for k in judged_keys] + [mgrade[k] for k in rest], source="machine-filled")
                plug = np.array([_truth(filled, r, m, settings) for r in runs])
                rows.append({"budget": b, "mae": float(np.abs(got - want).mean()),
                             "max_error": float(np.abs(got - want).max()),
                             "tau": float(kendalltau(want, got).statistic),
                             "relevant_found": sum(nist[k] >= 1 for k in judged_keys) / relevant,
                             "machine_filled_mae": float(np.abs(plug - want).mean()),
                             "machine_filled_tau": float(kendalltau(want, plug).statistic)})
            res[strategy] = rows
        out["machines"][name] = res
    return out


def _stratified_draws(strata, n_h, seeds, rng):
    """``seeds`` independent stratified simple random samples (n_h of each stratum)."""
    n = len(strata)
    keys = rng.random((seeds, n))
    order = np.lexsort((keys, np.broadcast_to(strata, (seeds, n))), axis=-1)
    sorted_strata = strata[order]
    start = np.zeros_like(order)
    first = np.ones((seeds, n), bool)
    first[:, 1:] = sorted_strata[:, 1:] != sorted_strata[:, :-1]
    pos = np.arange(n)[None, :].repeat(seeds, 0)
    start = np.maximum.accumulate(np.where(first, pos, 0), axis=1)
    within = pos - start
    limit = np.vectorize(n_h.get)(sorted_strata)
    chosen_sorted = within < limit
    out = np.zeros((seeds, n), bool)
    np.put_along_axis(out, order, chosen_sorted, axis=1)
    return out


def _truth(truth_qrels, run, m, settings):
    a = align(truth_qrels, run, settings)
    return float(m.compute(a).mean()) if a.n_queries else 0.0


CEILING = 0.8  # runs whose true value is at least this: near the top of a [0, 1] measure


def _summ(ests, truth):
    out = {}
    top = truth[:, 0] >= CEILING
    for e, x in ests.items():
        cover = (x.low <= truth) & (truth <= x.high)
        out[e] = {"coverage": float(cover.mean()), "width": float(x.width.mean()),
                  "mae": float(np.abs(x.value - truth).mean()), "lambda": float(np.mean(x.lam)),
                  "zero_width": float((x.width < 1e-12).mean())}
        if top.any():  # near the ceiling
            out[e]["ceiling"] = {"runs": int(top.sum()), "coverage": float(cover[top].mean()),
                                 "width": float(x.width[top].mean()), "zero_width": float((x.width[top] < 1e-12).mean())}
    return out


def _ranges(u) -> dict:
    """What Units.estimate passes on: the measure's range (clipping) and a query unit's (the
    floor at the ceiling); none with a judged from before they were added (a before/after run)."""
    return {"value_range": u.value_range, "unit_range": u.unit_range} if hasattr(u, "unit_range") else {}


def _score(per_run, sampled, strata):
    allest = {e: [] for e in ESTIMATORS}
    for u, _ in per_run:
        for e in ESTIMATORS:
            allest[e].append(estimate(u.coef, u.machine, u.human, sampled, estimator=e, variance="srs",
                                      strata=strata, constant=u.constant, **_ranges(u)))
    return _result(per_run, allest)


def _score_queries(per_run, count, seeds, rng):
    allest = {e: [] for e in ESTIMATORS}
    frame = per_run[0][0].key
    draws = np.argsort(rng.random((seeds, len(frame))), axis=1) < count
    for u, _ in per_run:
        at = {k: i for i, k in enumerate(frame.tolist())}
        s = draws[:, [at[k] for k in u.key.tolist()]]
        for e in ESTIMATORS:
            allest[e].append(estimate(u.coef, u.machine, u.human, s, estimator=e, variance="srs",
                                      constant=u.constant, **_ranges(u)))
    return _result(per_run, allest)


def _result(per_run, allest):
    truth = np.array([t for _, t in per_run])[:, None]
    plug = np.array([getattr(u, "machine_only", u.machine_filled) for u, _ in per_run])  # the plug-in: no person's
    stacked = {e: _Stack(v) for e, v in allest.items()}
    res = _summ(stacked, truth)
    res["machine_filled_mae"] = float(np.abs(plug - truth[:, 0]).mean())
    res["tau"] = _tau(truth[:, 0], {e: stacked[e].value for e in ESTIMATORS}, plug)
    return res


class _Stack:
    def __init__(self, ests):
        self.value = np.stack([e.value for e in ests])
        self.low = np.stack([e.low for e in ests])
        self.high = np.stack([e.high for e in ests])
        self.lam = np.stack([e.details["lambda"] for e in ests])

    @property
    def width(self):
        return self.high - self.low


def _tau(truth, values: dict, plug) -> dict:
    """Mean Kendall's tau between the true system ranking and each estimator's, over draws."""
    from scipy.stats import kendalltau

    out = {e: float(np.mean([kendalltau(truth, v[:, s]).statistic for s in range(v.shape[1])]))
           for e, v in values.items()}
    out["machine_filled"] = float(kendalltau(truth, plug).statistic)
    return out


def plot(result: dict, name: str, directory: str) -> list:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    files = []
    for design, measures, key in (("pairs", PAIR_MEASURES, "pairs"), ("queries", QUERY_MEASURES, "queries_design")):
        block = result[key]
        sizes = list(block)
        fig, axes = plt.subplots(2, len(measures), figsize=(5.0 * len(measures), 7.0), squeeze=False)
        for j, mname in enumerate(measures):
            for machine, style in (("good", "-"), ("lenient", ":"), ("popular", "--")):
                for e, colour in zip(ESTIMATORS, ("black", "tab:blue", "tab:green")):
                    if e == "human" and machine != "good":
                        continue  # the human-only interval does not depend on the machine
                    cov = [block[s][machine][mname][e]["coverage"] for s in sizes]
                    wid = [block[s][machine][mname][e]["width"] for s in sizes]
                    kappa_ = result["machines"][machine]["kappa"]
                    label = "human-only" if e == "human" else f"{e}, {machine} machine (kappa {kappa_:.2f})"
                    axes[0, j].plot(sizes, cov, style, color=colour, marker="o", label=label)
                    axes[1, j].plot(sizes, wid, style, color=colour, marker="o", label=label)
            axes[0, j].axhline(0.95, color="black", lw=0.8)
            axes[0, j].set_ylim(0.85, 1.0)
            axes[0, j].set_title(f"{mname}: coverage of 95% intervals")
            axes[1, j].set_title(f"{mname}: mean interval width")
            axes[1, j].set_xlabel("pairs sampled (share of the pool)" if design == "pairs" else "queries sampled")
        axes[0, 0].legend(fontsize=7)
        fig.suptitle(f"{name}: machine-labelled pool, people judge a sample of {design}")
        fig.tight_layout()
        path = os.path.join(directory, f"machine-{name}-{design}.png")
        fig.savefig(path, dpi=110)
        plt.close(fig)
        files.append(path)
    return files


def plot_errors(result: dict, name: str, directory: str) -> str:
    """Mean absolute error against the people's sample size, per estimator and machine, with the
    machine-filled plug-in's (one small PNG)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, 2, figsize=(9.0, 3.6))
    panels = ((axes[0], "pairs", "DCG@10", "pairs judged by people", "sampled_pairs"),
              (axes[1], "queries_design", "nDCG@10", "queries judged by people", "sampled_queries"))
    for ax, key, mname, xlabel, size in panels:
        block = result[key]
        xs = [block[s][size] for s in block]
        for machine, colour in zip(result["machines"], ("tab:blue", "tab:orange", "tab:green")):
            for e, style in (("human", "-"), ("ppi", ":"), ("ppi++", "--")):
                if e == "human" and machine != "good":
                    continue
                ys = [block[s][machine][mname][e]["mae"] for s in block]
                ax.plot(xs, ys, style, color="black" if e == "human" else colour, marker="o", ms=3,
                        label="human-only" if e == "human" else f"{e}, {machine}")
            plug = block[next(iter(block))][machine][mname]["machine_filled_mae"]
            ax.axhline(plug, color=colour, lw=0.8, alpha=0.6)
        ax.set_yscale("log")
        ax.set_title(f"{mname}: mean |error| (thin lines: machine-filled)", fontsize=9)
        ax.set_xlabel(xlabel, fontsize=8)
    return _save_small(fig, axes, f"{name}: a machine-labelled pool corrected by a sample judged by people",
                       os.path.join(directory, f"machine-{name}-errors.png"))


def _save_small(fig, axes, title: str, path: str) -> str:
    """A small PNG (dpi 80) with small ticks and legend, for docs/img."""
    import matplotlib.pyplot as plt

    for ax in axes:
        ax.tick_params(labelsize=7)
    axes[0].legend(fontsize=6)
    fig.suptitle(title, fontsize=10)
    fig.tight_layout()
    fig.savefig(path, dpi=80)
    plt.close(fig)
    return path


def plot_pools(result: dict, name: str, directory: str) -> str:
    """nDCG@10 error against the judging budget per strategy and machine (one small PNG)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    block = result["pools"]
    fig, axes = plt.subplots(1, 2, figsize=(9.0, 3.6))
    for machine, colour in zip(block["machines"], ("tab:blue", "tab:orange", "tab:green")):
        for strategy, style in zip(POOL_STRATEGIES, ("-", "--", ":")):
            rows = block["machines"][machine][strategy]
            if strategy == "depth" and machine != "good":
                continue  # depth pooling does not read the machine
            label = "depth" if strategy == "depth" else f"{strategy}, {machine}"
            c = "black" if strategy == "depth" else colour
            axes[0].plot([r["budget"] for r in rows], [r["mae"] for r in rows], style, color=c, label=label)
            axes[1].plot([r["budget"] for r in rows], [r["relevant_found"] for r in rows], style, color=c,
                         label=label)
    axes[0].set_yscale("log")
    axes[0].set_title(f"{block['measure']} mean |error| (holes as not relevant)", fontsize=9)
    axes[1].set_title("share of the pool's relevant pairs judged", fontsize=9)
    for ax in axes:
        ax.set_xlabel("pairs judged by people (warm-up included)", fontsize=8)
    return _save_small(fig, axes, f"{name}: judging order from a machine judge vs depth pooling",
                       os.path.join(directory, f"machine-{name}-pools.png"))


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("collection", help="robust03, or a directory holding the qrels and runs")
    p.add_argument("--qrels", default="qrels.txt")
    p.add_argument("--runs", default="runs/*.gz")
    p.add_argument("--name", default=None, help="the name in the plots' file names (default: the folder's)")
    p.add_argument("--seeds", type=int, default=300)
    p.add_argument("--shares", default="0.05,0.1,0.2", help="pair samples: shares of the pool")
    p.add_argument("--query-counts", default="10,20,30", help="query samples: how many queries")
    p.add_argument("--budgets", default="200,500,1000,1500,2000,3000,4000",
                   help="machine-ordered pools: total pairs judged (warm-up included); the whole pool is added")
    p.add_argument("--no-pools", action="store_true", help="skip the machine-ordered pools")
    p.add_argument("--plot", metavar="DIR",
                   help="write machine-<name>-pairs.png, -queries.png (coverage, width), -errors.png and -pools.png here")
    p.add_argument("--out", metavar="JSON", help="write the figures as JSON here (default: stdout)")
    args = p.parse_args(argv)
    path = ROBUST03 if args.collection == "robust03" else args.collection
    name = args.name or os.path.basename(os.path.normpath(path))
    t = time.perf_counter()
    qrels, runs = load(path, args.qrels, args.runs)
    result = replay(qrels, runs, args.seeds, [float(x) for x in args.shares.split(",")],
                    [int(x) for x in args.query_counts.split(",")])
    if not args.no_pools:
        budgets = [int(x) for x in args.budgets.split(",")]
        result["pools"] = replay_pools(qrels, runs, budgets + [result["population"]])
    result["seconds"] = round(time.perf_counter() - t, 1)
    result["seeds"] = args.seeds
    text = json.dumps(result, indent=1)
    if args.out:
        with open(args.out, "w") as fh:
            fh.write(text + "\n")
    else:
        print(text)
    if args.plot:
        files = plot(result, name, args.plot) + [plot_errors(result, name, args.plot)]
        files += [] if args.no_pools else [plot_pools(result, name, args.plot)]
        print("\n".join(files), file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
