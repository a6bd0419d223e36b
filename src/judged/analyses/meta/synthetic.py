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
from ...core.errors import JudgedError
from ...core.io.output import write_new_or_same

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
    for name, value, least, why in (("systems", systems, 2, "a preference compares two"),
                                    ("queries", queries, 1, ""), ("docs", docs, 10, "the preferences read a top 10"),
                                    ("depth", depth, 10, "the preferences read a top 10"),
                                    ("preferences", preferences, 0, "")):
        if value < least:
            raise JudgedError(f"{name} must be at least {least}{f' ({why})' if why else ''}, got {value}")
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
    """Write qrels.txt, qrels-pooled.txt, runs/NAME.run (TREC) and preferences.txt; return the paths.
    A file there already that differs from what would be written (a user's own qrels.txt, or
    another seed's collection) is refused before anything is written; the same collection
    again is written over."""
    paths = {"qrels": os.path.join(outdir, "qrels.txt"), "qrels_pooled": os.path.join(outdir, "qrels-pooled.txt"),
             "preferences": os.path.join(outdir, "preferences.txt"),
             "runs": [os.path.join(outdir, "runs", f"{name}.run") for name in coll.runs]}
    texts = {paths[key]: "".join(f"{qid} 0 {d} {g}\n" for qid, judged in getattr(coll, key).items()
                                 for d, g in judged.items()) for key in ("qrels", "qrels_pooled")}
    for (name, run), path in zip(coll.runs.items(), paths["runs"]):
        texts[path] = "".join(f"{qid} Q0 {d} {r + 1} {s} {name}\n" for qid, ranked in run.items()
                              for r, (d, s) in enumerate(ranked.items()))
    texts[paths["preferences"]] = (f"# simulated side-by-side preferences (judged meta synthetic, seed {coll.seed})\n"
                                   "qid run_a run_b preferred\n"
                                   + "".join(f"{q} {a} {b} {p}\n" for q, a, b, p in coll.preferences))
    write_new_or_same({path: text.encode("utf-8") for path, text in texts.items()}, "this synthetic collection",
                      "write it into a new folder")
    return paths


# ---------------------------------------------------------------------------
# A pooled collection with many runs: leave-one-run-out and the hole estimate


@dataclass
class PooledCollection:
    """``systems`` runs over ``queries`` queries, each returning its top ``depth`` of
    ``candidates`` documents per query; every candidate has a true grade (``grades``,
    queries x candidates) and the qrels judge the union of every run's top
    ``pool_depth`` (a depth-k pool, as TREC's; of the first ``pooled_runs`` runs only,
    if given, so that the others meet holes). Runs come in ``families`` (a team's
    variants share a noise component), named ``team<letters>-<k>`` (teama-1, teamb-1, ...)."""

    qids: list
    grades: np.ndarray  # (queries, candidates), true grades 0..3
    names: list
    family: list  # per run
    ranked: np.ndarray  # (systems, queries, depth) candidate index, best first
    scores: np.ndarray  # (systems, queries, depth)
    pool_depth: int
    seed: int
    pooled_runs: int | None = None  # the pool is the top pool_depth of the first pooled_runs runs (None: all)

    def docid(self, q: int, d) -> str:
        return f"{self.qids[q]}-d{int(d):05d}"

    def pooled(self) -> np.ndarray:
        """(queries, candidates) mask of the judged candidates."""
        mask = np.zeros(self.grades.shape, bool)
        for s in range(len(self.names) if self.pooled_runs is None else self.pooled_runs):
            top = self.ranked[s, :, :self.pool_depth]
            mask[np.arange(len(self.qids))[:, None], top] = True
        return mask

    def qrels(self, complete: bool = False) -> dict:
        """{qid: {docid: grade}}: the depth-``pool_depth`` pool (every candidate with ``complete``)."""
        mask = np.ones(self.grades.shape, bool) if complete else self.pooled()
        return {qid: {self.docid(q, d): int(self.grades[q, d]) for d in np.flatnonzero(mask[q])}
                for q, qid in enumerate(self.qids)}

    def runs(self) -> dict:
        """{name: {qid: {docid: score}}}."""
        return {name: {qid: {self.docid(q, d): float(sc) for d, sc in zip(self.ranked[s, q], self.scores[s, q])}
                       for q, qid in enumerate(self.qids)} for s, name in enumerate(self.names)}

    def write(self, outdir) -> dict:
        """qrels.txt (the pool), qrels-complete.txt and runs/NAME.run, written with pyarrow."""
        import pyarrow as pa
        import pyarrow.csv as pacsv

        os.makedirs(os.path.join(outdir, "runs"), exist_ok=True)
        nq, depth = self.ranked.shape[1], self.ranked.shape[2]
        qid_col = np.repeat(np.array(self.qids, dtype=object), depth)
        options = pacsv.WriteOptions(include_header=False, delimiter=" ", quoting_style="none")
        paths = {"runs": []}
        for s, name in enumerate(self.names):
            docs = np.char.add(np.char.add(np.repeat(np.array(self.qids), depth), "-d"),
                               np.char.zfill(self.ranked[s].ravel().astype(str), 5))
            table = pa.table({"qid": pa.array(qid_col, pa.string()), "q0": pa.array(np.full(nq * depth, "Q0")),
                              "docid": pa.array(docs), "rank": np.tile(np.arange(1, depth + 1), nq),
                              "score": np.round(self.scores[s].ravel(), 6), "tag": pa.array(np.full(nq * depth, name))})
            path = os.path.join(outdir, "runs", f"{name}.run")
            pacsv.write_csv(table, path, write_options=options)
            paths["runs"].append(path)
        for key, mask in (("qrels", self.pooled()), ("qrels_complete", np.ones(self.grades.shape, bool))):
            q, d = np.nonzero(mask)
            docs = np.char.add(np.char.add(np.array(self.qids)[q], "-d"), np.char.zfill(d.astype(str), 5))
            table = pa.table({"qid": pa.array(np.array(self.qids)[q]), "it": np.zeros(len(q), np.int64),
                              "docid": pa.array(docs), "grade": self.grades[q, d].astype(np.int64)})
            paths[key] = os.path.join(outdir, "qrels.txt" if key == "qrels" else "qrels-complete.txt")
            pacsv.write_csv(table, paths[key], write_options=options)
        return paths


def pooled_collection(systems: int = 20, queries: int = 50, depth: int = 100, candidates: int | None = None,
                      pool_depth: int = 10, families: int | None = None, mismatch: float = 0.3,
                      relevant: tuple = (0.05, 0.3), noise: float = 1.0, pooled_runs: int | None = None,
                      seed: int = 0) -> PooledCollection:
    """A :class:`PooledCollection`. Per query a share in ``relevant`` of the candidates is relevant
    (grades 1, 2, 3 as 55/30/15%); a run scores a candidate by its quality x the
    query's ease x the grade, plus a shared *findability* of the document (what most
    systems find), its family's noise and its own noise. A share ``mismatch`` of the
    relevant documents is *vocabulary-mismatched*: only one family sees their full
    signal, the others a quarter of it (so relevant documents one family alone finds
    exist, as in the lexical vs dense story). Deterministic for a seed."""
    rng = np.random.default_rng(seed)
    candidates = candidates or 2 * depth
    if depth > candidates:
        raise ValueError("a run cannot return more documents than there are candidates")
    families = families or max(1, systems // 3)
    family = [s % families for s in range(systems)]
    names = [f"team{_letters(family[s])}-{s // families + 1}" for s in range(systems)]
    quality = rng.uniform(0.3, 1.6, size=systems)
    qids = [f"q{q + 1:04d}" for q in range(queries)]
    share = rng.uniform(*relevant, size=(queries, 1))
    relevant = rng.random((queries, candidates)) < share
    relevant[np.arange(queries), rng.integers(candidates, size=queries)] = True
    grades = np.where(relevant, 1 + rng.choice(3, size=(queries, candidates), p=RELEVANT_GRADES), 0)
    ease = rng.uniform(0.4, 1.4, size=(queries, 1))
    findable = rng.normal(size=(queries, candidates))
    family_noise = rng.normal(size=(families, queries, candidates))
    mismatched = (rng.random((queries, candidates)) < mismatch) & (grades > 0)
    home = rng.integers(families, size=(queries, candidates))
    ranked = np.empty((systems, queries, depth), np.int64)
    scores = np.empty((systems, queries, depth))
    for s in range(systems):
        visible = np.where(mismatched & (home != family[s]), 0.25, 1.0)
        score = quality[s] * ease * grades * visible + 0.8 * findable + 0.7 * family_noise[family[s]] \
            + noise * rng.normal(size=(queries, candidates))
        order = np.argsort(-score, axis=1, kind="stable")[:, :depth]
        ranked[s] = order
        scores[s] = np.take_along_axis(score, order, axis=1)
    return PooledCollection(qids, grades, names, family, ranked, scores, pool_depth, seed, pooled_runs)


def _letters(n: int) -> str:
    """0 -> a, 25 -> z, 26 -> ba, ...: a team name made of letters only."""
    out = ""
    while True:
        out = chr(97 + n % 26) + out
        n //= 26
        if n == 0:
            return out
