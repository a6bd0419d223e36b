"""Close matches for a mistyped name, for "did you mean ...?" in error messages: measure
names and parameters, CLI commands and options (difflib's ratio, case ignored)."""

from __future__ import annotations

import difflib
from typing import Iterable, Mapping

CUTOFF = 0.6  # difflib's default: nDGC -> nDCG (0.75), --per-qeury -> --per-query (0.9)


def closest(word: str, candidates: "Iterable[str] | Mapping[str, str]") -> str | None:
    """The candidate closest to ``word`` (case ignored), or None when none is close. With a
    mapping, its keys are matched and the value of the closest is given (a spelling -> the
    name to show).

    >>> closest("nDGC", ["nDCG", "DCG", "AP"]), closest("xyz", ["nDCG"])
    ('nDCG', None)
    """
    shown = dict(candidates) if isinstance(candidates, Mapping) else {c: c for c in candidates}
    by_lower: dict[str, str] = {}
    for key, value in shown.items():
        by_lower.setdefault(key.lower(), value)
    found = difflib.get_close_matches(word.lower(), list(by_lower), n=1, cutoff=CUTOFF)
    return by_lower[found[0]] if found else None


def did_you_mean(word: str, candidates, template: str = "{}") -> str:
    """``" (did you mean X?)"`` with the closest candidate put into ``template``, or ""."""
    match = closest(word, candidates)
    return f" (did you mean {template.format(match)}?)" if match is not None else ""
