"""The self-contained HTML report (string.Template; inline CSS and SVG, no scripts)."""

from __future__ import annotations

import datetime as _dt
from html import escape
from importlib import resources
from string import Template

import numpy as np

from ..stats import TESTS
from . import plots
from .tables import legend, main_table


def _p(p: float) -> str:
    return "&lt;0.0001" if p < 1e-4 else f"{p:.4f}"


def _main(c, alpha) -> str:
    rows = main_table(c, alpha)
    head = "<tr><th class='l'>run</th>" + "".join(f"<th>{escape(m)}</th>" for m in c.measures) + "</tr>"
    body = []
    for row in rows:
        cells = []
        for m in c.measures:
            cell = row["cells"][m]
            cls = {"▲": "better", "▼": "worse"}.get(cell["mark"], "")
            sub = "" if row["baseline"] else f"<br><span class='sub'>{cell['delta']:+.4f}, p={_p(cell['p_adjusted'])}</span>"
            cells.append(f"<td class='{cls}'>{cell['mean']:.4f}{cell['mark']}{sub}</td>")
        name = escape(row["run"]) + (" <span class='sub'>(baseline)</span>" if row["baseline"] else "")
        body.append(f"<tr><td class='l'>{name}</td>{''.join(cells)}</tr>")
    return f"<table>{head}{''.join(body)}</table>"


def _comparisons(c) -> str:
    out = []
    for m, convention in c.measures.items():
        head = ("<tr><th class='l'>run</th><th>mean</th><th>Δ mean</th><th>95% CI</th><th>W/L/T</th><th>d<sub>z</sub></th>"
                + "".join(f"<th>p {t}<br><span class='sub'>{c.correction}</span></th>" for t in TESTS) + "</tr>")
        rows = []
        for x in (x for x in c.comparisons if x.measure == m):
            s = x.test
            ps = "".join(f"<td>{_p(s.p_values[t])}<br><span class='sub'>{_p(x.p_adjusted[t])}</span></td>" for t in TESTS)
            rows.append(f"<tr><td class='l'>{escape(x.run)}</td><td>{x.mean_run:.4f}</td><td>{s.mean_delta:+.4f}</td>"
                        f"<td>[{s.ci95[0]:+.4f}, {s.ci95[1]:+.4f}]</td><td>{s.wins}/{s.losses}/{s.ties}</td>"
                        f"<td>{s.effect_size:+.2f}</td>{ps}</tr>")
        base = next((x.mean_baseline for x in c.comparisons if x.measure == m), float("nan"))
        out.append(f"<h3>{escape(m)} <span class='sub'>baseline {escape(c.baseline)}: {base:.4f}; "
                   f"{c.comparisons[0].test.n if c.comparisons else 0} queries</span></h3>"
                   f"<p class='sub'><code>{escape(convention)}</code></p><table>{head}{''.join(rows)}</table>")
    return "\n".join(out)


def _differences(c) -> str:
    out = []
    for m in c.measures:
        figs = []
        for r in c.runs:
            x = c.get(m, r)
            d = np.asarray(c.values[r][m]) - np.asarray(c.values[c.baseline][m])
            title = f"{m}: {r} − {c.baseline} (W/L/T {x.test.wins}/{x.test.losses}/{x.test.ties})"
            figs.append(f"<figure>{plots.difference_bars(d, title)}</figure>")
        out.append(f"<div class='pair'>{''.join(figs)}</div>")
    return "\n".join(out)


def _distributions(c) -> str:
    names = [c.baseline, *c.runs]
    return "\n".join(f"<figure>{plots.distributions({n: c.values[n][m] for n in names}, m)}</figure>"
                     for m in c.measures)


def _ranking_cells(entry, newly) -> str:
    if entry is None:
        return "<td></td><td></td>"
    _, doc, grade = entry
    if grade is None:
        cls = "new" if doc in newly else "unjudged"
        return f"<td class='l {cls}'>{escape(doc)}</td><td class='{cls}'>unjudged</td>"
    return f"<td class='l'>{escape(doc)}</td><td>{grade}</td>"


def _regressions(c) -> str:
    if not c.regressions:
        return "<p>No run lost on any query.</p>"
    out = []
    for r in c.regressions:
        newly = set(r.newly_unjudged)
        n = max(len(r.baseline_ranking), len(r.run_ranking))
        rows = []
        for i in range(n):
            b = r.baseline_ranking[i] if i < len(r.baseline_ranking) else None
            x = r.run_ranking[i] if i < len(r.run_ranking) else None
            rows.append(f"<tr><td>{i + 1}</td>{_ranking_cells(b, set())}{_ranking_cells(x, newly)}</tr>")
        note = (f"<p class='note'>{len(newly)} unjudged document(s) newly in the top {len(r.run_ranking)}: "
                f"{escape(', '.join(r.newly_unjudged))}</p>" if newly else "")
        out.append(f"<h3>{escape(r.run)} on query {escape(r.qid)}: {r.baseline_value:.4f} → {r.run_value:.4f} "
                   f"<span class='worse'>({r.delta:+.4f})</span></h3>"
                   f"<table><tr><th>rank</th><th class='l'>{escape(c.baseline)}</th><th>grade</th>"
                   f"<th class='l'>{escape(r.run)}</th><th>grade</th></tr>{''.join(rows)}</table>{note}")
    return "\n".join(out)


def _settings(c) -> str:
    items = []
    q = c.provenance.get("qrels", {})
    if q.get("path"):
        items.append(("qrels", f"<code>{escape(str(q['path']))}</code> sha256 <code>{escape(str(q.get('sha256')))}</code>"))
    if c.result is not None:
        for name, rr in c.result.runs.items():
            run = rr.aligned.run
            items.append((f"run {escape(name)}", f"sha256 <code>{escape(str(run.sha256))}</code>"))
    for name, counts in c.counts.items():
        items.append((f"queries of {escape(name)}", escape(", ".join(f"{k} {v}" for k, v in counts.items()))))
    for m, conv in c.measures.items():
        items.append((escape(m), f"<code>{escape(conv)}</code>"))
    for k, v in c.settings().items():
        items.append((escape(k), escape(str(v))))
    return "<dl class='settings'>" + "".join(f"<dt>{k}</dt><dd>{v}</dd>" for k, v in items) + "</dl>"


def html(c, title: str | None = None, alpha: float = 0.05) -> str:
    """A self-contained HTML page for a :class:`~judged.comparison.Comparison`."""
    from .. import __version__

    template = Template(resources.files(__package__).joinpath("template.html").read_text(encoding="utf-8"))
    title = title or f"judged report: {', '.join(c.runs)} vs {c.baseline}"
    when = _dt.datetime.now(_dt.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    first = next(iter(c.measures), "")
    return template.substitute(
        title=escape(title), subtitle=escape(f"judged {__version__}, {when}; {len(c.qids)} queries"),
        main_table=_main(c, alpha), legend=escape(legend(c, alpha)), comparisons=_comparisons(c),
        differences=_differences(c), distributions=_distributions(c), regressions=_regressions(c),
        regression_measure=escape(first), settings=_settings(c))
