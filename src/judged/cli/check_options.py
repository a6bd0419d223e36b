"""Options and printing of the checks beyond the score (shared by ``eval`` and ``answers``)."""

from __future__ import annotations

from ..core.words import counted
from .declared import later
from ..core.errors import UsageError

# looked up when first used (help reads the module's text; a run, the module it imports)
ABSTAIN_MARKER = later("judged.core.checks.abstention", "ABSTAIN_MARKER")
HIGH_SCORE = later("judged.core.checks.evidence", "HIGH_SCORE")


def add_check_options(p, depth: bool = True):
    """The side-file options; ``depth=False`` where the command's own ``--depth`` sets the
    k of the leak and gap lists (compare, report). Returns the option group."""
    g = p.add_argument_group("checks beyond the score (docs/beyond-ndcg.md)")
    g.add_argument("--scale", metavar="FILE",
                   help="grade scale TOML: every qrels grade must be on it; printed with the results "
                        "(default: <qrels stem>.scale.toml or scale.toml beside the qrels, when present)")
    g.add_argument("--requirements", metavar="FILE",
                   help="'qid group docid' evidence groups: enables Complete@k, Coverage@k and the list of "
                        "high-nDCG queries with incomplete evidence")
    g.add_argument("--eligibility", metavar="FILE",
                   help="'qid docid eligible [principal]' ('*' = any query; unlisted = eligible): an ineligible "
                        "document is graded 0 in every measure; Leak@k counts those retrieved")
    g.add_argument("--as", dest="principal", metavar="PRINCIPAL",
                   help="the user or role whose eligibility rows apply (default: only the rows for everyone)")
    g.add_argument("--unanswerable", metavar="FILE",
                   help="queries nothing answers, one qid per line (also: qrels lines with docid __UNANSWERABLE__): "
                        "abstention precision/recall; kept out of the ranking measures")
    g.add_argument("--abstain-marker", default=ABSTAIN_MARKER, metavar="DOCID",
                   help="a run abstains by returning nothing or ranking this docid first (default %(default)s)")
    g.add_argument("--score-unanswerable", action="store_true",
                   help="also score unanswerable queries in the ranking measures (as judged, nothing relevant)")
    if depth:
        g.add_argument("-k", "--depth", type=int, metavar="K",
                       help="the top K examined: k of the leak and evidence-gap lists (default: the first nDCG@k's k, "
                            "else 10)")
    g.add_argument("--high", type=float, default=HIGH_SCORE, metavar="SCORE",
                   help="a 'high' nDCG in the gap and answer lists is >= this (default %(default)s)")
    return g


def add_answers_option(p, required: bool = False) -> None:
    p.add_argument("--answers", required=required, metavar="FILE",
                   help="'run qid accepted [note]' answer verdicts, paired with the ranking score")


def side_files(args):
    """The side files as the one :class:`judged.core.checks.SideFiles` evaluate takes (a
    grade scale beside the qrels is read unless --scale names one)."""
    from ..core.checks import SideFiles
    from ..core.checks.scale import scale_beside

    if args.principal is not None and args.eligibility is None:
        raise UsageError(f"--as {args.principal} chooses rows of an eligibility file: give --eligibility FILE too")
    scale = args.scale if args.scale is not None else scale_beside(args.qrels)
    return SideFiles(scale, args.requirements, args.eligibility, args.principal, args.unanswerable,
                     args.abstain_marker, args.score_unanswerable)


def configure(result, args) -> None:
    """Report parameters of the checks (the lists' depth and 'high' threshold)."""
    import math

    if args.depth is not None and args.depth < 1:
        raise UsageError(f"--depth must be a positive integer, got {args.depth}")
    if not math.isfinite(args.high):
        raise UsageError(f"--high must be a finite number, got {args.high}")
    if result.checks is not None:
        result.checks.depth = args.depth
        result.checks.high = args.high


def print_checks(result, console, answer_key: bool = True) -> None:
    """Scale, answer key (unless ``answer_key=False``), abstention, leaks, evidence gaps and
    warnings, after the score table."""
    from ..core.runnames import shortener

    checks = result.checks
    if checks is None:
        return
    shown, short = shortener(list(result.runs))  # runs as every command shows them
    if checks.scale is not None:
        console.print(f"grade scale ({checks.scale.source}):", highlight=False, markup=False)
        for g in checks.scale.grades:
            console.print(f"  {g.value} {g.name}: {g.definition}", highlight=False, markup=False)
    key = checks.answer_key.to_dict()
    if answer_key and (key["judged_nothing_relevant"] or key["unanswerable"]):  # else it says nothing the counts do not (JSON keeps it)
        console.print(f"answer key: {counted(key['queries_with_relevant'], 'query')} with something relevant, "
                      f"{key['judged_nothing_relevant']} judged with nothing relevant, {key['unanswerable']} unanswerable "
                      f"({'scored' if key['unanswerable_in_ranking_measures'] else 'kept out of the ranking measures'}); "
                      f"relevant documents per query -> queries: "
                      + (", ".join(f"{k}: {v}" for k, v in key["relevant_per_query"].items()) or "none"),
                      highlight=False, markup=False)
    for name, ab in checks.abstention.items():
        console.print(f"{shown.get(name, name)}: {ab.summary()}", highlight=False, markup=False)
        if ab.missed_abstentions:
            console.print(f"  answered unanswerable: {', '.join(ab.missed_abstentions)}", highlight=False, markup=False)
        if ab.wrong_abstentions:
            console.print(f"  abstained on answerable: {', '.join(ab.wrong_abstentions)}", highlight=False, markup=False)
    k = checks.k(result)
    for name, found in checks.leaks(result).items():
        flag = f"LEAKS: {len(found)}" if found else "no leaks"
        console.print(f"{shown.get(name, name)}: {flag} (ineligible documents in the top {k}, as {checks.eligibility.principal or 'everyone'})",
                      highlight=False, markup=False)
        for x in found:
            console.print(f"  query {x.qid} rank {x.rank}: {x.docid}", highlight=False, markup=False)
    measure = checks.ranking_measure(result)
    for name, gaps in checks.gaps(result).items():
        console.print(f"{shown.get(name, name)}: {len(gaps)} quer{'y' if len(gaps) == 1 else 'ies'} with {measure} >= {checks.high:g} "
                      f"but incomplete evidence in the top {k}", highlight=False, markup=False)
        for gap in gaps:
            console.print(f"  query {gap.qid}: {measure} {gap.score:.4f}, {gap.covered} of {counted(gap.needed, 'group')}, "
                          f"missing {', '.join(gap.missing)}", highlight=False, markup=False)
    for w in checks.warnings(result):
        console.print(f"[yellow]warning:[/] {short(w)}", highlight=False)
