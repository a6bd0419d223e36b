"""Write the example collection used by docs/comparing.md (seeded, reproducible).

40 queries of 60 documents, each with a hidden true grade 0-3. ``qrels.txt`` judges
only the 30 documents of the original pool; a "bm25" run ranks the unpooled documents
low; a "dense" run ranks by the true grades plus noise (poorly on every fifth query)
and retrieves unpooled documents; a "tuned" run is bm25 with small perturbations.
``qrels-more.txt`` closes the holes: it adds the true grades of every unjudged
document in any run's top 10.

    python docs/examples/make_example.py docs/examples
"""

import os
import sys

import numpy as np


def main(out: str) -> None:
    rng = np.random.default_rng(2007)
    qrels, more, runs = [], [], {"bm25": [], "dense": [], "tuned": []}
    for q in range(1, 41):
        qid = f"q{q:02d}"
        docs = [f"d{q:02d}-{i:03d}" for i in range(60)]
        truth = {d: int(g) for d, g in zip(docs, rng.choice([0, 0, 0, 1, 1, 2, 3], size=60))}
        qrels += [f"{qid} 0 {d} {truth[d]}" for d in docs[:30]]
        rel = np.array([truth[d] for d in docs], float)
        base = rel * 0.6 + rng.normal(0, 1.0, len(docs))
        base[30:] -= 2.5  # unjudged documents: ranked low by bm25 (they were never pooled)
        dense = rel * (0.9 if q % 5 else 0.1) + rng.normal(0, 0.9, len(docs))
        dense[30:] += rng.normal(-0.5, 0.6, 30)  # dense finds unpooled documents
        tuned = base + rng.normal(0, 0.15, len(docs))
        holes = set()
        for name, score in (("bm25", base), ("dense", dense), ("tuned", tuned)):
            order = np.argsort(-score, kind="stable")[:20]
            runs[name] += [f"{qid} Q0 {docs[i]} {r + 1} {score[i]:.4f} {name}" for r, i in enumerate(order)]
            holes.update(docs[i] for i in order[:10] if i >= 30)
        more += [f"{qid} 0 {d} {truth[d]}" for d in sorted(holes)]
    os.makedirs(out, exist_ok=True)
    with open(os.path.join(out, "qrels.txt"), "w") as fh:
        fh.write("\n".join(qrels) + "\n")
    with open(os.path.join(out, "qrels-more.txt"), "w") as fh:
        fh.write("\n".join(qrels + more) + "\n")
    for name, lines in runs.items():
        with open(os.path.join(out, f"{name}.run"), "w") as fh:
            fh.write("\n".join(lines) + "\n")


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else os.path.dirname(os.path.abspath(__file__)))
