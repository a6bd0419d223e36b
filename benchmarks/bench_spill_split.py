"""Spill's numpy splitter against the one tokenizer on the same bytes (docs/performance.md).

    python benchmarks/generate.py --only deep     # once: bench-data/deep.run
    python benchmarks/bench_spill_split.py [--mb 64]

The splitter (``judged.core.spill._split``: each line's first field keyed, the line copied to
its partition; here 4 partitions, 2 MB chunks as spill reads them) and the tokenizer
(``judged.core.io.text.tokenize`` with the run layout: every field) on the first MB of
``deep.run``, compiled and Arrow reference; CPU seconds, best of 5 (3 for the reference).
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time

from judged.core import spill
from judged.core.io.text import tokenize
from judged.core.io.trec_files import RUN_LAYOUT
from judged.core.native import pure

DATA = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "bench-data", "deep.run")


def split_all(data: bytes, k: int = 4) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        parts = [spill.Partition(os.path.join(tmp, f"{i}.run"), os.path.join(tmp, f"{i}.lines")) for i in range(k)]
        handles = [(open(p.path, "wb"), open(p.lines_path, "wb")) for p in parts]
        view, start, lines = memoryview(data), 0, 0
        while start < len(data):
            end = data.rfind(b"\n", start, start + spill.CHUNK) + 1 or len(data)
            lines = spill._split(view[start:end], lines, k, parts, handles)
            start = end
        for run_fh, lines_fh in handles:
            run_fh.close()
            lines_fh.close()


def best(f, repeat: int) -> float:
    times = []
    for _ in range(repeat):
        t = time.process_time()
        f()
        times.append(time.process_time() - t)
    return min(times)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--mb", type=int, default=64)
    args = ap.parse_args()
    with open(DATA, "rb") as fh:
        data = fh.read(args.mb << 20)
    data = data[: data.rfind(b"\n") + 1]

    def reference():
        with pure():
            tokenize(data, RUN_LAYOUT)

    rows = {"spill's splitter (key + copy)": best(lambda: split_all(data), 5),
            "tokenizer, compiled (every field)": best(lambda: tokenize(data, RUN_LAYOUT), 5),
            "tokenizer, Arrow reference (every field)": best(reference, 3)}
    lines = data.count(b"\n")
    print(f"{len(data) / 2**20:.0f} MB, {lines} lines, load average {os.getloadavg()[0]:.1f}")
    for name, cpu in rows.items():
        print(f"{name}: {cpu:.3f} CPU s ({len(data) / 2**20 / cpu:.0f} MB/s)")


if __name__ == "__main__":
    main()
