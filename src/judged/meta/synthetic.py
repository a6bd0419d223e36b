"""A deterministic synthetic test collection for the meta-evaluation tools.

Built-in demo data holds one run; meta-evaluation needs many. This collection has
``systems`` runs (default 8) over ``queries`` queries (default 50), in two families that
mirror the product brief's lexical vs dense story:

* every query has ``docs`` candidate documents, 0.3% to 6% of them relevant (grade 1-3,
  at least one per query); about a
  third of its relevant documents are *vocabulary-mismatched*: a lexical system sees a
  weak signal for them, a dense one a full signal;
* ``lex-1..`` and ``dense-1..`` systems of increasing quality score every document by
  quality x difficulty x grade (scaled down for mismatched documents under lexical
  systems) plus family-shared and own noise, and return their top ``depth`` (default 100);
* ``qrels``: every candidate judged (complete); ``qrels_pooled``: only the top-20 pool of
  the lexical systems judged, so the dense systems meet holes;
* ``preferences``: a simulated user compares two systems' top 10 for a query by
  rank-biased utility of the true grades (persistence 0.8, gain 2^g - 1) plus noise,
  answering ``none`` when the difference is small.

Everything is drawn from one seeded numpy generator, so a seed gives the same files.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

import numpy as np

RELEVANT_SHARE = (0.003, 0.06)  # per query, the share of candidates that are relevant
RELEVANT_GRADES = (0.55, 0.30, 0.15)  # grades 1, 2, 3 among the relevant
POOL_DEPTH = 20
PERSISTENCE = 0.8
USER_NOISE = 2.0  # sd of the simulated user's misjudgment of the utility difference


@dataclass
class SyntheticCollection:
    qrels: dict  # complete judgments {qid: {docid: grade}}
    qrels_pooled: dict  # lexical top-20 pool only
    runs: dict  # name -> {qid: {docid: score}}
    preferences: list  # (qid, run_a, run_b, preferred)
    seed: int


def synthetic_collection(systems: int = 8, queries: int = 50, docs: int = 300, depth: int = 100,
                         preferences: int = 300, seed: int = 0) -> SyntheticCollection:
    rng = np.random.default_rng(seed)
    n_lex = systems // 2
    names = [f"lex-{k + 1}" for k in range(n_lex)] + [f"dense-{k + 1}" for k in range(systems - n_lex)]
    lexical = np.array([k < n_lex for k in range(systems)])
    # quality rises within each family; the two families interleave
    quality = np.concatenate([np.linspace(0.6, 1.2, n_lex), np.linspace(0.7, 1.3, systems - n_lex)])
    qids = [f"q{q + 1:03d}" for q in range(queries)]
    qrels, pooled, runs = {}, {}, {n: {} for n in names}
    top10 = {}
    for qid in qids:
        relevant = rng.random(docs) < rng.uniform(*RELEVANT_SHARE)
        relevant[rng.integers(docs)] = True  # every query has something relevant
        grades = np.where(relevant, 1 + rng.choice(3, size=docs, p=RELEVANT_GRADES), 0)
        mismatch = (rng.random(docs) < 0.35) & (grades > 0)
        difficulty = rng.uniform(0.3, 1.3)
        docids = [f"{qid}-d{i:04d}" for i in range(docs)]
        family_noise = {True: rng.normal(size=docs), False: rng.normal(size=docs)}
        ranked = {}
        for s, name in enumerate(names):
            visible = np.where(mismatch & lexical[s], 0.25, 1.0)
            score = quality[s] * difficulty * grades * visible + 0.7 * family_noise[bool(lexical[s])] \
                + 0.7 * rng.normal(size=docs)
            order = np.argsort(-score, kind="stable")[:depth]
            ranked[name] = order
            runs[name][qid] = {docids[i]: round(float(score[i]), 6) for i in order}
        qrels[qid] = {docids[i]: int(grades[i]) for i in range(docs)}
        pool = set()
        for s, name in enumerate(names):
            if lexical[s]:
                pool.update(ranked[name][:POOL_DEPTH].tolist())
        pooled[qid] = {docids[i]: int(grades[i]) for i in sorted(pool)}
        top10[qid] = {name: grades[ranked[name][:10]] for name in names}
    prefs = []
    weights = PERSISTENCE ** np.arange(10)
    for _ in range(preferences):
        qid = qids[rng.integers(queries)]
        a, b = rng.choice(systems, size=2, replace=False)
        ua = float(((2.0 ** top10[qid][names[a]] - 1) * weights).sum())
        ub = float(((2.0 ** top10[qid][names[b]] - 1) * weights).sum())
        felt = ua - ub + rng.normal(0, USER_NOISE)
        preferred = "none" if abs(felt) < 0.5 else ("a" if felt > 0 else "b")
        prefs.append((qid, names[a], names[b], preferred))
    return SyntheticCollection(qrels, pooled, runs, prefs, seed)


def write_collection(coll: SyntheticCollection, outdir) -> dict:
    """Write qrels.txt, qrels-pooled.txt, runs/NAME.run (TREC) and preferences.txt; return the paths."""
    from ..io.output import open_replacing

    os.makedirs(os.path.join(outdir, "runs"), exist_ok=True)
    paths = {"qrels": os.path.join(outdir, "qrels.txt"), "qrels_pooled": os.path.join(outdir, "qrels-pooled.txt"),
             "preferences": os.path.join(outdir, "preferences.txt"), "runs": []}
    for key in ("qrels", "qrels_pooled"):
        with open_replacing(paths[key]) as fh:
            for qid, judged in getattr(coll, key).items():
                fh.writelines(f"{qid} 0 {d} {g}\n" for d, g in judged.items())
    for name, run in coll.runs.items():
        path = os.path.join(outdir, "runs", f"{name}.run")
        with open_replacing(path) as fh:
            for qid, ranked in run.items():
                fh.writelines(f"{qid} Q0 {d} {r + 1} {s} {name}\n" for r, (d, s) in enumerate(ranked.items()))
        paths["runs"].append(path)
    with open_replacing(paths["preferences"]) as fh:
        fh.write(f"# simulated side-by-side preferences (judged meta synthetic, seed {coll.seed})\n")
        fh.write("qid run_a run_b preferred\n")
        fh.writelines(f"{q} {a} {b} {p}\n" for q, a, b, p in coll.preferences)
    return paths
