"""``judged eval``: score runs against qrels."""

from __future__ import annotations

import csv
import os
import sys

from . import Formatter
from ..core.words import counted
from .check_options import add_check_options, configure, print_checks, side_files
from .common import (add_convention_options, add_machine_option, add_record_options, format_help, load_manifest,
                     print_json, print_query_set, save_record_of, settings_of, split_inputs)
from ..core.errors import ParseError, UsageError

# the Spark master of --engine spark without --spark-master
SPARK_MASTER = "local[2]"

HELP = """Score one or more runs against qrels. Default measures: nDCG@10 and Judged@10.

example:
  judged eval qrels.txt bm25.run dense.run -m nDCG@10 -m AP -m 'P(rel=2)@10' --format json
  judged eval --beir scifact/ dense.run --split test --ignore-identical-ids
  judged eval irds:beir/scifact/test dense.run
  judged eval qrels-v1.txt bm25.run dense.run --versus-qrels qrels-v2.txt   # the rejudging report
  judged eval qrels.txt bm25.run dense.run --machine llm-labels.txt    # + machine-filled scores, apart
"""


def register(sub) -> None:
    p = sub.add_parser("eval", help="score runs against qrels", description=HELP,
                       formatter_class=Formatter)
    p.add_argument("qrels", help="qrels: TREC (qid iter docid grade), BEIR TSV, JSON, Parquet; gzip, bz2, xz accepted; "
                                 "irds:<dataset-id> (ir_datasets); omitted with --beir")
    p.add_argument("runs", nargs="*", metavar="RUN", help="TREC run files (qid Q0 docid rank score tag), JSON or Parquet")
    p.add_argument("--beir", metavar="DIR", help="a BEIR dataset folder: the qrels are DIR/qrels/<split>.tsv; or the same "
                                                 "collection as a Hugging Face datasets folder (README configs, "
                                                 "save_to_disk, mteb/* parquet or jsonl files): its default/qrels config")
    p.add_argument("--split", default="test", help="the qrels split with --beir (default: test); also the split read "
                                                  "from MTEB predictions files given as runs")
    p.add_argument("--subset", "--hf-subset", metavar="NAME",
                   help="one subset of the collection and of MTEB predictions files given as runs: a language of a "
                        "multilingual MTEB task (its <NAME>-qrels config; the predictions' NAME results), or a "
                        "subfolder that is a collection (CQADupStack's forums); default: the only one, or 'default'")
    p.add_argument("--versus-qrels", "--qrels", action="append", dest="qrels_versions", metavar="QRELS",
                   help="a later qrels version, repeatable: the rejudging report (as judged rejudge): per run the "
                        "score and Judged@k under each version, the order of the runs, the pairs that flipped "
                        "(--qrels: the old spelling, kept)")
    p.add_argument("-m", "--measure", action="append", dest="measures", metavar="MEASURE",
                   help="measure in ir_measures syntax, repeatable: nDCG@10, AP, P(rel=2)@10, nDCG(gain=exp)@10; or "
                        "trec_eval's: ndcg_cut.10, P.5,10, set_F.0.5, all_trec, official (`judged measures` lists them all)")
    p.add_argument("--per-query", action="store_true", help="also print every query's value")
    p.add_argument("--format", choices=["table", "json", "tsv", "csv", "trec_eval"], default="table", help=format_help(["table", "json", "tsv", "csv", "trec_eval"]))
    p.add_argument("--engine", choices=["local", "spark"], default="local",
                   help="local (default): this process; spark: Spark executors, by query blocks (needs judged[spark])")
    p.add_argument("--spark-master", default=None, metavar="URL",
                   help=f"Spark master for --engine spark (default: {SPARK_MASTER})")
    p.add_argument("--spark-logs", action="store_true",
                   help="with --engine spark: Spark's own log lines, stage bars and warnings on stderr (default: "
                        "in a log file, judged's progress instead; also JUDGED_SPARK_LOGS=1)")
    add_machine_option(p)
    add_convention_options(p)
    add_check_options(p)
    add_record_options(p)
    g = p.add_argument_group("experiment trackers")
    g.add_argument("--mlflow", action="store_true",
                   help="also log the result to MLflow (pip install 'judged[mlflow]'), to MLFLOW_TRACKING_URI: the "
                        "conventions as params, the means as metrics, the per-query values, the JSON and the holes "
                        "report as artifacts (judged.integrations.mlflow)")
    g.add_argument("--mlflow-experiment", metavar="NAME", help="with --mlflow: the experiment (default: MLflow's)")
    g.add_argument("--mlflow-run-name", metavar="NAME", help="with --mlflow: the run's name (default: MLflow's)")
    p.set_defaults(func=run, precheck=inputs_named)


def inputs_named(args) -> None:
    """Before the engine's imports (0.2 s): a run is given and the qrels and run files named
    exist, up to the first ``irds:`` id or URL (Spark's); ``--beir``, ``--manifest`` and
    ``--versus-qrels`` are their readers'."""
    if args.beir or args.manifest or args.qrels_versions:
        return
    if not args.runs:
        raise UsageError("give at least one RUN after the qrels")
    for path in (args.qrels, *args.runs):
        if path.startswith("irds:") or "://" in path:
            return  # read, and refused, by the engine in this order
        if not os.path.exists(path):
            raise ParseError(path, None, "no such file")


def run(args) -> int:
    from ..core.evaluation import DEFAULT_MEASURES, evaluate
    from ..core.querysets import refuse_disjoint_runs

    if args.engine != "spark" and (args.spark_master is not None or args.spark_logs):
        raise UsageError("--spark-master and --spark-logs go with --engine spark")
    if args.qrels_versions:
        return run_rejudge(args)
    if args.machine and (args.engine == "spark" or args.format == "trec_eval"):
        raise UsageError("--machine shows machine-filled scores apart: use it with --engine local and --format "
                         "table, json, tsv or csv")
    manifest = load_manifest(args)
    qrels, runs = args.qrels, list(args.runs)
    if args.beir:
        from ..core.io import dataset_qrels

        qrels = dataset_qrels(args.beir, args.split, on_duplicate=args.on_duplicate, subset=args.subset)
        runs = [args.qrels, *runs]
    elif manifest is not None:
        qrels, runs = split_inputs(manifest, [args.qrels, *runs])
        args.qrels = qrels or manifest.resolve(manifest.qrels["path"])  # where the checks look for a scale
    elif (args.split != "test" or args.subset) and qrels and os.path.isdir(qrels):
        from ..core.io import dataset_qrels

        qrels = dataset_qrels(qrels, args.split, on_duplicate=args.on_duplicate, subset=args.subset)
    runs = _mteb_splits(runs, args)
    if not runs:
        raise UsageError("give at least one RUN after the qrels")
    settings, side = settings_of(args), side_files(args)  # the conventions and the side files, once
    if manifest is not None:
        from ..core.manifest import evaluate_frozen

        result = evaluate_frozen(manifest, runs, qrels=qrels, on_duplicate=settings.on_duplicate, side=side)
    else:
        measures = args.measures or list(DEFAULT_MEASURES)
        if "all_trec" in measures:
            print("note: -m all_trec: trec_eval's measures at its default cutoffs, but for trec_eval 10's rbp, "
                  "rbp_resid and unj (not in trec_eval 9's all_trec, which pytrec_eval holds; judged's RBP, "
                  "RBPResidual and Judged@k are other conventions) and the string relstring", file=sys.stderr)
        if args.engine == "spark":
            from ..spark import evaluate_files

            if settings.depth_cut is not None:
                raise UsageError("--engine spark does not take --depth-cut yet")
            if any(f is not None for f in (side.scale, side.requirements, side.eligibility, side.unanswerable)):
                raise UsageError("--engine spark does not take side files (scale, requirements, eligibility, ...) yet")
            result = evaluate_files(qrels, runs, measures, master=args.spark_master or SPARK_MASTER,
                                    logs=True if args.spark_logs else None, settings=settings)
        else:
            result = evaluate(qrels, runs, measures, settings=settings, side=side, progress=sys.stderr.isatty())
    refuse_disjoint_runs(result)
    configure(result, args)
    machine = None
    if args.machine:
        from ..analyses.holes.machine import machine_filled

        machine = machine_filled(result, args.machine)
    if args.save:
        save_record_of(result, args, manifest)
    if args.mlflow or args.mlflow_experiment or args.mlflow_run_name:
        log_to_mlflow(result, args)
    out = sys.stdout
    if args.format == "json":
        d = result.to_dict(per_query=args.per_query)
        if machine is not None:
            add_machine_json(d, machine, args.per_query)
        print_json(d)
    elif args.format in ("tsv", "csv"):
        write_delimited(result, out, "\t" if args.format == "tsv" else ",", args.per_query, machine)
    elif args.format == "trec_eval":
        write_trec_eval(result, out)
    else:
        print_table(result, args.per_query, machine)
    return 0


def log_to_mlflow(result, args) -> None:
    """``--mlflow``: one MLflow run holding the result (:func:`judged.integrations.mlflow.log_result`),
    and one line on stderr saying where it went."""
    if not args.mlflow:
        raise UsageError("--mlflow-experiment and --mlflow-run-name go with --mlflow")
    try:
        import mlflow

        from ..integrations.mlflow import log_result
    except ImportError as exc:
        raise UsageError(f"--mlflow needs mlflow: pip install 'judged[mlflow]' ({exc})") from None
    if args.mlflow_experiment:
        mlflow.set_experiment(args.mlflow_experiment)
    with mlflow.start_run(run_name=args.mlflow_run_name) as run:
        logged = log_result(result)
    print(f"logged to MLflow run {run.info.run_id} at {mlflow.get_tracking_uri()}: {len(logged['params'])} params, "
          f"{len(logged['metrics'])} metrics, artifacts {', '.join(logged['artifacts'])}", file=sys.stderr)


def add_machine_json(d: dict, machine, per_query: bool) -> None:
    """``machine`` (the labels, their convention) and per run ``machine_filled``: apart from
    the human-judged ``mean``."""
    top = machine.to_dict()
    runs = top.pop("runs")
    d["machine"] = top
    for name, entry in runs.items():
        if per_query:
            qids = machine.qids[name].tolist()
            entry["per_query"] = {q: {machine.name(g): float(machine.values[name][g][i]) for g in machine.measures}
                                  for i, q in enumerate(qids)}
        d["runs"][name]["machine_filled"] = entry


def _mteb_splits(runs: list, args) -> list:
    """MTEB predictions files among the runs, read at ``--subset``/``--split`` when either
    is given (a dict name -> Run keeps each file's path as its name); other runs untouched."""
    if (args.split == "test" and not args.subset) or not any(str(r).lower().endswith(".json") for r in runs):
        return runs
    from ..core.io import frames
    from ..core.io.mteb_files import is_predictions, run_from_predictions

    out = {}
    for r in runs:
        if str(r).lower().endswith(".json"):
            obj, raw = frames.load_json(r, args.on_duplicate)
            if is_predictions(obj):
                out[str(r)] = run_from_predictions(obj, raw.name, subset=args.subset, split=args.split, name=str(r))
                continue
        out[str(r)] = r
    return out


def run_rejudge(args) -> int:
    """``judged eval QRELS --qrels V2 ... RUN...``: :func:`judged.analyses.qrels_ops.rejudge` over the versions."""
    from ..core.measures import Measure
    from ..analyses.qrels_ops import rejudge
    from .rejudge_command import output

    given = [a for a, v in (("--manifest", args.manifest), ("--save", args.save), ("--beir", args.beir),
                            ("--per-query", args.per_query), ("--scale", args.scale),
                            ("--requirements", args.requirements), ("--eligibility", args.eligibility),
                            ("--unanswerable", args.unanswerable)) if v]
    if given or args.format not in ("table", "json"):
        raise UsageError(f"with --versus-qrels versions, eval prints the rejudging report (--format table|json); "
                         f"drop {', '.join(given) or '--format ' + args.format}")
    if not args.runs:
        raise UsageError("give at least one RUN after the qrels")
    parsed = [Measure.parse(m) for m in (args.measures or ["nDCG@10"])]
    scores = [m for m in parsed if not m.family.coverage]
    judged_k = [m.cutoff for m in parsed if m.family.coverage]
    if len(scores) != 1 or len(judged_k) > 1:
        raise UsageError("with --versus-qrels versions give one measure (and at most one Judged@k), e.g. -m nDCG@10 -m Judged@10")
    k = judged_k[0] if judged_k else (scores[0].cutoff or 10)
    output(rejudge([args.qrels, *args.qrels_versions], list(args.runs), str(scores[0]), k,
                   settings=settings_of(args, compared=True)), args.format)
    return 0


def write_delimited(result, out, delimiter: str, per_query: bool, machine=None) -> None:
    """``run qid measure value`` rows; machine-filled values under their own measure name
    (``nDCG@10 machine-filled``), after the run's human-judged rows."""
    w = csv.writer(out, delimiter=delimiter, lineterminator="\n")
    w.writerow(["run", "qid", "measure", "value"])
    for name, rr in result.runs.items():
        if per_query:
            for i, q in enumerate(rr.qids.tolist()):
                for given in result.measures:
                    w.writerow([name, q, given, repr(float(rr.values[given][i]))])
        for given in result.measures:
            w.writerow([name, "all", given, repr(result.aggregate(name, given))])
        if machine is None:
            continue
        if per_query:
            for i, q in enumerate(machine.qids[name].tolist()):
                for given in machine.measures:
                    w.writerow([name, q, machine.name(given), repr(float(machine.values[name][given][i]))])
        for given in machine.measures:
            w.writerow([name, "all", machine.name(given), repr(machine.mean(name, given))])


def trec_eval_name(measure, given: str | None = None) -> str:
    """trec_eval's output name for a measure, where trec_eval has it (for one ``given`` in
    trec_eval's own form, the name trec_eval prints for it: set_F.0.5 -> set_F); else judged's
    string."""
    from ..core.measures import trec_form, trec_key

    named = trec_form(given) if given else None
    if named and len(named) == 1:
        return named[0][0]
    return (trec_key(given) if given else None) or measure.trec_eval_name


def write_trec_eval(result, out) -> None:
    """trec_eval -q layout: ``name<TAB>qid<TAB>value`` per query, then the ``all`` lines: the
    ``runid`` line with the run file's tag (its last line's sixth field, as trec_eval; the run's
    name for a run that is no TREC file, or given twice), ``num_q`` (once: all_trec names it too)."""
    from ..core.io.trec_files import run_tag

    for name, rr in result.runs.items():
        names = {g: trec_eval_name(m, g) for g, m in result.measures.items()}
        counts = {g: m.aggregate == "sum" for g, m in result.measures.items()}

        def line(label, qid, value, is_count):
            text = str(int(round(value))) if is_count else f"{value:.4f}"
            out.write(f"{label:<22}\t{qid}\t{text}\n")

        per_query = [g for g, m in result.measures.items() if m.aggregate != "geometric-mean"]  # as trec_eval
        for i, q in enumerate(rr.qids.tolist()):
            for g in per_query:
                line(names[g], q, float(rr.values[g][i]), counts[g])
        source = getattr(rr, "source", None) or name  # streamed: its file; else the path given, as eval names it
        out.write(f"{'runid':<22}\tall\t{run_tag(source) or name}\n")
        if "num_q" not in names.values():
            out.write(f"{'num_q':<22}\tall\t{rr.counts['evaluated']}\n")
        for g in result.measures:
            line(names[g], "all", result.aggregate(name, g), counts[g])


def print_table(result, per_query: bool, machine=None) -> None:
    from ..core.runnames import display_names
    from .plain import Table, console as make_console

    console = make_console()  # Rich on a terminal; its bytes without importing it elsewhere
    shown = display_names(list(result.runs))  # runs as every command shows them (JSON: as given)
    console.print(f"judged eval — qrels {result.qrels.source} "
                  f"({counted(len(result.qrels.query_ids), 'query')}, {counted(len(result.qrels), 'judgment')})",
                  highlight=False, markup=False)
    table = Table()
    table.add_column("run", overflow="fold")
    for given in result.measures:
        table.add_column(given, justify="right")
    table.add_column("queries", justify="right")
    for name, rr in result.runs.items():
        table.add_row(shown[name], *[_number(result.aggregate(name, g), result.measures[g]) for g in result.measures],
                      str(rr.counts["evaluated"]))
    console.print(table)
    if per_query:
        _print_per_query(console, "per query", {g: g for g in result.measures},
                         [(shown[name], rr.qids, rr.values) for name, rr in result.runs.items()])
    for name, rr in result.runs.items():
        c = rr.counts
        console.print(f"[bold]{shown[name]}[/]: {c['evaluated']} evaluated, {c['skipped']} skipped, "
                      f"{c['missing_from_run']} missing from the run, {c['only_in_run']} only in the run, "
                      f"{c['no_relevant']} with nothing relevant", highlight=False)
    print_query_set(result.query_set, console)
    print_checks(result, console)  # its warnings name runs over different queries or depths
    if machine is not None:
        print_machine_table(machine, console, per_query)
    console.print("conventions:", highlight=False)
    for given, conv in result.conventions.items():
        console.print(f"  {conv}", highlight=False, markup=False, soft_wrap=True)
    if machine is not None:
        for name, conv in machine.conventions().items():
            console.print(f"  {name}: {conv}", highlight=False, markup=False, soft_wrap=True)


def print_machine_table(machine, console, per_query: bool = False) -> None:
    """The machine-filled scores, in a table of their own under a title that says what they are."""
    from ..core.runnames import display_names
    from .plain import Table

    shown = display_names(list(machine.values))
    k = machine.k
    console.print(f"machine-filled: the holes labelled by the machine judge {machine.machine.source} "
                  f"({machine.added} of its labels used; not judgments)", highlight=False, markup=False,
                  soft_wrap=True)
    table = Table()
    table.add_column("run", overflow="fold")
    table.add_column(f"holes@{k}", justify="right")
    table.add_column("machine-labelled", justify="right")
    for given in machine.measures:
        table.add_column(machine.name(given), justify="right")
    for name in machine.values:
        table.add_row(shown[name], str(machine.holes[name]), str(machine.labelled[name]),
                      *[_number(machine.mean(name, g), machine.measures[g]) for g in machine.measures])
    console.print(table)
    if per_query:
        _print_per_query(console, "per query, machine-filled", {g: machine.name(g) for g in machine.measures},
                         [(shown[name], machine.qids[name], machine.values[name]) for name in machine.values])


def _print_per_query(console, title: str, columns: dict, runs: list) -> None:
    """The per-query table: run, qid and a column per measure (``columns``: measure -> its
    title), from ``runs``: (name, qids, measure -> per-query values) each."""
    from .plain import Table

    pq = Table(title=title)
    pq.add_column("run", overflow="fold")
    pq.add_column("qid")
    for heading in columns.values():
        pq.add_column(heading, justify="right")
    for name, qids, values in runs:
        for i, q in enumerate(qids.tolist()):
            pq.add_row(name, q, *[f"{float(values[g][i]):.4f}" for g in columns])
    console.print(pq)


def _number(v: float, measure) -> str:
    return str(int(v)) if measure.aggregate == "sum" else f"{v:.4f}"
