"""The release gate: may a candidate run replace a baseline? One decision from a policy.

A policy (a TOML file, or the same as a dict) states the rules, each optional::

    measure = "nDCG@10"          # the measure of the margin and of the critical queries
    [margin]                     # paired one-sided interval of mean(candidate - baseline)
    non_inferiority = 0.01       # pass when its lower bound > -0.01 (or: superiority = 0.0, > +0.0)
    confidence = 0.95
    [critical]                   # queries that may not lose more than max_loss each
    queries = ["q3", "q17"]      # and/or file = "critical.txt" (one qid per line)
    max_loss = 0.1
    [evidence]                   # Complete@k floor (judged eval --requirements)
    requirements = "requirements.txt"
    min_complete = 0.9
    [eligibility]                # leaks ceiling (judged eval --eligibility)
    file = "eligibility.txt"
    max_leaks = 0
    [answers]                    # answer acceptance floor (judged answers)
    file = "answers.tsv"
    min_acceptance = 0.8
    [abstention]                 # abstention floors (judged eval --unanswerable)
    unanswerable = "unanswerable.txt"
    min_recall = 1.0
    [holes]                      # the unjudged documents (judged holes, judged pool)
    max_share = 0.2              # largest share of the candidate's top k unjudged
    could_flip = "undecided"     # when judging the holes could flip a rule: undecided | fail | ignore

Each rule gives pass, fail or undecided and its figure; the gate fails when a rule fails,
else is undecided when a rule is, else passes (:data:`EXIT_CODES`: 0, 1, 3; bad input is 2).
A rule is undecided when judging the holes could flip it: the margin when the threshold
lies in the range the interval's bound can reach over every grade of the holes of both
runs (:func:`judged.analyses.holes.unjudged.comparison_holes`: Δ's range, exact for nDCG and DCG,
the interval's half-width held), a critical query when its difference's range over its
holes (each run bounded over both runs' holes, :func:`judged.analyses.holes.unjudged.bound_over_pool`)
reaches the other side of -max_loss. The pairs to judge first are the holes of the
queries concerned, in ``judged pool``'s order (:mod:`judged.analyses.pooling.strategies`). Against a
frozen manifest the qrels are checked first (:meth:`judged.core.manifest.Manifest.check`:
changed judgments are refused). Every figure is computed by judged's own functions:
:mod:`judged.analyses.stats` (the bound), :mod:`judged.core.checks` (Complete@k, leaks,
abstention), :mod:`judged.analyses.answers`.
"""

from __future__ import annotations

import math
import os
from dataclasses import dataclass, field, replace

import numpy as np

from . import stats
from ..core.conventions import Settings, validate
from ..core.errors import ConventionError, JudgedError, ParseError, UsageError
from ..core.measures import Measure
from ..core.words import counted
from ..core.evaluation import ALIGNMENT, evaluate
from ..core.querysets import refuse_disjoint_runs
from ..core.io import read_qrels
from ..core.manifest import Manifest
from ..core.io.toml import read_toml
from ..core.jsonsafe import json_safe
from ..core.runnames import display_names
from ..core.measures.bounds import zero_filled
from .holes.unjudged import bound_over_pool, negative_as, run_holes, comparison_holes
from ..core.checks.answer_key import read_query_list

VERDICTS = ("pass", "fail", "undecided")
EXIT_CODES = {"pass": 0, "fail": 1, "undecided": 3}  # 2: bad input, as every judged command
COULD_FLIP = {"undecided": "a rule judging the holes could flip is undecided: judge the pairs listed, then run the gate "
                           "again",
              "fail": "a rule judging the holes could flip fails: a decision the holes could reverse is not taken",
              "ignore": "the holes are not asked: each rule's verdict on the judgments as they are stands"}
DEFAULT_MEASURE = "nDCG@10"
DEFAULT_CONFIDENCE = 0.95
DEFAULT_JUDGE_FIRST = 20
NOT_JUDGEABLE = ("sample", "sample-queries", "machine", "disagreement")  # strategies needing more than the runs
SECTIONS = {
    "": {"measure", "k", "manifest", "margin", "critical", "evidence", "eligibility", "answers", "abstention",
         "holes"},
    "margin": {"non_inferiority", "superiority", "confidence"},
    "critical": {"queries", "file", "max_loss"},
    "evidence": {"requirements", "min_complete"},
    "eligibility": {"file", "principal", "max_leaks"},
    "answers": {"file", "min_acceptance"},
    "abstention": {"unanswerable", "marker", "min_recall", "min_precision"},
    "holes": {"max_share", "could_flip", "judge_first", "strategy", "maxgrade", "negative"},
}
HOLES_METHOD = ("judging the holes could flip a rule when its threshold lies in the range its figure can reach over "
                "every grade of the holes of both runs' top k: for the margin, [low - h, high - h] with [low, high] "
                "the range of Δ (judged holes: exact for nDCG and DCG, else conservative) and h the interval's "
                "half-width as it is; for a critical query, its difference's range with each run bounded over "
                "both runs' holes (conservative)")


# ---------------------------------------------------------------------------
# the policy


@dataclass(frozen=True)
class Policy:
    """A gate policy, validated: the sections of the module's TOML, paths resolved beside
    the policy file. Read with :meth:`load` (a path, a dict, or a Policy)."""

    source: str = "<policy>"
    measure: str = DEFAULT_MEASURE
    k: int | None = None
    manifest: str | None = None
    margin: dict | None = None  # kind ('non-inferiority' | 'superiority'), margin, confidence
    critical: dict | None = None  # queries (tuple), max_loss, file
    evidence: dict | None = None  # requirements, min_complete
    eligibility: dict | None = None  # file, principal, max_leaks
    answers: dict | None = None  # file, min_acceptance
    abstention: dict | None = None  # unanswerable, marker, min_recall, min_precision
    holes: dict = field(default_factory=dict)  # max_share, could_flip, judge_first, strategy, maxgrade, negative

    @staticmethod
    def load(policy) -> "Policy":
        if isinstance(policy, Policy):
            return policy
        if isinstance(policy, dict):
            return _parse(dict(policy), "<policy>", None)
        name = os.fspath(policy)
        return _parse(read_toml(name, "judged gate policy"), name, os.path.dirname(os.path.abspath(name)))

    @property
    def could_flip(self) -> str:
        return self.holes.get("could_flip", "undecided")

    def depth(self) -> int:
        """k: the top k of the holes and the leak and evidence lists (default: the measure's cutoff, else 10)."""
        return self.k or Measure.parse(self.measure).cutoff or 10

    def rules(self) -> list[str]:
        """The rules this policy states, in the order the gate decides them."""
        out = [self.margin["kind"]] if self.margin else []
        out += ["critical"] * bool(self.critical) + ["complete"] * bool(self.evidence)
        out += ["leaks"] * bool(self.eligibility) + ["answers"] * bool(self.answers)
        if self.abstention:
            out += [f"abstention {w}" for w in ("recall", "precision") if f"min_{w}" in self.abstention]
        return out + ["holes"] * ("max_share" in self.holes)


def _parse(data: dict, source: str, folder: str | None) -> Policy:
    def bad(why: str):
        return ParseError(source, None, f"not a usable gate policy: {why}")

    def path(value, where):
        if not isinstance(value, (str, os.PathLike)) or not os.fspath(value):
            raise bad(f"{where} should be a file name, got {value!r}")
        value = os.fspath(value)
        return os.path.join(folder, value) if folder and not os.path.isabs(value) else value

    def number(section, key, low=0.0, high=math.inf, integer=False, default=None):
        value = section.get(key, default)
        if value is None:
            return None
        ok = isinstance(value, int) if integer else isinstance(value, (int, float))
        if isinstance(value, bool) or not ok or not (low <= value <= high) or not math.isfinite(value):
            kind = "an integer" if integer else "a number"
            span = f" >= {low:g}" if high == math.inf else f" in [{low:g}, {high:g}]"
            raise bad(f"{where(section)}{key} should be {kind}{span}, got {value!r}")
        return value

    names = {id(v): k for k, v in data.items() if isinstance(v, dict)}
    where = (lambda section: f"[{names[id(section)]}] " if id(section) in names else "")
    for key in data:
        if key not in SECTIONS[""]:
            raise bad(f"unknown key {key!r} (known: {', '.join(sorted(SECTIONS['']))})")
    sections = {}
    for name in SECTIONS:
        if name and name in data:
            if not isinstance(data[name], dict):
                raise bad(f"{name} should be a table [{name}], got {data[name]!r}")
            unknown = set(data[name]) - SECTIONS[name]
            if unknown:
                raise bad(f"unknown key(s) {', '.join(sorted(unknown))} in [{name}] "
                          f"(known: {', '.join(sorted(SECTIONS[name]))})")
            sections[name] = data[name]
    measure = data.get("measure", DEFAULT_MEASURE)
    if not isinstance(measure, str):
        raise bad(f"measure should be a measure string such as 'nDCG@10', got {measure!r}")
    try:
        parsed = Measure.parse(measure)
    except JudgedError as exc:
        raise bad(str(exc)) from None
    if parsed.is_coverage or parsed.aggregate != "mean":
        raise bad(f"the gate's measure must be a score averaged over queries, not {measure} "
                  f"({'coverage' if parsed.is_coverage else 'aggregate ' + parsed.aggregate})")
    out = {"source": source, "measure": measure, "k": number(data, "k", 1, integer=True),
           "manifest": path(data["manifest"], "manifest") if "manifest" in data else None}
    if "margin" in sections:
        s = sections["margin"]
        kinds = [k for k in ("non_inferiority", "superiority") if k in s]
        if len(kinds) != 1:
            raise bad("[margin] needs one of non_inferiority = MARGIN (the candidate may be at most MARGIN worse) "
                      "or superiority = MARGIN (it must be better by more than MARGIN)")
        out["margin"] = {"kind": kinds[0].replace("_", "-"), "margin": float(number(s, kinds[0])),
                         "confidence": float(number(s, "confidence", 0.5, 0.999999, default=DEFAULT_CONFIDENCE))}
    if "critical" in sections:
        s = sections["critical"]
        queries = s.get("queries", [])
        if not isinstance(queries, list) or not all(isinstance(q, (str, int)) for q in queries):
            raise bad(f"[critical] queries should be a list of query ids, got {queries!r}")
        queries = [str(q) for q in queries]
        file = path(s["file"], "[critical] file") if "file" in s else None
        if file is not None:
            queries += [q for q in read_query_list(file) if q not in queries]
        if not queries:
            raise bad("[critical] names no query: give queries = [...] or file = FILE")
        out["critical"] = {"queries": tuple(dict.fromkeys(queries)), "file": file,
                           "max_loss": float(number(s, "max_loss", default=0.0))}
    if "evidence" in sections:
        s = sections["evidence"]
        if "requirements" not in s or "min_complete" not in s:
            raise bad("[evidence] needs requirements = FILE and min_complete = FLOOR")
        out["evidence"] = {"requirements": path(s["requirements"], "[evidence] requirements"),
                           "min_complete": float(number(s, "min_complete", 0, 1))}
    if "eligibility" in sections:
        s = sections["eligibility"]
        if "file" not in s:
            raise bad("[eligibility] needs file = FILE")
        principal = s.get("principal")
        if principal is not None and not isinstance(principal, str):
            raise bad(f"[eligibility] principal should be a string, got {principal!r}")
        out["eligibility"] = {"file": path(s["file"], "[eligibility] file"), "principal": principal,
                              "max_leaks": int(number(s, "max_leaks", 0, integer=True, default=0))}
    if "answers" in sections:
        s = sections["answers"]
        if "min_acceptance" not in s:
            raise bad("[answers] needs min_acceptance = FLOOR")
        out["answers"] = {"file": path(s["file"], "[answers] file") if "file" in s else None,
                          "min_acceptance": float(number(s, "min_acceptance", 0, 1))}
    if "abstention" in sections:
        s = sections["abstention"]
        if "min_recall" not in s and "min_precision" not in s:
            raise bad("[abstention] needs min_recall and/or min_precision")
        marker = s.get("marker")
        if marker is not None and (not isinstance(marker, str) or not marker):
            raise bad(f"[abstention] marker should be a docid, got {marker!r}")
        out["abstention"] = {"unanswerable": path(s["unanswerable"], "[abstention] unanswerable")
                             if "unanswerable" in s else None, "marker": marker,
                             **{k: float(number(s, k, 0, 1)) for k in ("min_recall", "min_precision") if k in s}}
    s = sections.get("holes", {})
    holes = {}
    if "max_share" in s:
        holes["max_share"] = float(number(s, "max_share", 0, 1))
    if "could_flip" in s:
        if s["could_flip"] not in COULD_FLIP:
            raise bad(f"[holes] could_flip should be one of {', '.join(COULD_FLIP)}, got {s['could_flip']!r}")
        holes["could_flip"] = s["could_flip"]
    if "judge_first" in s:
        holes["judge_first"] = int(number(s, "judge_first", 0, integer=True))
    if "maxgrade" in s:
        holes["maxgrade"] = int(number(s, "maxgrade", 0, integer=True))
    if "negative" in s:
        try:
            validate(negative=s["negative"])
        except ConventionError as exc:
            raise bad(f"[holes] {exc}") from None
        holes["negative"] = s["negative"]
    if "strategy" in s:
        from .pooling.strategies import STRATEGIES

        if s["strategy"] not in STRATEGIES or s["strategy"] in NOT_JUDGEABLE:
            known = [n for n in STRATEGIES if n not in NOT_JUDGEABLE]
            raise bad(f"[holes] strategy should be one of {', '.join(known)}, got {s['strategy']!r}")
        holes["strategy"] = s["strategy"]
    policy = Policy(**out, holes=holes)
    if not policy.rules():
        raise bad("it states no rule ([margin], [critical], [evidence], [eligibility], [answers], [abstention] "
                  "or [holes] max_share)")
    return policy


# ---------------------------------------------------------------------------
# the decision


@dataclass
class Rule:
    """One rule's decision: its verdict, the figure it was decided on, and whether judging
    the holes could flip it (None: not known, the measure's holes are not bounded)."""

    name: str
    verdict: str
    figure: str
    value: float | None = None
    threshold: float | None = None
    could_flip: bool | None = None
    flip: str = ""  # what judging could do, in words
    queries: list = field(default_factory=list)  # the queries whose holes could flip it ([]: every query)
    detail: dict = field(default_factory=dict)

    def line(self) -> str:
        """``PASS  non-inferiority: figure[; flip]``: the rule as the gate prints it."""
        return f"{self.verdict.upper():<9} {self.name}: {self.figure}" + (f"; {self.flip}" if self.flip else "")

    def to_dict(self) -> dict:
        return {"rule": self.name, "verdict": self.verdict, "figure": self.figure, "value": _finite(self.value),
                "threshold": _finite(self.threshold), "could_flip": self.could_flip, "flip": self.flip,
                "queries": list(self.queries), **self.detail}


@dataclass
class GateResult:
    """The gate's decision: every rule, the verdict (:data:`VERDICTS`), its exit code and,
    when judging could change it, the unjudged pairs to judge first."""

    policy: Policy
    baseline: str
    candidate: str
    measure: str
    convention: str
    k: int
    queries: int
    rules: list
    judge_first: list = field(default_factory=list)  # dicts: qid, docid, best_rank, runs
    unjudged: int = 0  # holes in the two runs' top k of the queries concerned
    strategy: str | None = None
    provenance: dict = field(default_factory=dict)  # qrels, runs, manifest
    methods: dict = field(default_factory=dict)

    @property
    def verdict(self) -> str:
        found = {r.verdict for r in self.rules}
        return "fail" if "fail" in found else "undecided" if "undecided" in found else "pass"

    @property
    def exit_code(self) -> int:
        return EXIT_CODES[self.verdict]

    @property
    def passed(self) -> bool:
        return self.verdict == "pass"

    def headline(self) -> str:
        counts = ", ".join(f"{sum(r.verdict == v for r in self.rules)} {v}" for v in VERDICTS
                           if any(r.verdict == v for r in self.rules))
        return (f"judged gate: may {self.candidate} replace {self.baseline}? {self.verdict.upper()} "
                f"({counted(len(self.rules), 'rule')}: {counts}; exit {self.exit_code})")

    def lines(self) -> list[str]:
        """The headline, one line per rule, and the pairs to judge first (when listed)."""
        out = [self.headline()] + [r.line() for r in self.rules]
        if self.judge_first:
            out.append(f"judge first ({len(self.judge_first)} of {counted(self.unjudged, 'unjudged pair')} in the "
                       f"top {self.k}, judged pool's {self.strategy} order): "
                       + ", ".join(f"{p['qid']} {p['docid']}" for p in self.judge_first))
        return out

    def __str__(self) -> str:
        return "\n".join(self.lines())

    def to_dict(self) -> dict:
        return {"verdict": self.verdict, "exit_code": self.exit_code, "baseline": self.baseline,
                "candidate": self.candidate, "measure": self.measure, "convention": self.convention, "k": self.k,
                "queries": self.queries, "rules": [r.to_dict() for r in self.rules],
                "judge_first": [dict(p) for p in self.judge_first], "unjudged": self.unjudged,
                "strategy": self.strategy, "policy": {"source": self.policy.source, "could_flip": self.policy.could_flip},
                "methods": dict(self.methods), **self.provenance}

    def to_json(self, indent: int | None = 2) -> str:
        """``judged gate --format json``: :meth:`to_dict`, strict JSON (NaN as null)."""
        import json

        return json.dumps(json_safe(self.to_dict()), indent=indent)


def _finite(x):
    return None if x is None or not math.isfinite(x) else float(x)


def gate(policy, qrels=None, baseline=None, candidate=None, *, manifest=None, answers=None,
         settings: Settings | None = None) -> GateResult:
    """Decide whether ``candidate`` may replace ``baseline`` under ``policy`` (a TOML path, a
    dict of its sections or a :class:`Policy`). ``qrels`` may be omitted with a manifest
    (``manifest=`` or the policy's ``manifest``): its qrels are read and checked, and changed
    judgments refused (:class:`judged.core.manifest.ManifestError`). ``answers``: the answer
    verdicts, in place of the policy's ``[answers] file``. Runs are paths, DataFrames or
    dicts, as :func:`judged.evaluate` takes them; both are scored over every qrels query (0
    where a run ranks nothing), as ``judged compare``. ``settings``: the conventions
    (without a manifest; default trec_eval's)."""
    p = Policy.load(policy)
    if baseline is None or candidate is None:
        raise UsageError("the gate needs a baseline run and a candidate run")
    k = p.depth()
    measures = [p.measure, f"Judged@{k}"] + [f"Complete@{k}"] * bool(p.evidence) + [f"Leak@{k}"] * bool(p.eligibility)
    checks = {"requirements": (p.evidence or {}).get("requirements"),
              "eligibility": (p.eligibility or {}).get("file"), "principal": (p.eligibility or {}).get("principal"),
              "unanswerable": (p.abstention or {}).get("unanswerable")}
    if (p.abstention or {}).get("marker"):
        checks["abstain_marker"] = p.abstention["marker"]
    manifest = manifest if manifest is not None else p.manifest
    provenance = {}
    if manifest is not None:
        qrels, settings, provenance["manifest"] = _frozen(manifest, qrels, p.measure, settings)
    elif qrels is None:
        raise UsageError("give QRELS BASELINE CANDIDATE (or BASELINE CANDIDATE with a manifest holding the qrels)")
    else:
        settings = replace(Settings.of(settings, gate), complete=True)
    settings = replace(settings, negative=p.holes.get("negative", settings.negative))  # where holes are looked for
    runs = {"baseline": baseline, "candidate": candidate}
    if all(isinstance(r, (str, os.PathLike)) for r in runs.values()):  # named as every command shows them
        paths = [os.fspath(baseline), os.fspath(candidate)]
        if paths[0] != paths[1]:
            shown = display_names(paths)
            runs = {shown[paths[0]]: baseline, shown[paths[1]]: candidate}
    result = evaluate(qrels, runs, list(dict.fromkeys(measures)), settings=settings, keep=ALIGNMENT, **checks)
    refuse_disjoint_runs(result)
    base, cand = list(result.runs)
    result.checks.depth = k
    provenance["qrels"] = {"path": result.qrels.source, "sha256": result.qrels.sha256}
    provenance["runs"] = {name: {"path": rr.aligned.run.source, "sha256": rr.aligned.run.sha256}
                          for name, rr in result.runs.items()}
    decide = _Decision(p, result, base, cand, k)
    rules = decide.rules(answers)
    out = GateResult(p, base, cand, p.measure, result.conventions[p.measure], k, len(result.runs[base].qids),
                     rules, provenance=provenance, methods=decide.methods)
    concerned = [r for r in rules if r.verdict == "undecided" or (r.name == "holes" and r.verdict == "fail")]
    if concerned and p.holes.get("judge_first", DEFAULT_JUDGE_FIRST):
        queries = None if any(not r.queries for r in concerned) else {q for r in concerned for q in r.queries}
        out.strategy, out.unjudged, out.judge_first = decide.judge_first(queries)
    return out


def _frozen(manifest, qrels, measure: str, settings):
    """(the checked qrels, the manifest's settings, its provenance): changed judgments or
    query set refused; the policy's measure must be frozen in it, under the same convention."""
    m = Manifest.load(manifest)
    if settings is not None:
        raise UsageError("a manifest fixes the conventions: pass no settings with it")
    if qrels is None:
        qrels = m.resolve(m.qrels["path"])
        if not os.path.exists(qrels):
            raise ParseError(m.path or "the manifest", None, f"its qrels file {qrels!r} no longer exists")
    q = m.check(read_qrels(qrels))
    settings = m.settings()
    convention = Measure.parse(measure).convention(settings)
    if convention not in [e["convention"] for e in m.measures]:
        raise UsageError(f"the policy's measure {measure} ({convention}) is not frozen in {m.path or 'the manifest'} "
                         f"(frozen: {', '.join(m.measure_strings)})")
    return q, settings, m.provenance()


class _Decision:
    """The rules of one gate over one evaluated result (baseline, candidate)."""

    def __init__(self, policy: Policy, result, base: str, cand: str, k: int):
        self.p, self.result, self.base, self.cand, self.k = policy, result, base, cand, k
        self.qids = [str(q) for q in result.runs[base].qids.tolist()]
        self.measure = policy.measure
        self.holes = policy.holes
        self.bounded = Measure.parse(self.measure).family.boundable
        self.methods = {"query_set": "every qrels query, 0 where a run ranks nothing (trec_eval -c), as judged compare",
                        "tolerance": stats.TOLERANCE, "could_flip": f"{COULD_FLIP[policy.could_flip]} ([holes] could_flip = "
                                      f"'{policy.could_flip}')"}
        self._comparison_holes = None

    # -- shared figures ---------------------------------------------------------
    def values(self, name: str, measure: str | None = None) -> np.ndarray:
        return np.asarray(self.result.runs[name].values[measure or self.measure], np.float64)

    def comparison_holes(self):
        """Judged@k of both runs and the range of Δ over their holes (judged compare's)."""
        if self._comparison_holes is None:
            self._comparison_holes = comparison_holes(self.result, self.base, self.k,
                                                      maxgrade=self.holes.get("maxgrade"))
        return self._comparison_holes

    def query_ranges(self) -> tuple[np.ndarray, np.ndarray]:
        """Per query, the least and the largest candidate - baseline over every grade of the
        holes of both runs, each run bounded over both runs' holes (conservative)."""
        m = zero_filled(self.result.measures[self.measure])
        if "maxgrade" in self.holes:
            m = replace(m, maxgrade=self.holes["maxgrade"])
        negative = self.result.settings.negative
        runs = {name: run_holes(name, negative_as(self.result.runs[name].aligned, negative), m, self.k, samples=0,
                                own_bounds=False) for name in (self.base, self.cand)}
        bound_over_pool(m, runs, self.k)
        b, c = runs[self.base], runs[self.cand]
        return c.low - b.high, c.high - b.low

    def settle(self, rule: Rule, could_flip: bool | None, flip: str) -> Rule:
        """The rule under the policy's ``could_flip`` when judging could reverse it."""
        rule.could_flip = could_flip
        if could_flip:
            rule.flip = flip
            if self.p.could_flip == "undecided":
                rule.verdict = "undecided"
            elif self.p.could_flip == "fail":
                rule.verdict = "fail"
        return rule

    # -- the rules --------------------------------------------------------------
    def rules(self, answers) -> list[Rule]:
        out = []
        if self.p.margin:
            out.append(self.margin())
        if self.p.critical:
            out.append(self.critical())
        if self.p.evidence:
            out.append(self.complete())
        if self.p.eligibility:
            out.append(self.leaks())
        if self.p.answers:
            out.append(self.answers(answers))
        if self.p.abstention:
            out += self.abstention()
        if "max_share" in self.holes:
            out.append(self.hole_share())
        return out

    def margin(self) -> Rule:
        spec = self.p.margin
        d = stats.differences(self.values(self.base), self.values(self.cand))
        mean = float(d.mean()) if len(d) else 0.0
        bound = stats.lower_bound(d, spec["confidence"])
        threshold = -spec["margin"] if spec["kind"] == "non-inferiority" else spec["margin"]
        passed = stats.tie_sign(bound - threshold, bound, threshold) > 0
        wins, losses, ties = stats.wins_losses_ties(d)
        level = f"{spec['confidence'] * 100:g}%"
        sign = ">" if passed else "<="
        figure = (f"{self.measure} Δ {mean:+.4f} ({self.cand} - {self.base}, {counted(len(d), 'query')}, "
                  f"W/L/T {wins}/{losses}/{ties}), one-sided {level} lower bound {bound:+.4f} {sign} {threshold:+.4f} "
                  f"({spec['kind']} margin {spec['margin']:g})")
        rule = Rule(spec["kind"], "pass" if passed else "fail", figure, bound, threshold,
                    detail={"mean_delta": mean, "lower_bound": bound, "confidence": spec["confidence"],
                            "margin": spec["margin"], "wins": wins, "losses": losses, "ties": ties,
                            "method": stats.ONE_SIDED_METHOD})
        self.methods["margin"] = stats.ONE_SIDED_METHOD
        flip = self.comparison_holes().flip(self.measure, self.cand) if self.bounded and self.p.could_flip != "ignore" \
            else None
        if flip is None:
            return self.settle(rule, None, "")
        half = mean - bound
        low, high = flip.low - half, flip.high - half
        could = (passed and stats.tie_sign(low - threshold, low, threshold) <= 0) or \
                (not passed and stats.tie_sign(high - threshold, high, threshold) > 0)
        rule.detail["holes"] = {"delta_min": flip.low, "delta_max": flip.high, "bound_min": low, "bound_max": high,
                                "exact": flip.exact}
        self.methods["holes"] = HOLES_METHOD
        how = "exact" if flip.exact else "conservative"
        return self.settle(rule, could, f"judging the holes could move Δ within [{flip.low:+.4f}, {flip.high:+.4f}] "
                                        f"({how}) and the bound within [{low:+.4f}, {high:+.4f}]")

    def critical(self) -> Rule:
        spec = self.p.critical
        index = {q: i for i, q in enumerate(self.qids)}
        unknown = [q for q in spec["queries"] if q not in index]
        if unknown:
            raise UsageError(f"critical quer{'y' if len(unknown) == 1 else 'ies'} {', '.join(unknown[:8])} "
                             f"{'is' if len(unknown) == 1 else 'are'} not among the {counted(len(index), 'query')} "
                             "evaluated (the qrels' queries, unanswerable ones left out)")
        rows = np.array([index[q] for q in spec["queries"]], np.int64)
        d = stats.differences(self.values(self.base), self.values(self.cand))[rows]
        allowed = spec["max_loss"]
        loss = -d
        over = [i for i in range(len(rows)) if stats.tie_sign(loss[i] - allowed, loss[i], allowed) > 0]
        worst = int(np.argmax(loss)) if len(loss) else 0
        name = "critical"
        per = {q: float(x) for q, x in zip(spec["queries"], d.tolist())}
        if over:
            shown = ", ".join(f"{spec['queries'][i]} {loss[i]:.4f}" for i in sorted(over, key=lambda i: -loss[i])[:5])
            figure = (f"{len(over)} of {counted(len(rows), 'critical query', 'critical queries')} lost more than "
                      f"{allowed:g} on {self.measure}: {shown}")
        elif stats.tie_sign(loss[worst], loss[worst]) <= 0:
            figure = (f"{counted(len(rows), 'critical query', 'critical queries')}, none lost on {self.measure} "
                      f"({allowed:g} allowed each)")
        else:
            figure = (f"{counted(len(rows), 'critical query', 'critical queries')}, the largest loss on {self.measure} "
                      f"{float(loss[worst]):.4f} ({spec['queries'][worst]}) <= {allowed:g} allowed")
        rule = Rule(name, "fail" if over else "pass", figure, float(loss[worst]) if len(loss) else 0.0, allowed,
                    detail={"max_loss": allowed, "differences": per,
                            "lost_more": [spec["queries"][i] for i in over]})
        if not self.bounded or self.p.could_flip == "ignore":
            return self.settle(rule, None, "")
        low, high = self.query_ranges()
        low, high = low[rows], high[rows]
        # a query flips when its range reaches the other side of -max_loss
        flips = [spec["queries"][i] for i in range(len(rows))
                 if (i in over and stats.tie_sign(high[i] + allowed, high[i], allowed) >= 0)
                 or (i not in over and stats.tie_sign(low[i] + allowed, low[i], allowed) < 0)]
        rule.queries = flips
        rule.detail["holes"] = {q: [float(lo), float(hi)] for q, lo, hi in zip(spec["queries"], low.tolist(),
                                                                               high.tolist())}
        self.methods["holes"] = HOLES_METHOD
        return self.settle(rule, bool(flips), f"judging the holes of {', '.join(flips[:8])} could change it "
                                              f"(their differences' ranges reach past -{allowed:g})")

    def complete(self) -> Rule:
        floor = self.p.evidence["min_complete"]
        name = f"Complete@{self.k}"
        value = self.result.aggregate(self.cand, name)
        base = self.result.aggregate(self.base, name)
        passed = stats.tie_sign(value - floor, value, floor) >= 0
        figure = (f"{name} of {self.cand} {value:.4f} {'>=' if passed else '<'} {floor:g} required "
                  f"(baseline {base:.4f}; every evidence group in the top {self.k})")
        return Rule("complete", "pass" if passed else "fail", figure, value, floor, detail={"baseline": base})

    def leaks(self) -> Rule:
        ceiling = self.p.eligibility["max_leaks"]
        found = self.result.checks.leaks(self.result)
        mine, theirs = found.get(self.cand, []), found.get(self.base, [])
        principal = self.p.eligibility.get("principal") or "everyone"
        shown = ", ".join(f"{x.qid} rank {x.rank} {x.docid}" for x in mine[:5]) + (", …" if len(mine) > 5 else "")
        passed = len(mine) <= ceiling
        figure = (f"{len(mine)} ineligible document{'s' if len(mine) != 1 else ''} in {self.cand}'s top {self.k} "
                  f"as {principal} ({'<=' if passed else '>'} {ceiling} allowed; baseline {len(theirs)})"
                  + (f": {shown}" if mine else ""))
        return Rule("leaks", "pass" if passed else "fail", figure, float(len(mine)), float(ceiling),
                    detail={"leaks": [{"qid": x.qid, "rank": x.rank, "docid": x.docid} for x in mine],
                            "baseline": len(theirs)})

    def answers(self, answers) -> Rule:
        from .answers import pair_answers

        source = answers if answers is not None else self.p.answers.get("file")
        if source is None:
            raise UsageError("the policy's [answers] floor needs the answer verdicts: [answers] file = FILE, or --answers")
        floor = self.p.answers["min_acceptance"]
        pairing = pair_answers(self.result, source, measure=self.measure)
        mine, theirs = pairing[self.cand], pairing[self.base]
        if not mine.checked:
            raise UsageError(f"the answers hold no verdict on {self.cand}'s answers to the queries evaluated: "
                             "its acceptance cannot be checked")
        rate = mine.acceptance_rate
        passed = stats.tie_sign(rate - floor, rate, floor) >= 0
        base = "n/a" if theirs.acceptance_rate is None else f"{theirs.acceptance_rate:.4f}"
        figure = (f"answer acceptance of {self.cand} {rate:.4f} ({len(mine.accepted)} of {mine.checked} answers) "
                  f"{'>=' if passed else '<'} {floor:g} required (baseline {base})")
        return Rule("answers", "pass" if passed else "fail", figure, rate, floor,
                    detail={"accepted": len(mine.accepted), "checked": mine.checked,
                            "failed": [q for q, _, _ in mine.failed], "baseline": theirs.acceptance_rate})

    def abstention(self) -> list[Rule]:
        ab = self.result.checks.abstention.get(self.cand)
        if ab is None:
            raise UsageError("the policy's [abstention] floors need unanswerable queries: [abstention] unanswerable = "
                             "FILE, or __UNANSWERABLE__ lines in the qrels")
        base = self.result.checks.abstention.get(self.base)
        out = []
        for what in ("recall", "precision"):
            floor = self.p.abstention.get(f"min_{what}")
            if floor is None:
                continue
            value = getattr(ab, what)
            counts = (f"{ab.correct} of {ab.unanswerable} unanswerable abstained on" if what == "recall" else
                      f"{ab.correct} of {ab.abstained} abstentions on unanswerable queries")
            if value is None:  # precision of a run that never abstains: no wrong abstention
                passed, shown = True, "n/a (never abstained)"
            else:
                passed, shown = stats.tie_sign(value - floor, value, floor) >= 0, f"{value:.4f} ({counts})"
            theirs = getattr(base, what) if base is not None else None
            figure = (f"abstention {what} of {self.cand} {shown} {'>=' if passed else '<'} {floor:g} required "
                      f"(baseline {'n/a' if theirs is None else f'{theirs:.4f}'})")
            out.append(Rule(f"abstention {what}", "pass" if passed else "fail", figure, value, floor,
                            detail={"answered_unanswerable": list(ab.missed_abstentions),
                                    "abstained_on_answerable": list(ab.wrong_abstentions)}))
        return out

    def hole_share(self) -> Rule:
        allowed = self.holes["max_share"]
        runs = self.comparison_holes().runs
        mine, theirs = runs[self.cand], runs[self.base]
        share, base = 1.0 - mine["judged"], 1.0 - theirs["judged"]
        passed = stats.tie_sign(share - allowed, share, allowed) <= 0
        figure = (f"unjudged share of {self.cand}'s top {self.k} {share:.4f} ({counted(mine['holes'], 'hole')} over "
                  f"{counted(mine['queries'], 'query')}, 1 - Judged@{self.k}) {'<=' if passed else '>'} {allowed:g} "
                  f"allowed (baseline {base:.4f})")
        return Rule("holes", "pass" if passed else "fail", figure, share, allowed,
                    detail={"holes": mine["holes"], "baseline": base})

    # -- what to judge first ------------------------------------------------------
    def judge_first(self, queries) -> tuple[str, int, list]:
        """(strategy, unjudged pairs of the queries concerned, the first of them in judged
        pool's order): the holes of both runs' top k, ``queries`` only when given."""
        from .pooling.strategies import STRATEGIES, PoolContext, candidates, default_strategy

        negative = self.result.settings.negative
        aligned = {name: negative_as(self.result.runs[name].aligned, negative) for name in (self.base, self.cand)}
        pairs = [p for p in candidates(aligned, self.k) if queries is None or p.qid in queries]
        count = self.holes.get("judge_first", DEFAULT_JUDGE_FIRST)
        strategy = self.holes.get("strategy") or default_strategy(count)
        ctx = PoolContext(self.result.qrels, aligned, self.k, None, self.holes.get("maxgrade"), None, {})
        chosen = STRATEGIES[strategy].select(pairs, ctx).pairs[:count] if pairs else []
        self.methods["judge_first"] = (f"the unjudged pairs of both runs' top {self.k}"
                                       + ("" if queries is None else " in the queries concerned")
                                       + f", in judged pool's {strategy} order: {STRATEGIES[strategy].source}")
        return strategy, len(pairs), [{"qid": p.qid, "docid": p.docid, "best_rank": p.best_rank,
                                       "runs": list(p.runs)} for p in chosen]
