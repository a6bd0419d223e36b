"""Printing prediction-powered estimates (judged.analyses.holes.ppi) for the commands that take
``--machine LABELS`` with ``--sample POOL`` (holes, compare, infer)."""

from __future__ import annotations

from ..core.words import counted


def is_query_sample(sample) -> bool:
    """Whether a pool file holds a sample of whole queries (judged pool --strategy sample-queries)."""
    from ..analyses.pooling.poolfile import read_pool_file

    return str(read_pool_file(sample).meta.get("strategy", "")).startswith("sample-queries")


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


def ppi_json(report) -> dict:
    d = report.to_dict()
    d["notes"] = list(getattr(report, "notes", []))
    return d


def print_ppi(report, console=None) -> None:
    from ..core.runnames import shortener
    from .estimates import print_estimates
    from .plain import console as make_console

    console = console or make_console()
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
