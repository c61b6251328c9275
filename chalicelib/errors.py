"""The error catalogue: every (status, code) the service answers, its default detail, and the
error types that carry one (RFC 9457 problem details; RFC 6749 errors on the token endpoints).

Code raises a catalogue entry by name (`raise NOT_FOUND.error("No API key with this id.")`);
it becomes an HTTP answer only at the edge, in `api/edge.py`, which carries a view's error
past Chalice to our middleware (Chalice answers any other exception with its own 500 body).
No Chalice here: the authorizer's cold start imports this module, and not the framework.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import NamedTuple

# Each problem's `type` is its code's entry in the error reference, which the service serves
# at /docs/errors (docs/errors.md is the same page in the repository). A relative reference
# with the full path (RFC 9457 §3.1.1): it resolves against the API's own origin. Behind API
# Gateway the path starts with the API's stage (`/v1api`), which the edge puts in front
# (`api/edge.reference_prefix`); the local server has none.
PROBLEM_TYPE_BASE = "/docs/errors#"

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
    429: "Too Many Requests",
    500: "Internal Server Error",
    503: "Service Unavailable",
}


class Problem(NamedTuple):
    """A documented answer: its status, its stable snake_case code, and its default detail.

    A detail is shown to the caller: it must never contain a secret.
    """

    status: int
    code: str
    detail: str

    def error(
        self, detail: str | None = None, headers: Mapping[str, str] | None = None
    ) -> ServiceError:
        """This problem as the error to raise, with a more precise detail where one helps."""
        return ServiceError(self, detail, headers)

    def oauth_error(
        self, description: str | None = None, headers: Mapping[str, str] | None = None
    ) -> OAuthError:
        """This RFC 6749 error as the error to raise on a token endpoint."""
        return OAuthError(self.code, description or self.detail, self.status, headers)


class ServiceError(Exception):
    """A refusal with an HTTP status and a stable `code`, answered as problem+json."""

    def __init__(
        self,
        problem: Problem,
        detail: str | None = None,
        headers: Mapping[str, str] | None = None,
    ):
        self.problem = problem
        self.status = problem.status
        self.code = problem.code
        self.detail = detail or problem.detail
        self.headers = dict(headers or {})
        super().__init__(self.detail)

    def body(self, prefix: str = "") -> dict[str, object]:
        return problem_body(self.status, self.code, self.detail, prefix)


class OAuthError(Exception):
    """An RFC 6749 error for the token endpoints (exchange, refresh)."""

    def __init__(
        self,
        error: str,
        description: str,
        status: int = 400,
        headers: Mapping[str, str] | None = None,
    ):
        super().__init__(description)
        self.error = error
        self.description = description
        self.status = status
        self.headers = dict(headers or {})  # a use_dpop_nonce error's DPoP-Nonce

    def body(self) -> dict[str, str]:
        return {"error": self.error, "error_description": self.description}


def problem_body(status: int, code: str, detail: str, prefix: str = "") -> dict[str, object]:
    """`prefix`: the path the API is served under (`/v1api` behind API Gateway, else empty)."""
    return {
        "type": prefix + PROBLEM_TYPE_BASE + code,
        "title": TITLES.get(status, "Error"),
        "status": status,
        "detail": detail,
        "code": code,
        # The same code again, for clients that read RFC 6749's member name.
        "error": code,
    }


# -- problem+json answers (every endpoint but the token endpoints) --------------------------

# 400: the request itself is wrong.
INVALID_JSON = Problem(400, "invalid_json", "The request body must be a JSON object.")
UNKNOWN_FIELD = Problem(400, "unknown_field", "The body has a field this endpoint does not take.")
UNKNOWN_PARAMETER = Problem(
    400, "unknown_parameter", "The request has a query parameter this endpoint does not take."
)
INVALID_PARAMETER = Problem(400, "invalid_parameter", "A query parameter is not valid.")
CONFLICTING_WORKSPACE_ID = Problem(
    400,
    "conflicting_workspace_id",
    "X-Workspace-Id and workspace_id name different workspaces.",
)
INVALID_LABEL = Problem(
    400,
    "invalid_label",
    "label must be 1 to 100 characters, without control characters or bidirectional overrides"
    " and isolates.",
)
INVALID_NAME = Problem(
    400,
    "invalid_name",
    "name must be 1 to 100 characters, without control characters or bidirectional overrides"
    " and isolates.",
)
INVALID_TRUST_POLICY = Problem(
    400, "invalid_trust_policy", "The trust policy is not valid (its detail says which field)."
)
INVALID_WEBHOOK = Problem(
    400, "invalid_webhook", "The webhook is not valid (its detail says which field)."
)
INVALID_CREDENTIAL_LIST = Problem(
    400, "invalid_credentials_list", "credentials must be a list of 1 to 1,000 strings."
)
INVALID_SERVICE_CLIENT = Problem(
    400, "invalid_service_client", "The service client is not valid (its detail says which field)."
)
INVALID_CATEGORY = Problem(400, "invalid_category", "category must be 'workspace' or 'admin'.")
INVALID_SCOPE = Problem(
    400, "invalid_scope", "scopes must be a non-empty subset of the category's scopes."
)
INVALID_WORKSPACE_ID = Problem(400, "invalid_workspace_id", "workspaceId must be a string.")
INVALID_USER_ID = Problem(
    400, "invalid_user_id", "A member is named by a user id (usr_…) or an email address."
)
WORKSPACE_ID_NOT_ALLOWED = Problem(
    400,
    "workspace_id_not_allowed",
    'An admin key is not bound to a workspace; for a workspace key, send "category": '
    '"workspace" with the workspaceId.',
)
WORKSPACE_ID_REQUIRED = Problem(
    400, "workspace_id_required", "A workspace key needs the workspaceId it is bound to."
)
INVALID_REQUEST = Problem(400, "invalid_request", "The request is not valid.")
INVALID_IDEMPOTENCY_KEY = Problem(
    400, "invalid_idempotency_key", "Idempotency-Key must be 1 to 255 printable ASCII characters."
)
INVALID_QUOTA = Problem(
    400, "invalid_quota", "requestsPerDay must be a whole number from 1 to 10000000, or null."
)
INVALID_LIFETIME = Problem(
    400, "invalid_lifetime", "expiresInDays must be a whole number from 1 to 90."
)
INVALID_GRACE_PERIOD = Problem(
    400,
    "invalid_grace_period",
    "gracePeriodSeconds must be a whole number from 0 to 604800 (7 days).",
)
INVALID_CIDR = Problem(
    400, "invalid_cidr", "allowedCidrs must be 1 to 20 IPv4 or IPv6 CIDRs, or null."
)
INVALID_DPOP_JKT = Problem(
    400,
    "invalid_dpop_jkt",
    "dpopJkt must be the RFC 7638 SHA-256 thumbprint of a public key: 43 base64url characters.",
)
INVALID_REPORT = Problem(400, "invalid_report", "The report is not GitHub's JSON array of tokens.")
# The data-plane path rule (access/paths.py). The authorizer answers it as a Deny with this
# code: API Gateway gives every Deny one status, 403 (docs/guides/authorizer.md).
INVALID_PATH = Problem(
    400,
    "invalid_path",
    "The path has a dot segment ('.', '..', also encoded), an encoded slash or backslash "
    "(%2F, %5C), a backslash or an empty segment: send the path normalized.",
)
CREDENTIAL_IN_URL = Problem(
    400,
    "credential_in_url",
    "Send the credential in the Authorization header ('Authorization: Bearer <key>'), "
    "never in the URL.",
)

# 401: no usable credential. The edge adds `WWW-Authenticate` (see access/principal.py).
MISSING_CREDENTIALS = Problem(
    401, "missing_credentials", "Send 'Authorization: Bearer <API key or token>'."
)
INVALID_CREDENTIALS = Problem(401, "invalid_credentials", "The credential is not valid.")
EXPIRED_CREDENTIALS = Problem(401, "expired_credentials", "The credential has expired.")
REVOKED_CREDENTIALS = Problem(401, "revoked_credentials", "The credential has been revoked.")
# A credential bound to a key pair (RFC 9449 DPoP): its proof is missing or wrong, or the
# credential came as a Bearer one. Their `WWW-Authenticate` names the DPoP scheme.
INVALID_DPOP_PROOF = Problem(
    401,
    "invalid_dpop_proof",
    "The DPoP proof is missing or not valid for this request, credential and key.",
)
DPOP_REQUIRED = Problem(
    401,
    "dpop_required",
    "This credential is bound to a key pair: send it as 'Authorization: DPoP <credential>'"
    " with a DPoP proof signed by that key.",
)
# A leaked-key report whose GitHub signature does not verify (no bearer credential there).
INVALID_SIGNATURE = Problem(
    401,
    "invalid_signature",
    "The report's Github-Public-Key-Signature does not verify with a published key.",
)

# 403: a known caller without the right.
WORKSPACE_MISMATCH = Problem(
    403, "workspace_mismatch", "This workspace key is bound to another workspace."
)
NOT_A_MEMBER = Problem(403, "not_a_member", "The caller is not a member of this workspace.")
INSUFFICIENT_SCOPE = Problem(
    403, "insufficient_scope", "The credential lacks a scope this request needs."
)
WORKSPACE_REQUIRED = Problem(
    403, "workspace_required", "Name the workspace with X-Workspace-Id."
)
OWNER_REQUIRED = Problem(
    403, "owner_required", "Only the workspace owner can change its members."
)
IP_NOT_ALLOWED = Problem(
    403, "ip_not_allowed", "This key may not be used from this address (its allowedCidrs)."
)

NOT_FOUND = Problem(404, "not_found", "No such resource.")
USER_NOT_FOUND = Problem(
    404,
    "user_not_found",
    "No user with this id or verified email has signed in: they must sign in once before "
    "they can be added.",
)
METHOD_NOT_ALLOWED = Problem(405, "method_not_allowed", "This method is not allowed here.")
KEY_NOT_ACTIVE = Problem(409, "key_not_active", "Only an active key can be rotated.")
OWNER_CANNOT_LEAVE = Problem(409, "owner_cannot_leave", "The owner cannot remove itself.")
LIMIT_REACHED = Problem(409, "limit_reached", "A limit of this stage was reached.")
KEY_REVOKED = Problem(410, "key_revoked", "This key has been revoked.")
KEY_NOT_REVEALABLE = Problem(
    410, "key_not_revealable", "This key was created before encryption at rest."
)
PAYLOAD_TOO_LARGE = Problem(413, "payload_too_large", "The request body is larger than 16 KiB.")
UNSUPPORTED_MEDIA_TYPE = Problem(415, "unsupported_media_type", "Send application/json.")
IDEMPOTENCY_KEY_REUSED = Problem(
    422,
    "idempotency_key_reused",
    "This Idempotency-Key was used with a different request in the last 24 hours; "
    "send a new key for a new request.",
)
# Answered by API Gateway's throttling (a gateway response in infra/), never by the code.
TOO_MANY_REQUESTS = Problem(429, "too_many_requests", "Too many requests; retry later.")
QUOTA_EXCEEDED = Problem(
    429,
    "quota_exceeded",
    "This key used its daily quota (requestsPerDay); retry after midnight UTC.",
)
INTERNAL_ERROR = Problem(500, "internal_error", "An internal error occurred.")
DEPENDENCY_UNAVAILABLE = Problem(
    503, "dependency_unavailable", "A dependency is unavailable; retry later."
)
DASHBOARD_NOT_CONFIGURED = Problem(
    503, "dashboard_not_configured", "The dashboard cannot sign anyone in: see DASHBOARD_LOGIN."
)

PROBLEMS: dict[str, Problem] = {
    problem.code: problem
    for problem in (
        INVALID_JSON,
        UNKNOWN_FIELD,
        UNKNOWN_PARAMETER,
        INVALID_PARAMETER,
        CONFLICTING_WORKSPACE_ID,
        INVALID_LABEL,
        INVALID_NAME,
        INVALID_CATEGORY,
        INVALID_TRUST_POLICY,
        INVALID_WEBHOOK,
        INVALID_CREDENTIAL_LIST,
        INVALID_SERVICE_CLIENT,
        INVALID_SCOPE,
        INVALID_WORKSPACE_ID,
        INVALID_USER_ID,
        WORKSPACE_ID_NOT_ALLOWED,
        WORKSPACE_ID_REQUIRED,
        INVALID_REQUEST,
        INVALID_IDEMPOTENCY_KEY,
        INVALID_LIFETIME,
        INVALID_QUOTA,
        INVALID_GRACE_PERIOD,
        INVALID_CIDR,
        INVALID_DPOP_JKT,
        INVALID_REPORT,
        INVALID_PATH,
        CREDENTIAL_IN_URL,
        MISSING_CREDENTIALS,
        INVALID_CREDENTIALS,
        EXPIRED_CREDENTIALS,
        REVOKED_CREDENTIALS,
        INVALID_DPOP_PROOF,
        DPOP_REQUIRED,
        INVALID_SIGNATURE,
        WORKSPACE_MISMATCH,
        NOT_A_MEMBER,
        INSUFFICIENT_SCOPE,
        WORKSPACE_REQUIRED,
        OWNER_REQUIRED,
        IP_NOT_ALLOWED,
        NOT_FOUND,
        USER_NOT_FOUND,
        METHOD_NOT_ALLOWED,
        KEY_NOT_ACTIVE,
        OWNER_CANNOT_LEAVE,
        LIMIT_REACHED,
        KEY_REVOKED,
        KEY_NOT_REVEALABLE,
        PAYLOAD_TOO_LARGE,
        UNSUPPORTED_MEDIA_TYPE,
        IDEMPOTENCY_KEY_REUSED,
        TOO_MANY_REQUESTS,
        QUOTA_EXCEEDED,
        INTERNAL_ERROR,
        DEPENDENCY_UNAVAILABLE,
        DASHBOARD_NOT_CONFIGURED,
    )
}

# -- RFC 6749 errors (the token endpoints: exchange, refresh) -------------------------------

OAUTH_INVALID_REQUEST = Problem(400, "invalid_request", "The token request is not valid.")
UNSUPPORTED_GRANT_TYPE = Problem(400, "unsupported_grant_type", "This grant type is not served.")
INVALID_TARGET = Problem(400, "invalid_target", "The audience or resource is not served here.")
INVALID_GRANT = Problem(400, "invalid_grant", "The grant is not valid.")
# The service's own 413 on a token endpoint, in the RFC 6749 shape.
OAUTH_PAYLOAD_TOO_LARGE = Problem(413, "invalid_request", PAYLOAD_TOO_LARGE.detail)
TEMPORARILY_UNAVAILABLE = Problem(
    503, "temporarily_unavailable", DEPENDENCY_UNAVAILABLE.detail
)

# ...and the MCP authorization server's (chalicelib/oauth/): its token, registration and
# revocation endpoints, and the errors it redirects back to a client with.
INVALID_CLIENT = Problem(401, "invalid_client", "Clients here are public: send no secret.")
UNAUTHORIZED_CLIENT = Problem(
    400, "unauthorized_client", "This client did not register this grant type."
)
OAUTH_INVALID_SCOPE = Problem(
    400, "invalid_scope", "The scope asks for something this server does not grant."
)
UNSUPPORTED_RESPONSE_TYPE = Problem(
    400, "unsupported_response_type", "Only the authorization code flow is served here."
)
ACCESS_DENIED = Problem(400, "access_denied", "The user or the login provider refused.")
SERVER_ERROR = Problem(500, "server_error", "Sign-in is not configured.")
INVALID_REDIRECT_URI = Problem(400, "invalid_redirect_uri", "A redirect URI is not allowed.")
INVALID_CLIENT_METADATA = Problem(
    400, "invalid_client_metadata", "The client metadata is not valid."
)
REGISTRATION_LIMITED = Problem(
    429, "too_many_requests", "Too many registrations from this address; retry later."
)

# A delegation's subject refused as a data-plane request with it would be (its 401 or 403):
# the description names the data-plane code (revoked_credentials, not_a_member, ...).
INVALID_SUBJECT_TOKEN = Problem(
    401, "invalid_token", "The subject_token is not a credential that works here."
)
SUBJECT_NOT_ALLOWED = Problem(
    403, "access_denied", "The subject_token may not act in this workspace."
)

# RFC 9449 at the token endpoints: a DPoP proof that does not pass, and a proof without the
# server's current nonce (answered with the nonce in `DPoP-Nonce`: sign again with it).
OAUTH_INVALID_DPOP_PROOF = Problem(
    400, "invalid_dpop_proof", "The DPoP proof is not valid for this token request."
)
USE_DPOP_NONCE = Problem(
    400, "use_dpop_nonce", "Sign the DPoP proof again with the nonce in the DPoP-Nonce header."
)

OAUTH_ERRORS: tuple[Problem, ...] = (
    OAUTH_INVALID_REQUEST,
    UNSUPPORTED_GRANT_TYPE,
    INVALID_TARGET,
    INVALID_GRANT,
    OAUTH_PAYLOAD_TOO_LARGE,
    TEMPORARILY_UNAVAILABLE,
    INVALID_CLIENT,
    UNAUTHORIZED_CLIENT,
    OAUTH_INVALID_SCOPE,
    UNSUPPORTED_RESPONSE_TYPE,
    SUBJECT_NOT_ALLOWED,  # before ACCESS_DENIED: the reference's one entry is the 400
    ACCESS_DENIED,
    SERVER_ERROR,
    INVALID_REDIRECT_URI,
    INVALID_CLIENT_METADATA,
    REGISTRATION_LIMITED,
    INVALID_SUBJECT_TOKEN,
    OAUTH_INVALID_DPOP_PROOF,
    USE_DPOP_NONCE,
)


RETRY_AFTER_SECONDS = 1


class DependencyUnavailable(ServiceError):
    """DynamoDB or KMS failed after retries: the service fails closed with 503.

    `detail` replaces the default where the caller needs to know more, for example that a
    write may have happened although its answer was lost.
    """

    def __init__(self, dependency: str, detail: str | None = None):
        super().__init__(
            DEPENDENCY_UNAVAILABLE,
            detail or f"A dependency ({dependency}) is unavailable; retry later.",
            # A failed dependency is retried by the caller: one second is DynamoDB's and
            # KMS's usual recovery (a conflicting write in another Region, a throttle).
            headers={"Retry-After": str(RETRY_AFTER_SECONDS)},
        )
        self.dependency = dependency
