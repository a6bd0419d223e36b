"""Notebook front end: a Result as an HTML table (Jupyter's ``_repr_html_``) and as a
per-query picture (``Result.plot()``, matplotlib from the ``plot`` extra).

Both show the conventions behind the numbers, as every other front end does.
"""

from __future__ import annotations

from html import escape

from .errors import UsageError

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
            f"({len(q.query_ids)} queries, {len(q)} judgments)</caption>"
            f"<thead><tr><th>run</th>{head}<th>evaluated</th><th>missing from run</th>"
            f"<th>nothing relevant</th></tr></thead><tbody>{''.join(rows)}</tbody></table>"
            f"<div>conventions:</div><ul>{conventions}</ul></div>")


def plot_result(result, measure: str | None = None, ax=None):
    """Per-query values of one measure (default: the first): queries on the x axis in the
    order of the first run's value, that run as bars, every other run as points, so
    where a run wins or loses shows query by query. Returns the matplotlib Axes."""
    try:
        import matplotlib.pyplot as plt
    except ImportError:
        raise UsageError("Result.plot() needs matplotlib: pip install 'judged[plot]'")
    given = measure if measure is not None else next(iter(result.measures))
    if given not in result.measures:
        raise UsageError(f"measure {given!r} is not in this result (it has {', '.join(result.measures)})")
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
