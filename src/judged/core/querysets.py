"""One query-set rule for every command: which queries a mean is over, said in the output,
and a warning whenever the runs compared cover different queries.

The rule
--------
* ``queries=qrels`` (``complete=True``; trec_eval ``-c``): every query of the qrels; a run
  that ranks nothing for one of them scores 0 there. **Runs compared with each other are
  always scored so** — ``judged compare``, ``report``, ``holes``, ``rejudge`` and ``meta`` —
  so every mean, difference, flip, order and test is over one and the same set of queries.
* ``queries=run-and-qrels`` (``judged eval``'s default, as trec_eval): each run's mean is
  over the qrels queries it ranks documents for. Runs covering different queries then
  have means over different sets: eval says so in a warning (``--complete`` applies the
  first form).
* Qrels versions compared with each other (``rejudge``, ``meta stability --versus-qrels``)
  are compared over the queries every version judges; queries only some versions hold
  are left out, with a warning.

Queries a convention sets aside (``--no-relevant skip``, declared unanswerable queries)
are set aside for every run alike, so they never make the sets differ.

Beyond the rule, every command refuses a run that shares no query id with the qrels
(:func:`refuse_disjoint_runs`, :class:`judged.core.errors.QuerySetError`: its mean would be 0
over nothing it was asked), and a run whose query ids mostly miss the qrels gets a warning
(``judged.evaluate`` itself only warns, as trec_eval scores such a run over no query).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from .words import counted
from .errors import QuerySetError
from .io.compressed import head

QRELS = "qrels"
RUN_AND_QRELS = "run-and-qrels"
RULES = {
    QRELS: "every qrels query, 0 where a run ranks nothing (trec_eval -c)",
    RUN_AND_QRELS: "each run over the qrels queries it ranks (trec_eval's default)",
}
SMALL_OVERLAP = 0.5  # warn when fewer than this share of a run's query ids are in the qrels
MANY_ALIKE = 3  # that many runs with the same overlap get one warning, not one each
SAMPLE = 3  # ids quoted in a message


def rule_of(settings) -> str:
    """``qrels`` or ``run-and-qrels``: the query-set rule of a :class:`~judged.core.conventions.Settings`."""
    return QRELS if settings.complete else RUN_AND_QRELS


@dataclass
class QuerySet:
    """Which queries the runs' means are over, and how far each run covers the qrels.

    ``runs[name]``: ``evaluated`` (queries in its mean), ``ranked`` (qrels queries it
    ranks documents for), ``missing_from_run``, ``only_in_run`` (its query ids the
    qrels lack) and, when known, ``max_depth`` (most documents ranked for one query)."""

    rule: str
    qrels_queries: int
    runs: dict = field(default_factory=dict)
    left_out: int = 0  # queries only some qrels versions hold (rejudge, stability)
    different: bool | None = None  # under run-and-qrels: the runs' query sets differ (None: judge by counts)
    measures: list = field(default_factory=list)  # the Measures read (for the depth warning); empty: any

    @property
    def same(self) -> bool:
        """Every run's mean is over the same queries."""
        if self.rule == QRELS or len(self.runs) <= 1:
            return True
        if self.different is not None:
            return not self.different
        return all(r["missing_from_run"] == 0 for r in self.runs.values())

    def describe(self) -> str:
        """One line: the rule and the number of queries."""
        per_run = sorted({r["evaluated"] for r in self.runs.values()})
        n = str(per_run[0]) if len(per_run) == 1 else "-".join(map(str, (per_run[0], per_run[-1])))
        text = (f"query set: queries={self.rule}, {RULES[self.rule]}: "
                f"{n} of {counted(self.qrels_queries, 'qrels query', 'qrels queries')}")
        if self.left_out:
            text += f" ({self.left_out} judged in only some qrels versions left out)"
        return text

    def warnings(self) -> list[str]:
        """Runs that miss qrels queries, runs whose query ids mostly miss the qrels, runs
        whose means are over different queries, runs of different depths."""
        out = []
        names = list(self.runs)
        alike = {}  # (ranked, only_in_run) -> the runs with that small overlap: one line for many alike runs
        for name, r in self.runs.items():
            own = r["ranked"] + r["only_in_run"]
            if r["only_in_run"] and own and r["ranked"] / own < SMALL_OVERLAP:
                alike.setdefault((r["ranked"], r["only_in_run"]), []).append(name)
        for (ranked, only), group in alike.items():
            own = ranked + only
            if len(group) < MANY_ALIKE:
                out += [f"run {name}: only {ranked} of its {own} query ids are in the qrels ({only} are not: check "
                        "that the run and the qrels name queries alike)" for name in group]
            else:
                shown = ", ".join(group[:3]) + (", ..." if len(group) > 3 else "")
                out.append(f"{len(group)} runs ({shown}): only {ranked} of each run's {own} query "
                           f"ids are in the qrels ({only} are not: check that the runs and the qrels name queries "
                           "alike)")
        out += self.missing_warnings()
        if self.rule == RUN_AND_QRELS and len(names) > 1 and not self.same:
            sizes = ", ".join(f"{n} {r['ranked']}" for n, r in self.runs.items())
            out.append(f"the runs cover different queries "
                       f"(of {counted(self.qrels_queries, 'qrels query', 'qrels queries')}: {sizes}): their "
                       "means are over different sets and do not compare; --complete scores every qrels query "
                       "(0 where a run ranks nothing), as judged compare does")
        if self.left_out:
            out.append(f"{counted(self.left_out, 'query is', 'queries are')} judged in only some qrels versions: "
                       "left out, so every version "
                       "is scored over the same queries")
        out += depth_warnings(self.runs, self.measures)
        return out

    def missing_warnings(self) -> list[str]:
        """Runs that rank nothing for some qrels queries, under either rule the same sentence:
        how many, what the rule does with them, and the other rule's option, so that eval's
        mean (trec_eval's default: left out) and the comparing commands' (0 there) are never
        side by side unexplained (issue 34). Many runs alike: one line."""
        missing = {n: r["missing_from_run"] for n, r in self.runs.items() if r["missing_from_run"]}
        if not missing:
            return []
        qrels = counted(self.qrels_queries, "qrels query", "qrels queries")
        if self.rule == QRELS:
            fate = "scored 0 there (queries=qrels, trec_eval -c, as in judged compare, holes and report)"
            other = "judged eval leaves such queries out of a run's mean unless --complete"
        else:
            fate = "left out of the mean (queries=run-and-qrels, trec_eval's default)"
            other = "--complete scores such queries 0 (trec_eval -c), as judged compare, holes and report do"
        if len(missing) < MANY_ALIKE:
            return [f"run {name} ranks nothing for {k} of the {qrels}: {fate}; {other}" for name, k in missing.items()]
        shown = ", ".join(list(missing)[:3]) + (", ..." if len(missing) > 3 else "")
        counts = sorted(set(missing.values()))
        some = str(counts[0]) if len(counts) == 1 else f"{counts[0]}-{counts[-1]}"
        return [f"{len(missing)} runs ({shown}) rank nothing for {some} of the {qrels}: {fate}; {other}"]

    def to_dict(self) -> dict:
        return {"rule": self.rule, "description": RULES[self.rule], "qrels_queries": self.qrels_queries,
                "same_for_every_run": self.same, "left_out": self.left_out,
                "runs": {n: dict(r) for n, r in self.runs.items()}}


def depth_warnings(runs: dict, measures=()) -> list[str]:
    """A warning when the runs rank different numbers of documents per query (their
    deepest query) and a measure reads past the shallowest run's depth (no cutoff, or a
    deeper one): it then reads further into some runs than into others. ``measures``:
    the Measures read (empty: assume some do)."""
    depths = {n: r["max_depth"] for n, r in runs.items() if r.get("max_depth")}
    if len(depths) < 2 or len(set(depths.values())) < 2:
        return []
    low = min(depths.values())
    deep = [str(m) for m in measures if m.family.reads != "judgments" and (m.cutoff is None or m.cutoff > low)]
    if measures and not deep:
        return []
    listed = ", ".join(f"{n} {d}" for n, d in depths.items())
    reads = ", ".join(deep) if deep else f"AP, R, Rprec, Bpref and any cutoff above {low}"
    return [f"the runs rank different numbers of documents per query (at most: {listed}): {reads} "
            f"read{'s' if len(deep) == 1 else ''} deeper into some runs than others; --depth-cut {low} scores every "
            "run to the same depth"]


def entry(counts: dict) -> dict:
    """One run's entry of a :class:`QuerySet` from its query counts."""
    out = {"evaluated": int(counts["evaluated"]), "ranked": 0, "missing_from_run": int(counts["missing_from_run"]),
           "only_in_run": int(counts["only_in_run"])}
    if "max_depth" in counts:
        out["max_depth"] = int(counts["max_depth"])
    return out


def query_set(settings, qrels_queries: int, counts: dict, left_out: int = 0, measures=()) -> QuerySet:
    """The :class:`QuerySet` of runs (``counts``: name -> query counts of
    :func:`judged.core.align.align`) scored under ``settings`` against qrels of
    ``qrels_queries`` queries."""
    runs = {}
    for name, c in counts.items():
        e = entry(c)
        e["ranked"] = qrels_queries - e["missing_from_run"]
        runs[name] = e
    return QuerySet(rule_of(settings), qrels_queries, runs, left_out, measures=list(measures))


def of_scored(result, measures=()) -> QuerySet:
    """The :class:`QuerySet` of the runs a :class:`judged.core.evaluation.Scorer` scored (a
    Result), under its settings, once every run is known to share a query id with the qrels
    (:func:`refuse_disjoint`); ``measures``: those it is stated for."""
    counts = {name: result_counts(name, rr, result.qrels) for name, rr in result.runs.items()}
    return query_set(result.settings, len(result.qrels.query_ids), counts, measures=measures)


def result_counts(name: str, result, qrels) -> dict:
    """What :func:`of_scored` reads of one scored run (a :class:`~judged.core.results.RunResult`:
    its query counts and longest ranking), once it is known to share a query id with the
    qrels."""
    refuse_disjoint_run(name, result, qrels)
    return {**result.counts, "max_depth": result.max_depth}


def of_result(result) -> QuerySet:
    """The :class:`QuerySet` of an :class:`~judged.core.evaluation.Result`."""
    counts = {name: {**rr.counts, **({"max_depth": rr.max_depth} if rr.max_depth is not None else {})}
              for name, rr in result.runs.items()}
    qs = query_set(result.settings, len(result.qrels.query_ids), counts)
    qs.measures = list(result.measures.values())
    if qs.rule == RUN_AND_QRELS and len(result.runs) > 1:  # the sets themselves, not only their sizes
        first = next(iter(result.runs.values())).qids
        qs.different = any(len(rr.qids) != len(first) or (rr.qids != first).any() for rr in result.runs.values())
    return qs


def common_queries(qrels_versions) -> tuple[set, int]:
    """(the query ids every qrels version judges, how many others only some versions hold)."""
    sets = [set(q.query_ids.tolist()) for q in qrels_versions]
    common = set.intersection(*sets)
    return common, len(set.union(*sets) - common)


def mean_over(result, run: str, measure: str, queries: set) -> float:
    """``measure``'s aggregate (mean; sum for NumRel...) for ``run`` over ``queries`` only (a
    set's lookups, where np.isin would import numpy.ma: 0.01-0.04 CPU-s of rejudge's start)."""
    import numpy as np

    rr = result.runs[run]
    keep = np.fromiter((q in queries for q in rr.qids.astype(str).tolist()), bool, len(rr.qids))
    return result.measures[measure].aggregate_of(rr.values[measure][keep])


def refuse_disjoint(name: str, counts: dict, qrels, run_ids=None) -> None:
    """Raise :class:`QuerySetError` when the run ``name`` ranks documents only for query ids
    the qrels do not hold (``1`` vs ``q01``): a mean of 0 over queries it was never asked.
    ``run_ids``: a function giving a few of the run's query ids, quoted when it gives some."""
    nq = len(qrels.query_ids)
    if not counts.get("only_in_run") or counts.get("missing_from_run") != nq:
        return
    run_ids = run_ids() if callable(run_ids) else run_ids
    ids = list(qrels.query_ids[:SAMPLE])
    theirs = f" (run query ids: {', '.join(map(repr, run_ids[:SAMPLE]))}, ...;" if run_ids else " ("
    raise QuerySetError(f"run {name} shares no query id with the qrels {qrels.source}{theirs} qrels query ids: "
                        f"{', '.join(map(repr, ids))}{', ...' if nq > SAMPLE else ''}): nothing to evaluate")


def file_query_sample(path, count: int = SAMPLE) -> list:
    """The first distinct query ids of a TREC run file (its first field), for messages."""
    if path is None:
        return []
    seen = []
    for line in head(path, 1 << 20).decode("utf-8-sig", errors="replace").split("\n")[:10_000]:  # a BOM is no qid
        fields = line.split()
        if fields and not fields[0].startswith("#") and fields[0] not in seen:
            seen.append(fields[0])
        if len(seen) == count:
            break
    return seen


def refuse_disjoint_runs(result) -> None:
    """:func:`refuse_disjoint` for every run of an :class:`~judged.core.evaluation.Result` (what
    every command does before it prints or compares a score)."""
    for name, rr in result.runs.items():
        refuse_disjoint_run(name, rr, result.qrels)


def refuse_disjoint_run(name: str, rr, qrels) -> None:
    """:func:`refuse_disjoint` for one scored run (a RunResult), its query ids quoted from
    the alignment it holds, else from its file (a streamed run's, not read again)."""
    aligned = vars(rr).get("aligned")
    refuse_disjoint(name, rr.counts, qrels, lambda: run_query_sample(aligned.run) if aligned is not None
                    else file_query_sample(getattr(rr, "source", None)))


def run_query_sample(run, count: int = SAMPLE) -> list:
    """The first distinct query ids of a :class:`~judged.core.data.Run` (for messages)."""
    try:
        _, block_qids = run.qid_blocks
        seen = []
        for q in block_qids[: count * 8].to_pylist():
            if q not in seen:
                seen.append(q)
            if len(seen) == count:
                break
        return seen
    except (AttributeError, TypeError):
        return []
