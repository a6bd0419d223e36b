"""Agreement with side-by-side preferences (Sanderson, Paramita, Clough & Kanoulas, SIGIR 2010).

People saw two rankings for one query and said which they preferred. A measure agrees with
a preference when it scores the preferred ranking higher. As in Sanderson et al., a
measure is judged only on the pairs it tells apart: pairs it scores equal are counted as
"ties" and left out of its share, and so are preferences of ``none``. The share is tested
against 50% with an exact two-sided binomial test (scipy.stats.binomtest).

The breakdown separates the easy cases from the hard ones, by whether each side retrieved
anything relevant (grade >= 1) in its top ``depth`` (default 10, the page people saw):
``one-side-nothing`` (exactly one side found nothing relevant), ``both-relevant`` and
``neither-relevant``.

Preference file: one judgment a line, ``qid run_a run_b preferred`` with ``preferred`` one
of ``a``, ``b``, ``none``; blank lines and ``#`` comments are skipped, and so is a header
line ``qid run_a run_b preferred``. Run names match a run's name as given, its file name,
or its file name without extension.
"""

from __future__ import annotations

import os
from dataclasses import dataclass


from ...core.errors import JudgedError, ParseError
from ...core.querysets import refuse_disjoint_runs
from ..stats import tie_sign
from ...core.io.text import iter_lines, read_raw
from ...core.conventions import Settings
from ...core.evaluation import evaluate

PREFERRED = ("a", "b", "none")
DEFAULT_MEASURES = ("nDCG@10", "nDCG(gain=exp)@10", "RR", "P@10", "AP")
DEFAULT_DEPTH = 10
CATEGORIES = ("all", "one-side-nothing", "both-relevant", "neither-relevant")


@dataclass(frozen=True)
class Preference:
    qid: str
    run_a: str
    run_b: str
    preferred: str  # a | b | none
    line: int | None = None


def read_preferences(source) -> list[Preference]:
    """Preferences from a file path, or from an iterable of (qid, run_a, run_b, preferred)."""
    if not isinstance(source, (str, os.PathLike)):
        out = []
        for k, item in enumerate(source):
            q, a, b, p = (str(v) for v in item)
            out.append(_checked("<memory>", k + 1, q, a, b, p))
        return out
    raw = read_raw(source)
    out = []
    for lineno, fields in iter_lines(raw):
        if len(fields) != 4:
            raise ParseError(raw.name, lineno, f"expected 4 fields (qid run_a run_b preferred), found {len(fields)}")
        if not out and [f.lower() for f in fields] == ["qid", "run_a", "run_b", "preferred"]:
            continue
        out.append(_checked(raw.name, lineno, *fields))
    if not out:
        raise ParseError(raw.name, None, "no preferences")
    return out


def _checked(source, lineno, q, a, b, p) -> Preference:
    if p.lower() not in PREFERRED:
        raise ParseError(source, lineno, f"preferred must be a, b or none, not {p!r}")
    if a == b:
        raise ParseError(source, lineno, f"a run compared with itself ({a!r})")
    return Preference(q, a, b, p.lower(), lineno)


def run_aliases(names) -> dict:
    """Name -> run for each run's name, file name and file name without extension
    (an alias two runs share is dropped; the full names always win)."""
    aliases: dict = {}
    clashes = set()
    for n in names:
        base = os.path.basename(n)
        for alias in {base, base.split(".", 1)[0] if not base.startswith(".") else base, os.path.splitext(base)[0]}:
            if alias in aliases and aliases[alias] != n:
                clashes.add(alias)
            aliases.setdefault(alias, n)
    for alias in clashes:
        del aliases[alias]
    aliases.update({n: n for n in names})
    return aliases


@dataclass
class Tally:
    agree: int = 0
    disagree: int = 0
    ties: int = 0  # the measure scores both sides equal

    @property
    def decided(self) -> int:
        return self.agree + self.disagree

    @property
    def share(self) -> float:
        return self.agree / self.decided if self.decided else float("nan")

    def pvalue(self) -> float:
        """Exact two-sided binomial test of agree out of decided against 0.5."""
        if not self.decided:
            return float("nan")
        return float(binomtest()(self.agree, self.decided, 0.5).pvalue)

    def to_dict(self) -> dict:
        return {"agree": self.agree, "disagree": self.disagree, "ties": self.ties, "decided": self.decided,
                "share": self.share, "binomial_p": self.pvalue()}


@dataclass
class AgreementResult:
    measures: dict  # measure as given -> convention string
    depth: int
    tallies: dict  # (measure, category) -> Tally
    preferences: int
    no_preference: int  # preferred == none
    skipped: int  # query not evaluated for one of the two runs
    category_pairs: dict  # category -> preferences (a or b) in it
    query_set: object = None  # judged.core.querysets.QuerySet of the evaluation

    def tally(self, measure: str, category: str = "all") -> Tally:
        return self.tallies[(measure, category)]

    def to_dict(self) -> dict:
        return {"preferences": self.preferences, "no_preference": self.no_preference, "skipped": self.skipped,
                "depth": self.depth, "relevant": "grade>=1", "category_pairs": self.category_pairs,
                **({"query_set": self.query_set.to_dict(), "warnings": self.query_set.warnings()}
                   if self.query_set is not None else {}),
                "measures": {m: {"convention": conv,
                                 **{c: self.tally(m, c).to_dict() for c in CATEGORIES}}
                             for m, conv in self.measures.items()}}


def preference_agreement(preferences, qrels, runs, measures=DEFAULT_MEASURES, *, depth: int = DEFAULT_DEPTH,
                         settings=None) -> AgreementResult:
    """Per measure, the share of side-by-side preferences it agrees with where it tells
    the two rankings apart, overall and by whether each side found anything relevant
    (``settings`` default ``Settings(complete=True)``)."""
    prefs = read_preferences(preferences)
    if depth < 1:
        raise JudgedError(f"depth must be a positive integer, got {depth}")
    success = f"Success@{depth}"
    given = [str(m) for m in measures]
    result = evaluate(qrels, runs, list(dict.fromkeys(given + [success])),
                      settings=Settings(complete=True) if settings is None else settings)
    refuse_disjoint_runs(result)
    aliases = run_aliases(list(result.runs))
    value = {}
    for name, rr in result.runs.items():
        for m in result.measures:
            value[(name, m)] = dict(zip(rr.qids.tolist(), rr.values[m].tolist()))
    tallies = {(m, c): Tally() for m in given for c in CATEGORIES}
    category_pairs = {c: 0 for c in CATEGORIES}
    no_pref = skipped = 0
    source = os.fspath(preferences) if isinstance(preferences, (str, os.PathLike)) else None
    for p in prefs:
        a, b = (_resolve(aliases, r, p, list(result.runs), source) for r in (p.run_a, p.run_b))
        if p.qid not in value[(a, success)] or p.qid not in value[(b, success)]:
            skipped += 1
            continue
        if p.preferred == "none":
            no_pref += 1
            continue
        found = value[(a, success)][p.qid] + value[(b, success)][p.qid]
        category = {0.0: "neither-relevant", 1.0: "one-side-nothing", 2.0: "both-relevant"}[found]
        category_pairs["all"] += 1
        category_pairs[category] += 1
        for m in given:
            va, vb = value[(a, m)][p.qid], value[(b, m)][p.qid]
            diff = va - vb
            tied = tie_sign(diff, va, vb) == 0  # judged.analyses.stats' tolerance rule
            for c in ("all", category):
                t = tallies[(m, c)]
                if tied:
                    t.ties += 1
                elif (diff > 0) == (p.preferred == "a"):
                    t.agree += 1
                else:
                    t.disagree += 1
    conventions_ = {m: result.conventions[m] for m in given}
    return AgreementResult(conventions_, depth, tallies, len(prefs), no_pref, skipped, category_pairs,
                           result.query_set)


def _resolve(aliases, name, pref, names, source=None) -> str:
    if name not in aliases:
        why = f"unknown run {name!r} (runs: {', '.join(names)})"
        if source is not None:
            raise ParseError(source, pref.line, why)
        where = f"line {pref.line}: " if pref.line else ""
        raise JudgedError(f"preferences {where}{why}")
    return aliases[name]


def binomtest():
    try:
        from scipy.stats import binomtest as test
    except ImportError:
        raise JudgedError("the binomial test needs scipy, a dependency of judged missing here: pip install scipy")
    return test
