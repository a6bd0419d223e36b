"""Estimates with their intervals as every command prints them
(judged.analyses.holes.estimates): a table of runs, one column per method, each cell the
estimate ± half its interval, or (low-high) when it is lopsided (``judged infer``; ``--sample`` and ``--machine`` with
``--sample`` in ``judged holes`` and ``judged compare``), the interval cell of the
``judged holes`` table; and what those options estimate, for the three commands."""

from __future__ import annotations

from ..core.errors import ConventionError
from ..core.runnames import shortener
from ..core.words import counted
from .plain import Table, console as make_console


def interval_cell(e) -> str:
    """The interval of a hole estimate (low-high), or what stands for it: ``exact`` (no hole
    to estimate), ``none (bounds)`` (too few runs to calibrate one: the bounds are no
    estimate interval), ``-`` (no estimate)."""
    if e is None:
        return "-"
    if e.interval in ("bounds", "exact"):
        return {"bounds": "none (bounds)", "exact": "exact"}[e.interval]
    return f"{float(e.low):.4f}-{float(e.high):.4f}"


def print_estimates(rows, heading, console, short=None, *, known=None, after=None, measure: bool = False,
                    title: str | None = None) -> None:
    """A table of :class:`~judged.analyses.holes.estimates.EstimateRow`: the run (named by
    ``short``), its measure (``measure``), the known scores (``known``: heading -> key of
    ``row.known``), one column per estimate (``heading(name)``; cells ``Estimate.shown``),
    then ``after`` (heading -> the cell of a row)."""
    short = short or (lambda text: text)
    known, after = known or {}, after or {}
    names = list(dict.fromkeys(name for r in rows for name in r.estimates))
    t = Table(box="simple", pad_edge=False, collapse_padding=True, title=title)
    lead = ["run"] + (["measure"] if measure else [])
    for col in lead + list(known) + [heading(n) for n in names] + list(after):
        t.add_column(col, justify="left" if col in lead else "right", no_wrap=True)
    for r in rows:
        t.add_row(short(r.run), *([r.measure] if measure else []), *(f"{r.known[k]:.4f}" for k in known.values()),
                  *(r.estimates[n].shown() for n in names), *(cell(r) for cell in after.values()))
    console.print(t)


def is_query_sample(sample) -> bool:
    """Whether a pool file holds a sample of whole queries (judged pool --strategy sample-queries)."""
    from ..analyses.pooling.poolfile import read_pool_file

    return str(read_pool_file(sample).meta.get("strategy", "")).startswith("sample-queries")


def sample_estimates(qrels, aligned: dict, sample, machine, measures, pairs, settings, *, k: int = 10,
                     baseline=None, intervals: str = "simultaneous"):
    """``--sample POOL`` (and ``--machine LABELS``) of holes and compare: (the sampled
    estimates of ``measures`` with the decision on each of ``pairs``, None for a sample of
    whole queries or, with ``machine``, for measures no sampled estimator estimates (P@k,
    DCG@k: left to the prediction-powered part); the prediction-powered report with
    ``machine``, else None). ``aligned``: run name -> its alignment."""
    from ..analyses.holes.inference import estimator_for, sample_decisions

    query_sample = is_query_sample(sample)
    if query_sample and not machine:
        raise ConventionError(f"{sample} is a sample of whole queries: estimate from it with a machine judge's "
                              "labels (--machine LABELS)")
    estimated = not machine or any(estimator_for(m) is not None for m in measures)
    sampled = (sample_decisions(qrels, aligned, sample, measures, pairs, settings=settings, intervals=intervals)
               if estimated and not query_sample else None)
    ppi = (ppi_for(qrels, {name: a.run for name, a in aligned.items()}, machine, sample, measures, settings,
                   baseline=baseline, k=k, sampled=estimated) if machine else None)
    return sampled, ppi


def ppi_for(qrels, runs: dict, machine, sample, measures, settings, *, baseline=None, k: int = 10, level=0.95,
            sampled: bool = True):
    """The :class:`judged.analyses.holes.ppi.PPIReport` of ``runs`` (as evaluate takes them) for the measures the
    sample's design can estimate, with its notes; ``sampled`` False: the measures have no
    sampled estimator (statAP, statNDCG), a note says the human-only column is the sample's."""
    from ..analyses.holes.ppi import Design, ppi_report, supported_measures

    design = Design.from_pool(sample)
    chosen, notes = supported_measures(design, measures, k)
    if not sampled:
        notes = notes + [f"{', '.join(map(str, measures))}: no sampled estimator (statAP and statNDCG estimate AP "
                         "and nDCG@k); the human-only column is the sample's own estimate (Horvitz-Thompson)"]
    report = ppi_report(qrels, runs, machine, design, chosen, level=level, baseline=baseline, settings=settings)
    report.notes = notes
    return report


def add_sample_json(d: dict, sampled=None, ppi=None) -> dict:
    """``d`` with the sampled estimates under ``sample`` and the prediction-powered ones (with
    their notes) under ``ppi``, those given."""
    if sampled is not None:
        d["sample"] = sampled.to_dict()
    if ppi is not None:
        d["ppi"] = {**ppi.to_dict(), "notes": list(getattr(ppi, "notes", []))}
    return d


def print_sample_estimates(sampled=None, ppi=None, console=None) -> None:
    """The sampled estimates and decisions, then the prediction-powered estimates, those given."""
    console = console or make_console()
    if sampled is not None:
        print_sample_decisions(sampled, console)
    if ppi is not None:
        print_ppi(ppi, console)


def heading(inf):
    """The heading of a sampled estimator's column: 'statAP ± 95%' ('± 95% joint': simultaneous intervals)."""
    return lambda e: f"{e} ± {inf.level:.0%}{' joint' if inf.intervals == 'simultaneous' else ''}"


def print_sample_decisions(sd, console) -> None:
    """The estimates and decisions of a :class:`judged.analyses.holes.inference.SampleDecisions`."""
    inf = sd.inference
    _, short = shortener(list(inf.estimates.runs))  # runs as every command shows them
    s = inf.sample
    mapped = ", ".join(f"{e} for {m}" for m, e in sd.measures.items() if e)
    missing = [m for m, e in sd.measures.items() if not e]
    console.print(f"sampled estimates ({mapped}; {s['judged']} judged of {s['drawn']} drawn from the "
                  f"{counted(s['population'], 'pair')} of {s['path']}, seed {s['seed']}); estimates, not bounds; "
                  f"{inf.interval_sentence()}:", highlight=False, markup=False)
    print_estimates(inf.rows(), heading(inf), console, short)
    for d in sd.decisions:
        console.print(f"  {short(d['sentence'])}", highlight=False, markup=False)
    if missing:
        console.print(f"  no sampled estimator for {', '.join(missing)} (nDCG@k and AP have one)",
                      highlight=False, markup=False)
    for note in inf.notes:
        console.print(f"  note: {note}", highlight=False, markup=False)
    h = inf.header()
    joint = f"; simultaneous: {h['simultaneous_method']}" if inf.intervals == "simultaneous" else ""
    console.print(f"  methods: {'; '.join(e.method for e in inf.estimates.estimators)}; interval: "
                  f"{h['interval']}{joint}; when to stop: {h['stop_rule']}",
                  highlight=False, markup=False, soft_wrap=True)


def print_ppi(report, console) -> None:
    """The prediction-powered estimates of a :class:`judged.analyses.holes.ppi.PPIReport`."""
    _, short = shortener(list(dict.fromkeys(r.run for r in report.rows)))  # runs as every command shows them
    say = (lambda text: console.print(short(text), highlight=False, markup=False, soft_wrap=True))
    d = report.design.describe()
    unit = (f"{d['sampled_queries']} of {counted(d['population_queries'], 'query')} drawn" if d["unit"] == "query"
            else f"{d['sampled_pairs']} of {counted(d['population_pairs'], 'pair')} drawn"
                 + (f" in {counted(d['strata'], 'stratum', 'strata')}" if "strata" in d else ""))
    pct = f"{report.level:.0%}"
    say(f"prediction-powered estimates ({unit}, {report.design.source}; machine judge {report.machine.source}): "
        f"what judging the whole population would show; estimates, not measurements; {pct} intervals")
    names = {"human": "human-only", "ppi": "PPI", "ppi++": "PPI++"}
    lam = {"lambda": lambda r: f"{float(r.estimates['ppi++'].details['lambda']):.2f}"}
    for rows, title in ((report.rows, None), (report.differences, "differences from the baseline")):
        if rows:
            print_estimates(rows, lambda e: f"{names[e]} ± {pct}", console, short, measure=True, title=title,
                            known={"judged": "judged", "machine-filled": "machine_filled"}, after=lam)
    for r in report.differences or []:
        x = r.estimates["ppi++"].scalar()
        verdict = ("decided" if x["low"] > 0 or x["high"] < 0 else "not decided")
        say(f"  {r.measure} {r.run}: PPI++ {x['estimate']:+.4f} [{x['low']:+.4f}, {x['high']:+.4f}]: "
            f"order {verdict} at {pct}")
    for r in report.rows:
        c = r.counts
        if c["uncovered_holes"]:
            say(f"note: {r.run} {r.measure}: {counted(c['uncovered_holes'], 'unjudged pair')} outside the sample's "
                "population count as not relevant" + (f" (the upper ends add the most they could: "
                                                      f"+{c['uncovered_max']:.4f})" if c["uncovered_max"] else ""))
        if c["missing_machine_labels"]:
            say(f"note: {r.run} {r.measure}: the machine labelled none of "
                f"{counted(c['missing_machine_labels'], 'population pair')} "
                "(machine value 0; the estimate stays unbiased)")
    for note in getattr(report, "notes", []):
        say(note if note.startswith("warning:") else f"note: {note}")
    from ..analyses.holes.ppi import SOURCES, method_text

    say(f"method: {method_text(report.design)}; PPI++ variance: stratified delete-one jackknife (lambda re-tuned)")
    say(f"sources: {SOURCES}")
