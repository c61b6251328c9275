"""OpenID Connect ID tokens from trusted issuers: signing keys and verification.

An ID token is accepted only from an issuer named in configuration (TRUSTED_ISSUERS, read in
`config.py`), for that issuer's audience, signed with RS256 by a key the issuer publishes at
its configured JWKS URI. Each issuer's key set is fetched and cached by PyJWT's
`PyJWKClient`; an unknown `kid` refreshes it once (at most once per cooldown, so a stream of
made-up `kid`s cannot make us hammer the issuer), then fails. A token that fails a check is a
result (`IdTokenRejected`, 400 at the edge); an issuer whose JWKS cannot be fetched is a
broken dependency (503).

PyJWT is imported only when an ID token is verified, as in `access_tokens.py`: the API
function's other routes never load it.
"""

from __future__ import annotations

import hmac
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from chalicelib.config import TrustedIssuer
from chalicelib.dependencies import is_dependency_failure
from chalicelib.errors import DependencyUnavailable
from chalicelib.logs import logger
from chalicelib.sessions.access_tokens import ALGORITHM, CLOCK_SKEW
from chalicelib.strict_parsing import is_label_text, is_printable

if TYPE_CHECKING:
    from jwt import PyJWKClient


JWKS_LIFESPAN = 300.0  # seconds an issuer's key set is served from the cache
JWKS_REFRESH_COOLDOWN = 30.0  # minimum seconds between fetches forced by an unknown kid
JWKS_TIMEOUT = 3.0  # seconds; an authorizer-style budget, then 503
MAX_SUBJECT_LENGTH = 255  # OpenID Connect Core §2: `sub` is at most 255 ASCII characters
MAX_EMAIL_LENGTH = 320
MAX_NAME_LENGTH = 200


@dataclass(frozen=True)
class Identity:
    """Who an ID token says signed in: the (issuer, subject) pair and what we keep of them."""

    issuer: str
    subject: str
    email: str | None = None
    email_verified: bool | None = None
    name: str | None = None


class IdTokenRejected(Exception):
    """The ID token is not acceptable. `description` is safe to show; it holds no token."""

    def __init__(self, description: str):
        super().__init__(description)
        self.description = description


JwksClientFactory = Callable[[TrustedIssuer], "PyJWKClient"]


def remote_jwks_client(issuer: TrustedIssuer) -> PyJWKClient:
    from jwt import PyJWKClient

    return PyJWKClient(
        issuer.jwks_uri,
        lifespan=JWKS_LIFESPAN,
        timeout=JWKS_TIMEOUT,
        cooldown_duration=JWKS_REFRESH_COOLDOWN,
        headers={"User-Agent": "memory-auth", "Accept": "application/json"},
    )


def _optional_text(
    claims: dict[str, Any], name: str, max_length: int, allowed: Callable[[str], bool]
) -> str | None:
    value = claims.get(name)
    if isinstance(value, str) and 0 < len(value.strip()) <= max_length and allowed(value):
        return value.strip()
    return None


class IdTokenVerifier:
    def __init__(
        self,
        issuers: Sequence[TrustedIssuer],
        jwks_client: JwksClientFactory = remote_jwks_client,
    ):
        self._issuers = {trusted.issuer: trusted for trusted in issuers}
        self._jwks_client = jwks_client
        self._clients: dict[str, PyJWKClient] = {}
        self._lock = threading.Lock()

    def _client(self, trusted: TrustedIssuer) -> PyJWKClient:
        with self._lock:
            client = self._clients.get(trusted.issuer)
            if client is None:
                client = self._clients[trusted.issuer] = self._jwks_client(trusted)
            return client

    def _signing_key(self, trusted: TrustedIssuer, kid: str) -> Any:
        from jwt import PyJWKClientConnectionError, PyJWKClientError, PyJWKSetError

        try:
            signing_key = self._client(trusted).get_signing_key(kid)
        except PyJWKClientConnectionError:
            logger.warning("issuer JWKS unreachable", extra={"issuer": trusted.issuer})
            raise DependencyUnavailable("identity provider") from None
        except (PyJWKClientError, PyJWKSetError):
            # Not in the key set even after one refresh (or the set has no usable key).
            raise IdTokenRejected("The ID token's signing key (kid) is not known.") from None
        except (ValueError, RecursionError):  # the issuer answered something that is not JSON
            logger.warning("issuer JWKS unreadable", extra={"issuer": trusted.issuer})
            raise DependencyUnavailable("identity provider") from None
        except Exception as error:  # the connection broke after PyJWT's own checks
            # The fetch does network I/O only: any OSError here is the network's.
            if not (isinstance(error, OSError) or is_dependency_failure(error)):
                raise
            logger.warning("issuer JWKS unreachable", extra={"issuer": trusted.issuer})
            raise DependencyUnavailable("identity provider") from None
        if signing_key.key_type != "RSA" or signing_key.algorithm_name != ALGORITHM:
            raise IdTokenRejected("The ID token's signing key is not an RS256 key.")
        return signing_key.key

    def verify(self, id_token: str, nonce: str | None = None) -> Identity:
        """The verified identity, or IdTokenRejected; DependencyUnavailable if JWKS fails.

        RS256 only (never `none`, never HMAC), with the leeway of our own tokens. `nonce`:
        the one this service sent in its own authorization request (OIDC Core §3.1.3.7),
        which the token must carry, so a token from another sign-in is refused.
        """
        import jwt

        try:
            header = jwt.get_unverified_header(id_token)
            # Only to find which issuer's keys to use; nothing is trusted before decode below.
            unverified = jwt.decode(
                id_token, options={"verify_signature": False}, algorithms=[ALGORITHM]
            )
        except jwt.PyJWTError:
            raise IdTokenRejected("The ID token is not a well-formed JWT.") from None
        if header.get("alg") != ALGORITHM:  # `none`, HS256 (key confusion), anything else
            raise IdTokenRejected("The ID token must be signed with RS256.")
        kid = header.get("kid")
        if not isinstance(kid, str) or not kid:
            raise IdTokenRejected("The ID token has no key id (kid).")
        claimed_issuer = unverified.get("iss")
        trusted = self._issuers.get(claimed_issuer) if isinstance(claimed_issuer, str) else None
        if trusted is None:
            raise IdTokenRejected("The ID token's issuer is not trusted.")
        key = self._signing_key(trusted, kid)
        try:
            claims: dict[str, Any] = jwt.decode(
                id_token,
                key=key,
                algorithms=[ALGORITHM],
                audience=trusted.audience,
                issuer=trusted.issuer,
                leeway=CLOCK_SKEW,
                options={"require": ["exp", "iat", "iss", "aud", "sub"]},
            )
        except jwt.ExpiredSignatureError:
            raise IdTokenRejected("The ID token has expired.") from None
        except jwt.InvalidAudienceError:
            raise IdTokenRejected("The ID token is not for this service (audience).") from None
        except jwt.InvalidSignatureError:
            raise IdTokenRejected("The ID token's signature is not valid.") from None
        except jwt.ImmatureSignatureError:
            raise IdTokenRejected("The ID token is not valid yet.") from None
        except jwt.MissingRequiredClaimError as missing:
            raise IdTokenRejected(f"The ID token lacks the {missing.claim!r} claim.") from None
        except jwt.PyJWTError:
            raise IdTokenRejected("The ID token is not valid.") from None
        audiences = claims["aud"] if isinstance(claims["aud"], list) else [claims["aud"]]
        if len(audiences) > 1 and claims.get("azp") != trusted.audience:
            # OIDC Core §2: with several audiences, `azp` names the party it was issued to.
            raise IdTokenRejected("The ID token was issued to another party (azp).")
        if nonce is not None:
            sent = claims.get("nonce")
            if not isinstance(sent, str) or not hmac.compare_digest(sent, nonce):
                raise IdTokenRejected("The ID token is not from this sign-in (nonce).")
        subject = claims["sub"]
        if (
            not isinstance(subject, str)
            or not 0 < len(subject) <= MAX_SUBJECT_LENGTH
            or not is_printable(subject)
        ):
            raise IdTokenRejected("The ID token's subject is not valid.")
        verified = claims.get("email_verified")
        return Identity(
            issuer=trusted.issuer,
            subject=subject,
            email=_optional_text(claims, "email", MAX_EMAIL_LENGTH, is_printable),
            email_verified=verified if isinstance(verified, bool) else None,
            # A person's name follows the label rule: joiners are part of names
            # ("پریسا نیک‌نام", "Hal 👩‍💻").
            name=_optional_text(claims, "name", MAX_NAME_LENGTH, is_label_text),
        )
