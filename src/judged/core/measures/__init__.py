"""Measures: declared, frozen values parsed from ir_measures-style strings.

``Measure.parse("nDCG(gain=exp)@10")`` gives a value whose ``str()`` is its canonical
form and whose :meth:`Measure.convention` names every choice behind its number. Which
kernel computes it is looked up in :data:`FAMILIES` (one module per measure family, its
documentation beside its code, as trec_eval does).
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass, field, replace

from ..words import counted
from ..conventions import IDEAL, UNJUDGED, Discount, Gain, Settings
from ..errors import MeasureError
from ..suggest import closest, did_you_mean
from .params import OPTIONS, PARAMS
from .registry import (MIN_GEO_MEAN, BOUNDED, FAMILIES, NAMES, NEEDS_CUTOFF, SPELLINGS, TREC_NICKNAMES,
                       TREC_NOT_COMPUTED, TREC_STRINGS, Family, trec_names, trec_table)

# trec_eval / pytrec_eval names with a cutoff: ndcg_cut.10, ndcg_cut_10, P.5, map_cut_100 ...
_TREC_NAME = re.compile(r"^(%s)[._](\d+)$" % "|".join(
    sorted((re.escape(t) for t, (_, cuts) in trec_names().items() if cuts), key=len, reverse=True)), re.I)
# ... and with a level: iprec_at_recall.0.30, iprec_at_recall_0.30, Rprec_mult_0.20
_TREC_LEVEL = re.compile(r"^(%s)[._](\d+(?:\.\d*)?)$" % "|".join(
    re.escape(t.name) for _, t in trec_table().values() if t.level), re.I)
# ... and trec_eval's name.values form in general: P.5,10  iprec_at_recall.0.1,0.5  set_F.0.5
# utility.1,-1,0,0  ndcg.0=0,1=1,2=3 (trec_form)
_TREC_FORM = re.compile(r"^([A-Za-z0-9_]+)\.(\S+)$")
_SYNTAX = re.compile(r"^\s*([A-Za-z0-9_]+(?:-[A-Za-z0-9_]+)*)\s*(?:\((.*)\))?\s*(?:@\s*(\d+(?:\.\d*)?))?\s*$", re.S)

DCG_SPELLINGS = {  # ir_measures' dcg= parameter
    "log2": ("linear", "log2"),
    "exp-log2": ("exp", "log2"),
}


@dataclass(frozen=True)
class Measure:
    name: str
    cutoff: int | None = None
    rel: int = 1
    gain: Gain = field(default_factory=Gain)
    discount: Discount = field(default_factory=Discount)
    ideal: str = "judged"
    unjudged: str = "zero"
    maxgrade: int | None = None  # unjudged=min/max: holes get grades 0..maxgrade (None: the qrels' largest)
    # the family's own parameters (set_F's beta, IPrec's recall, ...), in registry order; defaults left out
    options: tuple = ()

    def option(self, name: str):
        """The value of one of the family's own parameters (its default when not given)."""
        return dict(self.options).get(name, self.family.default(name))

    @staticmethod
    def parse(text: "str | Measure") -> "Measure":
        """A measure from its string: judged's and ir_measures' form, or trec_eval's name.

        >>> Measure.parse("ndcg_cut.10")
        Measure('nDCG@10')
        >>> str(Measure.parse("nDCG(dcg='exp-log2')@10"))   # ir_measures' spelling
        'nDCG(gain=exp)@10'
        >>> Measure.parse("P(rel=2)@5").convention()
        'P@5 rel>=2 unjudged=zero ties=score-desc,docid-desc queries=run-and-qrels no-relevant=zero identical-ids=kept'
        """
        if isinstance(text, Measure):
            return text
        if not isinstance(text, str):
            raise MeasureError(f"a measure is a string like 'nDCG@10', not {text!r}")
        named = trec_form(text) or trec_family(text)
        if named is not None:
            if len(named) > 1:
                raise MeasureError(f"{text!r} names {len(named)} measures ({', '.join(k for k, _ in named)}): "
                                   "judged eval -m and judged.evaluate take it; elsewhere give them one by one")
            return named[0][1]
        m = _TREC_NAME.match(text.strip())
        if m:
            return Measure.parse(f"{NAMES[m.group(1).lower()]}@{m.group(2)}")
        m = _TREC_LEVEL.match(text.strip())
        if m:
            name, t = trec_table()[next(n for n in trec_table() if n.lower() == m.group(1).lower())]
            return Measure.parse(f"{name}({t.level}={float(m.group(2))!r})")
        m = _SYNTAX.match(text)
        if not m:
            mean = _meant(text)
            raise MeasureError(f"cannot parse measure {text!r}: did you mean {mean!r}?" if mean else
                               f"cannot parse measure {text!r} (expected e.g. nDCG@10, AP(rel=2), nDCG(gain=exp)@10)")
        raw_name, params, cutoff = m.groups()
        name = NAMES.get(raw_name.lower())
        if name is None:
            mean = _meant(text, raw_name)
            raise MeasureError(f"unknown measure {raw_name!r} in {text!r}: did you mean {mean!r}? (judged measures "
                               "lists them)" if mean else f"unknown measure {raw_name!r} in {text!r} (known: "
                               f"{', '.join(FAMILIES)}; judged measures lists them)")
        kw = _parse_params(params or "", text)
        for given in kw:  # ir_measures spells NumRelRet as NumRet(rel=1)
            name = SPELLINGS.get((name, given), name)
        if raw_name.lower() in NEEDS_CUTOFF and cutoff is None:
            raise MeasureError(f"{text!r} needs a cutoff")
        family = FAMILIES[name]
        if cutoff is not None and family.at_param:  # ir_measures' IPrec@0.5: the recall level
            kw.setdefault(family.at_param, float(cutoff))
            cutoff = None
        elif cutoff is not None and not cutoff.isdigit():
            raise MeasureError(f"cutoff must be a positive integer ({text!r})")
        return Measure._build(name, int(cutoff) if cutoff is not None else None, kw, set(family.params),
                              family.cutoff, text)

    @staticmethod
    def _build(name, cutoff, kw, allowed, cut_rule, text) -> "Measure":
        if cut_rule == "required" and cutoff is None:
            raise MeasureError(f"{text!r} needs a cutoff, e.g. {name}@10")
        if cut_rule == "none" and cutoff is not None:
            raise MeasureError(f"{name} takes no cutoff ({text!r})")
        if cutoff is not None and cutoff < 1:
            raise MeasureError(f"cutoff must be a positive integer ({text!r})")
        for param, spelled in FAMILIES[name].spellings.items():  # RBP(p=0.8): the persistence
            if spelled in kw:
                kw[param] = kw.pop(spelled)
        # ir_measures spellings
        if "dcg" in kw:
            spelled = kw.pop("dcg")
            if spelled not in DCG_SPELLINGS:
                raise MeasureError(f"unknown dcg={spelled!r} in {text!r} (ir_measures knows log2, exp-log2)")
            kw.setdefault("gain", DCG_SPELLINGS[spelled][0])
            kw.setdefault("discount", DCG_SPELLINGS[spelled][1])
        if "gains" in kw:  # ir_measures: gains.get(grade, grade), a grade not listed keeps its grade
            if "gain" in kw:
                raise MeasureError(f"give gain= or gains=, not both ({text!r})")
            try:
                kw["gain"] = Gain.parse(kw.pop("gains"), others_linear=True)
            except Exception as exc:
                raise MeasureError(f"{exc} ({text!r})")
        if "judged_only" in kw:
            kw["unjudged"] = "condensed" if kw.pop("judged_only") in (True, "True", "true", 1) else "zero"
        unknown = set(kw) - allowed
        if unknown:
            first = sorted(unknown)[0]
            raise MeasureError(f"{name} takes no parameter {', '.join(sorted(unknown))} ({text!r})"
                               + did_you_mean(first, sorted(allowed | set(FAMILIES[name].spellings.values()))))
        options = []
        family = FAMILIES[name]
        for key in family.params:  # the family's own parameters: checked by their record
            if key in OPTIONS and key in kw:
                value = PARAMS[key].check(kw[key], text, family.spellings.get(key))
                if value != family.default(key):
                    options.append((key, value))
            elif key in OPTIONS and family.default(key) is None:
                raise MeasureError(f"{name} needs {key}=, e.g. {name}({key}=0.5) ({text!r})")
        try:
            gain = Gain.parse(kw.get("gain", "linear"))
            discount = Discount.parse(kw.get("discount", "log2"), kw.get("base"), kw.get("p"))
        except Exception as exc:  # ConventionError -> MeasureError with the text
            raise MeasureError(f"{exc} ({text!r})")
        if ("base" in kw and discount.kind != "jk2002") or ("p" in kw and discount.kind != "power"):
            raise MeasureError(f"base= goes with discount=jk2002 and p= with discount=power ({text!r})")
        ideal = kw.get("ideal", "judged")
        if ideal not in IDEAL:
            raise MeasureError(f"ideal must be one of {', '.join(IDEAL)} ({text!r})")
        unjudged = kw.get("unjudged", "zero")
        if unjudged not in UNJUDGED:
            raise MeasureError(f"unjudged must be one of {', '.join(UNJUDGED)} ({text!r})")
        rel = kw.get("rel", 1)
        if isinstance(rel, bool) or not isinstance(rel, int):
            raise MeasureError(f"rel must be an integer grade ({text!r})")
        maxgrade = kw.get("maxgrade")
        if maxgrade is not None:
            if isinstance(maxgrade, bool) or not isinstance(maxgrade, int) or maxgrade < 0:
                raise MeasureError(f"maxgrade must be a non-negative integer grade ({text!r})")
            if unjudged not in ("min", "max"):
                raise MeasureError(f"maxgrade= goes with unjudged=min or unjudged=max ({text!r})")
        if unjudged in ("min", "max") and name not in BOUNDED:
            raise MeasureError(f"unjudged={unjudged} is defined for {', '.join(BOUNDED)}, not {name} ({text!r})")
        if unjudged in ("min", "max") and name in ("nDCG", "DCG") and cutoff is None:
            raise MeasureError(f"unjudged={unjudged} bounds the top k: give a cutoff, e.g. {name}(unjudged={unjudged})@10")
        return Measure(name, cutoff, rel, gain, discount, ideal, unjudged, maxgrade, tuple(options))

    # -- printing -------------------------------------------------------------
    def __str__(self) -> str:
        default = Measure(self.name)
        params = []
        if self.rel != default.rel:
            params.append(f"rel={self.rel}")
        if self.gain != default.gain:
            params.append(f"gains={self.gain.listed}" if self.gain.others_linear else f"gain={self.gain}")
        if self.discount != default.discount:
            params.append(f"discount={self.discount.kind}")
            if self.discount.kind == "jk2002":
                params.append(f"base={_fmt(self.discount.base)}")
            if self.discount.kind == "power":
                params.append(f"p={_fmt(self.discount.p)}")
        if self.ideal != default.ideal:
            params.append(f"ideal={self.ideal}")
        if self.unjudged != default.unjudged:
            params.append(f"unjudged={self.unjudged}")
        if self.maxgrade is not None:
            params.append(f"maxgrade={self.maxgrade}")
        spelled = self.family.spellings
        params += [f"{spelled.get(key, key)}={_fmt(value) if isinstance(value, float) else value}"
                   for key, value in self.options]
        s = self.name + (f"({','.join(params)})" if params else "")
        return s + (f"@{self.cutoff}" if self.cutoff is not None else "")

    def __repr__(self) -> str:
        return f"Measure({str(self)!r})"

    @property
    def short(self) -> str:
        """Name and cutoff only, e.g. nDCG@10."""
        return self.name + (f"@{self.cutoff}" if self.cutoff is not None else "")

    @property
    def family(self) -> Family:
        """The registry record of this measure's family (judged.core.measures.registry)."""
        return FAMILIES[self.name]

    @property
    def aggregate(self) -> str:
        """How per-query values become the run's number: mean, or sum for counts (NumRel...)."""
        return self.family.aggregate

    def aggregate_of(self, values) -> float:
        """The run's number from its per-query values (0 for none), by :attr:`aggregate`:
        mean; sum; geometric mean exp(sum(log(max(v, 1e-5))) / n) with trec_eval's floor
        (MIN_GEO_MEAN) so that one query at 0 does not make it 0."""
        import numpy as np

        v = np.asarray(values, dtype=np.float64)
        if len(v) == 0:
            return 0.0
        if self.aggregate == "geometric-mean":
            return float(np.exp(np.sum(np.log(np.maximum(v, MIN_GEO_MEAN))) / len(v)))
        return float(v.sum()) if self.aggregate == "sum" else float(v.mean())

    @property
    def is_coverage(self) -> bool:
        """True for Judged@k: it measures how much of the ranking was judged (coverage),
        not ranking quality, so comparisons never test it for significance."""
        return self.family.coverage

    @property
    def trec_eval_name(self) -> str:
        """trec_eval's output name (ndcg_cut_10, map, P_5), where trec_eval has this measure
        with these parameters (the family's defaults); else :meth:`__str__`."""
        for t in self.family.trec:
            level = dict(self.options).get(t.level) if t.level else None
            plain = replace(self, options=tuple(o for o in self.options if o[0] != t.level))
            if plain != Measure(self.name, self.cutoff):
                continue
            if t.level and t.levels and (level is not None or PARAMS[t.level].default in t.levels):
                return f"{t.name}_{self.option(t.level):.2f}"
            if not t.levels and (t.cutoffs is None) == (self.cutoff is None) and level is None:
                return t.name if self.cutoff is None else f"{t.name}_{self.cutoff}"
        return str(self)

    def convention(self, settings: Settings | None = None, one_query: bool = False, holes: str | None = None) -> str:
        """The canonical convention string: every choice behind this measure's number
        (``one_query``: of one query's score, without the query set; see ``Settings.canonical``).
        ``holes``: for ``unjudged=min|max``, which holes the extremes range over ('pool': every
        run's given with it, as ``judged holes`` bounds them; 'run': the run's own, as a measure
        of one run computes them), added as ``holes=...`` to its unjudged part."""
        settings = settings or Settings()
        family = self.family.convention(self)
        if holes is not None and self.unjudged in ("min", "max"):
            family = [f"{p[:-1]},holes={holes})" if p.startswith("unjudged=") and p.endswith(")") else p
                      for p in family]
        parts = [self.short, *family, settings.canonical(one_query)]
        if self.aggregate != "mean":
            parts.append(f"aggregate={self.aggregate}")
        return " ".join(parts)

    def compute(self, aligned) -> "object":
        """Per-query values (numpy float64, one per evaluated query)."""
        if self.unjudged in ("min", "max"):  # the extremes over the holes' grades
            from .bounds import bound  # imported when asked: not by every evaluation

            return bound(self, aligned)
        return self.family.kernel.compute(self, aligned)


def parse_measures(measures) -> list[Measure]:
    return list(named_measures(measures).values())


def named_measures(measures) -> dict:
    """Measures as given -> Measure, trec_eval's forms naming several measures expanded to
    trec_eval's output names (``P.5,10`` -> ``P_5``, ``P_10``; ``all_trec``: :func:`trec_nickname`);
    a measure given twice once."""
    if isinstance(measures, (str, Measure)):
        measures = [measures]
    out = {}
    for given in measures:
        named = (trec_nickname(given) or trec_form(given) or trec_family(given)) if isinstance(given, str) else None
        for key, m in named if named is not None and len(named) > 1 else [(str(given), None)]:
            if key not in out:
                out[key] = m or Measure.parse(given)
    return out


def trec_defaults(name: str) -> "list[tuple[str, Measure]]":
    """A trec_eval measure named without values, as trec_eval computes it: (output name,
    Measure) at each of its default cutoffs or levels (``P`` -> P_5 ... P_1000,
    ``iprec_at_recall`` -> iprec_at_recall_0.00 ... 1.00), else the one measure (``map``).

    >>> [key for key, _ in trec_defaults("success")], trec_defaults("map")
    (['success_1', 'success_5', 'success_10'], [('map', Measure('AP'))])
    """
    family, t = trec_table()[name]
    if t.levels:
        return [(f"{t.name}_{level:.2f}", Measure.parse(f"{family}({t.level}={float(level)!r})")) for level in t.levels]
    if t.cutoffs:
        return [(f"{t.name}_{k}", Measure(family, k)) for k in t.cutoffs]
    return [(t.name, Measure(family))]


def trec_family(text: str) -> "list[tuple[str, Measure]] | None":
    """trec_eval's name of a measure with default cutoffs or levels, given without values, as
    trec_eval computes it: at each of them (:func:`trec_defaults`: ``ndcg_cut`` -> ndcg_cut_5
    ... ndcg_cut_1000, ``Rprec_mult`` -> Rprec_mult_0.20 ... 2.00), not judged's measure of
    the whole ranking (nDCG) or of one level (Rprec); None for any other text. ``P`` and
    ``success`` are judged's P and Success too, which need a cutoff.

    >>> [key for key, _ in trec_family("map_cut")][:3], trec_family("P"), trec_family("map")
    (['map_cut_5', 'map_cut_10', 'map_cut_15'], None, None)
    """
    name = text.strip().lower() if isinstance(text, str) else None
    trec = next((t for t, (_, r) in trec_table().items() if t.lower() == name and (r.cutoffs or r.levels)), None)
    if trec is None or any(f.lower() == name for f in FAMILIES):
        return None
    return trec_defaults(trec)


def trec_nickname(text: str) -> "list[tuple[str, Measure]] | None":
    """trec_eval's ``-m official``, ``-m set`` and ``-m all_trec`` as (output name, Measure)
    pairs, in trec_eval's print order, each at trec_eval's default cutoffs or levels
    (:func:`trec_defaults`); None when ``text`` is not one. Left out: the string-valued
    runid (trec_eval's ``runid`` line) and relstring, and trec_eval 10's rbp, rbp_resid and
    unj (``TREC_NOT_COMPUTED``: not in trec_eval 9's all_trec, which pytrec_eval holds)."""
    names = TREC_NICKNAMES.get(text.strip()) if isinstance(text, str) else None
    if names is None:
        return None
    return [pair for name in names if name not in TREC_STRINGS + TREC_NOT_COMPUTED for pair in trec_defaults(name)]


def trec_key(text: str) -> str | None:
    """trec_eval's output name when ``text`` is one already (pytrec_eval's keys:
    ``ndcg_cut_10``, ``Rprec_mult_1.00``, ``iprec_at_recall_0.1`` -> ``iprec_at_recall_0.10``);
    None otherwise. trec_eval names a level by its value (``%3.2f``), the default one too."""
    text = text.strip()
    m = _TREC_NAME.match(text)
    if m:
        name = next(t for t in trec_table() if t.lower() == m.group(1).lower())
        return f"{name}_{int(m.group(2))}"
    m = _TREC_LEVEL.match(text)
    if m:
        name = next(t for t in trec_table() if t.lower() == m.group(1).lower())
        return f"{name}_{float(m.group(2)):.2f}"
    return None


def trec_form(text: str) -> "list[tuple[str, Measure]] | None":
    """trec_eval's ``name.values`` form as (trec_eval's output name, Measure) pairs; None
    when ``text`` is not one. The values are cutoffs (``P.5,10`` -> P_5, P_10), recall or
    R levels (``iprec_at_recall.0.1,0.5`` -> iprec_at_recall_0.10, iprec_at_recall_0.50),
    parameters (``set_F.0.5``: beta; ``utility.1,-1,0,0``: the gains of a relevant retrieved,
    non-relevant retrieved, relevant missed and non-relevant missed document) or ndcg's
    per-level gains (``ndcg.1=3.5,2=9``; a level not listed keeps its grade as its gain).

    >>> trec_form("P.5,10")
    [('P_5', Measure('P@5')), ('P_10', Measure('P@10'))]
    >>> trec_form("set_F.0.5"), trec_form("ndcg.1=3.5")
    ([('set_F', Measure('SetF(beta=0.5)'))], [('ndcg', Measure('nDCG(gains={1:3.5})'))])
    """
    m = _TREC_FORM.match(text.strip())
    table = {n.lower(): v for n, v in trec_table().items()}
    if not m or m.group(1).lower() not in table:
        return None
    name, t = table[m.group(1).lower()]
    values = m.group(2).split(",")
    try:
        if t.cutoffs is not None:
            if not all(v.isdigit() for v in values):
                raise ValueError("cutoffs are positive integers")
            return [(f"{t.name}_{int(k)}", Measure.parse(f"{name}@{int(k)}")) for k in values]
        if t.level:
            return [(f"{t.name}_{float(x):.2f}", Measure.parse(f"{name}({t.level}={float(x)!r})")) for x in values]
        if t.params == ("gains",):
            gains = {}
            for pair in values:
                if pair.count("=") != 1:
                    raise ValueError("its values are level=gain pairs, e.g. ndcg.1=3.5,2=9")
                level, gain = pair.split("=")
                gains[int(level)] = float(gain)
            return [(t.name, Measure.parse(f"{name}(gains={gains!r})"))]
        if t.params:
            numbers = [float(x) for x in values]
            if len(numbers) != len(t.params):
                raise ValueError(f"{counted(len(t.params), 'value')} ({', '.join(t.params)})")
            kw = dict(zip(t.params, numbers))
            if kw.pop("tn", 0.0) != 0.0:
                raise ValueError("the fourth coefficient counts non-relevant documents not retrieved, which needs "
                                 "the collection's size (trec_eval -N): judged takes it as 0")
            return [(t.name, Measure.parse(f"{name}({','.join(f'{k}={v!r}' for k, v in kw.items())})"))]
    except ValueError as exc:
        raise MeasureError(f"cannot read trec_eval's {t.name}.{m.group(2)}: {exc} ({text!r})")
    raise MeasureError(f"judged reads trec_eval's {t.name} without parameters ({text!r})")


def _meant(text: str, raw_name: str | None = None) -> str | None:
    """``text`` with its mistyped measure name replaced by the closest known one, or None
    when none is close: trec_eval's name in pytrec_eval's keys (``ndcg_cutt_10`` ->
    ``ndcg_cut_10``) and in trec_eval's ``name.values`` form (``ndcg_cutt.10``), else
    judged's name of the closest spelling of ``raw_name`` (``nDGC@10`` -> ``nDCG@10``,
    ``mapp`` -> ``AP``)."""
    text = text.strip()
    for form in (r"^([A-Za-z0-9_]+?)_\d+(?:\.\d*)?$", r"^([A-Za-z0-9_]+)\.\S+$"):
        m = re.match(form, text)
        named = closest(m.group(1), list(trec_names())) if m else None
        if named is not None:
            return named + text[m.end(1):]
    match = closest(raw_name, {n: n for n in FAMILIES} | NAMES) if raw_name else None
    return None if match is None else text.replace(raw_name, match, 1)


def _fmt(x: float) -> str:
    return str(int(x)) if float(x).is_integer() else repr(float(x))


def _split_top(params: str) -> list[str]:
    out, depth, cur, quote = [], 0, "", None
    for ch in params:
        if quote:
            cur += ch
            if ch == quote:
                quote = None
            continue
        if ch in "'\"":
            quote = ch
        elif ch in "{[(":
            depth += 1
        elif ch in "}])":
            depth -= 1
        if ch == "," and depth == 0:
            out.append(cur)
            cur = ""
        else:
            cur += ch
    if cur.strip():
        out.append(cur)
    return out


def _parse_params(params: str, text: str) -> dict:
    kw = {}
    for item in _split_top(params):
        if "=" not in item:
            raise MeasureError(f"parameter {item.strip()!r} needs a name, e.g. rel=2 ({text!r})")
        key, value = item.split("=", 1)
        key, value = key.strip(), value.strip()
        try:
            parsed = ast.literal_eval(value)
        except (ValueError, SyntaxError):
            parsed = value  # bare word: gain=exp
        kw[key] = parsed
    return kw
