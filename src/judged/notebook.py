"""Notebook front end: a Result or a Comparison as an HTML table (Jupyter's
``_repr_html_``) and as a per-query picture (``.plot()``, matplotlib from the ``plot``
extra).

Both show the conventions behind the numbers, as every other front end does.
"""

from __future__ import annotations

from html import escape

from .core.words import counted
from .core.errors import UsageError
from .analyses.stats import format_p, TOLERANCE, differences
from .analyses.comparison import significance_mark
from .report.plots import BETTER, NEUTRAL, WORSE

_STYLE = ("<style>.judged-result table{border-collapse:collapse;font-family:sans-serif;font-size:13px}"
          ".judged-result th,.judged-result td{padding:3px 10px;border-bottom:1px solid #ddd}"
          ".judged-result td.num{text-align:right;font-variant-numeric:tabular-nums}"
          ".judged-result caption{text-align:left;font-weight:bold;padding-bottom:4px}"
          ".judged-result ul{font-family:monospace;font-size:12px;color:#444;margin:6px 0 0 0}</style>")


def _cell(result, run: str, given: str) -> str:
    v = result.aggregate(run, given)
    return str(int(v)) if result.measures[given].aggregate == "sum" else f"{v:.4f}"


def result_html(result) -> str:
    """One row per run, one column per measure (the aggregate), the evaluated queries, and
    under the table every measure's canonical convention string."""
    q = result.qrels
    head = "".join(f"<th>{escape(g)}</th>" for g in result.measures)
    rows = []
    for name, rr in result.runs.items():
        cells = "".join(f'<td class="num">{_cell(result, name, g)}</td>' for g in result.measures)
        c = rr.counts
        rows.append(f"<tr><th>{escape(name)}</th>{cells}<td class=\"num\">{c['evaluated']}</td>"
                    f"<td class=\"num\">{c['missing_from_run']}</td><td class=\"num\">{c['no_relevant']}</td></tr>")
    conventions = "".join(f"<li>{escape(conv)}</li>" for conv in result.conventions.values())
    return (f'<div class="judged-result">{_STYLE}<table><caption>judged — qrels {escape(str(q.source))} '
            f"({counted(len(q.query_ids), 'query')}, {counted(len(q), 'judgment')})</caption>"
            f"<thead><tr><th>run</th>{head}<th>evaluated</th><th>missing from run</th>"
            f"<th>nothing relevant</th></tr></thead><tbody>{''.join(rows)}</tbody></table>"
            f"<div>conventions:</div><ul>{conventions}</ul></div>")


def _pyplot(what: str):
    try:
        import matplotlib.pyplot as plt
    except ImportError:
        raise UsageError(f"{what} needs matplotlib, a dependency of judged missing here: pip install matplotlib")
    return plt


def _measure(measures, measure: str | None, what: str) -> str:
    """The measure to plot: ``measure`` or the first one; UsageError when absent."""
    given = measure if measure is not None else next(iter(measures))
    if given not in measures:
        raise UsageError(f"measure {given!r} is not in this {what} (it has {', '.join(measures)})")
    return given


def plot_result(result, measure: str | None = None, ax=None):
    """Per-query values of one measure (default: the first): queries on the x axis in the
    order of the first run's value, that run as bars, every other run as points, so
    where a run wins or loses shows query by query. Returns the matplotlib Axes."""
    plt = _pyplot("Result.plot()")
    given = _measure(result.measures, measure, "result")
    table = result.per_query()
    table = table[table["measure"] == given].pivot(index="qid", columns="run", values="value")
    names = list(result.runs)
    table = table[names].sort_values(names[0], ascending=False, kind="stable")
    if ax is None:
        _, ax = plt.subplots(figsize=(max(6.0, min(16.0, 0.25 * len(table) + 3)), 4))
    x = range(len(table))
    ax.bar(x, table[names[0]].to_numpy(), color="#bbbbbb", label=names[0])
    for name in names[1:]:
        ax.plot(x, table[name].to_numpy(), "o", markersize=4, label=name)
    if len(table) <= 40:
        ax.set_xticks(list(x), table.index.tolist(), rotation=90, fontsize=7)
    else:
        ax.set_xticks([])
    ax.set_xlabel(f"query ({len(table)}, ordered by {names[0]})")
    ax.set_ylabel(given)
    ax.set_title(result.measures[given].convention(result.settings), fontsize=7, loc="left")
    ax.legend(fontsize=8)
    return ax


def _p(p: float) -> str:
    return escape(format_p(p))


def comparison_html(c, alpha: float = 0.05) -> str:
    """Per measure: the baseline's mean, then per run its mean, Δ mean, 95% CI, W/L/T,
    randomization p and its corrected p with the ▲/▼ mark (corrected p < alpha), and,
    when holes were checked, Judged@k and whether judging the holes could flip the order;
    under each table the measure's convention string."""
    judged = c.holes.runs if c.holes is not None else {}
    k = f"Judged@{c.holes.k}" if c.holes is not None else None
    parts = []
    for m, convention in c.measures.items():
        rows = [x for x in c.comparisons if x.measure == m]
        head = ("<tr><th>run</th><th>mean</th><th>Δ mean</th><th>95% CI</th><th>W/L/T</th><th>p rand.</th>"
                f"<th>{escape(c.correction)}</th><th></th>" + (f"<th>{k}</th><th>holes judged: Δ in</th>" if k else "")
                + "</tr>")
        body = []
        if rows:
            base = f'<td class="num">{judged[c.baseline]["judged"]:.4f}</td><td></td>' if k else ""
            body.append(f'<tr><th>{escape(c.baseline)} (baseline)</th><td class="num">{rows[0].mean_baseline:.4f}</td>'
                        f"<td></td><td></td><td></td><td></td><td></td><td></td>{base}</tr>")
        for x in rows:
            t, p = x.test, x.p_adjusted["randomization"]
            mark = significance_mark(p, t.mean_delta, alpha)
            holes = ""
            if k:
                f = c.flip(x)
                span = "" if f is None else (f"[{f.low:+.4f}, {f.high:+.4f}] "
                                             + ("⇄ can flip" if f.can_flip else "cannot flip"))
                holes = f'<td class="num">{judged[x.run]["judged"]:.4f}</td><td class="num">{span}</td>'
            body.append(f'<tr><th>{escape(x.run)}</th><td class="num">{x.mean_run:.4f}</td>'
                        f'<td class="num">{t.mean_delta:+.4f}</td><td class="num">[{t.ci95[0]:+.4f}, {t.ci95[1]:+.4f}]</td>'
                        f'<td class="num">{t.wins}/{t.losses}/{t.ties}</td><td class="num">{_p(x.test.p_values["randomization"])}</td>'
                        f'<td class="num">{_p(p)}</td><td>{mark}</td>{holes}</tr>')
        parts.append(f"<table><caption>{escape(m)} — baseline {escape(c.baseline)}, "
                     f"{counted(len(c.qids), 'query')}</caption>"
                     f"<thead>{head}</thead><tbody>{''.join(body)}</tbody></table><ul><li>{escape(convention)}</li></ul>")
    leaks = [f"{escape(name)}: {counted(len(found), 'leak')}" for name, found in c.leaks().items() if found]
    notes = (f"▲/▼: randomization p &lt; {alpha:g} after {escape(c.correction)} correction "
             f"({counted(c.permutations, 'draw')}, seed {c.seed}); tie: {escape(TOLERANCE)}."
             + (" ⇄: judging the holes could reverse the order." if k else "")
             + (" <b>Leaks:</b> " + "; ".join(leaks) if leaks else ""))
    return f'<div class="judged-result">{_STYLE}{"".join(parts)}<div>{notes}</div></div>'


def plot_comparison(c, measure: str | None = None, run: str | None = None, ax=None):
    """Per-query differences run − baseline on one measure (default: the first), sorted,
    one bar per query: green wins, red losses, grey ties (the tolerance rule of
    :func:`judged.analyses.stats.differences`), as in the HTML
    report. ``run`` defaults to the first compared run. Returns the matplotlib Axes."""
    plt = _pyplot("Comparison.plot()")
    import numpy as np

    given = _measure(c.measures, measure, "comparison")
    run = run if run is not None else c.runs[0]
    if run not in c.runs:
        raise UsageError(f"run {run!r} is not compared here (runs: {', '.join(c.runs)})")
    d = np.sort(differences(c.values[c.baseline][given], c.values[run][given]))[::-1]
    if ax is None:
        _, ax = plt.subplots(figsize=(max(6.0, min(16.0, 0.12 * len(d) + 3)), 3.5))
    colors = np.where(d > 0, BETTER, np.where(d < 0, WORSE, NEUTRAL))
    ax.bar(np.arange(len(d)), d, width=1.0, color=colors, linewidth=0)
    ax.axhline(0, color="black", linewidth=0.6)
    x = c.get(given, run)
    ax.set_xlabel(f"queries ({len(d)}), sorted by difference; W/L/T {x.test.wins}/{x.test.losses}/{x.test.ties}")
    ax.set_ylabel(f"Δ {given}")
    ax.set_xticks([])
    ax.set_title(f"{run} − {c.baseline}: mean Δ {x.test.mean_delta:+.4f}", fontsize=9)
    return ax
