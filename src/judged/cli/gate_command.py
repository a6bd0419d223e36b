"""``judged gate``: may a candidate run replace a baseline? The decision of a policy file,
printed as rule lines, Markdown, JSON, JUnit XML or GitHub Actions annotations.

The decision is :func:`judged.analyses.gate.gate`'s; this module only prints it.
"""

from __future__ import annotations

import os
import sys

from . import Formatter
from ..core.errors import UsageError
from ..core.words import md_cell

HELP = """Decide whether CANDIDATE may replace BASELINE, by the rules of a policy file (TOML;
docs/gate.md has every key): a non-inferiority or superiority margin on a measure decided
by a paired one-sided Student t interval; critical queries that may not lose more than a
given amount; floors of Complete@k, answer acceptance and abstention; a ceiling of leaks
(ineligible documents) and of the unjudged share of the candidate's top k. One line per
rule: PASS, FAIL or UNDECIDED and its figure. A rule is UNDECIDED when judging the holes
(unjudged documents) of the two runs could flip it; the pairs to judge first are listed,
in judged pool's order. Both runs are scored over every qrels query (0 where a run ranks
nothing), as judged compare. With --manifest (or the policy's manifest), changed qrels
are refused.

exit status: 0 pass, 1 fail (a rule failed), 3 undecided (no rule failed, one could flip
once the holes are judged), 2 bad input (a policy, qrels or run file that cannot be used).

Under GitHub Actions (GITHUB_ACTIONS=true) the text output is followed by one annotation
per rule that did not pass, and the Markdown summary is appended to the job summary
($GITHUB_STEP_SUMMARY); --format github prints the annotations alone.

example policy (gate.toml):
  measure = "nDCG@10"
  [margin]
  non_inferiority = 0.05       # the candidate may be at most 0.05 worse (one-sided 95% bound)
  [critical]
  queries = ["q02", "q07"]
  max_loss = 0.2
  [holes]
  max_share = 0.2              # at most 20% of the candidate's top 10 unjudged

examples:
  judged gate qrels.txt bm25.run tuned.run --policy gate.toml
  judged gate qrels.txt bm25.run tuned.run --policy gate.toml --format md > comment.md
  judged gate --manifest eval.toml bm25.run tuned.run --policy gate.toml --junit gate.xml
"""

FORMATS = ("text", "md", "json", "github")
FORMAT_HELP = {"text": "the rule lines", "md": "a Markdown summary for a pull-request comment",
               "json": "the decision as JSON", "github": "GitHub Actions annotations (::error, ::warning)"}
MARK = {"pass": "✅", "fail": "❌", "undecided": "⚠️"}


def register(sub) -> None:
    p = sub.add_parser("gate", help="decide whether a candidate run may replace a baseline", description=HELP,
                       formatter_class=Formatter)
    p.add_argument("inputs", nargs="+", metavar="QRELS BASELINE CANDIDATE",
                   help="the qrels (omit with --manifest), the baseline run, the candidate run")
    p.add_argument("--policy", required=True, metavar="GATE.toml", help="the policy file: the rules (docs/gate.md)")
    p.add_argument("--manifest", metavar="EVAL.toml",
                   help="a frozen evaluation set (judged freeze): changed qrels are refused, its conventions apply "
                        "(default: the policy's manifest, if any)")
    p.add_argument("--answers", metavar="FILE",
                   help="'run qid accepted [note]' answer verdicts for the policy's [answers] floor (default: the "
                        "policy's [answers] file)")
    p.add_argument("--format", choices=FORMATS, default="text",
                   help="output: " + "; ".join(f"{k} = {v}" for k, v in FORMAT_HELP.items()))
    p.add_argument("--junit", metavar="FILE", help="also write the rules as a JUnit XML test suite to FILE")
    p.set_defaults(func=run)


def run(args) -> int:
    from ..analyses.gate import gate
    from ..core.manifest import Manifest

    if len(args.inputs) not in (2, 3):
        raise UsageError("give QRELS BASELINE CANDIDATE (or BASELINE CANDIDATE with a manifest)")
    qrels, runs = (None, args.inputs) if len(args.inputs) == 2 else (args.inputs[0], args.inputs[1:])
    manifest = Manifest.load(args.manifest) if args.manifest else None
    result = gate(args.policy, qrels, runs[0], runs[1], manifest=manifest, answers=args.answers)
    if args.junit:
        from ..core.io.output import open_replacing

        with open_replacing(args.junit) as fh:
            fh.write(junit_xml(result))
    github = os.environ.get("GITHUB_ACTIONS") == "true"
    out = {"text": text, "md": markdown, "json": lambda r: r.to_json(), "github": github_annotations}[args.format](result)
    if args.format == "text" and github:
        out += github_annotations(result)
    sys.stdout.write(out if out.endswith("\n") else out + "\n")
    summary = os.environ.get("GITHUB_STEP_SUMMARY")
    if github and summary:
        with open(summary, "a", encoding="utf-8") as fh:
            fh.write(markdown(result) + "\n")
    return result.exit_code


def text(result) -> str:
    """The rule lines, then how each figure was computed."""
    lines = result.lines()
    lines.append(f"measure: {result.convention}")
    for name, method in result.methods.items():
        lines.append(f"{name.replace('_', ' ')}: {method}")
    return "\n".join(lines) + "\n"


def markdown(result) -> str:
    """A pull-request comment: the verdict, a table of the rules, the pairs to judge first
    and the method, folded."""
    out = [f"### {MARK[result.verdict]} judged gate: `{result.candidate}` may replace `{result.baseline}`? "
           f"**{result.verdict}** (exit {result.exit_code})", "",
           "| rule | verdict | figure |", "|---|---|---|"]
    for r in result.rules:
        figure = r.figure + (f"; {r.flip}" if r.flip else "")
        out.append(f"| {md_cell(r.name)} | {MARK[r.verdict]} {r.verdict} | {md_cell(figure)} |")
    if result.judge_first:
        out += ["", f"<details><summary>Judge first: {len(result.judge_first)} of {result.unjudged} unjudged pairs "
                    f"(top {result.k}, judged pool's {result.strategy} order)</summary>", "",
                "| qid | docid | best rank | runs |", "|---|---|---|---|"]
        out += [f"| {md_cell(p['qid'])} | {md_cell(p['docid'])} | {p['best_rank']} | "
                f"{md_cell(', '.join(p['runs']))} |" for p in result.judge_first]
        out += ["", "</details>"]
    out += ["", "<details><summary>How</summary>", "", f"- measure: `{result.convention}`"]
    out += [f"- {name.replace('_', ' ')}: {md_cell(m)}" for name, m in result.methods.items()]
    out += [f"- qrels: `{result.provenance['qrels']['path']}` sha256 `{str(result.provenance['qrels']['sha256'])[:12]}`"]
    if "manifest" in result.provenance:
        out.append(f"- manifest: `{result.provenance['manifest']['path']}` (qrels checked against it)")
    out += ["", "</details>"]
    return "\n".join(out) + "\n"


def _escape_data(s: str) -> str:
    return s.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def _escape_property(s: str) -> str:
    return _escape_data(s).replace(":", "%3A").replace(",", "%2C")


def github_annotations(result) -> str:
    """GitHub Actions workflow commands: ``::error`` per failed rule, ``::warning`` per
    undecided one, one ``::notice`` for the verdict."""
    out = []
    for r in result.rules:
        if r.verdict != "pass":
            level = "error" if r.verdict == "fail" else "warning"
            message = r.figure + (f"; {r.flip}" if r.flip else "")
            out.append(f"::{level} title={_escape_property(f'judged gate: {r.name} {r.verdict}')}::"
                       f"{_escape_data(message)}")
    out.append(f"::notice title={_escape_property('judged gate')}::{_escape_data(result.headline())}")
    return "\n".join(out) + "\n"


def junit_xml(result) -> str:
    """One JUnit test suite, one test case per rule: a failed rule is a ``<failure>``, an
    undecided one a ``<failure type="undecided">`` (a gate that is not passed is not green)."""
    import xml.etree.ElementTree as ET

    failures = sum(r.verdict != "pass" for r in result.rules)
    suite = ET.Element("testsuite", name="judged gate", tests=str(len(result.rules)), failures=str(failures),
                       errors="0", skipped="0")
    props = ET.SubElement(suite, "properties")
    for name, value in (("baseline", result.baseline), ("candidate", result.candidate),
                        ("verdict", result.verdict), ("exit_code", str(result.exit_code)),
                        ("measure", result.convention), ("policy", result.policy.source)):
        ET.SubElement(props, "property", name=name, value=value)
    for r in result.rules:
        case = ET.SubElement(suite, "testcase", classname="judged.gate", name=r.name)
        if r.verdict != "pass":
            failure = ET.SubElement(case, "failure", type=r.verdict, message=r.line())
            failure.text = r.figure + (f"\n{r.flip}" if r.flip else "")
        else:
            ET.SubElement(case, "system-out").text = r.line()
    if result.judge_first:
        ET.SubElement(suite, "system-out").text = result.lines()[-1]
    ET.indent(suite)
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(suite, encoding="unicode") + "\n"
