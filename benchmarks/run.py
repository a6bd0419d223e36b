"""judged side by side with its peers; prints ratios, since shared machines are noisy.

    python benchmarks/generate.py                 # once: writes bench-data/
    python benchmarks/run.py                      # end to end on every shape, then in memory
    python benchmarks/run.py --shape deep --repeat 3 --skip ir_measures
    python benchmarks/run.py --only memory
    python benchmarks/run.py --only whole-process --shape deep --repeat 5 --trec-eval PATH

End to end: files in, per-query values of nDCG@10, AP, P@10, RR and R@100 out. Every tool
runs in its own child process (one process tree); the child times its work from the first
byte read to the last per-query value, and ``os.wait4`` gives the child's CPU time and peak
memory (max RSS). Tools: judged, pytrec_eval (parse + evaluate), ir_measures, ranx (cold:
numba compilation included, and warm: compiled first on a tiny input), trec_eval (when a
``trec_eval`` binary is on PATH) and pyarrow's CSV reader reading the run file alone (the
floor judged's own reader stands on).

In memory: runs and qrels already read into each tool's own objects; many measures and
conventions over several runs.

Whole process (issue #19): what a user waits for, interpreter start and imports included,
each tool a fresh process taking turns with the others: ``judged eval`` with the five
measures (its table on stdout, to a file), pyarrow's ``read_csv`` of the run file alone
with the options a TREC run needs, trec_eval (``--trec-eval PATH``, repeatable: e.g. the
``make`` build and an ``-O2`` one) and pytrec_eval (import, parse both files, evaluate);
also ``judged --help`` and ``judged --version``.
Wall, CPU (user + system) and peak resident memory of each child (``os.wait4``), the
median and the best of ``--repeat``, as multiples of judged's. judged's bytecode is
compiled first and the children may read it (``PYTHONDONTWRITEBYTECODE`` is dropped from
their environment), as for an installed package: numpy's and pyarrow's bytecode is
compiled at install, and recompiling judged's ~100 modules at every start costs 0.1-0.2 s.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
DATA = os.path.join(os.path.dirname(HERE), "bench-data")

# one child program per tool; {qrels} and {run} are file paths; each prints {"seconds": ...}
COMMON = "import json, sys, time\nqrels_path, run_path = sys.argv[1], sys.argv[2]\n"
TOOLS = {
    "judged": """
import judged, judged.core.evaluation, judged.core.stream  # judged imports lazily; load it as the others load theirs
t = time.perf_counter()
r = judged.evaluate(qrels_path, run_path, ["nDCG@10", "AP", "P@10", "RR", "R@100"])
values = r.runs[run_path].values
print(json.dumps({"seconds": time.perf_counter() - t, "queries": len(r.runs[run_path].qids)}))
""",
    "pytrec_eval": """
import pytrec_eval
t = time.perf_counter()
with open(qrels_path) as f:
    qrels = pytrec_eval.parse_qrel(f)
with open(run_path) as f:
    run = pytrec_eval.parse_run(f)
ev = pytrec_eval.RelevanceEvaluator(qrels, {"ndcg_cut.10", "map", "P.10", "recip_rank", "recall.100"})
res = ev.evaluate(run)
print(json.dumps({"seconds": time.perf_counter() - t, "queries": len(res)}))
""",
    "ir_measures": """
import ir_measures
from ir_measures import nDCG, AP, P, RR, R
t = time.perf_counter()
qrels = list(ir_measures.read_trec_qrels(qrels_path))
run = list(ir_measures.read_trec_run(run_path))
res = list(ir_measures.iter_calc([nDCG@10, AP, P@10, RR, R@100], qrels, run))
print(json.dumps({"seconds": time.perf_counter() - t, "queries": len({m.query_id for m in res})}))
""",
    "ranx (cold)": """
import ranx
t = time.perf_counter()
qrels = ranx.Qrels.from_file(qrels_path, kind="trec")
run = ranx.Run.from_file(run_path, kind="trec")
ranx.evaluate(qrels, run, ["ndcg@10", "map", "precision@10", "mrr", "recall@100"], return_mean=False)
print(json.dumps({"seconds": time.perf_counter() - t, "queries": len(run)}))
""",
    "ranx (warm)": """
import ranx
METRICS = ["ndcg@10", "map", "precision@10", "mrr", "recall@100"]
c = time.perf_counter()
ranx.evaluate(ranx.Qrels({"q": {"a": 1}}), ranx.Run({"q": {"a": 1.0, "b": 0.5}}), METRICS, return_mean=False)
compile_seconds = time.perf_counter() - c
t = time.perf_counter()
qrels = ranx.Qrels.from_file(qrels_path, kind="trec")
run = ranx.Run.from_file(run_path, kind="trec")
ranx.evaluate(qrels, run, METRICS, return_mean=False)
print(json.dumps({"seconds": time.perf_counter() - t, "compile_seconds": compile_seconds, "queries": len(run)}))
""",
    "pyarrow read": """
import pyarrow as pa, pyarrow.csv as pacsv
t = time.perf_counter()
table = pacsv.read_csv(run_path, read_options=pacsv.ReadOptions(
    column_names=["qid", "q0", "docid", "rank", "score", "tag"], block_size=1 << 24),
    parse_options=pacsv.ParseOptions(delimiter=" ", quote_char=False))
print(json.dumps({"seconds": time.perf_counter() - t, "queries": 0}))
""",
}
# The same two programs timed on their second call in the process: the memory a first call
# maps (and the kernel's page faults behind it, costly when transparent huge pages need
# compaction) is then already there. A stricter floor for "the time pyarrow needs to read".
SECOND = """
import gc
for call in ("first", "second"):  # each in its own namespace: the first call's results are freed
    exec(compile(FIRST, call, "exec"), {"json": json, "sys": sys, "time": time,
                                        "qrels_path": qrels_path, "run_path": run_path})
    gc.collect()
"""
for _name in ("judged", "pyarrow read"):
    TOOLS[_name + " (second in process)"] = f"FIRST = {TOOLS[_name]!r}\n" + SECOND
TREC_EVAL = ["-q", "-m", "ndcg_cut.10", "-m", "map", "-m", "P.10", "-m", "recip_rank", "-m", "recall.100"]


TIMEOUT = 1200  # seconds per child


PURE = "JUDGED_PURE_PYTHON=1 "  # a tool name starting so runs with judged's compiled extension off


def run_child(argv: list[str], env: dict | None = None, stdout: str | None = None) -> dict:
    """Run one child; its printed JSON plus wall time, CPU time and peak memory from wait4.
    ``stdout``: a file the child writes its output to instead (nothing is parsed then)."""
    import tempfile

    env = dict(os.environ if env is None else env)
    if argv and argv[0] == PURE:
        argv, env["JUDGED_PURE_PYTHON"] = argv[1:], "1"
    with (open(stdout, "w+b") if stdout else tempfile.TemporaryFile()) as out_f, tempfile.TemporaryFile() as err_f:
        t = time.perf_counter()
        p = subprocess.Popen(argv, stdout=out_f, stderr=err_f, env=env)
        timer = threading.Timer(TIMEOUT, p.kill)  # a blocking wait: the wall time is not rounded to a poll
        timer.start()
        _, status, usage = os.wait4(p.pid, 0)
        wall = time.perf_counter() - t
        timer.cancel()
        p.returncode = os.waitstatus_to_exitcode(status)
        if p.returncode == -9:
            return {"error": [f"killed (timed out after {TIMEOUT} s?)"]}
        out_f.seek(0)
        err_f.seek(0)
        out, err = out_f.read(), err_f.read()
    if p.returncode != 0:
        return {"error": err.decode(errors="replace").strip().splitlines()[-1:] or ["failed"]}
    try:
        info = {"seconds": wall} if stdout else json.loads(out.decode().strip().splitlines()[-1])
    except (ValueError, IndexError):
        info = {"seconds": wall}  # trec_eval: the whole process is the work
    info.update(wall=wall, cpu=usage.ru_utime + usage.ru_stime, peak_mb=usage.ru_maxrss / 1024)
    return info


def end_to_end(shape: str, repeat: int, skip: set[str]) -> dict:
    qrels, run = os.path.join(DATA, f"{shape}.qrels"), os.path.join(DATA, f"{shape}.run")
    if not os.path.exists(run):
        sys.exit(f"{run} missing: run python benchmarks/generate.py --only {shape}")
    tools = {name: [sys.executable, "-c", COMMON + code, qrels, run] for name, code in TOOLS.items()}
    # the same code on the pure Python/numpy path (no C compiler at install time)
    tools["judged (pure Python)"] = [PURE, *tools["judged"]]
    binary = shutil.which("trec_eval")
    if binary:
        tools["trec_eval"] = [binary, *TREC_EVAL, qrels, run]
    # the command line, timed as a whole process (interpreter start and imports included)
    tools["judged eval (CLI)"] = [sys.executable, "-m", "judged", "eval", qrels, run, "-m", "nDCG@10", "-m", "AP",
                                  "-m", "P@10", "-m", "RR", "-m", "R@100", "--format", "json"]
    tools = {name: argv for name, argv in tools.items() if name not in skip and not any(name.startswith(s) for s in skip)}
    results = round_robin(tools, repeat, once=("ranx (cold)",))
    for name, r in results.items():
        print(f"  {name:<14} " + _fmt(r), flush=True)
    return results


def round_robin(tools: dict, repeat: int, once=()) -> dict:
    """Each tool's best run (least wall time; its CPU the least too) of ``repeat``, the tools
    taking turns, one run of each per round: a change in the machine's load between rounds
    touches every tool alike and the ratios hold. Tools in ``once`` run in the first round only."""
    tries = {name: [] for name in tools}
    for round_ in range(repeat):
        for name, argv in tools.items():
            if round_ == 0 or name not in once:
                tries[name].append(run_child(argv))
    best = {}
    for name, runs in tries.items():
        good = [t for t in runs if "error" not in t]
        best[name] = min(good, key=lambda t: t["seconds"]) if good else runs[0]
        if good:
            best[name]["cpu"] = min(t["cpu"] for t in good)
    return best


def _fmt(r: dict) -> str:
    if "error" in r:
        return f"failed: {r['error']}"
    extra = f"  (numba compile {r['compile_seconds']:.1f} s)" if "compile_seconds" in r else ""
    return f"{r['seconds']:7.2f} s   cpu {r['cpu']:7.2f} s   peak {r['peak_mb']:7.0f} MB{extra}"


def print_ratios(results: dict) -> None:
    j = results.get("judged")
    if not j or "error" in j:
        return
    peers = {k: v for k, v in results.items()
             if not k.startswith(("judged", "pyarrow read")) and k != "ranx (cold)" and "error" not in v}
    for name, r in results.items():
        if name == "judged" or "error" in r:
            continue
        print(f"  judged / {name:<14} time {j['seconds'] / r['seconds']:6.2f}   cpu {j['cpu'] / r['cpu']:6.2f}"
              f"   memory {j['peak_mb'] / r['peak_mb']:6.2f}")
    if peers:
        fastest = min(peers, key=lambda k: peers[k]["seconds"])
        target = "met" if j["seconds"] <= peers[fastest]["seconds"] / 3 else "NOT met"
        print(f"  target <= 1/3 of the fastest peer ({fastest}): {target}")
    if "pyarrow read" in results and "error" not in results["pyarrow read"]:
        target = "met" if j["seconds"] <= 1.5 * results["pyarrow read"]["seconds"] else "NOT met"
        print(f"  target <= 1.5 x pyarrow's read: {target}")
    warm_j, warm_p = results.get("judged (second in process)"), results.get("pyarrow read (second in process)")
    if warm_j and warm_p and "error" not in warm_j and "error" not in warm_p:
        ratio = warm_j["seconds"] / warm_p["seconds"]
        print(f"  second call in process: judged / pyarrow read {ratio:.2f} "
              f"({'met' if ratio <= 1.5 else 'NOT met'} on this stricter floor)")
    if "trec_eval" in results and "error" not in results["trec_eval"]:
        target = "met" if j["peak_mb"] <= results["trec_eval"]["peak_mb"] else "NOT met"
        print(f"  target peak memory <= trec_eval's: {target}")
    cli = results.get("judged eval (CLI)")
    if cli and "error" not in cli:
        print(f"  judged eval (CLI), whole process: {cli['wall']:.2f} s wall, {cli['cpu']:.2f} s cpu")


# -- in memory ---------------------------------------------------------------------------

MEMORY = COMMON + """
import numpy as np, judged
tool, n_runs = sys.argv[3], int(sys.argv[4])
qrels = judged.read_qrels(qrels_path)
base = judged.read_run(run_path)
rng = np.random.default_rng(1)
runs = {f"run{i}": judged.Run(base.qid, base.docid, base.score + rng.normal(0, 0.05, len(base)), name=f"run{i}")
        for i in range(n_runs)}

def as_dicts(run):
    out = {}
    for q, d, s in zip(run.qid.to_pylist(), run.docid.to_pylist(), run.score.tolist()):
        out.setdefault(q, {})[d] = s
    return out

qrels_dict = {}
for q, d, g in zip(qrels.qid.to_pylist(), qrels.docid.to_pylist(), qrels.grade.tolist()):
    qrels_dict.setdefault(q, {})[d] = int(g)
if tool == "judged":
    import judged.core.evaluation, judged.core.measures.binary, judged.core.measures.dcg  # loaded lazily; load them as the peers load theirs
    measures = ["nDCG@10", "nDCG@100", "nDCG(gain=exp)@10", "AP", "AP(rel=2)", "P@5", "P@10", "P@20", "R@100",
                "R@1000", "RR", "Rprec", "Bpref", "Success@10", "nDCG(unjudged=condensed)@10"]
    t = time.perf_counter()
    r = judged.evaluate(qrels, runs, measures)
    n = sum(len(v) for rr in r.runs.values() for v in rr.values.values())
elif tool == "pytrec_eval":
    import pytrec_eval
    runs = {k: as_dicts(v) for k, v in runs.items()}
    t = time.perf_counter()
    ev1 = pytrec_eval.RelevanceEvaluator(qrels_dict, {"ndcg_cut.10,100", "map", "P.5,10,20", "recall.100,1000",
                                                     "recip_rank", "Rprec", "bpref", "success.10"})
    ev2 = pytrec_eval.RelevanceEvaluator(qrels_dict, {"map"}, relevance_level=2)
    ev3 = pytrec_eval.RelevanceEvaluator(qrels_dict, {"ndcg_cut.10"}, judged_docs_only_flag=True)
    n = 0
    for run in runs.values():
        for ev in (ev1, ev2, ev3):
            n += sum(len(v) for v in ev.evaluate(run).values())
    # no exponential-gain nDCG in trec_eval: 14 of judged's 15 measures
elif tool == "ranx":
    import ranx
    metrics = ["ndcg@10", "ndcg@100", "ndcg_burges@10", "map", "precision@5", "precision@10", "precision@20",
               "recall@100", "recall@1000", "mrr", "r-precision", "bpref", "hit_rate@10"]
    ranx.evaluate(ranx.Qrels({"q": {"a": 1}}), ranx.Run({"q": {"a": 1.0}}), metrics)  # compile (warm)
    rq = ranx.Qrels(qrels_dict)
    rruns = [ranx.Run(as_dicts(v)) for v in runs.values()]
    t = time.perf_counter()
    n = 0
    for run in rruns:
        n += sum(len(v) for v in ranx.evaluate(rq, run, metrics, return_mean=False).values())
    # ranx has no AP(rel=2) or condensed nDCG: 13 of judged's 15 measures
elif tool == "ir_measures":
    import ir_measures
    from ir_measures import nDCG, AP, P, R, RR, Rprec, Bpref, Success
    # exp-gain nDCG would go to ir_measures' gdeval provider (a Perl script, which fails here)
    ms = [nDCG@10, nDCG@100, AP, AP(rel=2), P@5, P@10, P@20, R@100, R@1000, RR, Rprec,
          Bpref, Success@10, nDCG(judged_only=True)@10]
    dict_runs = {k: as_dicts(v) for k, v in runs.items()}
    t = time.perf_counter()
    n = 0
    for run in dict_runs.values():
        n += sum(1 for _ in ir_measures.iter_calc(ms, qrels_dict, run))
print(json.dumps({"seconds": time.perf_counter() - t, "values": n}))
"""


def in_memory(shape: str, n_runs: int, skip: set[str], repeat: int = 1) -> dict:
    qrels, run = os.path.join(DATA, f"{shape}.qrels"), os.path.join(DATA, f"{shape}.run")
    tools = {tool: [*([PURE] if tool.startswith("judged (pure") else []), sys.executable, "-c", MEMORY, qrels, run,
                    tool.split(" ")[0], str(n_runs)]
             for tool in ("judged", "judged (pure Python)", "pytrec_eval", "ranx", "ir_measures") if tool not in skip}
    results = round_robin(tools, repeat)
    for tool, r in results.items():
        print(f"  {tool:<14} " + _fmt(r) + f"   {r.get('values', 0)} values", flush=True)
    j = results.get("judged")
    if j and "error" not in j:
        for tool, r in results.items():
            if not tool.startswith("judged") and "error" not in r:
                print(f"  {tool} / judged: {r['seconds'] / j['seconds']:6.1f} x  (target >= 10 x)")
    return results


# -- whole process -------------------------------------------------------------------------

PYARROW_READ = """
import sys, pyarrow.csv as pacsv
pacsv.read_csv(sys.argv[1], read_options=pacsv.ReadOptions(column_names=["qid", "q0", "docid", "rank", "score", "tag"]),
               parse_options=pacsv.ParseOptions(delimiter=" ", quote_char=False))
"""
PYTREC_EVAL = """
import sys, pytrec_eval
with open(sys.argv[1]) as f:
    qrels = pytrec_eval.parse_qrel(f)
with open(sys.argv[2]) as f:
    run = pytrec_eval.parse_run(f)
pytrec_eval.RelevanceEvaluator(qrels, {"ndcg_cut.10", "map", "P.10", "recip_rank", "recall.100"}).evaluate(run)
"""
FIVE = ["-m", "nDCG@10", "-m", "AP", "-m", "P@10", "-m", "RR", "-m", "R@100"]


def whole_process(shape: str, repeat: int, skip: set[str], trec_evals: list[str], baseline: str | None = None) -> dict:
    """Each tool as a whole process, round robin; prints the table and returns the runs.
    ``baseline``: the ``src`` folder of another judged checkout (its extension built in
    place), timed as a tool of its own, for a before/after in the same sitting."""
    import statistics

    qrels, run = os.path.join(DATA, f"{shape}.qrels"), os.path.join(DATA, f"{shape}.run")
    if not os.path.exists(run):
        sys.exit(f"{run} missing: run python benchmarks/generate.py --only {shape}")
    import judged

    src = os.path.dirname(judged.__file__)
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    subprocess.run([sys.executable, "-m", "compileall", "-q", src], check=True, env=env, stdout=subprocess.DEVNULL)
    out = os.path.join(DATA, f"{shape}.judged-eval.out")
    tools = {"judged eval": [sys.executable, "-m", "judged", "eval", qrels, run, *FIVE],
             "pyarrow read_csv": [sys.executable, "-c", PYARROW_READ, run],
             "pytrec_eval": [sys.executable, "-c", PYTREC_EVAL, qrels, run],
             "judged --help": [sys.executable, "-m", "judged", "--help"],
             "judged --version": [sys.executable, "-m", "judged", "--version"]}
    envs = {name: env for name in tools}
    if baseline:
        subprocess.run([sys.executable, "-m", "compileall", "-q", baseline], check=True, env=env, stdout=subprocess.DEVNULL)
        tools["judged eval (baseline)"] = tools["judged eval"]
        envs["judged eval (baseline)"] = dict(env, PYTHONPATH=os.path.abspath(baseline))
    for path in trec_evals:
        tools[f"trec_eval ({os.path.basename(path)})"] = [path, *TREC_EVAL, qrels, run]
    tools = {k: v for k, v in tools.items() if not any(k.startswith(s) for s in skip)}
    tries = {name: [] for name in tools}
    load = [os.getloadavg()[0]]
    for _ in range(repeat):
        for name, argv in tools.items():
            stdout = out if name == "judged eval" else os.devnull
            tries[name].append(run_child(argv, env=envs.get(name, env), stdout=stdout))
    load.append(os.getloadavg()[0])
    table = {}
    for name, runs in tries.items():
        good = [t for t in runs if "error" not in t]
        if not good:
            table[name] = runs[0]
            continue
        table[name] = {f"{stat}_{k}": f([t[k] for t in good]) for k in ("wall", "cpu", "peak_mb")
                       for stat, f in (("median", statistics.median), ("best", min))}
    print(f"whole process, {shape}: {len(tries)} tools x {repeat} rounds, load average "
          f"{load[0]:.1f} before, {load[1]:.1f} after ({os.cpu_count()} cores)")
    print(f"  {'tool':<28} {'wall s (best)':>14} {'CPU s (best)':>13} {'peak MB':>8}   judged / tool: wall, CPU, memory")
    j = table.get("judged eval", {})
    for name, r in table.items():
        if "error" in r:
            print(f"  {name:<28} failed: {r['error']}")
            continue
        ratio = "" if name == "judged eval" or "median_wall" not in j else (
            f"   {j['median_wall'] / r['median_wall']:.2f}x, {j['median_cpu'] / r['median_cpu']:.2f}x, "
            f"{j['median_peak_mb'] / r['median_peak_mb']:.2f}x")
        print(f"  {name:<28} {r['median_wall']:6.2f} ({r['best_wall']:5.2f}) {r['median_cpu']:6.2f} ({r['best_cpu']:4.2f}) "
              f"{r['median_peak_mb']:8.0f}{ratio}")
    print("  (medians; best in parentheses; ratios of medians)")
    return {"load": load, "table": table, "runs": tries}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--shape", action="append", choices=["deep", "wide", "small"])
    ap.add_argument("--only", choices=["end-to-end", "memory", "whole-process"])
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--skip", action="append", default=[], help="a tool to leave out (repeatable)")
    ap.add_argument("--memory-shape", default="small", choices=["deep", "wide", "small"])
    ap.add_argument("--runs", type=int, default=5, help="runs for the in-memory benchmark")
    ap.add_argument("--trec-eval", action="append", default=[],
                    help="a trec_eval binary for --only whole-process (repeatable; default: trec_eval on PATH)")
    ap.add_argument("--baseline", help="--only whole-process: also time the judged whose src folder this is")
    ap.add_argument("--json", help="also write the figures to this file")
    args = ap.parse_args()
    skip = set(args.skip)
    figures = {}
    print(f"{os.cpu_count()} cores, load average {os.getloadavg()[0]:.1f}")
    if args.only == "whole-process":
        trec_evals = args.trec_eval or [p for p in [shutil.which("trec_eval")] if p]
        for shape in args.shape or ["deep", "small"]:
            figures[shape] = whole_process(shape, args.repeat, skip, trec_evals, args.baseline)
    elif args.only != "memory":
        for shape in args.shape or ["small", "deep", "wide"]:
            print(f"end to end, {shape}: nDCG@10, AP, P@10, RR, R@100 per query")
            figures[shape] = end_to_end(shape, args.repeat, skip)
            print_ratios(figures[shape])
    if args.only not in ("end-to-end", "whole-process"):
        print(f"in memory, {args.memory_shape} x {args.runs} runs: 15 measures and conventions")
        figures["memory"] = in_memory(args.memory_shape, args.runs, skip, args.repeat)
    if args.json:
        with open(args.json, "w") as fh:
            json.dump(figures, fh, indent=2)


if __name__ == "__main__":
    main()
