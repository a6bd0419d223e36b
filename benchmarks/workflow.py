"""The whole workflow against `judged eval`: wall time and peak memory of each command as
a multiple of eval's on the same files (issue #19's table; not a test).

    python benchmarks/workflow.py [--queries 1000] [--depth 1000] [--judged 60] [--repeat 1]
                                  [--only holes --only compare ...] [--out bench-data/workflow]

Generates once (seeded; under bench-data/, git-ignored) two runs of QUERIES x DEPTH lines
(1,000 x 1,000: 1M lines each) and qrels of JUDGED judgments per query, two thirds from the
first run's top ranks and the rest from the second's, but never its ranks 3, 6 and 9, so the
second run meets holes in its top 10; and a second qrels version with those holes judged
(for rejudge and meta stability). Then runs each
command in a fresh process, output to /dev/null, as a user runs it, and reads the child's
wall clock, CPU time (user + system) and peak resident memory (``os.wait4``'s max RSS).
Best of REPEAT by wall clock. The load average is printed before and after: on a shared
machine wall time follows the load, CPU time and memory do not.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time


def generate(out: str, queries: int, depth: int, judged: int, seed: int = 0) -> dict:
    """Two runs over the same candidates (2 x depth per query, latent grades 0-3), the
    first better; qrels: JUDGED per query, two thirds from the first run's top ranks, the
    rest from the second's; v2: plus every hole of the second run's top 10."""
    import numpy as np
    import pyarrow as pa
    import pyarrow.csv as pacsv

    os.makedirs(out, exist_ok=True)
    paths = {"qrels": os.path.join(out, "qrels.txt"), "qrels_v2": os.path.join(out, "qrels-v2.txt"),
             "runs": [os.path.join(out, "a.run"), os.path.join(out, "b.run")]}
    if all(os.path.exists(p) for p in [paths["qrels"], paths["qrels_v2"], *paths["runs"]]):
        return paths
    rng = np.random.default_rng(seed)
    cand = 2 * depth
    grade = rng.choice(4, p=[0.7, 0.15, 0.1, 0.05], size=(queries, cand))
    qnames = np.char.add("q", np.arange(1, queries + 1).astype(str))
    ranked = []
    for noise in (1.0, 2.0):
        score = grade + rng.normal(0, noise, size=(queries, cand))
        order = np.argsort(-score, axis=1, kind="stable")[:, :depth]
        s = np.round(np.take_along_axis(score, order, axis=1), 4)
        ranked.append((order, s))
        n = queries * depth
        write = paths["runs"][len(ranked) - 1]
        table = pa.table({"qid": pa.array(np.repeat(qnames, depth)), "q0": pa.array(np.full(n, "Q0")),
                          "docid": pa.array(np.char.add("d", order.ravel().astype(str))),
                          "rank": np.tile(np.arange(1, depth + 1), queries), "score": s.ravel(),
                          "tag": pa.array(np.full(n, "wf"))})
        pacsv.write_csv(table, write, write_options=pacsv.WriteOptions(include_header=False, delimiter=" ",
                                                                      quoting_style="none"))
    first = judged * 2 // 3
    judged_mask = np.zeros((queries, cand), bool)
    rows = np.arange(queries)[:, None]
    judged_mask[rows, ranked[0][0][:, :first]] = True
    # the rest from the second run's top ranks not judged yet, in rank order, but never its
    # ranks 3, 6 and 9: there it keeps the holes the first run's pool left
    for qi in range(queries):
        extra = [d for r, d in enumerate(ranked[1][0][qi, :3 * judged]) if r not in (2, 5, 8)
                 and not judged_mask[qi, d]][:judged - first]
        judged_mask[qi, extra] = True
    v2 = judged_mask.copy()
    v2[rows, ranked[1][0][:, :10]] = True

    def write_qrels(mask, path):
        q, d = np.nonzero(mask)
        pacsv.write_csv(pa.table({"qid": pa.array(qnames[q]), "iter": pa.array(np.full(len(q), "0")),
                                  "docid": pa.array(np.char.add("d", d.astype(str))), "grade": grade[q, d]}),
                        path, write_options=pacsv.WriteOptions(include_header=False, delimiter=" ",
                                                               quoting_style="none"))
    write_qrels(judged_mask, paths["qrels"])
    write_qrels(v2, paths["qrels_v2"])
    return paths


def commands(p: dict, tmp: str) -> list:
    q, v2, runs = p["qrels"], p["qrels_v2"], p["runs"]
    return [
        ("eval", ["eval", q, *runs]),
        ("holes", ["holes", q, *runs]),
        ("compare -m nDCG@10 -m AP", ["compare", q, *runs, "-m", "nDCG@10", "-m", "AP"]),
        ("report", ["report", q, *runs, "-o", os.path.join(tmp, "report.html")]),
        ("rejudge", ["rejudge", "--qrels", q, "--qrels", v2, *runs]),
        ("pool --depth 10", ["pool", q, *runs, "--depth", "10", "-o", os.path.join(tmp, "pool.txt")]),
        ("meta power", ["meta", "power", q, *runs]),
        ("meta stability -m nDCG@10", ["meta", "stability", q, *runs, "-m", "nDCG@10", "--versus-qrels", v2]),
        ("meta holdout", ["meta", "holdout", q, *runs]),
        ("meta pooling --budget 5000", ["meta", "pooling", q, *runs, "--budget", "5000"]),
        ("--help", ["--help"]),
        ("--version", ["--version"]),
        ("eval --help", ["eval", "--help"]),
        ("compare --help", ["compare", "--help"]),
        ("report --help", ["report", "--help"]),
        ("pool --help", ["pool", "--help"]),
        ("meta pooling --help", ["meta", "pooling", "--help"]),
    ]


def measure(argv: list) -> tuple:
    """(wall s, CPU s, peak RSS MB, exit code) of one child run of judged."""
    t = time.perf_counter()
    child = subprocess.Popen([sys.executable, "-m", "judged", *argv], stdout=subprocess.DEVNULL,
                             stderr=subprocess.PIPE)
    err = child.stderr.read()
    _, status, usage = os.wait4(child.pid, 0)
    wall = time.perf_counter() - t
    child.returncode = os.waitstatus_to_exitcode(status)
    if child.returncode not in (0, 1):  # 1: a regression or a failed check, still a finished run
        sys.stderr.write(err.decode(errors="replace")[-2000:])
    return wall, usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024, child.returncode


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--queries", type=int, default=1000)
    ap.add_argument("--depth", type=int, default=1000)
    ap.add_argument("--judged", type=int, default=60, help="judgments per query (default 60)")
    ap.add_argument("--repeat", type=int, default=1)
    ap.add_argument("--only", action="append", help="commands whose label starts with this (eval always runs)")
    ap.add_argument("--out", default=os.path.join("bench-data", "workflow"))
    ap.add_argument("--generate-only", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    out = os.path.join(args.out, f"{args.queries}x{args.depth}-j{args.judged}-v2")  # v2: holes in run b's top 10
    if args.generate_only:
        generate(out, args.queries, args.depth, args.judged)
        return
    t = time.perf_counter()
    # generated in a child: a child's peak RSS counts its parent's at the fork, so this
    # process stays small (no numpy here)
    subprocess.run([sys.executable, os.path.abspath(__file__), "--generate-only", "--queries", str(args.queries),
                    "--depth", str(args.depth), "--judged", str(args.judged), "--out", args.out], check=True)
    paths = {"qrels": os.path.join(out, "qrels.txt"), "qrels_v2": os.path.join(out, "qrels-v2.txt"),
             "runs": [os.path.join(out, "a.run"), os.path.join(out, "b.run")]}
    lines = sum(1 for _ in open(paths["runs"][0]))
    print(f"2 runs x {lines:,} lines, qrels {sum(1 for _ in open(paths['qrels'])):,} judgments "
          f"(ready in {time.perf_counter() - t:.1f} s); python {sys.version.split()[0]}, {os.cpu_count()} cores")
    print(f"load average before: {' '.join(f'{x:.1f}' for x in os.getloadavg())}\n")
    print("| command | wall s | x eval | CPU s | x eval | peak MB | x eval |")
    print("|---|---:|---:|---:|---:|---:|---:|")
    base = None
    for label, cmd in commands(paths, out):
        if label != "eval" and args.only and not any(label.startswith(o) for o in args.only):
            continue
        best = min((measure(cmd) for _ in range(args.repeat)), key=lambda r: r[0])
        wall, cpu, rss, code = best
        if base is None:
            base = best
        flag = "" if code in (0, 1) else f" (exit {code})"
        print(f"| `judged {label}`{flag} | {wall:.2f} | {wall / base[0]:.1f}x | {cpu:.2f} | {cpu / base[1]:.1f}x "
              f"| {rss:.0f} | {rss / base[2]:.1f}x |", flush=True)
    print(f"\nload average after: {' '.join(f'{x:.1f}' for x in os.getloadavg())}")


if __name__ == "__main__":
    main()
