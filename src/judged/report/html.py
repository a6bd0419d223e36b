"""The self-contained HTML report (string.Template; inline CSS and SVG, no scripts)."""

from __future__ import annotations

import datetime as _dt
import os
from html import escape
from string import Template

from ..core.words import counted
from ..analyses.stats import TESTS, differences, format_effect, format_p, ci95
from . import plots
from .tables import legend, main_table, shortener
from ..analyses.comparison import is_coverage_measure
from ..analyses.holes.unjudged import result_holes
from ..analyses.flips import flip_summary
from ..core.measures import Measure
from .. import __version__


def _p(p) -> str:
    return escape(format_p(float("nan") if p is None else p))


def _main(c, alpha) -> str:
    rows = main_table(c, alpha)
    head = "<tr><th class='l'>run</th>" + "".join(f"<th>{escape(m)}</th>" for m in c.measures) + "</tr>"
    body = []
    for row in rows:
        cells = []
        for m in c.measures:
            cell = row["cells"][m]
            cls = {"▲": "better", "▼": "worse"}.get(cell["mark"], "")
            p = "" if cell["p_adjusted"] is None else f", p={_p(cell['p_adjusted'])}"  # Judged@k: never tested
            sub = "" if row["baseline"] else f"<br><span class='sub'>{cell['delta']:+.4f}{p}</span>"
            flip = "<span class='flip' title='judging the holes could reverse this'>⇄</span>" if cell.get("flip") else ""
            cells.append(f"<td class='{cls}'>{cell['mean']:.4f}{cell['mark']}{flip}{sub}</td>")
        name = escape(row["run"]) + (" <span class='sub'>(baseline)</span>" if row["baseline"] else "")
        if row.get("leaks"):
            name += f" <span class='leak'>{row['leaks']} leak{'s' if row['leaks'] > 1 else ''}</span>"
        body.append(f"<tr><td class='l'>{name}</td>{''.join(cells)}</tr>")
    return f"<table>{head}{''.join(body)}</table>"


def _comparisons(c) -> str:
    out = []
    coverage = [m for m in c.measures if is_coverage_measure(m)]
    for m, convention in c.measures.items():
        if m in coverage:  # Judged@k: coverage, never tested (its means and Δ are in the main table)
            continue
        bounded = c.holes is not None and m in c.holes.bounded
        head = ("<tr><th class='l'>run</th><th>mean</th><th>Δ mean</th><th>95% CI</th><th>W/L/T</th><th>d<sub>z</sub></th>"
                + "".join(f"<th>p {t}<br><span class='sub'>{c.correction}</span></th>" for t in TESTS)
                + ("<th>Δ if the holes<br>were judged</th>" if bounded else "") + "</tr>")
        rows = []
        for x in (x for x in c.comparisons if x.measure == m):
            s = x.test
            ps = "".join(f"<td>{_p(s.p_values[t])}<br><span class='sub'>{_p(x.p_adjusted[t])}</span></td>" for t in TESTS)
            rows.append(f"<tr><td class='l'>{escape(x.run)}</td><td>{x.mean_run:.4f}</td><td>{s.mean_delta:+.4f}</td>"
                        f"<td>[{s.ci95[0]:+.4f}, {s.ci95[1]:+.4f}]</td><td>{s.wins}/{s.losses}/{s.ties}</td>"
                        f"<td>{format_effect(s.effect_size)}</td>{ps}{_flip_cell(c.flip(x)) if bounded else ''}</tr>")
        base = next((x.mean_baseline for x in c.comparisons if x.measure == m), float("nan"))
        logs = next((x.paired_on for x in c.comparisons if x.measure == m and x.log_ratio), None)
        out.append(f"<h3>{escape(m)} <span class='sub'>baseline {escape(c.baseline)}: {base:.4f}; "
                   f"{counted(c.comparisons[0].test.n if c.comparisons else 0, 'query')}</span></h3>"
                   f"<p class='sub'><code>{escape(convention)}</code></p><table>{head}{''.join(rows)}</table>"
                   + (f"<p class='note'>{escape(logs)}</p>" if logs else ""))
    if coverage:
        out.append(f"<p class='note'>{escape(', '.join(coverage))}: the share of the top k judged (coverage, not "
                   "quality), never tested: its means and differences are in the main table.</p>")
    return "\n".join(out)


def _flip_cell(flip) -> str:
    if flip is None:
        return "<td></td>"
    verdict = "<span class='flip'>⇄ can flip</span>" if flip.can_flip else "<span class='sub'>cannot flip</span>"
    return (f"<td><span class='nw'>[{flip.low:+.4f}, {flip.high:+.4f}]</span><br>{verdict} "
            f"<span class='sub'>{'exact' if flip.exact else 'conservative'}</span></td>")


def _holes(c) -> str:
    """Judged@k per run and, per comparison, whether judging the holes could flip it."""
    h = c.holes
    if h is None:
        return ""
    rows = "".join(f"<tr><td class='l'>{escape(name)}</td><td>{r['judged']:.4f}</td><td>{r['holes']}</td>"
                   f"<td>{r['queries_with_holes']}/{r['queries']}</td></tr>" for name, r in h.runs.items())
    flips, methods = [], {}
    for x in c.comparisons:
        f = c.flip(x)
        if f is not None:
            how = "exact" if f.exact else "conservative"
            methods[how] = f.method
            verdict = "<span class='flip'>order can flip</span>" if f.can_flip else "order cannot flip"
            flips.append(f"<li>{escape(x.measure)}: {escape(x.run)} − {escape(c.baseline)} = {f.difference:+.4f}; "
                         f"with the holes judged anything in [{f.low:+.4f}, {f.high:+.4f}] ({how}): {verdict}</li>")
    flips += [f"<li>{escape(m)}: holes not bounded ({escape(why)})</li>" for m, why in h.skipped.items()]
    notes = "".join(f"<br>{escape(m)}" for m in methods.values())
    could = sum(1 for x in c.comparisons if (f := c.flip(x)) is not None and f.can_flip)
    judged = [r["judged"] for r in h.runs.values()]
    return (f"<h2 id='holes'>Holes</h2><details{_open(c)}><summary>Judged@{h.k} {min(judged):.4f} to {max(judged):.4f}; judging "
            f"the holes could flip {could} of {sum(1 for x in c.comparisons if c.flip(x) is not None)} comparisons "
            "with the baseline</summary>"
            f"<p class='note'>A hole is a document in a run's top {h.k} with no judgment "
            f"for that query; the scores count it as not relevant. Judging the holes (grades 0..{h.maxgrade}; "
            f"negative grades: {escape(h.negative)}) could move each difference anywhere in its interval.</p>"
            f"<table><tr><th class='l'>run</th><th>Judged@{h.k}</th><th>holes</th><th>queries with holes</th></tr>"
            f"{rows}</table><ul>{''.join(flips)}</ul><p class='note'>Intervals of mean(run) − mean(baseline):{notes}</p>"
            "</details>")


def _machine(c) -> str:
    """The scores with the holes labelled by a machine judge, in a section of their own."""
    mf = c.machine
    if mf is None:
        return ""
    names = list(mf.measures)
    head = "".join(f"<th>{escape(g)}<br><span class='sub'>judged</span></th><th>{escape(mf.name(g))}</th>"
                   for g in names)
    rows = []
    for run in [c.baseline, *c.runs]:
        cells = "".join(f"<td>{c.result.aggregate(run, g):.4f}</td><td>{mf.mean(run, g):.4f}</td>" for g in names)
        rows.append(f"<tr><td class='l'>{escape(run)}</td><td>{mf.holes[run]}</td><td>{mf.labelled[run]}</td>{cells}</tr>")
    conventions = "".join(f"<br><code>{escape(n)}: {escape(v)}</code>" for n, v in mf.conventions().items())
    return (f"<h2 id='machine'>Machine labels</h2><p class='note'>The same measures with the holes (documents in a "
            f"run's top {mf.k} no person judged for the query) labelled by the machine judge "
            f"<code>{escape(mf.machine.source)}</code> (sha256 <code>{escape(mf.machine.sha256[:12])}</code>). "
            "Machine labels are not judgments: Judged@k and every other number in this report use the people's "
            "labels only.</p>"
            f"<table><tr><th class='l'>run</th><th>holes@{mf.k}</th><th>machine-labelled</th>{head}</tr>"
            f"{''.join(rows)}</table><p class='note'>{conventions}</p>{_ppi(c)}")


def _ppi(c) -> str:
    """Prediction-powered estimates (a human sample of known design corrects the machine)."""
    report = getattr(c, "ppi", None)
    if report is None:
        return ""
    from ..analyses.holes.ppi import SOURCES, method_text

    pct = f"{report.level:.0%}"
    head = ("<tr><th class='l'>run</th><th class='l'>measure</th><th>judged</th><th>machine-filled</th>"
            f"<th>human-only ± {pct}</th><th>PPI ± {pct}</th><th>PPI++ ± {pct}</th></tr>")

    def rows(items):
        out = []
        for r in items:
            cells = "".join(f"<td>{r.estimates[e].shown()}</td>" for e in ("human", "ppi", "ppi++"))
            out.append(f"<tr><td class='l'>{escape(r.run)}</td><td class='l'>{escape(r.measure)}</td>"
                       f"<td>{r.known['judged']:.4f}</td><td>{r.known['machine_filled']:.4f}</td>{cells}</tr>")
        return "".join(out)

    notes = "".join(f"<br>{escape(n)}" for n in getattr(report, "notes", []))
    return (f"<h3>Prediction-powered estimates</h3><p class='note'>The sample <code>{escape(report.design.source)}"
            "</code> judged by people corrects the machine's labels: estimates of the scores with the whole "
            "sampled population judged, not measurements.</p>"
            f"<table>{head}{rows(report.rows)}{rows(report.differences or [])}</table>"
            f"<p class='note'>{escape(method_text(report.design))}. {escape(SOURCES)}.{notes}</p>")


def _checks(c) -> str:
    """The grade scale, the answer key, leaks, evidence gaps, abstention and answer checks."""
    checks, result = c.checks, c.result
    parts = []
    if checks is not None:
        if checks.scale is not None:
            rows = "".join(f"<tr><td>{g.value}</td><td class='l'>{escape(g.name)}</td>"
                           f"<td class='l'>{escape(g.definition)}</td></tr>" for g in checks.scale.grades)
            parts.append(f"<h3>Grade scale <span class='sub'>{escape(str(checks.scale.source))}</span></h3>"
                         f"<table><tr><th>grade</th><th class='l'>name</th><th class='l'>definition</th></tr>{rows}</table>")
        key = checks.answer_key.to_dict()
        dist = ", ".join(f"{k}: {v}" for k, v in key["relevant_per_query"].items()) or "none"
        parts.append(f"<h3>Answer key</h3><p>{counted(key['queries_with_relevant'], 'query')} with something relevant "
                     f"(mean {key['mean_relevant_per_query']:.2f} relevant documents), "
                     f"{key['judged_nothing_relevant']} judged with nothing relevant, {key['unanswerable']} "
                     f"unanswerable. Relevant documents per query → queries: {escape(dist)}.</p>")
        for w in checks.warnings(result):
            parts.append(f"<p class='warn'>⚠ {escape(w)}</p>")
        k = checks.k(result)
        for name, found in checks.leaks(result).items():
            items = "".join(f"<li>query {escape(x.qid)} rank {x.rank}: {escape(x.docid)}</li>" for x in found)
            flag = f"<span class='leak'>{counted(len(found), 'leak')}</span>" if found else "no leaks"
            parts.append(f"<p>{escape(name)}: {flag} <span class='sub'>(ineligible documents in the top {k}, as "
                         f"{escape(checks.eligibility.principal or 'everyone')})</span></p>"
                         + (f"<ul>{items}</ul>" if items else ""))
        measure = checks.ranking_measure(result)
        for name, gaps in checks.gaps(result).items():
            items = "".join(f"<li>query {escape(g.qid)}: {escape(measure)} {g.score:.4f}, {g.covered} of {g.needed} "
                            f"groups, missing {escape(', '.join(g.missing))}</li>" for g in gaps)
            parts.append(f"<p>{escape(name)}: {len(gaps)} quer{'y' if len(gaps) == 1 else 'ies'} with "
                         f"{escape(measure)} ≥ {checks.high:g} but incomplete evidence in the top {k}</p>"
                         + (f"<ul>{items}</ul>" if items else ""))
        for name, ab in checks.abstention.items():
            parts.append(f"<p>{escape(name)}: {escape(ab.summary())}</p>")
    if c.answers:
        parts.append(_answers(c.answers))
    if not parts:
        return ""
    return "<h2 id='checks'>Checks beyond the score</h2>" + "\n".join(parts)


def _answers(pairings) -> str:
    def f(x):
        return "n/a" if x is None else f"{x:.4f}"

    first = next(iter(pairings.values()))
    m, high = escape(first.measure), first.high
    rows, lists = [], []
    for name, p in pairings.items():
        rows.append(f"<tr><td class='l'>{escape(name)}</td><td>{p.checked}</td><td>{len(p.accepted)}</td>"
                    f"<td>{f(p.acceptance_rate)}</td><td>{f(p.mean_accepted)}</td><td>{f(p.mean_failed)}</td></tr>")
        for title, items in ((f"{m} ≥ {high:g}, answer failed", p.high_score_failed),
                             (f"{m} &lt; {high:g}, answer accepted", p.low_score_accepted)):
            for qid, score, note in items:
                lists.append(f"<li>{escape(name)}: {title}: query {escape(qid)} ({score:.4f})"
                             + (f" — {escape(note)}" if note else "") + "</li>")
    return (f"<h3>Answer checks paired with {m}</h3><table><tr><th class='l'>run</th><th>checked</th>"
            f"<th>accepted</th><th>rate</th><th>mean {m}<br>accepted</th><th>mean {m}<br>failed</th></tr>"
            f"{''.join(rows)}</table>" + (f"<ul>{''.join(lists)}</ul>" if lists else ""))


def _power(power) -> str:
    """Discriminative power (Sakai 2006) of each measure over every pair of runs, and the ASL curves."""
    if power is None:
        return ""
    rows = "".join(f"<tr><td class='l'>{escape(r['measure'])}</td><td>{r['significant']}/{r['pairs']}</td>"
                   f"<td>{r['power']:.0%}</td><td>{_p(r['median_asl'])}</td></tr>" for r in power.summary())
    return (f"<h2 id='power'>Discriminative power</h2><p class='note'>Every pair of the {len(power.scores.runs)} runs "
            f"(baseline included) tested on {counted(len(power.scores.qids), 'query')} with a two-sided {power.test} test "
            f"({counted(power.samples, 'draw')}, seed {power.seed}); power = share of pairs with ASL &lt; {power.alpha:g} "
            f"(Sakai, SIGIR 2006). A curve that stays low over more pairs separates more systems.</p>"
            f"<table><tr><th class='l'>measure</th><th>significant pairs</th><th>power</th><th>median ASL</th></tr>"
            f"{rows}</table><figure>{plots.asl_curves(power)}</figure>")


def _open(c) -> str:
    """The ``open`` attribute of a section folded in <details>: open for three runs or fewer."""
    return " open" if len(c.runs) <= 2 else ""


def _run_details(c, shown) -> str:
    """Per run, folded: its mean on each measure against the baseline, the per-query
    differences (sorted bars) and the queries it lost most on."""
    out = []
    first = next(iter(c.measures), None)
    for r in c.runs:
        cells = []
        for m in c.measures:
            x = c.get(m, r)
            flip = c.flip(x)
            cells.append(f"{escape(m)} {x.mean_run:.4f}{x.mark}{'⇄' if flip is not None and flip.can_flip else ''} "
                         f"({x.test.mean_delta:+.4f})")
        figs = []
        for m in c.measures:
            x = c.get(m, r)
            d = differences(c.values[c.baseline][m], c.values[r][m])  # ties already exactly 0
            title = f"{m}: {shown[r]} − {shown[c.baseline]} (W/L/T {x.test.wins}/{x.test.losses}/{x.test.ties})"
            figs.append(f"<figure>{plots.difference_bars(d, title)}</figure>")
        lost = [g for g in c.regressions if g.run == r]
        regressions = (f"<h3>Queries {escape(shown[r])} lost most on ({escape(first)})</h3>" + _regressions(c, lost)
                       if lost else "")
        out.append(f"<details class='run'{_open(c)}><summary><b>{escape(shown[r])}</b> "
                   f"<span class='sub'>{'; '.join(cells)}</span></summary><div class='pair'>{''.join(figs)}</div>"
                   f"{regressions}</details>")
    return "\n".join(out)


def _distributions(c, shown) -> str:
    names = [c.baseline, *c.runs]
    return "\n".join(f"<figure>{plots.distributions({shown[n]: c.values[n][m] for n in names}, m)}</figure>"
                     for m in c.measures)


def _ranking_cells(entry, newly) -> str:
    if entry is None:
        return "<td></td><td></td>"
    _, doc, grade = entry
    if grade is None:
        cls = "new" if doc in newly else "unjudged"
        return f"<td class='l {cls}'>{escape(doc)}</td><td class='{cls}'>unjudged</td>"
    return f"<td class='l'>{escape(doc)}</td><td>{grade}</td>"


def _regressions(c, regressions: list) -> str:
    out = []
    for r in regressions:
        newly = set(r.newly_unjudged)
        n = max(len(r.baseline_ranking), len(r.run_ranking))
        rows = []
        for i in range(n):
            b = r.baseline_ranking[i] if i < len(r.baseline_ranking) else None
            x = r.run_ranking[i] if i < len(r.run_ranking) else None
            rows.append(f"<tr><td>{i + 1}</td>{_ranking_cells(b, set())}{_ranking_cells(x, newly)}</tr>")
        note = (f"<p class='note'>{counted(len(newly), 'unjudged document')} newly in the top {len(r.run_ranking)}: "
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
    if c.query_set is not None:
        items.append(("query set", escape(c.query_set.describe())))
    for name, counts in c.counts.items():
        items.append((f"queries of {escape(name)}", escape(", ".join(f"{k} {v}" for k, v in counts.items()))))
    for m, conv in c.measures.items():
        items.append((escape(m), f"<code>{escape(conv)}</code>"))
    for k, v in c.settings().items():
        items.append((escape(k), escape(str(v))))
    return "<dl class='settings'>" + "".join(f"<dt>{k}</dt><dd>{v}</dd>" for k, v in items) + "</dl>"


def ranking_measure(c) -> str | None:
    """The measure the first screen ranks the runs by: the first one that is not coverage."""
    return next((m for m in c.measures if not is_coverage_measure(m)), None)


def overview_holes(c):
    """The holes of every run on the ranking measure, as ``judged holes`` reports them
    (bounds over the pool of every run, every pair's interval; no estimate), or None
    without holes or when that measure has no bounds."""
    m = ranking_measure(c)
    if c.holes is None or c.result is None or m not in c.holes.bounded:
        return None
    return result_holes(c.result, m, c.holes.k, maxgrade=c.holes.bounded[m].maxgrade)


def _overview(c, shown, holes, alpha) -> str:
    """The first screen: which runs are better, by how much, and could judging change it."""
    m = ranking_measure(c)
    if m is None:
        return ""
    names = [c.baseline, *c.runs]
    means = {c.baseline: c.get(m, c.runs[0]).mean_baseline} if c.runs else {}
    means.update({r: c.get(m, r).mean_run for r in c.runs})
    by_mean = Measure.parse(m).aggregate == "mean"  # a t interval of the mean (not of GMAP's geometric mean)
    bounds = {}
    if holes is not None:
        bounds = {name: (float(rh.low.mean()), float(rh.high.mean())) if len(rh.low) else None
                  for name, rh in holes.runs.items()}
    rows = []
    for name in names:
        x = None if name == c.baseline else c.get(m, name)
        flip = c.flip(x) if x is not None else None
        rows.append({"name": name, "label": shown[name], "mean": means[name], "baseline": name == c.baseline,
                     "ci": ci95(c.values[name][m]) if by_mean else None, "bounds": bounds.get(name),
                     "mark": x.mark if x is not None else "", "flip": bool(flip is not None and flip.can_flip)})
    rows.sort(key=lambda r: -r["mean"] if r["mean"] == r["mean"] else float("inf"))
    better = [r for r in rows if r["mark"] == "▲"]
    worse = [r for r in rows if r["mark"] == "▼"]
    lines = [f"By {escape(m)} over {counted(len(c.qids), 'query')}: best {escape(rows[0]['label'])} "
             f"({rows[0]['mean']:.4f}); {len(better)} of {counted(len(c.runs), 'run')} better than the baseline "
             f"{escape(shown[c.baseline])} ({means[c.baseline]:.4f}), {len(worse)} worse ({MARK_NOTE.format(alpha=alpha, correction=escape(c.correction))})."]
    matrix = ""
    if holes is not None:
        summary = flip_summary({name: means[name] for name in names}, holes.pairs)
        lines.append(escape(summary.sentence(shown)) + ".")
        matrix = _flip_matrix(summary, shown)
    what = (f"{escape(m)}: the mean (dot: green better, red worse than the baseline, black the baseline), its 95% "
            "interval (bar)" + (", what judging the holes could make it (band)" if holes is not None else ""))
    figure = plots.ranking(rows, f"{m}: runs best first")
    return (f"<h2 id='overview'>Which runs are better, by how much, and could judging change it?</h2>"
            f"<p>{' '.join(lines)}</p><div class='pair overview'><figure>{figure}<figcaption class='note'>{what}; "
            f"▲/▼: significantly better/worse than the baseline; ⇄: judging the holes could reverse its order with "
            f"the baseline.</figcaption></figure>{matrix}</div>")


MARK_NOTE = "randomization test, p &lt; {alpha} after {correction} correction"


def _flip_matrix(summary, shown) -> str:
    """The flip matrix as a table: runs best first, ⇄ where judging the holes could swap two."""
    n = len(summary.runs)
    if n < 3:
        return ""
    head = "<tr><th></th>" + "".join(f"<th>{j + 1}</th>" for j in range(n)) + "</tr>"
    body = []
    for i, (name, row) in enumerate(zip(summary.runs, summary.matrix())):
        cells = "".join(f"<td class='d'>{i + 1}</td>" if cell is None and j == i else
                        "<td class='flip'>⇄</td>" if cell else "<td class='sub'>·</td>" for j, cell in enumerate(row))
        body.append(f"<tr><th class='l'>{i + 1} {escape(shown[name])}</th>{cells}</tr>")
    return (f"<figure><table class='matrix'>{head}{''.join(body)}</table><figcaption class='note'>⇄: judging the "
            "holes could swap the two runs (best first, numbered)</figcaption></figure>")


def html(c, title: str | None = None, alpha: float = 0.05, power=None) -> str:
    """A self-contained HTML page for a :class:`~judged.analyses.comparison.Comparison`, its first
    screen answering which runs are better, by how much and whether judging could change it
    (the runs ranked with their intervals and the holes' bounds, the flip matrix), then the
    tables and, folded, each run's detail; with ``power`` (a :class:`judged.analyses.meta.PowerResult`,
    e.g. from :func:`judged.analyses.meta.power.power_of_comparison`) the ASL-curve section too."""
    template = Template(_template())
    shown, short = shortener(c)  # runs by file name (settings keep the paths)
    title = title or (f"judged report: {', '.join(shown[r] for r in c.runs)} vs {shown[c.baseline]}" if len(c.runs) <= 2
                      else f"judged report: {len(c.runs) + 1} runs, baseline {shown[c.baseline]}")
    when = _dt.datetime.now(_dt.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    measures = ", ".join(c.measures)
    return template.substitute(
        title=escape(title),
        subtitle=escape(f"{measures}; {counted(len(c.qids), 'query')}; judged {__version__}, {when}"),
        overview=short(_overview(c, shown, overview_holes(c), alpha)),
        main_table=short(_main(c, alpha)), legend=escape(short(legend(c, alpha, flips=True))),
        comparisons=short(_comparisons(c)), runs=short(_run_details(c, shown)), open=_open(c),
        distributions=_distributions(c, shown), settings=_settings(c),
        holes=short(_holes(c)), machine=short(_machine(c)), checks=short(_checks(c)), power=short(_power(power)))


def _template() -> str:
    """template.html, read beside this module; through importlib.resources only where the
    package is not plain files (a zip), as importing it costs 0.01 CPU-s of judged report."""
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "template.html")
    if os.path.isfile(path):
        with open(path, encoding="utf-8") as fh:
            return fh.read()
    from importlib import resources

    return resources.files(__package__).joinpath("template.html").read_text(encoding="utf-8")
