"""How far new runs' holes lie outside the grade model's data: the figures of docs/holes.md
("Holes are read inside the range the model was fitted on"; not a test).

    python benchmarks/holes_feature_range.py COLLECTION_DIR... [--seeds 5] [-k 10]

For each collection folder (``qrels.txt`` and ``runs/``, as ``benchmarks/holes_protocols.py``
reads them) and each ``judged meta holdout --protocol shift`` cell (the weaker half and
``--seeds`` random halves), prints the share of the scored runs' holes (their top k, unjudged
in the cut qrels) whose features fall below or above the range of the pseudo-holes the grade
model was fitted on, per feature (:data:`judged.analyses.holes.collection.FEATURES`).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

import judged.analyses.holes.estimate as estimate
from judged.analyses.holes.collection import FEATURES, features, make_world
from judged.analyses.holes.drawn_scores import fill_depth
from judged.analyses.meta.holdout import holdout

sys.path.insert(0, str(Path(__file__).resolve().parent))
from holes_protocols import collection  # noqa: E402


def main(argv=None) -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("collections", nargs="+")
    p.add_argument("--seeds", type=int, default=5)
    p.add_argument("-k", type=int, default=10)
    args = p.parse_args(argv)
    shares = []
    original = estimate.estimate_runs

    def measured(measure, pool, world=None, **kw):
        """The estimate as holdout asks for it, and the share of its targets' holes outside the range."""
        result = original(measure, pool, world, **kw)
        model = result.model
        if model is None or model.low is None:
            shares.append(None)
            return result
        w = make_world(pool) if world is None else world
        depth = fill_depth(estimate.holes_read_as_zero(estimate.Measure.parse(measure)), pool)
        rows = np.concatenate([pool.list_rows(i, depth) for i in kw["targets"]])
        rows = rows[w.row_level[rows] < 0]
        X = features(pool, w, rows, np.full(len(rows), -1))
        shares.append((len(rows), (X < model.low).mean(axis=0), (X > model.high).mean(axis=0)))
        return result

    estimate.estimate_runs = measured
    try:
        print("| collection | cell | holes | " + " | ".join(f"{f}: below, above" for f in FEATURES) + " |")
        print("|---|---|---:|" + "---|" * len(FEATURES))
        for path in args.collections:
            qrels, runs, _ = collection(path)
            shares.clear()
            report = holdout(qrels, runs, protocol="shift", seeds=args.seeds, k=args.k, measure=f"nDCG@{args.k}",
                             samples=5, seed=0)
            if len(shares) != len(report.cells):  # the shift cells estimate through holes_report, read at call time
                raise SystemExit(f"{path}: measured {len(shares)} estimates for {len(report.cells)} cells: the shift "
                                 "protocol no longer calls judged.analyses.holes.estimate.estimate_runs as this script expects")
            for cell, share in zip(report.cells, shares):
                if share is None:
                    print(f"| {Path(path).name} | {cell.name} | - |" + " - |" * len(FEATURES))
                    continue
                n, below, above = share
                print(f"| {Path(path).name} | {cell.name} | {n} | "
                      + " | ".join(f"{b:.0%}, {a:.0%}" for b, a in zip(below, above)) + " |")
    finally:
        estimate.estimate_runs = original


if __name__ == "__main__":
    main()
