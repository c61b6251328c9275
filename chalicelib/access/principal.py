"""The resolved caller (a principal), and a refusal: the two results of request resolution;
and `Resolves`, the shape of what resolves a request to one of them."""

from __future__ import annotations

from datetime import datetime
from typing import TYPE_CHECKING, Any, Literal, NamedTuple, Protocol

from chalicelib.errors import Problem, ServiceError
from chalicelib.records import Record, field

if TYPE_CHECKING:
    from chalicelib.access.dpop import DpopRequest
    from chalicelib.config import McpResource

# An `mcp_token` is an access token this service issued to an MCP client: it is resolved only
# at its own resource (the data-plane authorizer), never by this service's routes. A
# `delegated` token (minted from a key, a user token or another delegated token) and a
# `workload` token (exchanged for a platform's identity token under a trust policy) act as a
# workspace key bound to their workspace with exactly their scopes.
# A `service_client` token (client_credentials with private_key_jwt) acts the same way, and
# ends when its client is deleted.
CredentialKind = Literal[
    "user_token", "api_key", "mcp_token", "delegated", "workload", "service_client"
]

# RFC 6750 §3: a 401 names the scheme, and says `invalid_token` when a credential was sent.
REALM = 'Bearer realm="svc"'
# RFC 9449 §7.1: a DPoP refusal's challenge names the scheme, the error and the algorithms a
# proof may use (access/dpop.py holds the list; not imported here, it is not needed to say it).
DPOP_ALGS = "ES256 RS256 EdDSA"


# The data-plane gateway's 401 is the same for every request (infra/resources.json): it names
# both schemes and the algorithms, never the error.
GATEWAY_CHALLENGE = f'{REALM}, DPoP algs="{DPOP_ALGS}"'


def dpop_challenge(error: str) -> str:
    return f'DPoP error="{error}", algs="{DPOP_ALGS}"'


class Origin(NamedTuple):
    """Where a request came from: what an allow-list checks and an audit event records."""

    source_ip: str | None = None
    user_agent: str | None = None


class Principal(Record):
    """Who is calling, by which credential, for which workspace, with which scopes."""

    user_id: str
    credential: CredentialKind
    scopes: frozenset[str]
    workspace_id: str | None = None
    key_id: str | None = None
    category: str | None = None
    client_id: str | None = None  # the MCP client an mcp_token was issued to
    # A delegated or workload token: its `jti`; a delegated token's `root` (the key_ or usr_
    # at the top of its chain); a workload token's trust policy; the `act` claim of either.
    token_id: str | None = None
    root: str | None = None
    policy_id: str | None = None
    # The sign-in (refresh family) a user token, or a token delegated from one, ends with.
    session_id: str | None = None
    act: dict[str, Any] | None = field(default=None, compare=False, hash=False)
    # When the credential itself stops working (a key's expiry or end of grace, a token's
    # `exp`): a token delegated from it never outlives it.
    expires_at: datetime | None = field(default=None, compare=False)
    # Not part of who the caller is: the same caller from another address is the same principal.
    origin: Origin | None = field(default=None, compare=False)
    # The RFC 7638 thumbprint of the key pair the credential is bound to (RFC 9449 DPoP), and
    # whose proof came with this request; None for a bearer credential.
    dpop_jkt: str | None = None


class Refusal(NamedTuple):
    """Why a request was not resolved to a principal, or may not touch the workspace it
    names: a result, not an exception.

    `problem` is a 401 or 403 of the error catalogue (a 400 for a malformed X-Workspace-Id, a
    404 for a workspace the caller may not see: `decisions/workspace_access.py`).
    """

    problem: Problem
    detail: str | None = None  # more precise than the problem's default, where that helps
    retry_after: int | None = None  # seconds, for a refusal that ends (a daily quota)
    # A refusal of a request made with the DPoP scheme, or of a bound credential: the
    # `error` of its `WWW-Authenticate: DPoP` challenge (RFC 9449 §7.1).
    dpop_error: str | None = None

    @property
    def status(self) -> int:
        return self.problem.status

    @property
    def code(self) -> str:
        return self.problem.code

    def error(self, credential_sent: bool) -> ServiceError:
        """The refusal as the error a route raises (the authorizer answers it as a policy)."""
        headers = {}
        if self.retry_after is not None:
            headers["Retry-After"] = str(self.retry_after)
        if self.status == 401 and self.dpop_error is not None:
            headers["WWW-Authenticate"] = dpop_challenge(self.dpop_error)
        elif self.status == 401:
            headers["WWW-Authenticate"] = (
                f'{REALM}, error="invalid_token"' if credential_sent else REALM
            )
        return self.problem.error(self.detail, headers=headers)


class Resolves(Protocol):
    """`Authorization` and `X-Workspace-Id` (and where and how they came) to a principal or a
    refusal: `decisions/resolution.py`'s `Resolver`, as the authorizer and delegation need
    it."""

    def resolve(
        self,
        authorization: str | None,
        workspace_id: str | None,
        resource: McpResource | None = None,
        origin: Origin | None = None,
        dpop: DpopRequest | None = None,
    ) -> Principal | Refusal: ...
