"""judged on the inputs of a training loop, against each input's own tool, in one process.

    python benchmarks/bench_in_memory.py                       # every comparison, 7 rounds
    python benchmarks/bench_in_memory.py --only dicts --queries 50000 --repeat 9

Each comparison runs its contenders in turn (the order rotated each round) after one
warm-up round, and reports the median wall time of ``--repeat`` rounds and each one's
ratio to the peer (judged / peer: below 1, judged is faster). Five measures, as the issue names them
(nDCG@10, AP, RR, P@10, R@100), on generated collections: N queries x 100 ranked documents
(scores uniform), a third of them judged (grades 0-2).

* dicts: ``judged.evaluate(qrels_dict, run_dict)`` and the pytrec_eval drop-in
  (``judged.compat.pytrec_eval``) against ``pytrec_eval.RelevanceEvaluator(qrels_dict,
  measures).evaluate(run_dict)`` (the evaluator built in the timing too, as judged reads its
  qrels in it); and as a training loop calls them, the qrels read once: ``judged.evaluate``
  of a ``judged.read_qrels`` result and a run dict, and the drop-in's ``evaluate``, against
  ``evaluate`` of a pytrec_eval evaluator built beforehand;
* ranx: ``judged.evaluate(ranx.Qrels, ranx.Run)`` against ``ranx.evaluate`` on the same
  objects, warm (its numba code compiled in the warm-up round, as judged's);
* frames: ``judged.evaluate`` of pandas and polars DataFrames and Arrow tables against the
  same rows as TREC files (the file path: read, hashed and scored);
* st: the scoring step of a Sentence Transformers evaluator: judged's ``GradedIREvaluator``
  against Sentence Transformers' ``InformationRetrievalEvaluator``, both given a model
  whose ``encode_*`` return embeddings computed beforehand (so the step timed is the
  similarity, the top-k per query and the measures: what differs between them).

The machine's load average is printed: on a shared machine, run it when it is low.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time

import numpy as np

MEASURES = ["nDCG@10", "AP", "RR", "P@10", "R@100"]
PYTREC = {"ndcg_cut.10", "map", "recip_rank", "P.10", "recall.100"}
RANX = ["ndcg@10", "map", "mrr", "precision@10", "recall@100"]


def collection(n_queries: int, depth: int = 100, seed: int = 0) -> tuple[dict, dict]:
    """(qrels, run) dicts: ``depth`` documents per query from 1M ids, every third judged."""
    rng = np.random.default_rng(seed)
    qrels, run = {}, {}
    for i in range(n_queries):
        docs = [f"d{j}" for j in rng.choice(1_000_000, depth + depth // 5, replace=False).tolist()]
        run[f"q{i}"] = dict(zip(docs[:depth], rng.random(depth).tolist()))
        qrels[f"q{i}"] = dict(zip(docs[::3], rng.integers(0, 3, len(docs[::3])).tolist()))
    return qrels, run


def compare(title: str, contenders: dict, repeat: int, peer: str, against: dict | None = None) -> dict:
    """Median wall seconds of each contender over ``repeat`` interleaved rounds (after one
    warm-up round), printed with each one's ratio to ``peer`` (this / peer: below 1, faster),
    or to ``against[name]`` for a contender compared with another one."""
    times = {name: [] for name in contenders}
    names = list(contenders)
    for name in names:  # warm-up: numba compiled, caches filled, pages mapped
        contenders[name]()
    for r in range(repeat):
        for name in names[r % len(names):] + names[:r % len(names)]:
            t = time.perf_counter()
            contenders[name]()
            times[name].append(time.perf_counter() - t)
    medians = {name: statistics.median(v) for name, v in times.items()}
    print(f"\n{title}  (load average {os.getloadavg()[0]:.1f}; median of {repeat})")
    against = against or {}
    for name, m in medians.items():
        other = against.get(name, peer)
        ratio = "" if name in (peer, *against.values()) else f"   {m / medians[other]:.2f}x {other}"
        print(f"  {name:<40} {m:8.3f} s{ratio}")
    return medians


def bench_dicts(n_queries: int, repeat: int) -> dict:
    import pytrec_eval

    import judged
    import judged.compat.pytrec_eval as dropin

    qrels, run = collection(n_queries)
    theirs, ours = pytrec_eval.RelevanceEvaluator(qrels, PYTREC), dropin.RelevanceEvaluator(qrels, PYTREC)
    read_once = judged.read_qrels(qrels)
    built = "pytrec_eval .evaluate (built once)"
    return compare(f"dicts: {n_queries:,} queries x 100", {
        "judged.evaluate(dicts)": lambda: judged.evaluate(qrels, run, MEASURES),
        "pytrec_eval": lambda: pytrec_eval.RelevanceEvaluator(qrels, PYTREC).evaluate(run),
        "judged.compat.pytrec_eval": lambda: dropin.RelevanceEvaluator(qrels, PYTREC).evaluate(run),
        built: lambda: theirs.evaluate(run),
        "judged.evaluate(qrels read once, dict)": lambda: judged.evaluate(read_once, run, MEASURES),
        "judged.compat .evaluate (built once)": lambda: ours.evaluate(run),
    }, repeat, "pytrec_eval", {"judged.evaluate(qrels read once, dict)": built,
                               "judged.compat .evaluate (built once)": built})


def bench_ranx(n_queries: int, repeat: int) -> dict:
    import ranx

    import judged

    qrels, run = collection(n_queries)
    rq, rr = ranx.Qrels(qrels), ranx.Run(run, name="run")
    return compare(f"ranx objects: {n_queries:,} queries x 100", {
        "judged.evaluate(ranx objects)": lambda: judged.evaluate(rq, rr, MEASURES),
        "ranx.evaluate (warm)": lambda: ranx.evaluate(rq, rr, RANX, return_mean=False),
    }, repeat, "ranx.evaluate (warm)")


def bench_frames(n_queries: int, repeat: int, folder: str) -> dict:
    import pandas as pd
    import pyarrow as pa

    import judged

    qrels, run = collection(n_queries)
    q_rows = [(q, d, g) for q, docs in qrels.items() for d, g in docs.items()]
    r_rows = [(q, d, s) for q, docs in run.items() for d, s in docs.items()]
    qrels_path, run_path = os.path.join(folder, "qrels.txt"), os.path.join(folder, "run.txt")
    with open(qrels_path, "w") as fh:
        fh.writelines(f"{q} 0 {d} {g}\n" for q, d, g in q_rows)
    with open(run_path, "w") as fh:
        fh.writelines(f"{q} Q0 {d} {i % 100 + 1} {s!r} run\n" for i, (q, d, s) in enumerate(r_rows))
    q_frame, r_frame = pd.DataFrame(q_rows, columns=["qid", "docid", "grade"]), pd.DataFrame(r_rows, columns=[
        "qid", "docid", "score"])
    contenders = {"judged.evaluate(TREC files)": lambda: judged.evaluate(qrels_path, run_path, MEASURES),
                  "judged.evaluate(pandas)": lambda: judged.evaluate(q_frame, r_frame, MEASURES)}
    q_table, r_table = pa.Table.from_pandas(q_frame), pa.Table.from_pandas(r_frame)
    contenders["judged.evaluate(Arrow tables)"] = lambda: judged.evaluate(q_table, r_table, MEASURES)
    try:
        import polars as pl

        q_polars, r_polars = pl.from_arrow(q_table), pl.from_arrow(r_table)
        contenders["judged.evaluate(polars)"] = lambda: judged.evaluate(q_polars, r_polars, MEASURES)
    except ImportError:
        pass
    return compare(f"frames: {n_queries:,} queries x 100 (file path first)", contenders, repeat,
                   "judged.evaluate(TREC files)")


class Embedded:
    """A Sentence Transformers model stand-in whose ``encode_query`` / ``encode_document``
    return embeddings computed beforehand (the texts are their ids): what is timed is what
    the evaluators do with them."""

    similarity_fn_name = "cosine"

    def __init__(self, queries: list, corpus: list, dim: int, seed: int = 0):
        import torch
        from sentence_transformers.util import cos_sim

        gen = torch.Generator().manual_seed(seed)
        self.rows = {t: i for i, t in enumerate(queries)} | {t: i for i, t in enumerate(corpus)}
        self.q, self.c = torch.randn(len(queries), dim, generator=gen), torch.randn(len(corpus), dim, generator=gen)
        self.similarity, self.model_card_data = cos_sim, self

    def set_evaluation_metrics(self, *args):
        pass

    def _take(self, table, texts):
        import torch

        return table[torch.tensor([self.rows[t] for t in texts])]

    def encode_query(self, texts, **_):
        return self._take(self.q, texts)

    def encode_document(self, texts, **_):
        return self._take(self.c, texts)


def bench_st(n_queries: int, n_docs: int, repeat: int) -> dict:
    try:  # sentence-transformers 6
        from sentence_transformers.sentence_transformer.evaluation import InformationRetrievalEvaluator
    except ImportError:  # 3.x - 5.x
        from sentence_transformers.evaluation import InformationRetrievalEvaluator

    from judged.integrations.sentence_transformers import GradedIREvaluator

    rng = np.random.default_rng(1)
    queries = {f"q{i}": f"q{i}" for i in range(n_queries)}
    corpus = {f"d{i}": f"d{i}" for i in range(n_docs)}
    graded = {q: {f"d{j}": int(g) for j, g in zip(rng.choice(n_docs, 8, replace=False), rng.integers(0, 3, 8))}
              for q in queries}
    relevant = {q: {d for d, g in docs.items() if g > 0} for q, docs in graded.items()}
    model = Embedded(list(queries), list(corpus), dim=64)
    theirs = InformationRetrievalEvaluator(queries, corpus, relevant, write_csv=False)
    ours = GradedIREvaluator(queries, corpus, graded, write_csv=False)
    return compare(f"Sentence Transformers evaluators: {n_queries:,} queries, {n_docs:,} documents, embeddings given", {
        "judged GradedIREvaluator": lambda: ours(model),
        "ST InformationRetrievalEvaluator": lambda: theirs(model),
    }, repeat, "ST InformationRetrievalEvaluator")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--only", action="append", choices=["dicts", "ranx", "frames", "st"], help="these comparisons only")
    ap.add_argument("--queries", type=int, action="append", help="queries (default: 5,000 and 50,000 for dicts, "
                                                                  "5,000 for the others)")
    ap.add_argument("--repeat", type=int, default=7, help="timed rounds (after one warm-up round)")
    ap.add_argument("--st-docs", type=int, default=20_000, help="corpus size of the evaluators' comparison")
    args = ap.parse_args()
    only = set(args.only or ["dicts", "ranx", "frames", "st"])
    import judged
    import judged.core.native

    print(f"judged {judged.__version__} ({judged.core.native.status()[0]}); python {sys.version.split()[0]}")
    if "dicts" in only:
        for n in args.queries or [5_000, 50_000]:
            bench_dicts(n, args.repeat)
    if "ranx" in only:
        for n in args.queries or [5_000]:
            bench_ranx(n, args.repeat)
    if "frames" in only:
        with tempfile.TemporaryDirectory() as folder:
            for n in args.queries or [5_000]:
                bench_frames(n, args.repeat, folder)
    if "st" in only:
        for n in args.queries or [1_000]:
            bench_st(n, args.st_docs, args.repeat)


if __name__ == "__main__":
    main()
