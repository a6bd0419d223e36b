"""A measure's parameters: every one a family may take (:data:`PARAMS`, in the order the
canonical string prints them), each a :class:`Param` with its type, choices, default, bounds
and what it means; :data:`OPTIONS`, those kept in ``Measure.options``. The families that take
them are :mod:`judged.core.measures.registry`."""

from __future__ import annotations

from dataclasses import dataclass

from ..conventions import IDEAL, UNJUDGED
from ..errors import MeasureError


@dataclass(frozen=True)
class Param:
    """A measure parameter: its type (``int``, ``float``, ``str``, ``gain``, ``bool``),
    its choices (None: any value of the type), its default and what it means."""

    name: str
    type: str
    default: object
    description: str
    choices: tuple | None = None

    bounds: tuple | None = None  # (low, high) a number must lie in, inclusive

    def describe(self) -> str:
        choices = f" ({'|'.join(map(str, self.choices))})" if self.choices else ""
        default = "none: required" if self.default is None and self.name in OPTIONS else self.default
        return f"{self.name}: {self.type}{choices}, default {default}. {self.description}"

    def check(self, value, text: str, spelled: str | None = None):
        """``value`` as this parameter's type, or a MeasureError naming the parameter as the
        measure ``text`` spells it (``spelled``: RBP's p=, NRBP's beta=)."""
        name = spelled or self.name

        number = isinstance(value, (int, float)) and not isinstance(value, bool)
        if self.choices:
            if value not in self.choices:
                raise MeasureError(f"{name} must be one of {', '.join(self.choices)}, not {value!r} ({text!r})")
            return value
        if self.type == "bool":
            if value in (True, False, "True", "False", "true", "false"):
                return value in (True, "True", "true")
            raise MeasureError(f"{name} must be True or False, not {value!r} ({text!r})")
        if self.type == "float" and number:
            value = float(value)
        elif self.type == "int" and number and float(value).is_integer():
            value = int(value)
        else:
            raise MeasureError(f"{name} must be a{'n integer' if self.type == 'int' else ' number'}, "
                               f"not {value!r} ({text!r})")
        low, high = self.bounds or (float("-inf"), float("inf"))
        if not low <= value <= high:
            raise MeasureError(f"{name} must lie in [{low:g}, {high:g}], not {value!r} ({text!r})")
        return value


# every parameter a family may take, in the order the canonical string prints them
PARAMS = {p.name: p for p in (
    Param("rel", "int", 1, "relevance level: a document is relevant when its grade >= rel (trec_eval -l)"),
    Param("gain", "gain", "linear", "grade -> gain: linear (grade, trec_eval), exp (2^grade - 1, Burges et al. "
                                    "2005) or a mapping {grade: gain} (trec_eval's ndcg.1=3.5 form; gains= is "
                                    "ir_measures' spelling, where an unlisted grade keeps its grade)"),
    Param("discount", "str", "log2", "rank discount: log2 1/log2(r+1), jk2002 1/log_base(r) from r = base on "
                                     "(Jarvelin & Kekalainen 2002), reciprocal 1/r, power 1/r^p",
          ("log2", "jk2002", "reciprocal", "power")),
    Param("base", "float", 2, "the logarithm base of discount=jk2002"),
    Param("p", "float", 1, "the exponent of discount=power"),
    Param("ideal", "str", "judged", "the ideal ranking: every judged document of the query (trec_eval) or only "
                                    "the run's own (retrieved; scikit-learn's ndcg_score)", IDEAL),
    Param("unjudged", "str", "zero", "unjudged documents: zero (not relevant, trec_eval), condensed (removed "
                                     "from the ranking, Sakai 2007; trec_eval -J), min / max (the extremes over "
                                     "every grade the holes could get, exact unless the measure says conservative; "
                                     "judged.analyses.holes.unjudged)", UNJUDGED),
    Param("maxgrade", "int", None, "with unjudged=min|max: holes get grades 0..maxgrade (default: the qrels' "
                                   "largest)"),
    # the families' own parameters (Measure.options)
    Param("beta", "float", 1.0, "the weight of recall against precision in set_F (trec_eval's set_F.x)",
          bounds=(0, float("inf"))),
    Param("recall", "float", None, "the recall level at which interpolated precision is read (trec_eval's "
                                   "iprec_at_recall levels 0.0 ... 1.0)", bounds=(0, 1)),
    Param("rounding", "str", "lround", "how a recall level x becomes a count of relevant documents: lround(x * R) "
                                       "(trec_eval 10) or trec9, floor(x * R + 0.9) (trec_eval 9 and pytrec_eval, "
                                       "whose values differ for some R)", ("lround", "trec9")),
    Param("mult", "float", 1.0, "the rank read, as a multiple of R: floor(mult * R + 0.9) (trec_eval's "
                                "Rprec_mult levels 0.2 ... 2.0; 1 is Rprec)", bounds=(0, float("inf"))),
    Param("persistence", "float", 0.8, "the probability the user goes on to the next rank (RBP's and Compat's "
                                       "p; spelled p= there, as ir_measures)", bounds=(0, 1)),
    Param("normalize", "bool", True, "divide by the ideal ranking's own value (Compat)"),
    Param("max_rel", "int", None, "the top grade of the scale: gains are scaled by it (ERR: 2^max_rel; C/W/L: "
                                  "(grade - min_rel) / (max_rel - min_rel))"),
    Param("min_rel", "int", 0, "the grade scaled to gain 0 (C/W/L measures)"),
    Param("T", "float", 1.0, "INST's target: the gain the user hopes to find"),
    Param("tp", "float", 1.0, "utility's gain per relevant document retrieved"),
    Param("fp", "float", -1.0, "utility's gain per non-relevant document retrieved"),
    Param("fn", "float", 0.0, "utility's gain per relevant document missed"),
    Param("alpha", "float", 0.5, "redundancy intolerance: the n-th document covering a subtopic gains (1 - alpha)^(n-1) "
                                 "for it (ndeval's -alpha)", bounds=(0, 1)),
    Param("patience", "float", 0.5, "NRBP's beta: the probability the user goes on to the next rank (ndeval's -beta; "
                                    "spelled beta=, as ir_measures)", bounds=(0, 1)),
)}
OPTIONS = {"beta", "recall", "rounding", "mult", "persistence", "normalize", "max_rel", "min_rel", "T", "tp", "fp",
           "fn", "alpha", "patience"}  # kept in Measure.options
