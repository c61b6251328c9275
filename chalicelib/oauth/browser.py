"""The browser that runs an authorization: one secret in an HttpOnly cookie binds it.

`/v1/oauth/authorize` sets the cookie (or keeps the one the browser has); the pending
authorization stores only the secret's SHA-256. From the secret and the request id this
service derives, without storing them, the PKCE verifier of its own sign-in at the login
provider and the consent form's CSRF token. So a callback or a consent post is honoured only
from the browser that started the authorization (no login CSRF, no session swap), a
cross-site form post carries neither the cookie (SameSite=Lax) nor the token, and nothing
secret rests in the table.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import re
import secrets
from http.cookies import CookieError, SimpleCookie

from chalicelib.oauth.pending import LIFETIME

_SECRET = re.compile(r"^[A-Za-z0-9_-]{43}$")
COOKIE_PATH = "/v1/oauth/"


def cookie_name(secure: bool) -> str:
    # `__Host-` makes browsers refuse the cookie unless it is Secure, host-only and for
    # path "/", which it then is. Plain http (local mode) cannot carry a Secure cookie.
    return "__Host-mcp-authorization" if secure else "mcp-authorization"


def new_secret() -> str:
    return secrets.token_urlsafe(32)


def secret_from(cookie_header: str | None, secure: bool) -> str | None:
    if not cookie_header:
        return None
    jar: SimpleCookie = SimpleCookie()
    try:
        jar.load(cookie_header)
    except CookieError:
        return None
    morsel = jar.get(cookie_name(secure))
    if morsel is None or not _SECRET.fullmatch(morsel.value):
        return None
    return morsel.value


def set_cookie(secret: str, secure: bool) -> str:
    attributes = [
        f"{cookie_name(secure)}={secret}",
        f"Path={'/' if secure else COOKIE_PATH}",
        f"Max-Age={int(LIFETIME.total_seconds())}",
        "HttpOnly",
        # Lax: sent when the login provider redirects back (a top-level GET), never with a
        # form posted from another site.
        "SameSite=Lax",
    ]
    if secure:
        attributes.append("Secure")
    return "; ".join(attributes)


def _derive(label: str, secret: str, request_id: str) -> str:
    digest = hashlib.sha256(f"{label}\x00{secret}\x00{request_id}".encode()).digest()
    return base64.urlsafe_b64encode(digest).rstrip(b"=").decode("ascii")


def binding_hash(secret: str) -> str:
    return hashlib.sha256(secret.encode("ascii")).hexdigest()


def bound(secret: str | None, expected_hash: str) -> bool:
    return secret is not None and hmac.compare_digest(binding_hash(secret), expected_hash)


def login_verifier(secret: str, request_id: str) -> str:
    """The PKCE verifier of our sign-in at the login provider (43 characters, RFC 7636)."""
    return _derive("login-pkce", secret, request_id)


def csrf_token(secret: str, request_id: str) -> str:
    return _derive("consent-csrf", secret, request_id)


def csrf_matches(secret: str | None, request_id: str, sent: str | None) -> bool:
    if secret is None or not sent:
        return False
    return hmac.compare_digest(csrf_token(secret, request_id), sent)
