"""Options shared by the commands that evaluate (one definition, used everywhere)."""

from __future__ import annotations

import sys

from ..conventions import NO_RELEVANT, ON_DUPLICATE, TIES


def add_convention_options(p) -> None:
    g = p.add_argument_group("conventions (defaults are trec_eval's)")
    g.add_argument("--ties", choices=list(TIES), default="trec",
                   help="tie order: trec = score desc then docid desc (default); input = file order; rank = rank column")
    g.add_argument("--complete", action="store_true",
                   help="count qrels queries missing from a run as 0 (trec_eval -c); default: mean over queries in both")
    g.add_argument("--no-relevant", choices=list(NO_RELEVANT), default="zero",
                   help="queries whose qrels hold nothing relevant: zero (default, as trec_eval), skip, error")
    g.add_argument("--on-duplicate", choices=list(ON_DUPLICATE), default="error",
                   help="a pair given twice: error (default), keep the first, keep the max")
    g.add_argument("--ignore-identical-ids", action="store_true",
                   help="drop ranked documents whose id equals the query id (BEIR's default); "
                        "default: keep them (trec_eval, pytrec_eval, MTEB)")


def settings_kwargs(args) -> dict:
    return {"ties": args.ties, "complete": args.complete, "no_relevant": args.no_relevant,
            "on_duplicate": args.on_duplicate, "ignore_identical_ids": args.ignore_identical_ids}


def is_terminal() -> bool:
    return sys.stdout.isatty()


def fmt(value: float, digits: int = 4) -> str:
    return f"{value:.{digits}f}"
