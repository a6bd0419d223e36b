"""Options shared by the commands that evaluate (one definition, used everywhere)."""

from __future__ import annotations

import argparse
import os
import sys

from .declared import later
from ..core.words import counted
from ..core.errors import JudgedError, UsageError

# looked up when first used (help reads the module's text; a run, the module it imports)
NO_RELEVANT, ON_DUPLICATE, TIES = (later("judged.core.conventions", name) for name in ("NO_RELEVANT", "ON_DUPLICATE",
                                                                                         "TIES"))


FORMATS = {"table": "a table to read", "json": "JSON, its documented layout", "tsv": "tab-separated run qid measure value",
           "csv": "comma-separated rows", "trec_eval": "trec_eval -q's lines", "html": "one self-contained HTML page",
           "md": "the main table in Markdown", "latex": "the main table as a LaTeX tabular", "toml": "TOML"}
TIES_HELP = "tie order: trec = score desc then docid desc (default); input = file order; rank = rank column"
ON_DUPLICATE_HELP = ("a (query, docid) pair given twice in one file (qrels or run): error (default); first: keep the "
                     "first; max: keep the highest grade or score")


class OneMeasure(argparse.Action):
    """``-m`` of a command that reads one measure: a second one is refused, naming both,
    rather than argparse's silent "the last wins" (``judged explain -m AP -m P@5``)."""

    def __call__(self, parser, namespace, values, option_string=None):
        seen = f"_{self.dest}_given"
        if getattr(namespace, seen, None) is not None:
            raise argparse.ArgumentError(self, f"given twice ({getattr(namespace, seen)!r}, {values!r}): this command "
                                               "reads one measure; run it once per measure")
        setattr(namespace, seen, values)
        setattr(namespace, self.dest, values)


# the options that name a file a command writes (dest -> option)
OUTPUT_OPTIONS = {"output": "-o", "save": "--save", "junit": "--junit", "plot": "--plot"}


def refuse_output_over_input(args) -> None:
    """An output that is one of the command's own input files would replace it
    (``judged freeze qrels.txt -o qrels.txt``, ``judged judge export --db j.db -o j.db``):
    refused before anything is read or written, unless the command reads its inputs whole first
    and says so (``output_may_be_input``: ``judged qrels merge`` into its base)."""
    if getattr(args, "output_may_be_input", False):
        return
    outputs = [(opt, getattr(args, dest)) for dest, opt in OUTPUT_OPTIONS.items()
               if isinstance(getattr(args, dest, None), str) and os.path.isfile(getattr(args, dest))]
    if not outputs:
        return
    given = [v for dest, value in vars(args).items() if dest not in OUTPUT_OPTIONS
             for v in (value if isinstance(value, (list, tuple)) else [value]) if isinstance(v, str)]
    inputs = [v[len("sqlite:///"):].split("?")[0] if v.startswith("sqlite:///") else v for v in given]
    for opt, out in outputs:
        for path in inputs:
            try:
                same = os.path.isfile(path) and os.path.samefile(out, path)
            except OSError:
                same = False
            if same:
                raise UsageError(f"{opt} {out} is also an input of this command ({path}): writing it would replace "
                                 "that file; write to another")


def format_help(choices) -> str:
    """The help of a ``--format`` option: what each choice prints (the formatter adds the default)."""
    return "output: " + "; ".join(f"{c} = {FORMATS[c]}" for c in choices)


def add_convention_options(p, compared: bool = False, depth_cut: bool = True) -> None:
    """The engine-wide conventions. ``compared``: the command compares runs with each other,
    so they are always scored over every qrels query (judged.core.querysets); ``--complete`` is
    then accepted and has nothing left to change. ``depth_cut``: offer ``--depth-cut``."""
    g = p.add_argument_group("conventions (defaults are trec_eval's)")
    g.add_argument("--ties", choices=TIES, default="trec", help=TIES_HELP)
    g.add_argument("--complete", action="store_true",
                   help="always on here: runs compared with each other are scored over every qrels query, 0 where "
                        "a run ranks nothing (trec_eval -c)" if compared else
                   "score every qrels query, 0 where a run ranks nothing (trec_eval -c); default: each run over the "
                   "qrels queries it ranks (trec_eval's), with a warning naming the qrels queries a run lacks")
    if depth_cut:
        g.add_argument("--depth-cut", type=int, default=None, metavar="N",
                       help="score only each query's top N documents in every run (trec_eval -M N), so runs of "
                            "different depths read the same depth (default: every ranked document)")
    g.add_argument("--no-relevant", choices=NO_RELEVANT, default="zero",
                   help="queries whose qrels hold nothing relevant: zero (default, as trec_eval), skip, error")
    add_on_duplicate_option(g)
    g.add_argument("--ignore-identical-ids", action="store_true",
                   help="drop ranked documents whose id equals the query id (BEIR's default); "
                        "default: keep them (trec_eval, pytrec_eval, MTEB)")


def add_on_duplicate_option(p) -> None:
    """``--on-duplicate``, in every command that reads qrels or runs: one declaration, one help."""
    p.add_argument("--on-duplicate", choices=ON_DUPLICATE, default="error", help=ON_DUPLICATE_HELP)


def settings_of(args, compared: bool = False):
    """The conventions as the one :class:`judged.core.conventions.Settings` every entry point
    takes; ``compared``: the query-set rule of commands that compare runs (every qrels query,
    judged.core.querysets)."""
    from ..core.conventions import Settings

    return Settings(ties=args.ties, complete=True if compared else args.complete, no_relevant=args.no_relevant,
                    on_duplicate=args.on_duplicate, ignore_identical_ids=args.ignore_identical_ids,
                    depth_cut=getattr(args, "depth_cut", None), negative=getattr(args, "negative", "nonrelevant"))


def print_json(obj, safe: bool = False) -> None:
    """``--format json``: ``obj`` indented on stdout and a newline; ``safe``: NaN and the
    infinities as null (:func:`judged.core.jsonsafe.json_safe`)."""
    import json

    if safe:
        from ..core.jsonsafe import json_safe

        obj = json_safe(obj)
    json.dump(obj, sys.stdout, indent=2)
    sys.stdout.write("\n")


def print_query_set(query_set, console) -> None:
    """The query-set line every command prints under its tables (judged.core.querysets)."""
    console.print(query_set.describe(), highlight=False, markup=False, soft_wrap=True)


def split_inputs(manifest, paths: list) -> tuple:
    """(qrels, runs) from positional paths. Without a manifest the first path is the qrels;
    with one, the qrels come from the manifest unless the first path is that same file."""
    import os

    if manifest is None:
        if len(paths) < 2:
            raise JudgedError("give the qrels and at least one run")
        return paths[0], paths[1:]
    frozen = manifest.resolve(manifest.qrels["path"])
    if paths and frozen and os.path.exists(paths[0]) and os.path.exists(frozen) and os.path.samefile(paths[0], frozen):
        return paths[0], paths[1:]
    return None, list(paths)


def add_record_options(p) -> None:
    g = p.add_argument_group("frozen evaluation sets and records")
    g.add_argument("--manifest", metavar="EVAL.toml",
                   help="evaluate exactly as frozen by `judged freeze` (measures, conventions, query set); "
                        "refuses qrels or queries that changed. QRELS may then be omitted")
    g.add_argument("--save", metavar="RECORD.json",
                   help="save an evaluation record: per-query values, ranked docids to the cutoff, ideal grades, "
                        "conventions, hashes, tool version")


def save_record_of(result, args, manifest=None) -> None:
    """``--save``: the evaluation record written, and one line on stderr saying what went
    where (stdout keeps the command's own output)."""
    from ..core.manifest import save_record
    data = save_record(result, args.save, manifest)
    queries = len({qid for run in data["runs"].values() for qid in run["per_query"]})
    print(f"saved the evaluation record of {counted(len(data['runs']), 'run')} x "
          f"{counted(len(data['measures']), 'measure')} over {counted(queries, 'query')} (per-query values, "
          f"conventions, hashes) to {args.save}; `judged compare-records` compares two", file=sys.stderr)


def load_manifest(args):
    if not getattr(args, "manifest", None):
        return None
    from ..core.manifest import Manifest

    if getattr(args, "measures", None):
        raise JudgedError("--manifest fixes the measures; drop -m (or freeze a new manifest)")
    if getattr(args, "ties", "trec") != "trec" or getattr(args, "complete", False) \
            or getattr(args, "no_relevant", "zero") != "zero" or getattr(args, "ignore_identical_ids", False) \
            or getattr(args, "depth_cut", None) is not None:
        raise JudgedError("--manifest fixes the conventions; drop --ties/--complete/--no-relevant/"
                          "--ignore-identical-ids/--depth-cut")
    return Manifest.load(args.manifest)


MACHINE_HELP = ("a machine judge's labels (e.g. an LLM's), in any qrels format: scores with the holes labelled by "
                "it are shown apart, named '<measure> machine-filled'; never counted as judged (Judged@k stays "
                "the people's), never merged into the qrels")


def add_machine_option(p) -> None:
    """``--machine LABELS`` (eval, holes, compare, report, pool)."""
    p.add_argument("--machine", metavar="LABELS", help=MACHINE_HELP)


def import_ahead(*modules) -> None:
    """Import ``modules`` in a thread, in order, for a command that needs them only after
    reading its runs: the imports run while the runs are tokenized (which releases the
    GIL), and the command's own import of each later waits for it (Python's import lock).
    A module that cannot be imported is left to that later import to report. A callable
    among ``modules`` is called there instead (a loader that keeps its own lock)."""
    import importlib
    import threading

    missing = [m for m in modules if callable(m) or m not in sys.modules]
    if not missing:
        return

    def load():
        for name in missing:
            try:
                name() if callable(name) else importlib.import_module(name)
            except Exception:  # noqa: BLE001  (the command's own import says why)
                pass
    threading.Thread(target=load, name="judged-import-ahead", daemon=True).start()
