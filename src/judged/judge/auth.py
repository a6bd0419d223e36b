"""Access tokens, browser sessions and the log-in rate limit.

A token is ``secrets.token_urlsafe(32)`` (256 random bits), shown once; the database keeps
only its SHA-256 (an unsalted hash is enough for a random secret of that size). Tokens are
looked up by hash and confirmed with :func:`hmac.compare_digest`, so no comparison leaks
timing. A revoked token's hash is replaced by :func:`revoked_hash`, which no token hashes
to. A browser session is two secrets (:class:`SessionKeys`): a cookie this server process
signed, and a page key kept in the page's origin storage, which every API call sends.
Failed log-ins are limited by what failed (:class:`LoginLimiter`).
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import ipaddress
import secrets
import threading
import time
from dataclasses import dataclass

from sqlalchemy import bindparam, select
from sqlalchemy.orm import Session

from .models import Assessor

TOKEN_BYTES = 32
REVOKED = "revoked:"          # the start of a revoked assessor's token_hash (never a SHA-256 hex digest)
LOGIN_FAILURES_ALLOWED = 10   # distinct wrong tokens per client address ...
LOGIN_WINDOW_SECONDS = 60.0   # ... within this window; then its wrong tokens get 429, slowly
SAME_TOKEN_FAILURES = 3       # one wrong token tried this often in the window: 429 for it
SLOW_FAILURE_SECONDS = 1.0    # how long a limited failure waits for its 429


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


def revoked_hash() -> str:
    """What replaces a revoked assessor's token hash: unique (the column is), 64 characters,
    and never equal to a SHA-256 hex digest (it holds ``r``, ``v`` and ``:``)."""
    return REVOKED + secrets.token_hex(28)


def is_revoked(assessor: Assessor) -> bool:
    return assessor.token_hash.startswith(REVOKED)


def find_assessor(session: Session, token: str) -> Assessor | None:
    """The assessor holding ``token``, or None (a revoked token matches no one); the final
    check is constant-time."""
    if not token or len(token) > 200:
        return None
    digest = hash_token(token)
    assessor = session.scalar(select(Assessor).where(Assessor.token_hash == digest))
    if assessor is None or not hmac.compare_digest(assessor.token_hash, digest):
        return None
    return assessor


# built once: building a select() costs more than running it (some 0.35 of 0.5 ms)
_HOLDER = select(Assessor.id, Assessor.name, Assessor.is_admin, Assessor.campaign_id,
                 Assessor.token_hash).where(Assessor.token_hash == bindparam("digest"))


def who_holds(database, token: str) -> Who | None:
    """:func:`find_assessor` as the request's :class:`Who`, by :meth:`.db.Database.first_row`
    (the lookup every bearer request makes: no ORM object, a statement built once)."""
    if not token or len(token) > 200:
        return None
    digest = hash_token(token)
    row = database.first_row(_HOLDER, {"digest": digest})
    if row is None or not hmac.compare_digest(row[4], digest):
        return None
    return Who(row[0], row[1], bool(row[2]), row[3])


def same_secret(a: str, b: str) -> bool:
    return hmac.compare_digest(a.encode("utf-8"), b.encode("utf-8"))


class SessionKeys:
    """This server process's secret (random at start, never stored) and what it makes.

    A cookie from another port of the same host can be set by any page there, and is sent
    there too (cookies do not separate ports), so a session is bound twice:

    - the cookie's name and value come from this process: ``judged_session_<id>`` (another
      server on another port keeps its own) holding ``sid.signature``, an HMAC of the session
      id; a cookie another process made (another server, or this one before a restart) is no
      session here;
    - the *page key*, given once at log-in to the page (never in a cookie), is kept in the
      page's origin storage (origins do separate ports) and sent with every API call as
      ``X-Session-Key``; the database keeps its SHA-256. A session cookie planted by another
      page arrives without the key that belongs to it: refused, and the page says so.
    """

    def __init__(self, secret: bytes | None = None, secure: bool = False):
        self._secret = secret or secrets.token_bytes(32)
        tag = hmac.new(self._secret, b"cookie name", hashlib.sha256).hexdigest()[:12]
        # __Host-: a browser accepts it only from a secure page of this very host (not another port over http)
        prefix = "__Host-" if secure else ""
        self.cookie = f"{prefix}judged_session_{tag}"
        self.login_cookie = f"{prefix}judged_login_{tag}"     # the log-in form's CSRF token (double submit)

    def _mac(self, purpose: bytes, sid: str) -> str:
        digest = hmac.new(self._secret, purpose + sid.encode("utf-8"), hashlib.sha256).digest()
        return base64.urlsafe_b64encode(digest).decode("ascii").rstrip("=")

    def cookie_value(self, sid: str) -> str:
        return f"{sid}.{self._mac(b'cookie:', sid)}"

    def session_id(self, value: str) -> str | None:
        """The session id of a cookie value this process signed, else None."""
        sid, _, mac = value.rpartition(".")
        if not sid or len(value) > 200 or not same_secret(mac, self._mac(b"cookie:", sid)):
            return None
        return sid

    def tag(self, sid: str) -> str:
        """A public name of the session, put in its pages: the page compares it with the one
        it stored at log-in, so it notices a session it did not start (no secret: a tag
        opens nothing)."""
        return self._mac(b"tag:", sid)[:16]


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
    """Failed log-ins (form or bearer), keyed on what failed; in memory, per process.

    - A token is always checked, and one that opens a campaign always does: from any
      address, whatever others sent from there (a 256-bit token cannot be guessed in any
      number of tries, so checking it gives a guesser nothing; refusing it would lock the
      honest out).
    - A wrong token is counted on two keys: the token itself (tried again, it counts again)
      and the client address (counted once per distinct wrong token, so a script retrying
      one stale token is not a guesser). A wrong token tried ``same_token`` times within
      ``window`` seconds, or any wrong token from an address that sent ``allowed`` distinct
      wrong ones within the window, is answered 429 with Retry-After, after
      :data:`SLOW_FAILURE_SECONDS` (the caller waits, without holding a thread): the
      attacker is slowed, the assessor beside them is not.
    - The address is the TCP peer's (an IPv6 client's /64); a proxy's ``X-Forwarded-For``
      replaces it only when the server was told to trust that proxy (``judged judge serve
      --trust-proxy``). Sessions (cookie and page key) are never limited.
    """

    def __init__(self, allowed: int = LOGIN_FAILURES_ALLOWED, window: float = LOGIN_WINDOW_SECONDS,
                 same_token: int = SAME_TOKEN_FAILURES, slow: float = SLOW_FAILURE_SECONDS):
        self.allowed, self.window, self.same_token, self.slow = allowed, window, same_token, slow
        self._by_client: dict[str, dict[str, float]] = {}   # client key -> wrong token hash -> last time
        self._by_token: dict[str, list[float]] = {}         # wrong token hash -> times it failed
        self._lock = threading.Lock()

    def _recent(self, key: str, now: float) -> dict[str, float]:
        tried = self._by_client.get(key, {})
        for digest in [d for d, t in tried.items() if t <= now - self.window]:
            del tried[digest]
        if not tried:
            self._by_client.pop(key, None)
        return tried

    def _token_times(self, digest: str, now: float) -> list[float]:
        times = [t for t in self._by_token.get(digest, ()) if t > now - self.window]
        if times:
            self._by_token[digest] = times
        else:
            self._by_token.pop(digest, None)
        return times

    def failed(self, client: str, token: str) -> float:
        """Count a wrong token from ``client``; the seconds to put in Retry-After when this
        failure is past a limit (answer 429, slowly), else 0 (answer 401)."""
        key, digest, now = client_key(client), hash_token(token), time.monotonic()
        with self._lock:
            if len(self._by_client) > 10_000 or len(self._by_token) > 100_000:   # forget what left the window
                for k in list(self._by_client):
                    self._recent(k, now)
                for d in list(self._by_token):
                    self._token_times(d, now)
            tried = self._recent(key, now)
            times = self._token_times(digest, now)
            client_limited, token_limited = len(tried) >= self.allowed, len(times) >= self.same_token
            tried[digest] = now
            self._by_client[key] = tried
            self._by_token[digest] = times + [now]
            if client_limited:
                return max(1.0, min(tried.values()) + self.window - now)
            if token_limited:
                return max(1.0, times[0] + self.window - now)
            return 0.0
