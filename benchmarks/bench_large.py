"""A run file far larger than the deep one, evaluated with bounded memory (issue #6).

    python benchmarks/generate.py --only deep          # once
    python benchmarks/bench_large.py --copies 29       # 29 x 7M = 203M lines, about 7.7 GB

Writes ``bench-data/large.run`` and ``large.qrels`` by repeating the deep collection with
renamed queries (copy i's query ``q7`` becomes ``c<i>q7``), so the file stays grouped by
query and every copy is judged. Then ``judged eval`` runs on it in a child process (as
``benchmarks/run.py`` runs every tool) and prints wall time, CPU time and peak memory,
with the file's size and line count: peak memory follows the qrels and the pieces in
flight, not the run file.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from run import DATA, run_child  # noqa: E402


def replicate(source: str, target: str, copies: int) -> int:
    """Write ``copies`` renamed copies of ``source`` (lines starting with a qid) to ``target``;
    returns the number of lines written."""
    lines = 0
    with open(source, "rb") as fh:
        data = fh.read()
    if not data.endswith(b"\n"):
        data += b"\n"
    with open(target + ".tmp", "wb") as out:
        for i in range(copies):
            prefix = f"c{i}".encode()
            out.write(prefix + data[:-1].replace(b"\n", b"\n" + prefix) + b"\n")
            lines += data.count(b"\n")
    os.replace(target + ".tmp", target)
    return lines


def _count_lines(path: str) -> int:
    n = 0
    with open(path, "rb") as fh:
        while chunk := fh.read(1 << 24):
            n += chunk.count(b"\n")
    return n


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--copies", type=int, default=29, help="copies of the deep collection (29: 203M lines)")
    ap.add_argument("--keep", action="store_true", help="keep bench-data/large.* afterwards")
    ap.add_argument("--write-only", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args()
    deep_run, deep_qrels = os.path.join(DATA, "deep.run"), os.path.join(DATA, "deep.qrels")
    if not os.path.exists(deep_run):
        sys.exit(f"{deep_run} missing: run python benchmarks/generate.py --only deep")
    run, qrels = os.path.join(DATA, "large.run"), os.path.join(DATA, "large.qrels")
    if args.write_only:
        replicate(deep_run, run, args.copies)
        replicate(deep_qrels, qrels, args.copies)
        return
    # written by a child: a child's peak memory as wait4 reports it starts from its parent's
    # (Linux carries the high-water mark over fork/vfork and exec), so this process stays small
    subprocess.run([sys.executable, __file__, "--write-only", "--copies", str(args.copies)], check=True)
    lines, judgments = _count_lines(run), _count_lines(qrels)
    size = os.path.getsize(run)
    print(f"{run}: {lines:,} lines, {size / 1e9:.2f} GB; {judgments:,} judgments ({os.path.getsize(qrels) / 1e6:.0f} MB)")
    argv = [sys.executable, "-m", "judged", "eval", qrels, run, "-m", "nDCG@10", "-m", "AP", "-m", "P@10",
            "-m", "RR", "-m", "R@100", "--format", "json"]
    r = run_child(argv)
    if "error" in r:
        print("judged eval failed:", r["error"])
    else:
        print(f"judged eval: {r['wall']:.1f} s wall, {r['cpu']:.1f} s CPU, peak {r['peak_mb']:,.0f} MB, "
              f"{lines / r['wall'] / 1e6:.1f}M lines/s")
    if not args.keep:
        os.remove(run)
        os.remove(qrels)


if __name__ == "__main__":
    main()
