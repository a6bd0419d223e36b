"""``judged freeze``: write a frozen evaluation set (a TOML manifest)."""

from __future__ import annotations

from . import Formatter
from ..core.words import counted
from .common import NO_RELEVANT, TIES, add_on_duplicate_option
from .declared import declared
from ..core.errors import UsageError

HELP = """Freeze an evaluation set for paired comparisons: the query set, relevance unit,
grade scale, every measure's gain, discount, cutoff and convention, the engine-wide
conventions, the corpus id, and the sha256 of the qrels and queries files.
`judged eval --manifest` and `judged compare --manifest` then evaluate exactly so, and
refuse (with the diff) when the judgments or the query set changed. Queries of the
set missing from a run score 0 there.

example:
  judged freeze qrels.txt --queries queries.tsv --corpus-id msmarco-v2.1 -m nDCG@10 -m AP -o eval.toml
"""


def register(sub) -> None:
    RELEVANCE_UNITS = declared("judged.core.manifest").RELEVANCE_UNITS

    p = sub.add_parser("freeze", help="freeze an evaluation set into a TOML manifest", description=HELP,
                       formatter_class=Formatter)
    p.add_argument("qrels", nargs="?", metavar="QRELS", help="the qrels file")
    p.add_argument("--qrels", dest="qrels_option", metavar="QRELS",
                   help="the qrels file, as the first argument (the old spelling, kept)")
    p.add_argument("--queries", help="queries file fixing the query set (BEIR queries.jsonl, JSON, or one id per "
                                     "line/TSV); default: the qrels' queries")
    p.add_argument("--corpus-id", help="an identifier of the corpus snapshot (free text, recorded as given)")
    p.add_argument("--relevance-unit", choices=list(RELEVANCE_UNITS), default="document",
                   help="what a judgment is about (default document)")
    p.add_argument("-m", "--measure", action="append", dest="measures", required=True, metavar="MEASURE",
                   help="measure, repeatable: nDCG@10, AP, nDCG(gain=exp)@10")
    p.add_argument("--ties", choices=TIES, default="trec", help="tie order (default trec)")
    p.add_argument("--no-relevant", choices=NO_RELEVANT, default="zero",
                   help="queries with nothing relevant: zero (default), skip, error")
    p.add_argument("--ignore-identical-ids", action="store_true",
                   help="drop ranked documents whose id equals the query id (BEIR's default); default: keep them")
    add_on_duplicate_option(p)
    p.add_argument("-o", "--output", required=True, metavar="EVAL.toml", help="the manifest to write")
    p.set_defaults(func=run)


def run(args) -> int:
    import sys

    from ..core.conventions import Settings
    from ..core.manifest import Manifest
    from .plain import console as make_console

    if args.qrels and args.qrels_option and args.qrels != args.qrels_option:
        raise UsageError(f"two qrels given: {args.qrels} and --qrels {args.qrels_option}; give one")
    args.qrels = args.qrels or args.qrels_option
    if not args.qrels:
        raise UsageError("give the qrels: judged freeze QRELS -m MEASURE -o EVAL.toml")

    m = Manifest.freeze(args.qrels, args.measures, queries=args.queries, corpus_id=args.corpus_id,
                        relevance_unit=args.relevance_unit, settings=Settings(
                            ties=args.ties, no_relevant=args.no_relevant, ignore_identical_ids=args.ignore_identical_ids,
                            on_duplicate=args.on_duplicate))
    m.write(args.output)
    console = make_console(sys.stderr)  # lines whole in a file or a pipe, as every command's
    console.print(f"froze {counted(m.queries['count'], 'query')}, {counted(m.qrels['judgments'], 'judgment')} "
                  f"(grades {', '.join(map(str, m.qrels['grades']))}), {counted(len(m.measures), 'measure')} "
                  f"into {args.output}", highlight=False, markup=False)
    for entry in m.measures:
        console.print(f"  {entry['convention']}", highlight=False, markup=False, soft_wrap=True)
    return 0
