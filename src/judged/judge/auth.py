"""Access tokens, sessions and the login rate limit.

A token is ``secrets.token_urlsafe(32)`` (256 random bits), shown once; the database keeps
only its SHA-256 (an unsalted hash is enough for a random secret of that size). Tokens are
looked up by hash and confirmed with :func:`hmac.compare_digest`, so no comparison leaks
timing. Failed logins (form or bearer) are limited per client address.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
import threading
import time
from collections import defaultdict, deque
from dataclasses import dataclass

from sqlalchemy import select
from sqlalchemy.orm import Session

from .models import Assessor

TOKEN_BYTES = 32
LOGIN_FAILURES_ALLOWED = 10   # failed attempts per client address ...
LOGIN_WINDOW_SECONDS = 60.0   # ... within this window; then 429 until the window slides


@dataclass(frozen=True)
class Who:
    """The authenticated assessor, as a request sees it."""
    id: int
    name: str
    is_admin: bool

    @classmethod
    def of(cls, a: Assessor) -> "Who":
        return cls(a.id, a.name, a.is_admin)


def new_token() -> str:
    return secrets.token_urlsafe(TOKEN_BYTES)


def hash_token(token: str) -> str:
    return hashlib.sha256(token.encode("utf-8")).hexdigest()


def find_assessor(session: Session, token: str) -> Assessor | None:
    """The assessor holding ``token``, or None; the final check is constant-time."""
    if not token or len(token) > 200:
        return None
    digest = hash_token(token)
    assessor = session.scalar(select(Assessor).where(Assessor.token_hash == digest))
    if assessor is None or not hmac.compare_digest(assessor.token_hash, digest):
        return None
    return assessor


def same_secret(a: str, b: str) -> bool:
    return hmac.compare_digest(a.encode("utf-8"), b.encode("utf-8"))


class LoginLimiter:
    """Sliding-window count of failed attempts per client address (in memory, per process)."""

    def __init__(self, allowed: int = LOGIN_FAILURES_ALLOWED, window: float = LOGIN_WINDOW_SECONDS):
        self.allowed, self.window = allowed, window
        self._failures: dict[str, deque[float]] = defaultdict(deque)
        self._lock = threading.Lock()

    def _trim(self, client: str, now: float) -> deque[float]:
        q = self._failures[client]
        while q and q[0] <= now - self.window:
            q.popleft()
        return q

    def blocked(self, client: str) -> float:
        """Seconds to wait before the next attempt (0: not blocked)."""
        with self._lock:
            now = time.monotonic()
            q = self._trim(client, now)
            return max(0.0, q[0] + self.window - now) if len(q) >= self.allowed else 0.0

    def failed(self, client: str) -> None:
        with self._lock:
            self._trim(client, time.monotonic()).append(time.monotonic())
