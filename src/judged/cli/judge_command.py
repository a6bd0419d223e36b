"""``judged judge``: the judging campaign (init, add-assessor, rotate, revoke, serve, export,
status) and the agreement of a machine judge with the people (agreement).

The campaign commands need the ``web`` extra (FastAPI, SQLAlchemy, Jinja2, uvicorn; psycopg
for PostgreSQL); ``agreement`` needs nothing beyond judged itself.
"""

from __future__ import annotations

import json
import math
import os
import sys

from ..core.words import counted
from ..core.errors import JudgedError
from . import Formatter
from .common import add_on_duplicate_option, format_help

HELP = """Close the holes: assessors judge a pool's (qid, docid) pairs in a web page.

examples:
  judged judge init --db judging.db --pool pool.txt --queries queries.tsv --corpus corpus.jsonl
  judged judge add-assessor alice --db judging.db          # prints alice's token last
  judged judge add-assessor boss --admin --db judging.db
  judged judge serve --db judging.db                       # http://127.0.0.1:8000
  judged judge status --db judging.db
  judged judge export --db judging.db -o new.qrels         # + .provenance.tsv, .evidence.jsonl, .notes.tsv
  judged judge add-pool --db judging.db --pool more.txt --queries topics.txt --corpus corpus.jsonl
  judged judge reassign alice --to bob --db judging.db
  judged judge rotate alice --db judging.db                # a new token for alice, the old one stops working
  judged judge revoke carol --db judging.db                # carol's token and sessions end at once
  judged judge campaigns --db judging.db
  judged judge migrate --db judging.db                     # a database made by judged 0.1
  judged judge agreement qrels.txt llm-labels.txt          # a machine judge against the people

--db takes any SQLAlchemy URL (postgresql://user:pw@host/db) or a path to a SQLite file. A
database holds several campaigns; commands that work on one take --campaign NAME (needed
only when there are several).
(`judged judge status` gives the agreement between assessors of one campaign; `judged judge
agreement` compares two label files, e.g. the people's qrels and an LLM's labels; `judged meta
agreement` is another thing: measures against side-by-side preferences.)"""
CAMPAIGN_HELP = "campaign name (needed only when the database holds several; `judged judge campaigns` lists them)"

POOL_HELP = "pool file: qid docid per line (as `judged pool` writes)"
DB_HELP = "database: a SQLite file path (default: %(default)s) or an SQLAlchemy URL such as postgresql://user:pw@127.0.0.1/db"


def _web():
    try:
        from ..judge import campaign, db  # noqa: F401
    except ModuleNotFoundError as exc:
        raise JudgedError(f"`judged judge` needs the web extra (missing {exc.name}): pip install 'judged[web]'") from None
    return campaign, db


def register(sub) -> None:
    p = sub.add_parser("judge", help="run a judging campaign (web app)", description=HELP,
                       formatter_class=Formatter)
    jsub = p.add_subparsers(dest="judge_command", metavar="SUBCOMMAND", required=True)

    def command(name, help, description, example, func, campaign=None):
        """A subcommand: its help, its example, ``--db`` and (``campaign``: its help) ``--campaign``."""
        c = jsub.add_parser(name, help=help, description=f"{description}\n\nexample:\n  {example}",
                            formatter_class=Formatter)
        c.add_argument("--db", default="judging.db", help=DB_HELP)
        if campaign:
            c.add_argument("--campaign", help=campaign)
        c.set_defaults(func=func)
        return c

    i = command("init", "create a campaign from a pool, queries, corpus and grade scale",
                "create a campaign from a pool, queries, corpus and grade scale.",
                "judged judge init --db campaign.db --pool pool.txt --queries queries.jsonl --corpus corpus.jsonl "
                "--overlap 0.1", run_init)
    i.add_argument("--pool", required=True, help=POOL_HELP)
    i.add_argument("--queries", required=True,
                   help="topics: TSV qid<TAB>text, BEIR queries.jsonl (title, description, narrative fields shown "
                        "when present, also under metadata), or a TREC topic file (<top> or <topic> elements)")
    i.add_argument("--corpus", required=True, help="BEIR corpus.jsonl (_id, title, text)")
    i.add_argument("--scale", help="TOML grade scale (default: 0 not relevant, 1 useful background, "
                                   "2 direct support, 3 complete answer; evidence required above 0)")
    i.add_argument("--overlap", type=float, default=0.1,
                   help="share of pairs judged by two assessors, for agreement (default: %(default)s)")
    i.add_argument("--name", help="campaign name, unique in the database (default: 'judging campaign DATE')")
    i.add_argument("--guidelines", metavar="MARKDOWN", help="the assessors' guidelines, a Markdown file linked from every page")
    i.add_argument("--order", default="shuffled", metavar="ORDER",
                   help="how pairs are served: shuffled (default: a query at a time, in each assessor's own "
                        "shuffled order), pool (one at a time in the pool's priority order) or an adaptive "
                        "pooling strategy of `judged pool` (mtf, mm, mm-ns, ts, ts-ns, hedge: one at a time "
                        "in the order it proposes given the labels so far; needs the pool's runs and ranks)")
    i.add_argument("--seed", type=int, default=0, help="seed of a randomised --order (ts, ts-ns; default 0)")
    i.add_argument("--practice", metavar="QRELS",
                   help="a practice round: qrels lines (qid 0 docid grade) with known answers; every assessor judges "
                        "them first and sees their agreement before the real work (the pairs are never exported)")

    ap = command("add-pool", "merge a new pool into a running campaign",
                 "merge a new pool into a running campaign: pairs not there yet are added (the campaign's overlap "
                 "share goes to two assessors), with their topics and documents; pairs already there are left alone.",
                 "judged judge add-pool --db campaign.db --pool pool-round2.txt --queries topics.txt --corpus "
                 "corpus.jsonl", run_add_pool, CAMPAIGN_HELP)
    ap.add_argument("--pool", required=True, help=POOL_HELP)
    ap.add_argument("--queries", required=True, help="topics of the new qids (any format `init` reads)")
    ap.add_argument("--corpus", required=True, help="BEIR corpus.jsonl holding the new docids")

    r = command("reassign", "move an assessor's remaining pairs to another assessor or back to the pool",
                "move an assessor's remaining (open) pairs to another assessor (--to) or back to the pool for whoever "
                "claims next; their judgments so far stay theirs.",
                "judged judge reassign alice --to bob --deactivate --db campaign.db", run_reassign, CAMPAIGN_HELP)
    r.add_argument("name", help="the assessor whose open pairs move")
    r.add_argument("--to", help="the assessor who gets them (default: back to the pool)")
    r.add_argument("--deactivate", action="store_true",
                   help="and give NAME no new work: their token is revoked and their browser sessions end "
                        "(`judged judge rotate NAME` gives them a new token)")

    command("revoke", "end an assessor's access at once (token and browser sessions)",
            "end an assessor's access at once: their token opens nothing any more, their browser sessions end (the "
            "next request is refused), their open pairs go back to the pool and they get no new work; their "
            "judgments stay theirs. `judged judge rotate NAME` gives them a new token.",
            "judged judge revoke carol --db campaign.db", run_revoke, CAMPAIGN_HELP).add_argument(
        "name", help="the assessor (or admin) whose access ends")
    command("rotate", "give an assessor a new token; the old one stops working",
            "give an assessor a new token, printed once as the last line; the old token stops working and their "
            "browser sessions end at once (they log in again with the new one). A revoked or deactivated assessor "
            "is active again.", "judged judge rotate alice --db campaign.db", run_rotate, CAMPAIGN_HELP).add_argument(
        "name", help="the assessor (or admin) who gets a new token")
    command("campaigns", "list the campaigns in a database", "list the campaigns in a database.",
            "judged judge campaigns --db campaign.db", run_campaigns)
    command("migrate", "upgrade a database made by an older judged (keeps every campaign)",
            "upgrade a campaign database made by an older judged to this one's layout, in one transaction (a SQLite "
            "file is copied to FILE.schema1.bak first).", "judged judge migrate --db campaign.db", run_migrate)

    a = command("add-assessor", "add an assessor; prints the access token as the last line",
                "add an assessor; prints the access token as the last line.",
                "judged judge add-assessor alice --db campaign.db", run_add_assessor,
                CAMPAIGN_HELP + "; the token opens this campaign only")
    a.add_argument("name")
    a.add_argument("--admin", action="store_true", help="may see the admin page, adjudicate and export")

    s = command("serve", "serve the judging page and JSON API", "serve the judging page and JSON API.",
                "judged judge serve --db campaign.db --port 8000", run_serve)
    s.add_argument("--host", default="127.0.0.1", help="address to bind (default: %(default)s, this machine only)")
    s.add_argument("--port", type=int, default=8000, help="port (default: %(default)s)")
    s.add_argument("--secure-cookie", action="store_true",
                   help="mark the session cookie Secure and __Host- (behind HTTPS)")
    s.add_argument("--allow-host", action="append", default=[], metavar="NAME",
                   help="a Host name (or address) the server answers to, besides 127.0.0.1, localhost, ::1 and "
                        "--host; repeat for more (the name people type, e.g. judging.example.org behind a proxy, "
                        "or this machine's address with --host 0.0.0.0); any other Host gets 400")
    s.add_argument("--trust-proxy", metavar="ADDRESSES",
                   help="comma-separated addresses of reverse proxies whose X-Forwarded-For and X-Forwarded-Proto "
                        "are believed (the log-in rate limit then counts the client they name); default: none, "
                        "every client is its TCP address, whatever headers it sends")

    e = command("export", "write TREC qrels and a provenance sidecar", "write TREC qrels and a provenance sidecar.",
                "judged judge export --db campaign.db -o new-labels.txt", run_export, CAMPAIGN_HELP)
    e.add_argument("-o", "--output", required=True, metavar="QRELS",
                   help="qrels file (qid 0 docid grade); beside it QRELS.provenance.tsv (what `judged qrels "
                        "merge` reads: source, assessor, time) and QRELS.evidence.jsonl (evidence, other assessors)")
    e.add_argument("--disagreement", choices=["skip", "min", "max"], default="skip",
                   help="a pair two assessors graded differently and no admin adjudicated: "
                        "skip = leave it out (default), min / max = the lower / higher grade")

    t = command("status", "progress, time per judgment, agreement, disagreements",
                "progress, time per judgment, agreement, disagreements.",
                "judged judge status --db campaign.db --format json", run_status, CAMPAIGN_HELP)
    t.add_argument("--format", choices=["table", "json"], default="table", help=format_help(["table", "json"]))

    g = jsub.add_parser("agreement", help="agreement of a machine judge (e.g. an LLM) with the people's labels",
                        description=AGREEMENT_HELP, formatter_class=Formatter)
    g.add_argument("human", metavar="HUMAN", help="the people's labels: qrels (TREC, BEIR TSV, JSON, Parquet)")
    g.add_argument("machine", metavar="MACHINE", help="the machine judge's labels, in any qrels format")
    g.add_argument("--rel", type=int, default=1, help="relevance level of the binary view (default: grade >= 1)")
    g.add_argument("--resamples", type=int, default=2000,
                   help="bootstrap resamples for the intervals (default: %(default)s; 0: no intervals)")
    g.add_argument("--seed", type=int, default=0, help="seed of the bootstrap (default: %(default)s)")
    add_on_duplicate_option(g)
    g.add_argument("--format", choices=["table", "json"], default="table", help=format_help(["table", "json"]))
    g.set_defaults(func=run_agreement)


AGREEMENT_HELP = """Agreement of a machine judge (an LLM, a classifier) with the people, on the
(qid, docid) pairs both labelled: the overlap and what only one side labelled, the
confusion matrix (rows: the people's grade, columns: the machine's) with each side's
counts per grade, Cohen's kappa (unweighted, linear and quadratic weights, for graded
labels), Krippendorff's alpha (nominal, ordinal, interval), and the machine as a detector
of relevance (grade >= --rel): precision, recall, false positive rate, binary kappa.
Intervals: 95% percentile bootstrap over the overlapping pairs.

Sources: Cohen 1960 (kappa), Cohen 1968 (weighted kappa), Krippendorff 2011 (alpha),
Efron & Tibshirani 1993 (bootstrap).

example:
  judged judge agreement qrels.txt umbrela-labels.txt --format json
"""


def run_agreement(args) -> int:
    from ..analyses.holes.machine import agreement

    a = agreement(args.human, args.machine, rel=args.rel, resamples=args.resamples, seed=args.seed,
                  on_duplicate=args.on_duplicate)
    if args.format == "json":
        print(json.dumps(a.to_dict(), indent=2, ensure_ascii=False))
        return 0
    print_agreement(a)
    return 0


def print_agreement(a, console=None) -> None:
    from rich import box
    from rich.table import Table

    from .plain import console as make_console

    con = console or make_console()
    say = (lambda text: con.print(text, markup=False, highlight=False, soft_wrap=True))
    say(f"human {a.human['path']} ({counted(a.human['labels'], 'label')}) vs machine {a.machine['path']} "
        f"({counted(a.machine['labels'], 'label')})")
    say(f"overlap: {counted(a.pairs, 'pair')} labelled by both; {a.human_only} only by the people, "
        f"{a.machine_only} only by the machine")
    if not a.pairs:
        say("no pair labelled by both: nothing to compare")
        return
    say("confusion matrix (rows: the people's grade, columns: the machine's):")
    t = Table(box=box.SIMPLE_HEAD)
    t.add_column("human \\ machine", justify="right")
    for g in a.grades:
        t.add_column(str(g), justify="right")
    t.add_column("total", justify="right")
    for i, g in enumerate(a.grades):
        t.add_row(str(g), *(str(int(c)) for c in a.confusion[i]), str(int(a.confusion[i].sum())))
    t.add_row("total", *(str(int(c)) for c in a.confusion.sum(axis=0)), str(a.pairs))
    con.print(t)

    def value(v, iv):
        return _f(v) + (f" [{_f(iv[0])}, {_f(iv[1])}]" if a.resamples else "")

    say("Cohen's kappa: " + "; ".join(f"{w} {value(a.kappa[w], a.kappa_interval[w])}"
                                      for w in ("unweighted", "linear", "quadratic")))
    say("Krippendorff's alpha: " + "; ".join(f"{lv} {value(a.alpha[lv], a.alpha_interval[lv])}"
                                             for lv in ("nominal", "ordinal", "interval")))
    b = a.binary
    say(f"relevant ({b['relevant']}): people {_pct(b['human_relevant_share'])}, machine "
        f"{_pct(b['machine_relevant_share'])} of the overlap; machine precision {_f(b['precision'])}, recall "
        f"{_f(b['recall'])}, false positive rate {_f(b['false_positive_rate'])}, kappa {_f(b['kappa'])}")
    say(f"method: {a.method}")


def _pct(x) -> str:
    return "n/a" if x is None or (isinstance(x, float) and math.isnan(x)) else f"{100 * x:.1f}%"


def _database(db_url: str, new: bool = False):
    """The campaign database; a SQLite file must exist unless ``new`` (``judge init``)."""
    _, db = _web()
    return db.Database(db_url, must_exist=not new)


def run_init(args) -> int:
    campaign, db = _web()
    from ..analyses.pooling.poolfile import read_pool_file
    from ..judge.inputs import pool_pairs, read_corpus, read_guidelines, read_judging_scale, read_practice, read_topics
    from ..judge.ordering import SHUFFLED, order_choices, set_order

    if args.order not in order_choices():
        raise JudgedError(f"unknown --order {args.order!r} (choose from {', '.join(order_choices())})")
    # blind (qid and docid only) unless the order reads the pool's runs and ranks
    pool = read_pool_file(args.pool, pairs_only=args.order == SHUFFLED)
    pairs, repeated = pool_pairs(pool)
    practice = read_practice(args.practice) if args.practice else []
    qids = {q for q, _ in pairs} | {q for q, _, _ in practice}
    docids = {d for _, d in pairs} | {d for _, d, _ in practice}
    topics = read_topics(args.queries, qids)
    corpus = read_corpus(args.corpus, docids)
    scale = read_judging_scale(args.scale)
    guidelines = read_guidelines(args.guidelines) if args.guidelines else ""
    with _database(args.db, new=True).write() as s:
        c = campaign.init_campaign(s, args.name, pairs, str(args.pool), pool.sha256, topics, corpus, scale,
                                   args.overlap, guidelines, practice, sources=(str(args.queries), str(args.corpus)))
        if args.order != SHUFFLED:
            set_order(s, args.order, pool.pairs, args.seed, c.id)
        name = c.name
    pooled_q = {q for q, _ in pairs}
    print(f"campaign {name!r} in {db.public_url(args.db)}: {counted(len(pairs), 'pair')} over "
          f"{counted(len(pooled_q), 'query')} and {counted(len({d for _, d in pairs}), 'document')}; "
          f"{counted(round(args.overlap * len(pairs)), 'pair goes', 'pairs go')} to two "
          f"assessors (overlap {args.overlap}); evidence "
          f"{'required above ' + str(scale.grades[0]['value']) if scale.evidence_required else 'optional'}"
          + (f"; {counted(len(practice), 'practice pair')}" if practice else "")
          + ("; guidelines at /guidelines" if guidelines else "")
          + (f"; {repeated} repeated pool lines ignored" if repeated else "")
          + ("" if args.order == SHUFFLED else f"; pairs served one at a time in {args.order} order"))
    return 0


def run_add_assessor(args) -> int:
    campaign, db = _web()
    with _database(args.db).write() as s:
        c = campaign.find_campaign(s, args.campaign)
        token = campaign.add_assessor(s, args.name, args.admin, c)
        cname = c.name
    print(f"{'admin' if args.admin else 'assessor'} {args.name!r} added to campaign {cname!r}; the token below is "
          "shown once (only its hash is stored):")
    print(token)
    return 0


def run_add_pool(args) -> int:
    campaign, _ = _web()
    from ..analyses.pooling.poolfile import read_pool_file
    from ..judge.inputs import pool_pairs, read_corpus, read_topics

    pairs, _ = pool_pairs(read_pool_file(args.pool, pairs_only=True))
    with _database(args.db).write() as s:
        c = campaign.find_campaign(s, args.campaign)
        topics = read_topics(args.queries, {q for q, _ in pairs})
        corpus = read_corpus(args.corpus, {d for _, d in pairs})
        got = campaign.add_pool(s, c, pairs, str(args.pool), topics, corpus, (str(args.queries), str(args.corpus)))
        cname = c.name
    print(f"campaign {cname!r}: {counted(got['added'], 'new pair')} over {counted(got['queries'], 'query')} added "
          f"({counted(got['overlap_pairs'], 'goes', 'go')} to two assessors); "
          f"{counted(got['already'], 'was', 'were')} there already")
    return 0


def run_reassign(args) -> int:
    campaign, _ = _web()
    with _database(args.db).write() as s:
        c = campaign.find_campaign(s, args.campaign)
        got = campaign.reassign(s, c, args.name, args.to, args.deactivate)
    parts = [f"{counted(got['moved'], 'open pair')} of {got['from']} moved to {got['to']}"] if got["to"] else []
    if got["released"] or not got["to"]:
        parts.append(f"{got['released']} back to the pool" + (f" ({got['to']} holds their other copy)" if got["to"] else ""))
    if got["deactivated"]:
        parts.append(f"{got['from']} gets no new work; their token is revoked and {_sessions(got['sessions_ended'])} "
                     f"ended (`judged judge rotate {got['from']}` gives them a new token)")
    print("; ".join(parts))
    return 0


def _sessions(n: int) -> str:
    return counted(n, "browser session")


def run_revoke(args) -> int:
    campaign, _ = _web()
    with _database(args.db).write() as s:
        c = campaign.find_campaign(s, args.campaign)
        got = campaign.revoke(s, c, args.name)
        cname = c.name
    print(f"{got['assessor']}'s token no longer opens campaign {cname!r}; {_sessions(got['sessions_ended'])} ended; "
          f"{counted(got['released'], 'open pair')} back to the pool; their judgments stay theirs "
          f"(`judged judge rotate {got['assessor']}` gives them a new token)")
    return 0


def run_rotate(args) -> int:
    campaign, _ = _web()
    with _database(args.db).write() as s:
        c = campaign.find_campaign(s, args.campaign)
        token, got = campaign.rotate(s, c, args.name)
        cname = c.name
    again = " and is active again" if got["reactivated"] or got["was_revoked"] else ""
    print(f"{got['assessor']} has a new token for campaign {cname!r}{again}; the old one no longer works and "
          f"{_sessions(got['sessions_ended'])} ended. The token below is shown once (only its hash is stored):")
    print(token)
    return 0


def run_campaigns(args) -> int:
    campaign, _ = _web()
    with _database(args.db).read() as s:
        for c in campaign.campaigns(s):
            st = campaign.status(s, c.id)
            print(f"{c.name}\t{counted(st['pairs'], 'pair')}\t{st['labelled']} labelled\t"
                  f"{counted(len(st['assessors']), 'assessor')}")
    return 0


def run_migrate(args) -> int:
    _web()
    from ..judge.migrate import migrate

    print(migrate(args.db))
    return 0


def run_serve(args) -> int:
    if not 1 <= args.port <= 65535:
        raise JudgedError(f"--port must be 1 to 65535, got {args.port}")
    campaign, _ = _web()
    import uvicorn
    with _database(args.db).read() as s:
        if not campaign.campaigns(s):  # refuse to serve a database without a campaign
            campaign.find_campaign(s)

    from ..judge.app import create_app
    from ..judge.db import sqlite_path
    from ..judge.guard import LOOPBACK_HOSTS

    path = sqlite_path(args.db)
    if path is not None and os.stat(path).st_mode & 0o077:
        print(f"judged: warning: {path} can be read by other users (mode {os.stat(path).st_mode & 0o777:o}): it "
              f"holds token hashes, evidence and the campaigns' seeds; chmod 600 {path}", file=sys.stderr)
    hosts = [*LOOPBACK_HOSTS, *args.allow_host] + ([] if args.host in ("0.0.0.0", "::", "") else [args.host])
    app = create_app(args.db, secure_cookie=args.secure_cookie, allowed_hosts=hosts)
    print(f"judging page on http://{args.host}:{args.port}/ (Ctrl-C stops); answering to Host "
          + ", ".join(dict.fromkeys(hosts)), file=sys.stderr)
    # proxy headers only from the proxies named: uvicorn's default believes any request from
    # 127.0.0.1, so a client on this machine could pick its address for the rate limit
    trusted = [a.strip() for a in (args.trust_proxy or "").split(",") if a.strip()]
    uvicorn.run(app, host=args.host, port=args.port, server_header=False, log_level="info",
                proxy_headers=bool(trusted), forwarded_allow_ips=",".join(trusted) or None)
    return 0


def run_export(args) -> int:
    campaign, db = _web()
    from ..core.data import Qrels
    from ..analyses.qrels_ops import Merged, provenance_path

    source = f"judged judge {db.public_url(args.db)}"
    with _database(args.db).read() as s:
        c = campaign.find_campaign(s, args.campaign)
        lines, prov, unresolved = campaign.export(s, args.disagreement, source, c.id)
        notes = campaign.notes(s, c.id)
    # the qrels and the provenance sidecar `judged qrels merge` reads, written by its own writer
    qrels = Qrels([p["qid"] for p in prov], [p["docid"] for p in prov], [p["grade"] for p in prov], source=source)
    records = [{**{k: p[k] for k in ("qid", "docid", "grade", "source", "assessor", "time")}, "replaced": ""} for p in prov]
    Merged(qrels, records, [], [(source, qrels.sha256)]).write(args.output)
    evidence = evidence_path(args.output)
    with open(evidence, "w", encoding="utf-8") as fh:
        fh.writelines(json.dumps(p, ensure_ascii=False) + "\n" for p in prov)
    with open(notes_path(args.output), "w", encoding="utf-8") as fh:
        fh.write("\t".join(campaign.NOTES_COLUMNS) + "\n")
        fh.writelines("\t".join(_tsv_field(n[k]) for k in campaign.NOTES_COLUMNS) + "\n" for n in notes)
    print(f"{counted(len(lines), 'judgment')} -> {args.output}; provenance -> {provenance_path(args.output)}; "
          f"evidence -> {evidence}; {counted(len(notes), 'flag or comment', 'flags and comments')} -> "
          f"{notes_path(args.output)}")
    if unresolved:
        how = "left out" if args.disagreement == "skip" else f"exported at the {args.disagreement} grade"
        print(f"{len(unresolved)} unadjudicated disagreements {how} (--disagreement {args.disagreement}): "
              + ", ".join(f"{u.pair.qid}/{u.pair.docid}" for u in unresolved[:10])
              + (" ..." if len(unresolved) > 10 else ""), file=sys.stderr)
    return 0


def evidence_path(qrels_path: str) -> str:
    """The evidence sidecar: one JSON object per exported judgment (see docs/judging.md)."""
    return qrels_path + ".evidence.jsonl"


def notes_path(qrels_path: str) -> str:
    """The notes side file: every current judgment with a flag or a comment (TSV)."""
    return qrels_path + ".notes.tsv"


def _tsv_field(v) -> str:
    return "" if v is None else " ".join(str(v).split())   # tabs and line breaks become spaces


def _duration(seconds) -> str:
    if seconds is None:
        return "unknown (no timed judgment yet)"
    return f"{seconds} s" if seconds < 90 else f"{seconds / 60:.0f} min" if seconds < 5400 else f"{seconds / 3600:.1f} h"


def _f(x) -> str:
    return "n/a" if x is None or (isinstance(x, float) and math.isnan(x)) else f"{x:.3f}"


def _status_table(title: str, columns: list[str], width: int):
    """A table of `judge status` on a console ``width`` cells wide: a column ``"header"`` or
    ``"header:r"`` (right-justified). Nothing is cut: a cell too long for its column folds
    onto more lines, and where the page has room (80 columns do) every column is as wide as
    its longest header word, so header words stay whole."""
    from .plain import Table

    headers = [col.partition(":")[0] for col in columns]
    words = [max(map(len, h.split())) for h in headers]
    whole = sum(words) + 3 * len(columns) + 1 <= width     # padding and rules around each column
    t = Table(title=title)
    for col, header, word in zip(columns, headers, words):
        t.add_column(header, justify="right" if col.endswith(":r") else "left", overflow="fold",
                     min_width=word if whole else None)
    return t


def run_status(args) -> int:
    campaign, _ = _web()
    with _database(args.db).read() as s:
        st = campaign.status(s, campaign.find_campaign(s, args.campaign).id)
    if args.format == "json":
        print(json.dumps(campaign.json_safe(st), indent=2, ensure_ascii=False))
        return 0
    from .plain import console

    con = console()
    say = (lambda text: con.print(text, markup=False, highlight=False, soft_wrap=True))  # piped: one line each
    waiting = st["open_disagreements"]
    say(f"campaign {st['campaign']}: {st['labelled']} of {counted(st['pairs'], 'pair')} labelled"
        + (f" ({counted(waiting, 'disagreement waits', 'disagreements wait')} for an admin)" if waiting else "") + "; "
        f"{counted(st['overlap_pairs'], 'pair goes', 'pairs go')} to two assessors; "
        f"{st['judgments_done']} of {st['judgments_wanted']} "
        f"judgments done, {st['judgments_left']} left; time to finish {_duration(st['eta_seconds'])} "
        f"[{st['eta_method']}]")
    ag = st["agreement"]
    say(f"agreement over {ag['pairs']} doubly judged pairs: Cohen's kappa {_f(ag['cohen_kappa'])}, "
        f"Krippendorff's alpha (ordinal) {_f(ag['krippendorff_alpha_ordinal'])}  [{ag['convention']}]")
    # what reads at 80 columns; --format json has every field (assigned, open, ...)
    t = _status_table("assessors", ["assessor", "share:r", "graded:r", "skipped:r", "left:r", "s per judgment:r",
                                    "to finish", "practice"], con.width)
    for a in st["assessors"]:
        pr = a.get("practice")
        mark = " (revoked)" if a.get("revoked") else "" if a["active"] else " (inactive)"
        t.add_row(a["assessor"] + (" (admin)" if a["admin"] else "") + mark,
                  *(str(a[k]) for k in ("share", "graded", "skipped", "left")),
                  "—" if a["median_seconds"] is None else str(a["median_seconds"]),
                  ("unknown" if a["eta_seconds"] is None else _duration(a["eta_seconds"])) if a["left"] else "—",
                  "—" if not pr or pr["agreement"] is None else f"{pr['agreement']:.0%} ({pr['agreed']} of {pr['done']})")
    con.print(t)
    q = _status_table("queries", ["qid", "pairs:r", "judgments done:r", "labelled:r", "open disagreements:r"],
                      con.width)
    for r in st["queries"]:
        q.add_row(r["qid"], str(r["pairs"]), f"{r['judged']} of {r['copies']}", str(r["labelled"]), str(r["disagreements"]))
    con.print(q)
    if st["disagreements"]:
        d = _status_table("disagreements (adjudicate on the admin page)", ["qid", "docid", "labels", "adjudicated:r"],
                          con.width)
        for r in st["disagreements"]:
            d.add_row(r["qid"], r["docid"], ", ".join(f"{x['assessor']}: {x['grade']}" for x in r["labels"]),
                      "—" if r["adjudicated"] is None else str(r["adjudicated"]))
        con.print(d)
    return 0
