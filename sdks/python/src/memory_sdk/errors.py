"""The SDK's errors: one base class, one class per kind of refusal the service answers.

The service's errors are RFC 9457 problem+json with a stable `code` (decisions.md); the token
endpoints answer RFC 6749 bodies (`error`, `error_description`). Both become an `ApiError`
subclass chosen by status, carrying that code. No message or repr ever holds a credential:
the service promises details without secrets, and `redact` makes sure anyway.
"""

from __future__ import annotations

import re

# A plaintext key (`svc_…`, `legacy_…`), a JWT, or whatever follows "Bearer".
_SECRET = re.compile(
    r"(?:svc|legacy)_[A-Za-z0-9]+"
    r"|eyJ[A-Za-z0-9_-]*\.[A-Za-z0-9_-]*\.[A-Za-z0-9_-]*"
    r"|(?i:bearer)\s+\S+"
)


def redact(text: str) -> str:
    """`text` with anything that looks like a key or a token replaced by `[redacted]`."""
    return _SECRET.sub("[redacted]", text)


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


class RequestValidationError(ApiError):
    """400, 413 or 422: the request is malformed or names something invalid."""


class AuthenticationError(ApiError):
    """401 (missing, invalid, expired or revoked credential), or a refused token grant."""


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


class ServiceError(ApiError):
    """5xx: the service or one of its dependencies failed."""


_BY_STATUS: dict[int, type[ApiError]] = {
    400: RequestValidationError,
    401: AuthenticationError,
    403: PermissionDeniedError,
    404: NotFoundError,
    409: ConflictError,
    410: GoneError,
    413: RequestValidationError,
    422: RequestValidationError,
    429: RateLimitError,
}

# RFC 6749 §5.2 error codes that mean "this grant or token is not accepted".
_OAUTH_AUTHENTICATION = {"invalid_grant", "invalid_client", "invalid_token", "unauthorized_client"}


def error_class(status: int, code: str | None = None, oauth: bool = False) -> type[ApiError]:
    if oauth and code in _OAUTH_AUTHENTICATION:
        return AuthenticationError
    if status >= 500:
        return ServiceError
    return _BY_STATUS.get(status, ApiError)
