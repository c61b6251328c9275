"""The service's one error type, and its HTTP rendering (RFC 9457 problem details).

Domain code raises `ServiceError`; it becomes an HTTP answer only at the edge, in `web.py`.
It subclasses Chalice's `ChaliceUnhandledError` so that Chalice hands it to our middleware
instead of turning it into its own `{"Code": ..., "Message": ...}` body.
"""

from __future__ import annotations

from chalice.app import ChaliceUnhandledError

PROBLEM_TYPE_BASE = "https://docs.memory-auth.dev/errors/"

# One title per status, so that every problem body reads the same way.
TITLES = {
    400: "Bad Request",
    401: "Unauthorized",
    403: "Forbidden",
    404: "Not Found",
    405: "Method Not Allowed",
    409: "Conflict",
    410: "Gone",
    413: "Content Too Large",
    415: "Unsupported Media Type",
    422: "Unprocessable Content",
    500: "Internal Server Error",
    503: "Service Unavailable",
}


class ServiceError(ChaliceUnhandledError):
    """A refusal with an HTTP status and a stable snake_case `code`.

    `detail` is shown to the caller: it must never contain a secret.
    """

    def __init__(self, status: int, code: str, detail: str, headers: dict[str, str] | None = None):
        super().__init__(detail)
        self.status = status
        self.code = code
        self.detail = detail
        self.headers = headers or {}

    def problem(self) -> dict[str, object]:
        return problem_body(self.status, self.code, self.detail)


class DependencyUnavailable(ServiceError):
    """DynamoDB or KMS failed after retries: the service fails closed with 503.

    `detail` replaces the default where the caller needs to know more, for example that a
    write may have happened although its answer was lost.
    """

    def __init__(self, dependency: str, detail: str | None = None):
        super().__init__(
            503,
            "dependency_unavailable",
            detail or f"A dependency ({dependency}) is unavailable; retry later.",
        )
        self.dependency = dependency


class OAuthError(ChaliceUnhandledError):
    """An RFC 6749 error for the token endpoints (exchange, refresh)."""

    def __init__(self, error: str, description: str, status: int = 400):
        super().__init__(description)
        self.error = error
        self.description = description
        self.status = status

    def body(self) -> dict[str, str]:
        return {"error": self.error, "error_description": self.description}


def problem_body(status: int, code: str, detail: str) -> dict[str, object]:
    return {
        "type": PROBLEM_TYPE_BASE + code,
        "title": TITLES.get(status, "Error"),
        "status": status,
        "detail": detail,
        "code": code,
    }


def bad_request(code: str, detail: str) -> ServiceError:
    return ServiceError(400, code, detail)


def not_found(detail: str = "No such resource.") -> ServiceError:
    return ServiceError(404, "not_found", detail)


def forbidden(code: str, detail: str) -> ServiceError:
    return ServiceError(403, code, detail)
