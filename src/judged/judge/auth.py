"""Access tokens, sessions and the login rate limit.

A token is ``secrets.token_urlsafe(32)`` (256 random bits), shown once; the database keeps
only its SHA-256 (an unsalted hash is enough for a random secret of that size). Tokens are
looked up by hash and confirmed with :func:`hmac.compare_digest`, so no comparison leaks
timing. Failed logins (form or bearer) are limited per client address; see
:class:`LoginLimiter`.
"""

from __future__ import annotations

import hashlib
import hmac
import ipaddress
import secrets
import threading
import time
from dataclasses import dataclass

from sqlalchemy import select
from sqlalchemy.orm import Session

from .models import Assessor

TOKEN_BYTES = 32
LOGIN_FAILURES_ALLOWED = 10   # distinct wrong tokens per client address ...
LOGIN_WINDOW_SECONDS = 60.0   # ... within this window; then 429 until the window slides
KNOWN_GOOD_SECONDS = 12 * 3600.0  # a token that worked from an address passes its block this long


@dataclass(frozen=True)
class Who:
    """The authenticated assessor, as a request sees it."""
    id: int
    name: str
    is_admin: bool
    campaign_id: int

    @classmethod
    def of(cls, a: Assessor) -> "Who":
        return cls(a.id, a.name, a.is_admin, a.campaign_id)


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


def client_key(address: str) -> str:
    """The rate limit's key for a client address: the address itself, an IPv6 address's /64
    network (one host holds a whole /64, so its single addresses would be free to rotate).

    >>> client_key("2001:db8::1:2"), client_key("127.0.0.1")
    ('2001:db8::/64', '127.0.0.1')
    """
    try:
        ip = ipaddress.ip_address(address)
    except ValueError:
        return address
    if ip.version == 6:
        if ip.ipv4_mapped is not None:
            return str(ip.ipv4_mapped)
        return str(ipaddress.ip_network(f"{ip}/64", strict=False))
    return str(ip)


class LoginLimiter:
    """Failed log-ins, counted per client address and per token (in memory, per process).

    - Only failures count, never successes; and a wrong token tried again counts once (a
      script retrying a stale token is not a guesser): an address is blocked once
      ``allowed`` *distinct* wrong tokens came from it within ``window`` seconds, until the
      oldest of them leaves the window (the caller answers 429 with Retry-After).
    - While an address is blocked, tokens are not checked from it (no guessing through the
      block), except a token that already logged in from that address (known good for
      :data:`KNOWN_GOOD_SECONDS`): assessors sharing an address with someone who mistypes,
      or with an attacker, keep working. Sessions (cookies) are never limited.
    - The address is the TCP peer's; a proxy's ``X-Forwarded-For`` replaces it only when the
      server was told to trust that proxy (``judged judge serve --trust-proxy``).
    """

    def __init__(self, allowed: int = LOGIN_FAILURES_ALLOWED, window: float = LOGIN_WINDOW_SECONDS,
                 known_good: float = KNOWN_GOOD_SECONDS):
        self.allowed, self.window, self.known_good = allowed, window, known_good
        self._failures: dict[str, dict[str, float]] = {}   # client key -> wrong token hash -> last time
        self._good: dict[tuple[str, str], float] = {}       # (client key, token hash) -> expiry
        self._lock = threading.Lock()

    def _recent(self, key: str, now: float) -> dict[str, float]:
        tried = self._failures.get(key, {})
        for digest in [d for d, t in tried.items() if t <= now - self.window]:
            del tried[digest]
        if not tried:
            self._failures.pop(key, None)
        return tried

    def blocked(self, client: str, token: str | None = None) -> float:
        """Seconds to wait before the next attempt from ``client`` with ``token`` (0: go on)."""
        key, now = client_key(client), time.monotonic()
        with self._lock:
            tried = self._recent(key, now)
            if len(tried) < self.allowed:
                return 0.0
            if token and self._good.get((key, hash_token(token)), 0.0) > now:
                return 0.0
            return max(0.0, min(tried.values()) + self.window - now)

    def failed(self, client: str, token: str) -> None:
        key, now = client_key(client), time.monotonic()
        with self._lock:
            if len(self._failures) > 10_000:   # many addresses: forget the ones past the window
                for k in list(self._failures):
                    self._recent(k, now)
            self._failures.setdefault(key, {})[hash_token(token)] = now

    def succeeded(self, client: str, token: str) -> None:
        key, now = client_key(client), time.monotonic()
        with self._lock:
            if len(self._good) > 10_000:
                self._good = {k: t for k, t in self._good.items() if t > now}
            self._good[(key, hash_token(token))] = now + self.known_good
