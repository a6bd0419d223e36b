"""Declared conventions: how a ranking becomes a number.

Every choice that can change a score is a named, frozen value here, with a canonical
string form, so that each result can say exactly how it was computed:

* measure parameters (gain, discount, ideal ranking, unjudged documents, relevance
  threshold) live on :class:`judged.core.measures.Measure`;
* engine-wide settings (tie order, which queries are averaged, queries with nothing
  relevant, repeated pairs in the inputs, what a negative grade is where holes are
  looked for) live on :class:`Settings`: one frozen, validated value that every entry
  point takes as ``settings=`` (only the outer API, ``judged.evaluate``, ``compare``,
  ``gate``, and the CLI take keyword sugar for it: :meth:`Settings.of`).

Defaults are those of trec_eval 10 (the official TREC scorer), which is also what
pytrec_eval, BEIR and MTEB report.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Mapping

import numpy as np

from .errors import ConventionError

# ---------------------------------------------------------------------------
# Engine-wide settings

TIES = {
    # trec_eval 10: score descending (as doubles), then docid descending by strcmp;
    # the rank column is ignored.
    "trec": "score-desc,docid-desc",
    # the order of the lines in the run file, per query
    "input": "input-order",
    # the rank column ascending (file order among equal ranks)
    "rank": "rank-asc",
}
NO_RELEVANT = ("zero", "skip", "error")
ON_DUPLICATE = ("error", "first", "max")
# negative grades (trec_eval's pooled-but-unjudged marker) when looking for holes:
# judged not relevant (as trec_eval) or holes
NEGATIVE = ("nonrelevant", "unjudged")

# every convention a caller passes by name, with its choices (True/False for a switch) and
# what it is called in a message: checked where it enters, by validate(), and nowhere else
CONVENTIONS = {
    "ties": (tuple(TIES), "tie order"),
    "no_relevant": (NO_RELEVANT, "no-relevant treatment"),
    "on_duplicate": (ON_DUPLICATE, "treatment of repeated pairs"),
    "negative": (NEGATIVE, "reading of negative grades"),
    "complete": ((False, True), "query set switch"),
    "ignore_identical_ids": ((False, True), "identical-ids switch"),
}


def validate(**conventions) -> None:
    """Refuse an unknown value of any convention passed by name, with one ConventionError
    naming the argument, the value and the choices; every public entry point calls it.

    >>> validate(ties="trec", on_duplicate="max", complete=False)
    >>> validate(on_duplicate="bogus")
    Traceback (most recent call last):
    ...
    judged.core.errors.ConventionError: unknown treatment of repeated pairs on_duplicate='bogus' (choose from error, first, max)
    """
    for name, value in conventions.items():
        if name == "depth_cut":  # None or a number of documents per query
            if value is not None and (isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, np.integer))
                                      or value < 1):
                raise ConventionError(f"--depth-cut must be a positive integer (documents per query), got {value!r}")
            continue
        choices, what = CONVENTIONS[name]
        if choices == (False, True):
            if not isinstance(value, (bool, np.bool_)):
                raise ConventionError(f"{name} must be True or False, not {value!r}")
        elif not isinstance(value, str) or value not in choices:
            raise ConventionError(f"unknown {what} {name}={value!r} (choose from {', '.join(choices)})")


@dataclass(frozen=True)
class Settings:
    """Engine-wide conventions.

    ties
        ``trec`` (default, as trec_eval 10), ``input`` (file order) or ``rank``.
    complete
        False (default): the mean is over queries both in the run and the qrels, as
        trec_eval. True: qrels queries missing from the run count as 0 (trec_eval -c).
    no_relevant
        Queries whose qrels hold nothing relevant (no grade >= 1): ``zero`` (default,
        scored as trec_eval does, usually 0), ``skip`` (left out of the mean, counted),
        ``error`` (refuse to evaluate).
    ignore_identical_ids
        False (default, as trec_eval, pytrec_eval and MTEB): a ranked document whose id
        equals the query id is scored like any other. True (BEIR's default): it is
        dropped from the run before scoring.
    depth_cut
        None (default): every ranked document counts. N: only each query's top N (in the
        tie order) is scored, as trec_eval ``-M N``: runs of different depths (1,000 vs
        100 documents per query) then read the same depth in AP, R, Rprec and Bpref.
    on_duplicate
        A (query, document) pair given twice in the qrels or a run: ``error`` (default),
        ``first`` (keep the first line) or ``max`` (keep the largest grade or score). It
        decides what is read, not how it is scored, so :meth:`canonical` leaves it out.
    negative
        Negative grades (trec_eval's pooled-but-unjudged marker) where the holes are looked
        for (holes, bounds, pools, comparisons' holes): ``nonrelevant`` (default, judged not
        relevant, as trec_eval) or ``unjudged`` (holes). No score changes with it, so
        :meth:`canonical` leaves it out.

    The query-set rule is ``complete`` (:func:`judged.core.querysets.rule_of`).
    """

    ties: str = "trec"
    complete: bool = False
    no_relevant: str = "zero"
    ignore_identical_ids: bool = False
    depth_cut: int | None = None
    on_duplicate: str = "error"
    negative: str = "nonrelevant"

    def __post_init__(self):
        validate(ties=self.ties, complete=self.complete, no_relevant=self.no_relevant,
                 ignore_identical_ids=self.ignore_identical_ids, depth_cut=self.depth_cut,
                 on_duplicate=self.on_duplicate, negative=self.negative)

    @classmethod
    def of(cls, settings: "Settings | None", entry, **keywords) -> "Settings":
        """The conventions of a call to the entry point ``entry`` (a function) as one value:
        ``settings`` when given, else the keyword arguments (the sugar), validated. With
        ``settings`` a keyword the caller moved off ``entry``'s default (``entry`` None: a
        keyword given at all, as ``**conventions``) must agree with it.

        >>> def run(*, ties="trec", settings=None): return Settings.of(settings, run, ties=ties)
        >>> run(ties="rank") == run(settings=Settings(ties="rank")) == Settings(ties="rank")
        True
        >>> run(ties="input", settings=Settings(ties="rank"))
        Traceback (most recent call last):
        ...
        judged.core.errors.ConventionError: ties='input' and settings.ties='rank': give each convention once
        """
        if settings is None:
            return cls(**keywords)
        if not isinstance(settings, Settings):
            raise ConventionError(f"settings must be a judged.Settings, not {type(settings).__name__}")
        defaults = {} if entry is None else entry.__kwdefaults__ or {}
        for name, value in keywords.items():
            if (entry is None or name in defaults and value != defaults[name]) and value != getattr(settings, name):
                raise ConventionError(f"{name}={value!r} and settings.{name}={getattr(settings, name)!r}: "
                                      "give each convention once")
        return settings

    def canonical(self, one_query: bool = False) -> str:
        """The settings as they are printed beside every measure (and ``depth-cut=N`` when
        set). ``one_query``: for one query's score (``judged explain``), where no mean is
        taken, so the query set (``queries=``) does not apply and is left out.

        >>> Settings(complete=True).canonical()
        'ties=score-desc,docid-desc queries=qrels no-relevant=zero identical-ids=kept'
        """
        queries = "" if one_query else f" queries={'qrels' if self.complete else 'run-and-qrels'}"
        identical = "dropped" if self.ignore_identical_ids else "kept"
        cut = "" if self.depth_cut is None else f" depth-cut={int(self.depth_cut)}"
        return (f"ties={TIES[self.ties]}{queries} no-relevant={self.no_relevant} "
                f"identical-ids={identical}{cut}")


# ---------------------------------------------------------------------------
# Gains: grade -> gain. Negative grades (trec_eval's "pooled but unjudged" marker)
# and unjudged documents always give gain 0.

EXP_GAIN_MAX_GRADE = 1023  # 2^1024 - 1 is past the largest float64 (2^1024 - 2^971)


def exp_gain(grades: np.ndarray) -> np.ndarray:
    """2^g - 1 of each grade g >= 0 (Burges et al. 2005; gdeval's and ERR's gain): exact in
    float64 up to g = 53, rounded to the nearest float above. A grade of 1024 or more has no
    finite gain (2^1024 - 1 is past the largest float64, about 1.8e308): a ConventionError
    naming it, where the sums would otherwise turn into inf, and nDCG or ERR into NaN.

    >>> exp_gain(np.array([0.0, 1.0, 3.0, 1023.0])).tolist()[:3]
    [0.0, 1.0, 7.0]
    """
    g = np.asarray(grades, dtype=np.float64)
    if g.size and g.max() > EXP_GAIN_MAX_GRADE:
        top = int(g.max())
        raise ConventionError(f"grade {top} has no finite exp gain: 2^{top} - 1 is past the largest float64 "
                              f"(about 1.8e308); exp gain takes grades up to {EXP_GAIN_MAX_GRADE}: use gain=linear "
                              f"or a gain mapping for this grade scale")
    return np.exp2(g) - 1.0


@dataclass(frozen=True)
class Gain:
    """``linear`` (gain = grade, trec_eval), ``exp`` (2^grade - 1, Burges et al. 2005)
    or an explicit mapping grade -> gain (trec_eval's ``ndcg.1=3.5,...`` form), where a
    grade the mapping lacks is an error; with ``others_linear`` (ir_measures' ``gains=``:
    ``gains.get(grade, grade)``) a grade the mapping lacks keeps its grade as its gain."""

    kind: str = "linear"
    mapping: tuple[tuple[int, float], ...] = ()
    others_linear: bool = False

    @staticmethod
    def parse(value, others_linear: bool = False) -> "Gain":
        """``others_linear``: ir_measures' ``gains=`` reading of a mapping (identity
        entries dropped, as its ``str()`` drops them; no entry left is ``linear``).

        >>> g = Gain.parse({0: 0, 1: 1, 2: 3}, others_linear=True)
        >>> str(g), g(np.array([0.0, 1.0, 2.0, 3.0, np.nan])).tolist()
        ('{2:3}+linear', [0.0, 1.0, 3.0, 3.0, 0.0])
        >>> str(Gain.parse("exp")), Gain.parse("exp")(np.array([3.0])).tolist()
        ('exp', [7.0])
        """
        if isinstance(value, Gain):
            return value
        if isinstance(value, Mapping):
            try:
                items = tuple(sorted((int(k), float(v)) for k, v in value.items()))
            except (TypeError, ValueError):
                raise ConventionError(f"gain mapping must map integer grades to numbers: {value!r}")
            if not all(np.isfinite(v) for _, v in items):
                raise ConventionError(f"gain mapping must map grades to finite numbers: {value!r}")
            if others_linear:
                items = tuple((g, v) for g, v in items if not (g >= 0 and v == g))
                return Gain("map", items, True) if items else Gain("linear")
            return Gain("map", items)
        if value in ("linear", "exp"):
            return Gain(value)
        raise ConventionError(f"unknown gain {value!r} (choose linear, exp or a mapping like {{0:0,1:1,2:3}})")

    def __str__(self) -> str:
        if self.kind == "map":
            return self.listed + "+linear" if self.others_linear else self.listed
        return self.kind

    @property
    def listed(self) -> str:
        """The mapping as written (``{2:3}``), without the ``+linear`` of :meth:`__str__`."""
        return "{" + ",".join(f"{g}:{_num(v)}" for g, v in self.mapping) + "}"

    def __call__(self, grades: np.ndarray) -> np.ndarray:
        """Gains of float grades; NaN (unjudged) and negative grades give 0."""
        g = np.asarray(grades, dtype=np.float64)
        pos = g > 0  # NaN compares False
        out = np.zeros(g.shape, dtype=np.float64)
        if self.kind == "linear":
            out[pos] = g[pos]
        elif self.kind == "exp":
            out[pos] = exp_gain(g[pos])
        else:
            keys = np.array([k for k, _ in self.mapping], dtype=np.float64)
            vals = np.array([v for _, v in self.mapping], dtype=np.float64)
            nonneg = g >= 0
            idx = np.searchsorted(keys, g[nonneg])
            idx_c = np.minimum(idx, len(keys) - 1)
            found = (idx < len(keys)) & (keys[idx_c] == g[nonneg])
            if self.others_linear:
                out[nonneg] = np.where(found, vals[idx_c], g[nonneg])
                return out
            if not found.all():
                missing = sorted(set(g[nonneg][~found].astype(int).tolist()))
                raise ConventionError(f"grade(s) {missing} have no gain in gain={self}")
            out[nonneg] = vals[idx_c]
        return out

    def table(self, top: int) -> np.ndarray:
        """The gains of the integer grades 0..top, as ``self`` gives them; NaN where a
        mapping has none (what the compiled DCG kernel reads)."""
        if self.kind != "map":
            return self(np.arange(top + 1, dtype=np.float64))
        out = np.arange(top + 1, dtype=np.float64) if self.others_linear else np.full(top + 1, np.nan)
        for grade, gain in self.mapping:
            if 0 <= grade <= top:
                out[grade] = gain
        return out


# ---------------------------------------------------------------------------
# Discounts: the weight of 1-based rank r.


@dataclass(frozen=True)
class Discount:
    """``log2`` 1/log2(r+1) (Burges et al. 2005; trec_eval); ``jk2002`` with ``base=b``:
    no discount for r < b, 1/log_b(r) from r = b on (Jarvelin & Kekalainen, TOIS 2002);
    ``reciprocal`` 1/r; ``power`` with ``p``: 1/r^p."""

    kind: str = "log2"
    base: float = 2.0
    p: float = 1.0

    @staticmethod
    def parse(value, base=None, p=None) -> "Discount":
        if isinstance(value, Discount):
            return value
        if value == "log2":
            return Discount("log2")
        if value == "jk2002":
            b = 2.0 if base is None else float(base)
            if not b > 1:
                raise ConventionError(f"discount=jk2002 needs base > 1, got {base}")
            return Discount("jk2002", base=b)
        if value == "reciprocal":
            return Discount("reciprocal")
        if value == "power":
            q = 1.0 if p is None else float(p)
            if not q > 0:
                raise ConventionError(f"discount=power needs p > 0, got {p}")
            return Discount("power", p=q)
        raise ConventionError(f"unknown discount {value!r} (choose log2, jk2002, reciprocal, power)")

    def __str__(self) -> str:
        if self.kind == "log2":
            return "log2(rank+1)"
        if self.kind == "jk2002":
            return f"jk2002(base={_num(self.base)})"
        if self.kind == "reciprocal":
            return "1/rank"
        return f"1/rank^{_num(self.p)}"

    def divide(self, gains: np.ndarray, ranks: np.ndarray) -> np.ndarray:
        """gain * discount(rank) for 1-based ranks, computed as trec_eval does
        (a division by log2(rank+1)) so the sums match it bit for bit."""
        return gains / self.denominator(ranks)

    def denominator(self, ranks: np.ndarray) -> np.ndarray:
        """1 / discount(rank) for 1-based ranks: log2(rank+1) for ``log2``."""
        r = np.asarray(ranks, dtype=np.float64)
        if self.kind == "log2":
            return np.log2(r + 1.0)
        if self.kind == "jk2002":
            return np.where(r < self.base, 1.0, np.log(np.maximum(r, 1.0)) / np.log(self.base))
        if self.kind == "reciprocal":
            return r
        return np.power(r, self.p)


# zero: not relevant (trec_eval); condensed: removed (Sakai 2007; trec_eval -J);
# min / max: the extremes over every grade 0..maxgrade the holes could get (judged.analyses.holes.unjudged,
# for the registry's boundable families; exact, or an interval holding them where the
# family's bounds are "conservative": nERR).
UNJUDGED = ("zero", "condensed", "min", "max")
IDEAL = ("judged", "retrieved")


def _num(x: float) -> str:
    x = float(x)
    return str(int(x)) if x.is_integer() else repr(x)
