"""A campaign's operations, shared by the JSON API, the pages and the CLI.

Every write appends a :class:`~.models.Judgment` row; the current label of a pair is read
back from that history (latest grade, unless a later skip or undo by the same assessor;
an admin's adjudication, when there is one, decides the pair).
"""

from __future__ import annotations

import math
import secrets
import statistics
from dataclasses import dataclass, field
from datetime import datetime

from sqlalchemy import case, func, select
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

from ..errors import JudgedError
from ..naturalsort import natural_key
from . import auth
from .agreement import cohen_kappa, krippendorff_alpha
from .assign import next_assignment, open_assignment, overlap_pair_indices
from .inputs import Pool, Scale
from .models import (ADJUDICATE, GRADE, GRADED, OPEN, SKIP, SKIPPED, UNDO, Assessor, Assignment, Campaign,
                     Document, Judgment, Pair, Query, utcnow)

DISAGREEMENT_POLICIES = ("skip", "min", "max")  # export of an unadjudicated disagreement


class Refused(JudgedError):
    """A request the campaign refuses (the API answers 422 and stores nothing)."""


def iso(t: datetime | None) -> str | None:
    return None if t is None else t.isoformat(timespec="milliseconds") + "Z"


def json_safe(obj):
    """NaN (an undefined agreement) -> None, so the result is valid JSON."""
    if isinstance(obj, float) and math.isnan(obj):
        return None
    if isinstance(obj, dict):
        return {k: json_safe(v) for k, v in obj.items()}
    if isinstance(obj, list):
        return [json_safe(v) for v in obj]
    return obj


# --- set-up -------------------------------------------------------------------------------

def init_campaign(session: Session, name: str, pool: Pool, pool_source: str, queries: dict[str, str],
                  corpus: dict[str, tuple[str, str]], scale: Scale, overlap: float) -> Campaign:
    if session.scalar(select(func.count()).select_from(Campaign)):
        raise JudgedError("this database already holds a campaign (one campaign per database)")
    if not 0.0 <= overlap <= 1.0:
        raise JudgedError(f"--overlap must lie in [0, 1], got {overlap}")
    missing_q = sorted({q for q, _ in pool.pairs} - queries.keys())
    missing_d = sorted({d for _, d in pool.pairs} - corpus.keys())
    if missing_q:
        raise JudgedError(f"{len(missing_q)} pooled qids have no query text (first: {missing_q[0]!r})")
    if missing_d:
        raise JudgedError(f"{len(missing_d)} pooled docids are not in the corpus (first: {missing_d[0]!r})")
    seed = secrets.token_hex(16)
    campaign = Campaign(name=name, scale=scale.to_dict(), evidence_required=scale.evidence_required,
                        overlap=overlap, seed=seed, pool_source=pool_source, pool_sha256=pool.sha256)
    session.add(campaign)
    session.add_all(Query(qid=q, text=queries[q]) for q in sorted({q for q, _ in pool.pairs}))
    session.add_all(Document(docid=d, title=corpus[d][0], text=corpus[d][1]) for d in sorted({d for _, d in pool.pairs}))
    session.flush()
    twice = overlap_pair_indices(len(pool.pairs), overlap, seed)
    session.add_all(Pair(qid=q, docid=d, copies_wanted=2 if i in twice else 1, copies_assigned=0)
                    for i, (q, d) in enumerate(pool.pairs))
    return campaign


def get_campaign(session: Session) -> Campaign:
    campaign = session.scalar(select(Campaign).limit(1))
    if campaign is None:
        raise JudgedError("no campaign in this database: run `judged judge init` first")
    return campaign


def add_assessor(session: Session, name: str, admin: bool = False) -> str:
    """Create an assessor; returns the token (shown once, only its hash is stored)."""
    if not name or len(name) > 200:
        raise JudgedError("an assessor needs a name of 1 to 200 characters")
    if session.scalar(select(Assessor).where(Assessor.name == name)):
        raise JudgedError(f"assessor {name!r} exists already")
    token = auth.new_token()
    session.add(Assessor(name=name, token_hash=auth.hash_token(token), is_admin=admin))
    return token


# --- judging ------------------------------------------------------------------------------

def _pair_body(p: Pair) -> dict:
    return {"qid": p.qid, "docid": p.docid, "query": p.query.text, "title": p.document.title, "text": p.document.text}


@dataclass(frozen=True)
class CampaignInfo:
    """What a request needs of the campaign row (which never changes after ``init``)."""
    name: str
    grades: tuple[int, ...]
    evidence_required: bool
    seed: str


def campaign_info(database) -> CampaignInfo:
    """The campaign of a :class:`~.db.Database`, read once and kept on it."""
    info = database.cache.get("campaign")
    if info is None:
        with database.read() as s:
            c = get_campaign(s)
            info = CampaignInfo(c.name, tuple(sorted(g["value"] for g in c.scale["grade"])), c.evidence_required, c.seed)
        database.cache["campaign"] = info
    return info


def serve_next(database, who) -> dict | None:
    """The next pair for this assessor (``/api/next``), or None when nothing is left. A read
    transaction when a pair is open; a write only to claim the next query."""
    with database.read() as s:
        a = open_assignment(s, who)
        if a is not None:
            return _pair_body(a.pair)
    from .ordering import SHUFFLED, campaign_order, claim_next

    with database.write() as s:
        assessor = s.get(Assessor, who.id)
        if campaign_order(database) == SHUFFLED:
            a = next_assignment(s, assessor, campaign_info(database).seed)
        else:
            a = open_assignment(s, assessor)
            if a is None and claim_next(s, database, assessor):
                a = open_assignment(s, assessor)
        return None if a is None else _pair_body(a.pair)


def judgment_body(j: Judgment, assessor: str | None = None, pair: Pair | None = None) -> dict:
    pair = pair or j.pair
    return {"id": j.id, "kind": j.kind, "qid": pair.qid, "docid": pair.docid, "grade": j.grade,
            "evidence": j.evidence, "request_id": j.request_id, "revision": j.revision,
            "assessor": assessor or j.assessor.name, "time": iso(j.created_at)}


def _replay(session: Session, who, request_id: str) -> Judgment | None:
    return session.scalar(select(Judgment).where(Judgment.assessor_id == who.id, Judgment.request_id == request_id))


def _check_replay(old: Judgment, kind: str, qid: str | None = None, docid: str | None = None, grade=None,
                  evidence: str = "") -> dict:
    same = old.kind == kind and (qid is None or (old.pair.qid, old.pair.docid, old.grade, old.evidence)
                                 == (qid, docid, grade, evidence))
    if not same:
        raise Refused(f"request_id {old.request_id!r} was used for a different request")
    return judgment_body(old)


def _pair(session: Session, qid: str, docid: str) -> Pair:
    pair = session.scalar(select(Pair).where(Pair.qid == qid, Pair.docid == docid))
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
           evidence: str = "") -> tuple[dict, bool]:
    """Append one event for assessor ``who`` (id, name, is_admin); returns (body, created).
    A replayed request_id returns the stored event with created=False. Raises
    :class:`Refused` (nothing stored) when the request is off the scale, for a pair not
    assigned, missing required evidence, or has nothing to undo."""
    old = _replay(session, who, request_id)
    if old is not None:
        return _check_replay(old, kind, qid, docid, grade, evidence), False
    now = utcnow()
    elapsed = None
    if kind == ADJUDICATE:
        if not who.is_admin:
            raise Refused("only an admin adjudicates")
        _check_grade(campaign, grade, evidence)
        pair = _pair(session, qid, docid)
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
    if kind == GRADE and previous is not None:
        elapsed = int((now - previous).total_seconds() * 1000)
    revision = 1 + (done_before or 0)
    j = Judgment(assessor_id=who.id, pair_id=pair.id, kind=kind, grade=grade if kind in (GRADE, ADJUDICATE) else None,
                 evidence=evidence if kind in (GRADE, ADJUDICATE) else "", request_id=request_id,
                 revision=revision, elapsed_ms=elapsed, created_at=now)
    session.add(j)
    session.flush()
    return judgment_body(j, who.name, pair), True


def record_once(database, who, kind: str, request_id: str, **kw) -> tuple[dict, bool]:
    """:func:`record` in its own write transaction of a :class:`~.db.Database`. A concurrent
    replay that slips past record's own check (PostgreSQL: two transactions at once) hits the
    unique (assessor, request_id) constraint and is answered from the stored row."""
    campaign = campaign_info(database)
    try:
        with database.write() as s:
            return record(s, who, campaign, kind, request_id, **kw)
    except IntegrityError:
        with database.read() as s:
            old = _replay(s, who, request_id)
            if old is None:
                raise
            return _check_replay(old, kind, **kw), False


def progress(session: Session, assessor) -> dict:
    rows = dict(session.execute(select(Assignment.state, func.count()).where(Assignment.assessor_id == assessor.id)
                                .group_by(Assignment.state)).all())
    return {"assigned": sum(rows.values()), "graded": rows.get(GRADED, 0), "skipped": rows.get(SKIPPED, 0),
            "open": rows.get(OPEN, 0)}


def history(session: Session, assessor, qid: str, docid: str) -> list[dict]:
    rows = session.scalars(select(Judgment).join(Pair).where(Judgment.assessor_id == assessor.id, Pair.qid == qid,
                                                             Pair.docid == docid).order_by(Judgment.id)).all()
    return [judgment_body(j) for j in rows]


# --- reading the labels back ----------------------------------------------------------------

@dataclass
class PairLabels:
    pair: Pair
    labels: list[Judgment] = field(default_factory=list)      # current grade per assessor, in time order
    adjudication: Judgment | None = None

    @property
    def disagree(self) -> bool:
        return len({j.grade for j in self.labels}) > 1


def current_labels(session: Session) -> dict[int, PairLabels]:
    """pair id -> its current labels, folded from the append-only history."""
    out = {p.id: PairLabels(p) for p in session.scalars(select(Pair).order_by(Pair.qid, Pair.docid))}
    latest: dict[tuple[int, int], Judgment] = {}
    for j in session.scalars(select(Judgment).order_by(Judgment.id)):
        if j.kind == ADJUDICATE:
            out[j.pair_id].adjudication = j
        elif j.kind == UNDO:
            latest.pop((j.assessor_id, j.pair_id), None)
        else:
            latest[(j.assessor_id, j.pair_id)] = j
    for (_, pair_id), j in sorted(latest.items(), key=lambda kv: kv[1].id):
        if j.kind == GRADE:
            out[pair_id].labels.append(j)
    return out


def _prov(j: Judgment, grade: int, source: str, others: list[Judgment]) -> dict:
    row = {"qid": j.pair.qid, "docid": j.pair.docid, "grade": grade, "assessor": j.assessor.name,
           "time": iso(j.created_at), "evidence": j.evidence, "source": source}
    if others:
        row["others"] = [{"assessor": o.assessor.name, "grade": o.grade, "time": iso(o.created_at),
                          "evidence": o.evidence} for o in others]
    return row


def export(session: Session, disagreement: str = "skip", source: str = "judged judge") -> tuple[list[str], list[dict], list[PairLabels]]:
    """TREC qrels lines ``qid 0 docid grade``, their provenance rows, and the unresolved
    disagreements. A pair's grade: the adjudication if any, else its assessors' common grade;
    an unadjudicated disagreement is left out (``skip``, the default) or exported at the
    ``min``/``max`` of the grades given."""
    if disagreement not in DISAGREEMENT_POLICIES:
        raise JudgedError(f"disagreement policy must be one of {DISAGREEMENT_POLICIES}")
    lines, prov, unresolved = [], [], []
    for pl in current_labels(session).values():
        if pl.adjudication is not None:
            j, grade, others = pl.adjudication, pl.adjudication.grade, pl.labels
        elif not pl.labels:
            continue
        elif pl.disagree and disagreement == "skip":
            unresolved.append(pl)
            continue
        else:
            pick = min if disagreement == "min" else max
            j = pick(pl.labels, key=lambda x: x.grade) if pl.disagree else pl.labels[0]
            grade, others = j.grade, [o for o in pl.labels if o is not j]
            if pl.disagree:
                unresolved.append(pl)
        lines.append(f"{pl.pair.qid} 0 {pl.pair.docid} {grade}")
        prov.append(_prov(j, grade, source, others))
    return lines, prov, unresolved


def status(session: Session) -> dict:
    """Progress per query and assessor, time per judgment, agreement and disagreements."""
    campaign = get_campaign(session)
    labels = current_labels(session)
    per_query: dict[str, dict] = {}
    for pl in labels.values():
        q = per_query.setdefault(pl.pair.qid, {"qid": pl.pair.qid, "pairs": 0, "labelled": 0, "disagreements": 0})
        q["pairs"] += 1
        q["labelled"] += bool(pl.labels or pl.adjudication)
        q["disagreements"] += pl.disagree and pl.adjudication is None
    per_assessor = []
    for a in session.scalars(select(Assessor).order_by(Assessor.name)):
        p = progress(session, a)
        ms = session.scalars(select(Judgment.elapsed_ms).where(Judgment.assessor_id == a.id, Judgment.kind == GRADE,
                                                               Judgment.elapsed_ms.is_not(None))).all()
        per_assessor.append({"assessor": a.name, "admin": a.is_admin, **p,
                             "median_seconds": round(statistics.median(ms) / 1000, 1) if ms else None})
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
                      "labels": [{"assessor": j.assessor.name, "grade": j.grade, "evidence": j.evidence} for j in pl.labels],
                      "adjudicated": None if pl.adjudication is None else pl.adjudication.grade}
                     for pl in sorted(double, key=lambda pl: (natural_key(pl.pair.qid), natural_key(pl.pair.docid)))
                     if pl.disagree]
    total = len(labels)
    return {"campaign": campaign.name, "pairs": total,
            "overlap_pairs": sum(pl.pair.copies_wanted > 1 for pl in labels.values()),
            "labelled": sum(bool(pl.labels or pl.adjudication) for pl in labels.values()),
            "queries": sorted(per_query.values(), key=lambda q: natural_key(q["qid"])), "assessors": per_assessor,
            "agreement": agreement, "disagreements": disagreements}
