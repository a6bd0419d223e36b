"""The compiled measure kernels against their numpy references, one measure at a time.

    python benchmarks/bench_measures.py                      # bench-data/small, then TREC DL 2019
    python benchmarks/bench_measures.py --shape deep --repeat 3

Qrels and run are read once; each measure is then computed alone over a fresh alignment
(``Measure.compute``: the kernel, alignment not included) on the compiled path and on the
pure path (``judged.core.native.pure()``), alternating, best of ``--repeat`` by CPU seconds
of this process (``time.process_time``: the figure a shared machine disturbs least); then
``judged.evaluate`` of the same measure (reading aside: alignment, kernel, result). The
table prints the ratios pure / compiled; both paths give the same bits
(tests/core/test_kernels.py).
"""

from __future__ import annotations

import argparse
import glob
import os
import time

import judged
import judged.core.native
from judged.core.align import align
from judged.core.measures import Measure

HERE = os.path.dirname(os.path.abspath(__file__))
DATA = os.path.join(os.path.dirname(HERE), "bench-data")
DL19 = "/work/data/dl19"
# the measures with a compiled kernel since issue 18 (set_*, iprec_at_recall, 11pt_avg, ERR, RBP),
# and nDCG@10 / AP, compiled before, as the yardstick
MEASURES = ["SetP", "SetR", "SetF", "SetAP", "SetRelP", "IPrec(recall=0.5)", "AP11", "ERR@20", "nERR@20", "ERR",
            "RBP", "RBPResidual", "nDCG@10", "AP"]


def _cpu(fn) -> float:
    t = time.process_time()
    fn()
    return time.process_time() - t


def bench(qrels, run, measures, repeat: int) -> list[tuple]:
    rows = []
    for m in measures:
        measure = Measure.parse(m)
        times = {key: [] for key in ("kernel", "kernel pure", "evaluate", "evaluate pure")}
        for _ in range(repeat):
            for pure in (False, True):
                aligned = align(qrels, run)  # compiled: the same bits as the pure path's
                with judged.core.native.pure() if pure else _nothing():
                    times["kernel" + " pure" * pure].append(_cpu(lambda: measure.compute(aligned)))
                    times["evaluate" + " pure" * pure].append(_cpu(lambda: judged.evaluate(qrels, run, [m])))
        rows.append((m, *(min(v) for v in times.values())))
    return rows


class _nothing:
    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--shape", action="append", help="bench-data shape (small, deep, wide); dl19: TREC DL 2019")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--measure", action="append", help="only these measures")
    args = ap.parse_args()
    assert judged.core.native.compiled() is not None, "the compiled extension is not built"
    for shape in args.shape or ["small", "dl19"]:
        if shape == "dl19":
            qrels = judged.read_qrels(os.path.join(DL19, "qrels.txt"))
            run = judged.read_run(sorted(glob.glob(os.path.join(DL19, "runs", "*.gz")))[0])
        else:
            qrels = judged.read_qrels(os.path.join(DATA, f"{shape}.qrels"))
            run = judged.read_run(os.path.join(DATA, f"{shape}.run"))
        print(f"{shape}: {len(run)} run lines; load average {os.getloadavg()[0]:.1f}")
        print(f"{'measure':<18} {'kernel C s':>10} {'numpy s':>8} {'ratio':>6}   {'evaluate C s':>12} {'pure s':>7} "
              f"{'ratio':>6}")
        for m, kc, kp, ec, ep in bench(qrels, run, args.measure or MEASURES, args.repeat):
            print(f"{m:<18} {kc:>10.4f} {kp:>8.4f} {kp / kc:>5.1f}x   {ec:>12.3f} {ep:>7.3f} {ep / ec:>5.1f}x")

if __name__ == "__main__":
    main()
