"""`judged gate` on a real collection: pairs of submitted runs as baseline and candidate.

    python benchmarks/gate_real.py COLLECTION BASELINE:CANDIDATE [...] [--policy gate.toml]

COLLECTION is a folder with ``qrels.txt`` and ``runs/`` (e.g. ../shared/data/robust03; its
files are never part of this repository). Each pair names two run files of ``runs/``, with or
without the ``input.`` prefix and the ``.gz`` ending. Without ``--policy`` the policy of
docs/gate.md's robust03 section is used: nDCG@10 non-inferiority margin 0.02, five critical
topics that may lose at most 0.2, at most 5% of the candidate's top 10 unjudged. Prints each
pair's rule lines, its exit code and the seconds the decision took (one process, reading the
two 1,000-per-topic runs included).
"""

from __future__ import annotations

import argparse
import os
import sys
import time

POLICY = {"measure": "nDCG@10", "margin": {"non_inferiority": 0.02},
          "critical": {"queries": ["303", "307", "322", "336", "341"], "max_loss": 0.2},
          "holes": {"max_share": 0.05}}


def run_file(folder: str, name: str) -> str:
    for candidate in (name, f"input.{name}", f"{name}.gz", f"input.{name}.gz"):
        path = os.path.join(folder, "runs", candidate)
        if os.path.exists(path):
            return path
    sys.exit(f"no run {name!r} in {folder}/runs")


def main() -> None:
    from judged.analyses.gate import gate

    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("collection")
    ap.add_argument("pairs", nargs="+", metavar="BASELINE:CANDIDATE")
    ap.add_argument("--policy", help="a policy file (default: the one above)")
    args = ap.parse_args()
    qrels = os.path.join(args.collection, "qrels.txt")
    for pair in args.pairs:
        base, cand = (run_file(args.collection, x) for x in pair.split(":"))
        start = time.perf_counter()
        result = gate(args.policy or POLICY, qrels, base, cand)
        took = time.perf_counter() - start
        print("\n".join(result.lines()))
        print(f"-> exit {result.exit_code}, {took:.2f} s\n")


if __name__ == "__main__":
    main()
