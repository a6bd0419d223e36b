"""Who a request is, for every route: the app's shared state (:class:`Judging`), the
assessor of an API call (a bearer token, or a browser session with its page key) and of a
page (the session cookie alone), and the dependencies :func:`assessor` and :func:`admin`.
See :mod:`.app` for the rules (401, 403, 429 and the replaced session)."""

from __future__ import annotations

import asyncio
import hashlib
import math
from dataclasses import dataclass
from typing import Annotated

from fastapi import Depends, HTTPException, Request
from fastapi.templating import Jinja2Templates
from starlette.concurrency import run_in_threadpool

from . import auth
from .db import Database
from .models import LoginSession, utcnow

SESSION_KEY_HEADER = "x-session-key"
REPLACED = ("this browser's session was not started on this page (another page or tab replaced it): "
            "nothing was done; log in again")


@dataclass(frozen=True)
class Judging:
    """What the routes share: the campaigns' database, the log-in limiter, the session keys,
    the pages' templates, the source line of exported qrels, whether cookies are Secure."""
    database: Database
    limiter: auth.LoginLimiter
    keys: auth.SessionKeys
    templates: Jinja2Templates
    source: str
    secure_cookie: bool

    def page(self, request: Request, name: str, status_code: int = 200, **context):
        return self.templates.TemplateResponse(request, name, context, status_code=status_code)


def judging(request: Request) -> Judging:
    """The app's :class:`Judging` (a dependency)."""
    return request.app.state.judging


def sha256(secret: str) -> str:
    return hashlib.sha256(secret.encode("utf-8")).hexdigest()


def client(request: Request) -> str:
    return request.client.host if request.client else "?"


def cookie_values(request: Request, name: str) -> list[str]:
    """Every value the request's Cookie header gives ``name``, in order: a page on another
    port can add a second cookie of the same name (a longer Path is sent first)."""
    out = []
    for header in request.headers.getlist("cookie"):
        for part in header.split(";"):
            key, eq, value = part.strip().partition("=")
            if eq and key == name and value:
                out.append(value.strip('"'))
    return out


@dataclass(frozen=True)
class BrowserSession:
    """A browser session found from its cookie: who, its row, its id (for the page's tag)."""
    who: auth.Who
    row: LoginSession
    sid: str


class Refusal(Exception):
    """Credentials were sent and refused: 401, or 429 after a wait when past a limit."""

    def __init__(self, detail: str, wait: float = 0.0, replaced: bool = False):
        super().__init__(detail)
        self.detail, self.wait, self.replaced = detail, wait, replaced


def check_token(j: Judging, request: Request, token: str) -> auth.Who:
    """The assessor whose token this is (looked up every time: a revoked or rotated token
    stops working at once), else :class:`Refusal` (counted by the limiter)."""
    who = auth.who_holds(j.database, token)
    if who is None:
        raise Refusal("no valid token", j.limiter.failed(client(request), token))
    return who


def browser_session(j: Judging, request: Request, key: str | None = None) -> BrowserSession | None:
    """The session of this request's cookie (this process signed it; not expired; its
    assessor not revoked). With ``key`` (an API call), only the session that key belongs
    to: a cookie whose key is missing or another is :class:`Refusal` ``replaced``."""
    candidates = [sid for sid in map(j.keys.session_id, cookie_values(request, j.keys.cookie)) if sid]
    if not candidates:
        return None
    now, mismatch = utcnow(), False
    with j.database.read() as s:
        for sid in candidates:
            ls = s.get(LoginSession, sha256(sid))
            if ls is None or ls.expires_at <= now or auth.is_revoked(ls.assessor):
                continue
            if key is not None and not auth.same_secret(sha256(key), ls.csrf):
                mismatch = True
                continue
            return BrowserSession(auth.Who.of(ls.assessor), ls, sid)
    if mismatch:
        raise Refusal(REPLACED, replaced=True)
    return None


def page_session(j: Judging, request: Request) -> BrowserSession | None:
    """The session a page is shown to (the cookie alone: a navigation carries no key;
    the page checks the session's tag before it calls the API)."""
    return browser_session(j, request) if "authorization" not in request.headers else None


def identify(j: Judging, request: Request) -> auth.Who | None:
    """An API request's assessor: its bearer token, else its session with the page key."""
    header = request.headers.get("authorization")
    if header is not None:
        scheme, _, token = header.partition(" ")
        token = token.strip()
        if scheme.lower() != "bearer":
            raise Refusal("no valid token", j.limiter.failed(client(request), token))
        return check_token(j, request, token)
    found = browser_session(j, request, request.headers.get(SESSION_KEY_HEADER, ""))
    return None if found is None else found.who


async def refusal(j: Judging, exc: Refusal) -> HTTPException:
    if exc.wait:    # past a limit: slowed, without holding a thread
        await asyncio.sleep(j.limiter.slow)
        return HTTPException(429, "too many wrong tokens; wait", headers={"Retry-After": str(math.ceil(exc.wait))})
    if exc.replaced:
        return HTTPException(401, {"detail": exc.detail, "session": "replaced"})
    return HTTPException(401, exc.detail, headers={"WWW-Authenticate": "Bearer"})


Shared = Annotated[Judging, Depends(judging)]


async def assessor(request: Request, j: Shared) -> auth.Who:
    """The dependency of every API route: the request's assessor, else 401 (429 past a limit)."""
    try:
        who = await run_in_threadpool(identify, j, request)
    except Refusal as exc:
        raise await refusal(j, exc) from None
    if who is None:
        raise HTTPException(401, "log in or send Authorization: Bearer TOKEN", headers={"WWW-Authenticate": "Bearer"})
    return who


Assessor = Annotated[auth.Who, Depends(assessor)]


async def admin(a: Assessor) -> auth.Who:
    """The dependency of the admins' routes: 403 for an assessor."""
    if not a.is_admin:
        raise HTTPException(403, "admins only")
    return a


Admin = Annotated[auth.Who, Depends(admin)]
