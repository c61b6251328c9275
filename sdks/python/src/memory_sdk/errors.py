"""The SDK's errors: one base class, one class per kind of refusal the service answers.

The service's errors are RFC 9457 problem+json with a stable `code`; the token endpoints
answer RFC 6749 bodies (`error`, `error_description`). A problem becomes the `ApiError`
subclass its status picks, an RFC 6749 body an `OAuthError`; both carry the code. The class
names are the TypeScript SDK's. No message or repr ever holds a credential: the service
promises details without secrets, and `redact` makes sure anyway.
"""

from __future__ import annotations

import re
from typing import Any

# The same patterns as the TypeScript SDK's redaction. A key is `svc_` or `legacy_` and
# every printable, non-space ASCII character after it: legacy keys may hold any of them.
_KEY = re.compile(r"(svc|legacy)_[\x21-\x7e]+")
_JWT = re.compile(r"eyJ[A-Za-z0-9_-]*\.[A-Za-z0-9_-]*\.[A-Za-z0-9_-]*")
_BEARER = re.compile(r"(?i:bearer)\s+\S+")


def redact(text: str) -> str:
    """`text` with anything that looks like a key or a token replaced by `[redacted]`.

    A key keeps its prefix (`svc_[redacted]`, `legacy_[redacted]`); whatever follows
    "Bearer" becomes `Bearer [redacted]`.
    """
    text = _KEY.sub(r"\1_[redacted]", text)
    text = _JWT.sub("[redacted]", text)
    return _BEARER.sub("Bearer [redacted]", text)


class MemorySDKError(Exception):
    """Base class of every error this SDK raises."""


class ConfigurationError(MemorySDKError, ValueError):
    """The configuration is invalid. `variable` names the first offending setting."""

    def __init__(self, problems: list[tuple[str, str]]) -> None:
        self.problems = problems
        self.variable = problems[0][0]
        lines = "; ".join(f"{name}: {redact(message)}" for name, message in problems)
        super().__init__(f"invalid memory-sdk configuration: {lines}")


class NotSupportedError(MemorySDKError):
    """The feature does not exist on the configured backend."""


class NetworkError(MemorySDKError):
    """The service could not be reached, or its answer was lost, after any retries.

    `may_have_reached` is False when the request certainly never left this process (the
    connection was refused); a create or rotate with True may have taken effect.
    """

    def __init__(self, message: str, *, may_have_reached: bool) -> None:
        super().__init__(redact(message))
        self.may_have_reached = may_have_reached


class RequestTimeoutError(NetworkError):
    """No answer within the timeout (`svc.timeout` seconds per attempt)."""


class UnexpectedResponseError(MemorySDKError):
    """A successful answer whose body is not what the API documents."""

    def __init__(self, method: str, path: str) -> None:
        super().__init__(f"unexpected response body from {method} {path}")
        self.method = method
        self.path = path


class ApiError(MemorySDKError):
    """The service refused the request. `code` is the problem+json `code` (or OAuth `error`)."""

    def __init__(
        self,
        status: int,
        code: str | None,
        detail: str,
        *,
        method: str = "",
        path: str = "",
        retry_after: float | None = None,
    ) -> None:
        self.status = status
        self.code = code
        self.detail = redact(detail)
        self.method = method
        self.path = path
        self.retry_after = retry_after
        where = f" ({method} {path})" if method else ""
        super().__init__(f"{status} {code or 'error'}: {self.detail}{where}")

    def __repr__(self) -> str:
        return f"{type(self).__name__}(status={self.status}, code={self.code!r})"


class BadRequestError(ApiError):
    """400, 413 or 422: the request is malformed or names something invalid."""


class AuthenticationError(ApiError):
    """401 (missing, invalid, expired or revoked credential), or a refused token grant."""


class DelegatedTokenExpiredError(AuthenticationError):
    """401 `expired_credentials` on a client built on a delegated token: such a token has no
    refresh token and is never renewed by the client. Mint a new one (`client.auth.delegate`)
    from the credential it was delegated from, and build a new client on it."""


class PermissionDeniedError(ApiError):
    """403: authenticated, but not allowed (workspace_mismatch, not_a_member, …)."""


class NotFoundError(ApiError):
    """404: no such resource, or one the caller does not own."""


class ConflictError(ApiError):
    """409: e.g. `key_not_active` when rotating a revoked or expired key."""


class GoneError(ApiError):
    """410: `key_revoked` or `key_not_revealable` on reveal."""


class RateLimitError(ApiError):
    """429: too many requests; `retry_after` holds the server's advice in seconds, if any."""


class ServerError(ApiError):
    """5xx: the service or one of its dependencies failed."""


class ServiceUnavailableError(ServerError):
    """503: e.g. `dependency_unavailable`; retried for calls that are safe to repeat."""


class OAuthError(ApiError):
    """An RFC 6749 refusal by exchange or refresh, at any status; `code` is its `error`.

    `invalid_grant` on refresh means the refresh token was used before, expired or revoked:
    sign in again.
    """


# Deprecated aliases, kept for code written against 0.1.0: the classes are the same objects.
RequestValidationError = BadRequestError
ServiceError = ServerError


_BY_STATUS: dict[int, type[ApiError]] = {
    400: BadRequestError,
    401: AuthenticationError,
    403: PermissionDeniedError,
    404: NotFoundError,
    409: ConflictError,
    410: GoneError,
    413: BadRequestError,
    422: BadRequestError,
    429: RateLimitError,
    503: ServiceUnavailableError,
}


def error_class(status: int, *, oauth: bool = False) -> type[ApiError]:
    """The class of a refusal: `OAuthError` for an RFC 6749 body, else by status."""
    if oauth:
        return OAuthError
    if status in _BY_STATUS:
        return _BY_STATUS[status]
    return ServerError if status >= 500 else ApiError


def issued_token(answer: Any, path: str, refused: type[Exception], what: str) -> tuple[str, int]:
    """A token endpoint's RFC 6749 answer (an `httpx.Response` to a POST of `path`): its
    access token and lifetime in seconds; `refused` naming the service's `error` when it was
    refused (`what`: "The token request", "The exchange"), `UnexpectedResponseError` when it
    holds no token."""
    body = answer.json() if answer.content else {}
    if answer.status_code != 200:
        raise refused(
            f"{what} was refused ({answer.status_code} {body.get('error')}): "
            f"{body.get('error_description')}"
        )
    token, expires_in = body.get("access_token"), body.get("expires_in")
    if not isinstance(token, str) or not isinstance(expires_in, int):
        raise UnexpectedResponseError("POST", path)
    return token, expires_in
