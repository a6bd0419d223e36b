"""A campaign's operations, shared by the JSON API, the pages and the CLI.

Every write appends a :class:`~.models.Judgment` row; the current label of a pair is read
back from that history (latest grade, unless a later skip or undo by the same assessor;
an admin's adjudication, when there is one, decides the pair). A database holds several
campaigns; every function works inside one (an assessor's token opens exactly one).
"""

from __future__ import annotations

import math
import secrets
import statistics
from dataclasses import dataclass, field
from datetime import datetime, timedelta

from sqlalchemy import case, delete, func, select
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

from ..core.words import counted
from ..core.errors import JudgedError, ParseError
from ..core.jsonsafe import json_safe
from ..core.naturalsort import natural_key
from . import auth
from ..analyses.assessor_agreement import cohen_kappa, krippendorff_alpha
from .assign import next_assignment, open_assignment, overlap_pair_indices
from .inputs import Scale, Topic
from .models import (ADJUDICATE, FLAGS, GRADE, GRADED, OPEN, SKIP, SKIPPED, UNDO, Assessor, Assignment, Campaign,
                     Document, Judgment, LoginSession, Pair, Query, utcnow)
from .ordering import SHUFFLED, campaign_order, claim_next

DISAGREEMENT_POLICIES = ("skip", "min", "max")  # export of an unadjudicated disagreement
MAX_GAP = timedelta(hours=12)   # time per judgment: the gap since the previous event, if no longer


class Refused(JudgedError):
    """A request the campaign refuses (the API answers 422 and stores nothing)."""


def iso(t: datetime | None) -> str | None:
    return None if t is None else t.isoformat(timespec="milliseconds") + "Z"


def _median(values) -> float | None:
    values = list(values)
    return statistics.median(values) if values else None


# --- set-up -------------------------------------------------------------------------------

def default_name(session: Session) -> str:
    """``judging campaign YYYY-MM-DD``, numbered when the database holds one of that name."""
    base = f"judging campaign {utcnow():%Y-%m-%d}"
    taken = set(session.scalars(select(Campaign.name)))
    return next(n for n in (base if i == 1 else f"{base} ({i})" for i in range(1, len(taken) + 2)) if n not in taken)


def _topic(qid: str, t) -> Topic:
    return t if isinstance(t, Topic) else Topic(qid, str(t))


def _add_texts(session: Session, campaign: Campaign, qids, docids, topics: dict, corpus: dict,
               sources: tuple[str, str] = ("", "")) -> None:
    """Add the topics and documents of ``qids``/``docids`` the campaign does not hold yet;
    ``sources``: the files ``topics`` and ``corpus`` were read from, named in the errors."""
    have_q = set(session.scalars(select(Query.qid).where(Query.campaign_id == campaign.id)))
    have_d = set(session.scalars(select(Document.docid).where(Document.campaign_id == campaign.id)))
    missing_q = sorted(set(qids) - have_q - topics.keys(), key=natural_key)
    missing_d = sorted(set(docids) - have_d - corpus.keys(), key=natural_key)
    said = {"query": ("pooled query has no topic here", "pooled queries have no topic here"),
            "document": ("pooled document is not in the corpus", "pooled documents are not in the corpus")}
    for missing, source, kind in ((missing_q, sources[0], "query"), (missing_d, sources[1], "document")):
        if missing:
            why = f"{counted(len(missing), *said[kind])} (first: {missing[0]!r})"
            raise ParseError(source, None, why) if source else JudgedError(why)
    for q in sorted(set(qids) - have_q, key=natural_key):
        t = _topic(q, topics[q])
        session.add(Query(campaign_id=campaign.id, qid=q, text=t.text, title=t.title, description=t.description,
                          narrative=t.narrative))
    session.add_all(Document(campaign_id=campaign.id, docid=d, title=corpus[d][0], text=corpus[d][1])
                    for d in sorted(set(docids) - have_d, key=natural_key))
    session.flush()


def init_campaign(session: Session, name: str | None, pairs: list[tuple[str, str]], pool_source: str,
                  pool_sha256: str, queries: dict,
                  corpus: dict[str, tuple[str, str]], scale: Scale, overlap: float, guidelines: str = "",
                  practice: list[tuple[str, str, int]] | None = None, sources: tuple[str, str] = ("", "")) -> Campaign:
    """A new campaign. ``queries``: qid -> :class:`~.inputs.Topic` (or plain text);
    ``practice``: (qid, docid, known grade) pairs every assessor judges first; ``sources``:
    the queries and corpus files, named in the errors."""
    if name is None and campaigns(session):
        raise JudgedError("this database holds a campaign already (" + ", ".join(repr(c.name) for c in campaigns(session))
                          + "): give the new one a --name (several campaigns share a database)")
    name = name or default_name(session)
    if not name or len(name) > 200:
        raise JudgedError("a campaign needs a name of 1 to 200 characters")
    if session.scalar(select(Campaign).where(Campaign.name == name)):
        raise JudgedError(f"this database already holds a campaign named {name!r} (choose another --name)")
    if not 0.0 <= overlap <= 1.0:
        raise JudgedError(f"--overlap must lie in [0, 1], got {overlap}")
    practice = practice or []
    off_scale = [p for p in practice if p[2] not in scale.values]
    if off_scale:
        raise JudgedError(f"practice answer {off_scale[0]} has a grade off the scale {sorted(scale.values)}")
    overlapping = {(q, d) for q, d, _ in practice} & set(pairs)
    if overlapping:
        raise JudgedError(f"{counted(len(overlapping), 'practice pair is', 'practice pairs are')} in the pool too "
                          f"(first: {sorted(overlapping)[0]}): "
                          "practice pairs are never exported, so keep them out of the pool")
    seed = secrets.token_hex(16)
    campaign = Campaign(name=name, scale=scale.to_dict(), evidence_required=scale.evidence_required,
                        overlap=overlap, seed=seed, pool_source=pool_source, pool_sha256=pool_sha256,
                        guidelines=guidelines)
    session.add(campaign)
    session.flush()
    _add_texts(session, campaign, [q for q, _ in pairs] + [q for q, _, _ in practice],
               [d for _, d in pairs] + [d for _, d, _ in practice], queries, corpus, sources)
    twice = overlap_pair_indices(len(pairs), overlap, seed)
    session.add_all(Pair(campaign_id=campaign.id, qid=q, docid=d, copies_wanted=2 if i in twice else 1,
                         copies_assigned=0) for i, (q, d) in enumerate(pairs))
    session.add_all(Pair(campaign_id=campaign.id, qid=q, docid=d, copies_wanted=0, copies_assigned=0,
                         practice_grade=g) for q, d, g in practice)
    session.flush()
    return campaign


def add_pool(session: Session, campaign: Campaign, pairs: list[tuple[str, str]], pool_source: str, queries: dict,
             corpus: dict[str, tuple[str, str]], sources: tuple[str, str] = ("", "")) -> dict:
    """Merge a new pool into a running campaign: pairs it does not hold yet are added (the
    same overlap share goes to two assessors), with their topics and documents; pairs it
    holds, judged or not, are left as they are. Assessors claim the new pairs as they go."""
    have = {(q, d) for q, d in session.execute(select(Pair.qid, Pair.docid).where(Pair.campaign_id == campaign.id))}
    new = [p for p in pairs if p not in have]
    _add_texts(session, campaign, [q for q, _ in new], [d for _, d in new], queries, corpus, sources)
    merges = campaign.pool_source.count("\n") + 1
    twice = overlap_pair_indices(len(new), campaign.overlap, f"{campaign.seed}:{merges}")
    session.add_all(Pair(campaign_id=campaign.id, qid=q, docid=d, copies_wanted=2 if i in twice else 1,
                         copies_assigned=0) for i, (q, d) in enumerate(new))
    campaign.pool_source = campaign.pool_source + "\n" + pool_source
    session.flush()
    return {"added": len(new), "already": len(pairs) - len(new), "overlap_pairs": len(twice),
            "queries": len({q for q, _ in new})}


def campaigns(session: Session) -> list[Campaign]:
    return list(session.scalars(select(Campaign).order_by(Campaign.id)))


def find_campaign(session: Session, name: str | None = None) -> Campaign:
    """The campaign called ``name``; without a name, the database's only campaign."""
    if name is not None:
        c = session.scalar(select(Campaign).where(Campaign.name == name))
        if c is None:
            names = [c.name for c in campaigns(session)]
            raise JudgedError(f"no campaign named {name!r} in this database (it holds: "
                              + (", ".join(repr(n) for n in names) or "none") + ")")
        return c
    found = campaigns(session)
    if not found:
        raise JudgedError("no campaign in this database: run `judged judge init` first")
    if len(found) > 1:
        raise JudgedError(f"this database holds {len(found)} campaigns ("
                          + ", ".join(repr(c.name) for c in found) + "): name one with --campaign")
    return found[0]


def get_campaign(session: Session, campaign_id: int | None = None) -> Campaign:
    """A campaign by id, or the database's only one (judged 0.1's call)."""
    if campaign_id is None:
        return find_campaign(session)
    return session.get(Campaign, campaign_id)


def add_assessor(session: Session, name: str, admin: bool = False, campaign: Campaign | None = None) -> str:
    """Create an assessor of ``campaign`` (default: the only one); returns the token (shown
    once, only its hash is stored). The token opens that campaign and no other."""
    campaign = campaign or find_campaign(session)
    if not name or len(name) > 200:
        raise JudgedError("an assessor needs a name of 1 to 200 characters")
    if session.scalar(select(Assessor).where(Assessor.campaign_id == campaign.id, Assessor.name == name)):
        raise JudgedError(f"assessor {name!r} exists already in campaign {campaign.name!r}")
    token = auth.new_token()
    session.add(Assessor(campaign_id=campaign.id, name=name, token_hash=auth.hash_token(token), is_admin=admin))
    session.flush()
    return token


def _assessor(session: Session, campaign: Campaign, name: str) -> Assessor:
    a = session.scalar(select(Assessor).where(Assessor.campaign_id == campaign.id, Assessor.name == name))
    if a is None:
        raise Refused(f"no assessor {name!r} in campaign {campaign.name!r}")
    return a


def reassign(session: Session, campaign: Campaign, source: str, target: str | None = None,
             deactivate: bool = False) -> dict:
    """Move ``source``'s remaining (open, not practice) pairs to ``target``, or, without a
    target, back to the pool for whoever claims next. A pair ``target`` holds already (its
    overlap copy) goes back to the pool instead. Their judgments so far stay theirs.
    ``deactivate``: ``source`` claims no new work afterwards and their access is revoked
    (token and browser sessions, as :func:`revoke`)."""
    a = _assessor(session, campaign, source)
    b = _assessor(session, campaign, target) if target else None
    if b is not None and b.id == a.id:
        raise Refused("reassign to someone else")
    if b is not None and not b.active:
        raise Refused(f"{b.name} is not active")
    open_ = session.scalars(select(Assignment).join(Pair).where(
        Assignment.assessor_id == a.id, Assignment.state == OPEN, Pair.practice_grade.is_(None))
        .with_for_update(of=Assignment)).all()
    held = set() if b is None else set(session.scalars(select(Assignment.pair_id).where(Assignment.assessor_id == b.id)))
    moved = released = 0
    if b is not None and any(x.pair_id not in held for x in open_):
        block = f"{b.claims:08d}"
        b.claims += 1
    for x in open_:
        if b is not None and x.pair_id not in held:
            x.assessor_id = b.id
            x.order_key = f"{block}:{x.order_key.split(':', 1)[-1]}"
            moved += 1
        else:
            x.pair.copies_assigned = Pair.copies_assigned - 1
            session.delete(x)
            released += 1
    ended = _revoke(session, a) if deactivate else 0
    session.flush()
    return {"from": a.name, "to": None if b is None else b.name, "moved": moved, "released": released,
            "deactivated": deactivate, "revoked": deactivate, "sessions_ended": ended}


def _end_sessions(session: Session, a: Assessor) -> int:
    """Delete every browser session of ``a``: their next request is refused (401)."""
    return session.execute(delete(LoginSession).where(LoginSession.assessor_id == a.id)).rowcount or 0


def _revoke(session: Session, a: Assessor) -> int:
    a.token_hash = auth.revoked_hash()
    a.active = False
    return _end_sessions(session, a)


def revoke(session: Session, campaign: Campaign, name: str) -> dict:
    """End ``name``'s access at once: their token opens nothing any more, their browser
    sessions end, their open pairs go back to the pool and they get no new work (their
    judgments stay theirs). :func:`rotate` gives them a new token."""
    got = reassign(session, campaign, name, None, deactivate=True)
    return {"assessor": got["from"], "released": got["released"], "sessions_ended": got["sessions_ended"]}


def rotate(session: Session, campaign: Campaign, name: str) -> tuple[str, dict]:
    """A new token for ``name`` (returned, shown once); the old one stops working and their
    browser sessions end at once. A revoked or deactivated assessor is active again."""
    a = _assessor(session, campaign, name)
    token = auth.new_token()
    was_revoked = auth.is_revoked(a)
    a.token_hash = auth.hash_token(token)
    reactivated = not a.active
    a.active = True
    ended = _end_sessions(session, a)
    session.flush()
    return token, {"assessor": a.name, "sessions_ended": ended, "was_revoked": was_revoked,
                   "reactivated": reactivated}


def purge_sessions(session: Session) -> int:
    """Delete the browser sessions past their expiry; how many."""
    return session.execute(delete(LoginSession).where(LoginSession.expires_at <= utcnow())).rowcount or 0


# --- judging ------------------------------------------------------------------------------

def _pair_body(p: Pair) -> dict:
    q = p.query
    body = {"qid": p.qid, "docid": p.docid, "query": q.text, "title": p.document.title, "text": p.document.text,
            "topic": {"title": q.title, "description": q.description, "narrative": q.narrative}}
    if p.practice_grade is not None:
        body["practice"] = True
    return body


@dataclass(frozen=True)
class CampaignInfo:
    """What a request needs of the campaign row (fixed at ``init``)."""
    id: int
    name: str
    grades: tuple[int, ...]
    evidence_required: bool
    seed: str
    practice_pairs: int


def campaign_info(database, campaign_id: int | None = None) -> CampaignInfo:
    """A campaign of a :class:`~.db.Database`, read once and kept on it."""
    info = database.cache.get(("campaign", campaign_id))
    if info is None:
        with database.read() as s:
            c = get_campaign(s, campaign_id)
            practice = s.scalar(select(func.count()).select_from(Pair).where(
                Pair.campaign_id == c.id, Pair.practice_grade.is_not(None)))
            info = CampaignInfo(c.id, c.name, tuple(sorted(g["value"] for g in c.scale["grade"])),
                                c.evidence_required, c.seed, practice)
        database.cache[("campaign", campaign_id)] = info
    return info


def serve_next(database, who) -> dict | None:
    """The next pair for this assessor (``/api/next``), or None when nothing is left. A read
    transaction when a pair is open; a write only to claim the next query (or hand out the
    practice round). Raises :class:`~.assign.PracticeFinished` between practice and work."""
    with database.read() as s:
        a = open_assignment(s, who)
        if a is not None:
            return _pair_body(a.pair)
    info = campaign_info(database, who.campaign_id)
    try:
        with database.write() as s:
            assessor = s.get(Assessor, who.id)
            claim = None
            if campaign_order(database, info.id) != SHUFFLED:     # one pair at a time, in a policy's order
                def claim():
                    return claim_next(s, database, assessor, info.grades[-1])
            a = next_assignment(s, assessor, info.seed, info.practice_pairs, claim)
            return None if a is None else _pair_body(a.pair)
    except IntegrityError:
        # the same assessor's other request (a second tab) handed out the same work at the
        # same moment (PostgreSQL): theirs stands, serve what it gave
        with database.read() as s:
            a = open_assignment(s, who)
            return None if a is None else _pair_body(a.pair)


def judgment_body(j: Judgment, assessor: str | None = None, pair: Pair | None = None) -> dict:
    pair = pair or j.pair
    body = {"id": j.id, "kind": j.kind, "qid": pair.qid, "docid": pair.docid, "grade": j.grade,
            "evidence": j.evidence, "request_id": j.request_id, "revision": j.revision,
            "assessor": assessor or j.assessor.name, "time": iso(j.created_at)}
    if j.comment:
        body["comment"] = j.comment
    if j.flag:
        body["flag"] = j.flag
    return body


def _replay(session: Session, who, request_id: str) -> Judgment | None:
    return session.scalar(select(Judgment).where(Judgment.assessor_id == who.id, Judgment.request_id == request_id))


def _check_replay(old: Judgment, kind: str, qid: str | None = None, docid: str | None = None, grade=None,
                  evidence: str = "", comment: str = "", flag: str | None = None) -> dict:
    same = old.kind == kind and (qid is None or (old.pair.qid, old.pair.docid, old.grade, old.evidence,
                                                 old.comment or "", old.flag)
                                 == (qid, docid, grade, evidence, comment, flag))
    if not same:
        raise Refused(f"request_id {old.request_id!r} was used for a different request")
    return judgment_body(old)


def _pair(session: Session, campaign_id: int, qid: str, docid: str) -> Pair:
    pair = session.scalar(select(Pair).where(Pair.campaign_id == campaign_id, Pair.qid == qid, Pair.docid == docid))
    if pair is None:
        raise Refused(f"({qid}, {docid}) is not in this campaign's pool")
    return pair


def _assignment(session: Session, who, qid: str, docid: str) -> Assignment:
    a = session.scalar(select(Assignment).join(Pair).where(
        Assignment.assessor_id == who.id, Pair.qid == qid, Pair.docid == docid).with_for_update(of=Assignment))
    if a is None:
        raise Refused(f"({qid}, {docid}) is not assigned to {who.name}")
    return a


def _check_grade(campaign: CampaignInfo, grade: int, evidence: str) -> None:
    if grade not in campaign.grades:
        raise Refused(f"grade {grade} is off the scale {list(campaign.grades)}")
    if campaign.evidence_required and grade > campaign.grades[0] and not evidence.strip():
        raise Refused(f"grade {grade} needs evidence: a quoted passage or a note")


def record(session: Session, who, campaign: CampaignInfo, kind: str, request_id: str,
           qid: str | None = None, docid: str | None = None, grade: int | None = None,
           evidence: str = "", comment: str = "", flag: str | None = None) -> tuple[dict, bool]:
    """Append one event for assessor ``who`` (id, name, is_admin); returns (body, created).
    A replayed request_id returns the stored event with created=False. Raises
    :class:`Refused` (nothing stored) when the request is off the scale, for a pair not
    assigned, missing required evidence, flagged with an unknown flag, or has nothing to undo."""
    old = _replay(session, who, request_id)
    if old is not None:
        return _check_replay(old, kind, qid, docid, grade, evidence, comment, flag), False
    if flag is not None and flag not in FLAGS:
        raise Refused(f"flag {flag!r} is not one of {list(FLAGS)}")
    now = utcnow()
    elapsed = None
    if kind == ADJUDICATE:
        if not who.is_admin:
            raise Refused("only an admin adjudicates")
        _check_grade(campaign, grade, evidence)
        pair = _pair(session, campaign.id, qid, docid)
        if pair.practice_grade is not None:
            raise Refused("a practice pair has a known answer: nothing to adjudicate")
    elif kind == UNDO:
        last = session.scalar(
            select(Judgment).join(Assignment, (Assignment.pair_id == Judgment.pair_id)
                                  & (Assignment.assessor_id == Judgment.assessor_id))
            .where(Judgment.assessor_id == who.id, Judgment.kind.in_((GRADE, SKIP)), Assignment.state != OPEN)
            .order_by(Judgment.id.desc()).limit(1))
        if last is None:
            raise Refused("nothing to undo")
        pair = last.pair
        _assignment(session, who, pair.qid, pair.docid).state = OPEN
    else:
        a = _assignment(session, who, qid, docid)
        if kind == GRADE:
            _check_grade(campaign, grade, evidence)
        a.state = GRADED if kind == GRADE else SKIPPED
        pair = a.pair
    # one look at this assessor's history: the time of their previous event (time per
    # judgment = the gap since then) and how often they did this to this pair (the revision)
    previous, done_before = session.execute(
        select(func.max(Judgment.created_at),
               func.count(case(((Judgment.pair_id == pair.id) & (Judgment.kind == kind), 1))))
        .where(Judgment.assessor_id == who.id)).one()
    if kind == GRADE and previous is not None and now - previous <= MAX_GAP:
        elapsed = int((now - previous).total_seconds() * 1000)   # a longer gap is a break, not a judgment
    revision = 1 + (done_before or 0)
    labelled = kind in (GRADE, ADJUDICATE)
    j = Judgment(assessor_id=who.id, pair_id=pair.id, kind=kind, grade=grade if labelled else None,
                 evidence=evidence if labelled else "", comment=comment if kind != UNDO else "",
                 flag=flag if kind != UNDO else None, request_id=request_id,
                 revision=revision, elapsed_ms=elapsed, created_at=now)
    session.add(j)
    session.flush()
    return judgment_body(j, who.name, pair), True


def record_once(database, who, kind: str, request_id: str, **kw) -> tuple[dict, bool]:
    """:func:`record` in its own write transaction of a :class:`~.db.Database`. A concurrent
    replay that slips past record's own check (PostgreSQL: two transactions at once) hits the
    unique (assessor, request_id) constraint and is answered from the stored row."""
    campaign = campaign_info(database, who.campaign_id)
    try:
        with database.write() as s:
            return record(s, who, campaign, kind, request_id, **kw)
    except IntegrityError:
        with database.read() as s:
            old = _replay(s, who, request_id)
            if old is None:
                raise
            return _check_replay(old, kind, **kw), False


def _real(q):
    """Restrict a query joined with Pair to real (not practice) pairs."""
    return q.where(Pair.practice_grade.is_(None))


def progress(session: Session, assessor) -> dict:
    """An assessor's progress. ``assigned``/``graded``/``skipped``/``open``: their claimed
    real pairs by state. ``share``: what they can expect to judge in all: what they hold plus
    an equal part of the copies nobody claimed yet (split over the active assessors who
    judge, and never two copies of one pair; an admin's share is what they claimed); ``left`` = share - graded - skipped. ``median_seconds``: their median time per
    judgment (the gap since their previous event, which is robust to breaks);
    ``eta_seconds`` = left x median_seconds."""
    rows = dict(session.execute(_real(select(Assignment.state, func.count()).join(Pair)
                                      .where(Assignment.assessor_id == assessor.id)).group_by(Assignment.state)).all())
    out = {"assigned": sum(rows.values()), "graded": rows.get(GRADED, 0), "skipped": rows.get(SKIPPED, 0),
           "open": rows.get(OPEN, 0)}
    a = assessor if isinstance(assessor, Assessor) else session.get(Assessor, assessor.id)
    mine = select(Assignment.pair_id).where(Assignment.assessor_id == a.id)
    open_to_me = ((Pair.campaign_id == a.campaign_id) & Pair.practice_grade.is_(None)
                  & (Pair.copies_assigned < Pair.copies_wanted))
    unclaimed = session.scalar(select(func.coalesce(func.sum(Pair.copies_wanted - Pair.copies_assigned), 0))
                               .where(open_to_me))
    claimable = session.scalar(select(func.count()).select_from(Pair).where(open_to_me, Pair.id.not_in(mine)))
    judges = session.scalar(select(func.count()).select_from(Assessor).where(
        Assessor.campaign_id == a.campaign_id, Assessor.active, Assessor.is_admin.is_(False))) or 1
    # an equal part of what nobody claimed yet, but never two copies of one pair
    share = out["assigned"] + (min(claimable, math.ceil(unclaimed / judges)) if a.active and not a.is_admin else 0)
    ms = _median(session.scalars(_real(select(Judgment.elapsed_ms).join(Pair).where(
        Judgment.assessor_id == a.id, Judgment.kind == GRADE, Judgment.elapsed_ms.is_not(None)))))
    left = share - out["graded"] - out["skipped"]
    out.update(share=share, left=left, median_seconds=None if ms is None else round(ms / 1000, 1),
               eta_seconds=None if ms is None else round(left * ms / 1000))
    practice = session.execute(select(func.count(), func.count(case((Assignment.state != OPEN, 1)))).join(Pair).where(
        Assignment.assessor_id == a.id, Pair.practice_grade.is_not(None))).one()
    if practice[0]:
        out["practice"] = {"pairs": practice[0], "done": practice[1], "finished": a.practice_done_at is not None}
    return out


def practice_report(session: Session, who) -> dict:
    """The assessor's practice round against its known answers: each pair with their grade
    and the answer, exact agreement and Cohen's kappa (unweighted, as in :func:`status`)."""
    a = session.get(Assessor, who.id)
    latest = {}
    for j in session.scalars(select(Judgment).join(Pair).where(
            Judgment.assessor_id == a.id, Pair.practice_grade.is_not(None)).order_by(Judgment.id)):
        if j.kind == GRADE:
            latest[j.pair_id] = j
        else:                       # a skip or an undo: no grade stands
            latest.pop(j.pair_id, None)
    pairs = session.scalars(select(Pair).where(Pair.campaign_id == a.campaign_id, Pair.practice_grade.is_not(None))
                            .order_by(Pair.qid, Pair.docid)).all()
    items = [{"qid": p.qid, "docid": p.docid, "title": p.document.title, "answer": p.practice_grade,
              "grade": None if latest.get(p.id) is None else latest[p.id].grade} for p in pairs]
    items.sort(key=lambda i: (natural_key(i["qid"]), natural_key(i["docid"])))
    done = [i for i in items if i["grade"] is not None]
    agreed = sum(i["grade"] == i["answer"] for i in done)
    return json_safe({"pairs": len(items), "graded": len(done), "agreed": agreed,
                      "agreement": agreed / len(done) if done else float("nan"),
                      "cohen_kappa": cohen_kappa([i["answer"] for i in done], [i["grade"] for i in done])
                      if done else float("nan"),
                      "finished": a.practice_done_at is not None, "items": items})


def start_after_practice(session: Session, who) -> dict:
    """The assessor read their practice result and starts the real work."""
    report = practice_report(session, who)
    if report["graded"] < report["pairs"]:
        raise Refused(f"grade the {counted(report['pairs'] - report['graded'], 'practice pair')} left first")
    a = session.get(Assessor, who.id)
    if a.practice_done_at is None:
        a.practice_done_at = utcnow()
    return practice_report(session, who)


def history(session: Session, assessor, qid: str, docid: str) -> list[dict]:
    rows = session.scalars(select(Judgment).join(Pair).where(Judgment.assessor_id == assessor.id, Pair.qid == qid,
                                                             Pair.docid == docid).order_by(Judgment.id)).all()
    return [judgment_body(j) for j in rows]


def pair_history(session: Session, campaign_id: int, qid: str, docid: str) -> list[dict]:
    """Every event of every assessor (and adjudicator) on a pair, oldest first."""
    pair = _pair(session, campaign_id, qid, docid)
    return [judgment_body(j) for j in session.scalars(select(Judgment).where(Judgment.pair_id == pair.id)
                                                      .order_by(Judgment.id))]


# --- reading the labels back ----------------------------------------------------------------

@dataclass
class PairLabels:
    pair: Pair
    labels: list[Judgment] = field(default_factory=list)      # current grade per assessor, in time order
    adjudication: Judgment | None = None
    events: list[Judgment] = field(default_factory=list)      # the pair's whole history
    skips: list[Judgment] = field(default_factory=list)       # current skips (they may carry a flag)

    @property
    def disagree(self) -> bool:
        return len({j.grade for j in self.labels}) > 1

    def final(self, disagreement: str = "skip") -> tuple[Judgment, int] | None:
        """The judgment that gives the pair its exported label and that label, or None when
        it has none: the adjudication if any, else the assessors' common grade; an
        unadjudicated disagreement has none under ``skip`` and the ``min``/``max`` of the
        grades given otherwise. The one rule of the export and of "labelled" in the status."""
        if self.adjudication is not None:
            return self.adjudication, self.adjudication.grade
        if not self.labels or (self.disagree and disagreement == "skip"):
            return None
        pick = min if disagreement == "min" else max
        j = pick(self.labels, key=lambda x: x.grade) if self.disagree else self.labels[0]
        return j, j.grade


def current_labels(session: Session, campaign_id: int | None = None) -> dict[int, PairLabels]:
    """pair id -> its current labels, folded from the append-only history (real pairs of one
    campaign, in natural (qid, docid) order)."""
    campaign_id = campaign_id if campaign_id is not None else find_campaign(session).id
    pairs = session.scalars(select(Pair).where(Pair.campaign_id == campaign_id, Pair.practice_grade.is_(None))).all()
    out = {p.id: PairLabels(p) for p in sorted(pairs, key=lambda p: (natural_key(p.qid), natural_key(p.docid)))}
    latest: dict[tuple[int, int], Judgment] = {}
    for j in session.scalars(select(Judgment).join(Pair).where(Pair.campaign_id == campaign_id,
                                                               Pair.practice_grade.is_(None)).order_by(Judgment.id)):
        out[j.pair_id].events.append(j)
        if j.kind == ADJUDICATE:
            out[j.pair_id].adjudication = j
        elif j.kind == UNDO:
            latest.pop((j.assessor_id, j.pair_id), None)
        else:
            latest[(j.assessor_id, j.pair_id)] = j
    for (_, pair_id), j in sorted(latest.items(), key=lambda kv: kv[1].id):
        (out[pair_id].labels if j.kind == GRADE else out[pair_id].skips).append(j)
    return out


def _event(j: Judgment) -> dict:
    row = {"assessor": j.assessor.name, "kind": j.kind, "grade": j.grade, "time": iso(j.created_at),
           "evidence": j.evidence}
    if j.comment:
        row["comment"] = j.comment
    if j.flag:
        row["flag"] = j.flag
    return row


def _prov(pl: PairLabels, j: Judgment, grade: int, source: str, others: list[Judgment]) -> dict:
    row = {"qid": j.pair.qid, "docid": j.pair.docid, "grade": grade, "assessor": j.assessor.name,
           "time": iso(j.created_at), "evidence": j.evidence, "source": source}
    if j.comment:
        row["comment"] = j.comment
    if j.flag:
        row["flag"] = j.flag
    if others:
        row["others"] = [{"assessor": o.assessor.name, "grade": o.grade, "time": iso(o.created_at),
                          "evidence": o.evidence} for o in others]
    if pl.adjudication is not None:     # how the final label came about, every step
        row["history"] = [_event(e) for e in pl.events]
    return row


def export(session: Session, disagreement: str = "skip", source: str = "judged judge",
           campaign_id: int | None = None) -> tuple[list[str], list[dict], list[PairLabels]]:
    """TREC qrels lines ``qid 0 docid grade``, their provenance rows, and the unresolved
    disagreements. A pair's grade: the adjudication if any, else its assessors' common grade;
    an unadjudicated disagreement is left out (``skip``, the default) or exported at the
    ``min``/``max`` of the grades given. Practice pairs are never exported."""
    if disagreement not in DISAGREEMENT_POLICIES:
        raise JudgedError(f"disagreement policy must be one of {DISAGREEMENT_POLICIES}")
    lines, prov, unresolved = [], [], []
    for pl in current_labels(session, campaign_id).values():
        if pl.disagree and pl.adjudication is None:
            unresolved.append(pl)
        found = pl.final(disagreement)
        if found is None:
            continue
        j, grade = found
        others = pl.labels if j is pl.adjudication else [o for o in pl.labels if o is not j]
        lines.append(f"{pl.pair.qid} 0 {pl.pair.docid} {grade}")
        prov.append(_prov(pl, j, grade, source, others))
    return lines, prov, unresolved


NOTES_COLUMNS = ("qid", "docid", "assessor", "kind", "grade", "flag", "comment", "time")


def notes(session: Session, campaign_id: int | None = None) -> list[dict]:
    """Every current grade or skip that carries a flag or a comment, in natural order (the
    export's ``.notes.tsv`` side file)."""
    out = []
    for pl in current_labels(session, campaign_id).values():
        for j in sorted(pl.labels + pl.skips, key=lambda j: j.id):
            if j.flag or j.comment:
                out.append({"qid": pl.pair.qid, "docid": pl.pair.docid, "assessor": j.assessor.name, "kind": j.kind,
                            "grade": j.grade, "flag": j.flag or "", "comment": j.comment or "",
                            "time": iso(j.created_at)})
    return out


def status(session: Session, campaign_id: int | None = None) -> dict:
    """Progress per query and assessor, time per judgment, estimated time to finish,
    practice agreement, inter-assessor agreement, disagreements and flags. ``labelled``:
    the pairs with a label the export writes by default (:meth:`PairLabels.final`: an
    unadjudicated disagreement is not one); ``open_disagreements``: those waiting for an
    admin's decision."""
    campaign = get_campaign(session, campaign_id)
    labels = current_labels(session, campaign.id)
    per_query: dict[str, dict] = {}
    for pl in labels.values():
        q = per_query.setdefault(pl.pair.qid, {"qid": pl.pair.qid, "pairs": 0, "labelled": 0, "disagreements": 0,
                                               "copies": 0, "judged": 0})
        q["pairs"] += 1
        q["labelled"] += pl.final() is not None
        q["disagreements"] += pl.disagree and pl.adjudication is None
        q["copies"] += pl.pair.copies_wanted
        q["judged"] += len(pl.labels) + len(pl.skips)
    per_assessor, judges = [], 0
    for a in session.scalars(select(Assessor).where(Assessor.campaign_id == campaign.id).order_by(Assessor.name)):
        p = progress(session, a)
        judges += a.active and not a.is_admin
        row = {"assessor": a.name, "admin": a.is_admin, "active": a.active, "revoked": auth.is_revoked(a), **p}
        if "practice" in p:
            rep = practice_report(session, a)
            row["practice"] = {**p["practice"], "agreed": rep["agreed"], "agreement": rep["agreement"],
                               "cohen_kappa": rep["cohen_kappa"]}
        per_assessor.append(row)
    all_ms = session.scalars(_real(select(Judgment.elapsed_ms).join(Pair).where(
        Pair.campaign_id == campaign.id, Judgment.kind == GRADE, Judgment.elapsed_ms.is_not(None)))).all()
    double = [pl for pl in labels.values() if len(pl.labels) >= 2]
    first = [pl.labels[0].grade for pl in double]
    second = [pl.labels[1].grade for pl in double]
    units = [[j.grade for j in pl.labels] for pl in double]
    width = max((len(u) for u in units), default=2)
    matrix = [u + [None] * (width - len(u)) for u in units]
    agreement = {"pairs": len(double),
                 "cohen_kappa": cohen_kappa(first, second) if double else float("nan"),
                 "krippendorff_alpha_ordinal": krippendorff_alpha(matrix, "ordinal") if double else float("nan"),
                 "convention": "kappa: unweighted, first vs second assessor of each doubly judged pair; "
                               "alpha: ordinal, all assessors"}
    disagreements = [{"qid": pl.pair.qid, "docid": pl.pair.docid,
                      "labels": [{"assessor": j.assessor.name, "grade": j.grade, "evidence": j.evidence,
                                  **({"comment": j.comment} if j.comment else {}),
                                  **({"flag": j.flag} if j.flag else {})} for j in pl.labels],
                      "adjudicated": None if pl.adjudication is None else pl.adjudication.grade,
                      "history": [_event(e) for e in pl.events]}
                     for pl in double if pl.disagree]
    copies = sum(pl.pair.copies_wanted for pl in labels.values())
    judged = sum(len(pl.labels) + len(pl.skips) for pl in labels.values())
    median_s = statistics.median(all_ms) / 1000 if all_ms else None
    remaining = copies - judged
    eta = None if median_s is None else round(remaining * median_s / max(1, judges))
    total = len(labels)
    return {"campaign": campaign.name, "pairs": total,
            "overlap_pairs": sum(pl.pair.copies_wanted > 1 for pl in labels.values()),
            "labelled": sum(pl.final() is not None for pl in labels.values()),
            "open_disagreements": sum(pl.disagree and pl.adjudication is None for pl in labels.values()),
            "judgments_wanted": copies, "judgments_done": judged, "judgments_left": remaining,
            "median_seconds": None if median_s is None else round(median_s, 1), "active_assessors": judges,
            "eta_seconds": eta,
            "eta_method": "judgments left x the campaign's median seconds per judgment / active assessors "
                          "(not admins), who judge in parallel",
            "queries": sorted(per_query.values(), key=lambda q: natural_key(q["qid"])), "assessors": per_assessor,
            "agreement": agreement, "disagreements": disagreements, "flags": notes(session, campaign.id)}
