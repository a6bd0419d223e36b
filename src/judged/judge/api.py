"""The JSON API (``/api/...``): an assessor's next pair, judgments, skips, undo, progress,
history and the practice round; the admins' adjudications, pair histories, reassignment,
export and status. State changes only by POST (see :mod:`.app`)."""

from __future__ import annotations

from typing import Annotated, Literal

from fastapi import APIRouter, HTTPException, Query, Request
from fastapi.responses import JSONResponse, PlainTextResponse, Response
from pydantic import AfterValidator, BaseModel, ConfigDict, Field, StrictBool, StrictInt

from . import auth, campaign as cp
from .access import Admin, Assessor, Judging, Shared
from .assign import PracticeFinished
from .inputs import MAX_ID_LENGTH, text_problem
from .models import ADJUDICATE, FLAGS, GRADE, SKIP, UNDO

MAX_EVIDENCE = 20_000


def _storable(text: str) -> str:
    why = text_problem(text)
    if why is not None:
        raise ValueError(why)
    return text


Id = Annotated[str, Field(min_length=1, max_length=MAX_ID_LENGTH), AfterValidator(_storable)]
Text = Annotated[str, Field(max_length=MAX_EVIDENCE), AfterValidator(_storable)]
Flag = Literal[FLAGS]  # type: ignore[valid-type]


class PairIn(BaseModel):
    """A pair skipped or flagged (POST /api/skip); a judgment is one with a grade."""
    model_config = ConfigDict(extra="forbid")
    qid: Id
    docid: Id
    request_id: Id
    comment: Text = ""
    flag: Flag | None = None


class JudgmentIn(PairIn):
    grade: StrictInt
    evidence: Text = ""


class ReassignIn(BaseModel):
    model_config = ConfigDict(extra="forbid", populate_by_name=True)
    source: Id = Field(alias="from")
    target: Id | None = Field(default=None, alias="to")
    deactivate: StrictBool = False  # a JSON true revokes: not "yes", 1 or "false" read as a boolean


class UndoIn(BaseModel):
    model_config = ConfigDict(extra="forbid")
    request_id: Id


router = APIRouter(prefix="/api")


def next_pair(j: Judging, a: auth.Who):
    try:
        body = cp.serve_next(j.database, a)
    except PracticeFinished:
        with j.database.read() as s:
            report = cp.practice_report(s, a)
        return JSONResponse({"detail": "practice round finished: read your result (GET /api/practice), then "
                                       "POST /api/practice/start", "practice": report}, status_code=409)
    return Response(status_code=204) if body is None else body


@router.post("/next")
def api_next(a: Assessor, j: Shared):
    return next_pair(j, a)


@router.get("/next")
def api_next_get(request: Request, a: Assessor, j: Shared):
    if "authorization" not in request.headers:
        raise HTTPException(405, "GET /api/next changes nothing: POST /api/next claims and serves the next pair",
                            headers={"Allow": "POST"})
    return next_pair(j, a)     # a bearer token: claims, as earlier versions did


def _answer(result):
    body, created = result
    return JSONResponse(body, status_code=201 if created else 200)


@router.post("/judgments")
def api_judgment(g: JudgmentIn, a: Assessor, j: Shared):
    return _answer(cp.record_once(j.database, a, GRADE, g.request_id, qid=g.qid, docid=g.docid,
                                  grade=g.grade, evidence=g.evidence, comment=g.comment, flag=g.flag))


@router.post("/skip")
def api_skip(p: PairIn, a: Assessor, j: Shared):
    return _answer(cp.record_once(j.database, a, SKIP, p.request_id, qid=p.qid, docid=p.docid,
                                  comment=p.comment, flag=p.flag))


@router.post("/undo")
def api_undo(u: UndoIn, a: Assessor, j: Shared):
    return _answer(cp.record_once(j.database, a, UNDO, u.request_id))


@router.get("/progress")
def api_progress(a: Assessor, j: Shared):
    with j.database.read() as s:
        return cp.progress(s, a)


@router.get("/history")
def api_history(qid: Annotated[Id, Query()], docid: Annotated[Id, Query()], a: Assessor, j: Shared):
    with j.database.read() as s:
        return cp.history(s, a, qid, docid)


@router.get("/practice")
def api_practice(a: Assessor, j: Shared):
    with j.database.read() as s:
        return cp.practice_report(s, a)


@router.post("/practice/start")
def api_practice_start(a: Assessor, j: Shared):
    with j.database.write() as s:
        return cp.start_after_practice(s, a)


@router.post("/adjudications")
def api_adjudicate(g: JudgmentIn, a: Admin, j: Shared):
    return _answer(cp.record_once(j.database, a, ADJUDICATE, g.request_id, qid=g.qid, docid=g.docid,
                                  grade=g.grade, evidence=g.evidence, comment=g.comment, flag=g.flag))


@router.get("/pair-history")
def api_pair_history(qid: Annotated[Id, Query()], docid: Annotated[Id, Query()], a: Admin, j: Shared):
    with j.database.read() as s:
        return cp.pair_history(s, a.campaign_id, qid, docid)


@router.post("/reassign")
def api_reassign(r: ReassignIn, a: Admin, j: Shared):
    with j.database.write() as s:
        return cp.reassign(s, cp.get_campaign(s, a.campaign_id), r.source, r.target, r.deactivate)


@router.get("/export", response_class=PlainTextResponse)
def api_export(a: Admin, j: Shared, disagreement: str = "skip"):
    if disagreement not in cp.DISAGREEMENT_POLICIES:
        raise HTTPException(422, f"disagreement must be one of {cp.DISAGREEMENT_POLICIES}")
    with j.database.read() as s:
        lines, _, _ = cp.export(s, disagreement, j.source, a.campaign_id)
    return PlainTextResponse("".join(line + "\n" for line in lines),
                             headers={"Content-Disposition": 'attachment; filename="qrels.txt"'})


@router.get("/status")
def api_status(a: Admin, j: Shared):
    with j.database.read() as s:
        return JSONResponse(cp.json_safe(cp.status(s, a.campaign_id)))
