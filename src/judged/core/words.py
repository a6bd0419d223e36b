"""Counts in messages: "1 hole", "2 holes", "1 query", "0 queries" (issue 34: "1 holes",
"1 pairs go to two assessors"). The one helper every message with a count uses; and a
Markdown table cell, escaped (the report's tables and the gate's)."""

from __future__ import annotations


def plural(noun: str) -> str:
    """The English plural of a regular noun: query -> queries, judgment -> judgments,
    match -> matches.

    >>> plural("query"), plural("hole"), plural("match"), plural("key")
    ('queries', 'holes', 'matches', 'keys')
    """
    if noun.endswith("y") and noun[-2:-1] not in ("a", "e", "i", "o", "u", ""):
        return noun[:-1] + "ies"
    if noun.endswith(("s", "x", "z", "ch", "sh")):
        return noun + "es"
    return noun + "s"


def counted(n, noun: str, many: str | None = None) -> str:
    """``n`` and the noun, singular when ``n`` is 1 (``many``: an irregular plural, or the
    plural of a phrase whose first word varies, e.g. counted(n, "pair goes", "pairs go")).

    >>> counted(1, "hole"), counted(2, "hole"), counted(0, "query"), counted(1, "pair goes", "pairs go")
    ('1 hole', '2 holes', '0 queries', '1 pair goes')
    """
    if n == 1:
        return f"{n} {noun}"
    return f"{n} {many if many is not None else plural(noun)}"


def md_cell(value: str) -> str:
    """A Markdown table cell: ``|`` escaped (a run file may be named ``a|b.run``), one line."""
    return value.replace("|", "\\|").replace("\n", " ")
