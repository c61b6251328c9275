"""`/v1/auth/api-keys`: create, list, get, reveal, rotate, update, revoke.

Each operation is declared once (`api/operations.py`): the edge authenticates (401),
authorizes (403), finds the caller's own key (404), validates the request (400/413/415),
then the view acts (409 and the answer). The key lifecycle's refusals (`keys/refusals.py`)
are answered here, each rule with its problem, and the query parameters named.
"""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from chalicelib import errors, idempotency
from chalicelib.access.principal import Principal
from chalicelib.api import keys_models as models
from chalicelib.api.operations import MANAGER, Call, DomainRefusals, Operations, Reply
from chalicelib.clock import rfc3339
from chalicelib.errors import Problem, ServiceError
from chalicelib.keys.model import ApiKey
from chalicelib.keys.refusals import KeyRefusal, KeyRefused, Rule
from chalicelib.keys.service import IssuedKey, KeyChanges, NewKey
from chalicelib.runtime import services

# Each rule of the key lifecycle, as the problem it is answered with.
PROBLEMS: dict[Rule, Problem] = {
    Rule.CATEGORY_UNKNOWN: errors.INVALID_CATEGORY,
    Rule.ADMIN_KEY_WITH_WORKSPACE: errors.WORKSPACE_ID_NOT_ALLOWED,
    Rule.WORKSPACE_KEY_WITHOUT_WORKSPACE: errors.WORKSPACE_ID_REQUIRED,
    Rule.SCOPES_OUTSIDE_CATEGORY: errors.INVALID_SCOPE,
    Rule.SCOPES_BEYOND_CREATOR: errors.INSUFFICIENT_SCOPE,
    Rule.WORKSPACE_ID_MALFORMED: errors.INVALID_WORKSPACE_ID,
    Rule.NOT_A_MEMBER: errors.NOT_A_MEMBER,
    Rule.KEY_LIMIT: errors.LIMIT_REACHED,
    Rule.CURSOR_NOT_OURS: errors.INVALID_PARAMETER,
    Rule.STATUS_UNKNOWN: errors.INVALID_PARAMETER,
    Rule.NO_SUCH_KEY: errors.NOT_FOUND,
    Rule.KEY_REVOKED: errors.KEY_REVOKED,
    Rule.NOT_REVEALABLE: errors.KEY_NOT_REVEALABLE,
    Rule.SECRET_LOST: errors.KEY_NOT_REVEALABLE,
    Rule.KEY_NOT_ACTIVE: errors.KEY_NOT_ACTIVE,
    Rule.USAGE_START_NOT_A_TIME: errors.INVALID_PARAMETER,
    Rule.USAGE_END_NOT_A_TIME: errors.INVALID_PARAMETER,
    Rule.USAGE_RANGE_BACKWARDS: errors.INVALID_PARAMETER,
    Rule.USAGE_RANGE_TOO_LONG: errors.INVALID_PARAMETER,
}
AN_RFC_3339_TIME = "must be an RFC 3339 time, such as 2026-11-21T00:00:00Z."
# What the answer says, where the rule's words are the edge's: the request's own names (the
# query parameters) or the problem's default is not precise enough.
DETAILS: dict[Rule, str] = {
    Rule.WORKSPACE_ID_MALFORMED: (
        "workspaceId in the body must be a workspace id (ws_ and 26 characters)."
    ),
    Rule.CURSOR_NOT_OURS: "cursor is not a cursor this API issued.",
    Rule.STATUS_UNKNOWN: "status must be active, revoked or expired.",
    Rule.NO_SUCH_KEY: "No API key with this id.",
    Rule.SECRET_LOST: "This key's stored secret cannot be recovered.",
    Rule.USAGE_START_NOT_A_TIME: f"from {AN_RFC_3339_TIME}",
    Rule.USAGE_END_NOT_A_TIME: f"to {AN_RFC_3339_TIME}",
    Rule.USAGE_RANGE_BACKWARDS: "from must be before to.",
}


def problem(refusal: KeyRefusal) -> ServiceError:
    """A refusal of the key lifecycle as its problem document."""
    return PROBLEMS[refusal.rule].error(DETAILS.get(refusal.rule, refusal.detail))


blueprint = Operations(
    __name__, refusals=DomainRefusals(KeyRefused, lambda refused: problem(refused.refusal))
)
COLLECTION = "/v1/auth/api-keys"
KEY = COLLECTION + "/{key_id}"
TAG = "API keys"
NOT_FOUND = errors.NOT_FOUND  # no key with this id is the caller's
# Every key operation is key management: a user token, or an admin key with workspace:admin.
KEY_OPERATION: dict[str, Any] = {"tag": TAG, "policy": MANAGER}


def owned(principal: Principal, key_id: str) -> ApiKey:
    return services().key_service.owned(principal, key_id)


def _issued(issued: IssuedKey, created: bool) -> Reply:
    now = services().clock.now()
    headers = {"Location": f"{COLLECTION}/{issued.api_key.id}"} if created else {}
    if issued.replayed:
        headers[idempotency.REPLAYED_HEADER] = "true"
    body = models.ApiKeyWithSecret.issued(issued.api_key, now, issued.plaintext)
    return Reply(body, None, headers)


@blueprint.operation(
    "POST",
    COLLECTION,
    summary="Create an API key",
    body=models.NewApiKey,
    response=models.ApiKeyWithSecret,
    status=201,
    idempotent=True,
    secret=True,
    problems=(
        errors.INVALID_LABEL,
        errors.INVALID_CATEGORY,
        errors.INVALID_SCOPE,
        errors.WORKSPACE_ID_REQUIRED,
        errors.WORKSPACE_ID_NOT_ALLOWED,
        errors.INVALID_LIFETIME,
        errors.INVALID_CIDR,
        errors.INVALID_QUOTA,
        errors.INVALID_DPOP_JKT,
        errors.LIMIT_REACHED,
    ),
    answer="The key, with its plaintext `key` (shown here and on reveal); the same key again "
    "for a retry with the same Idempotency-Key.",
    **KEY_OPERATION,
)
def create_api_key(call: Call) -> Reply:
    body: models.NewApiKey = call.body
    new_key = NewKey(
        label=body.label,
        # Omitted or null: admin; any other value the key service judges.
        category=body.category if body.category is not None else "admin",
        workspace_id=body.workspace(),
        scopes=body.scopes,
        lifetime_days=body.expires_in_days,
        allowed_cidrs=body.allowed_cidrs,
        requests_per_day=body.requests_per_day,
        dpop_jkt=body.dpop_jkt,
    )
    return _issued(services().key_service.create(call.principal, new_key, call.idempotent), True)


@blueprint.operation(
    "GET",
    COLLECTION,
    summary="List the caller's keys",
    query=models.KeyListQuery,
    response=models.KeyPageBody,
    status=200,
    answer="A page of keys, newest first, without plaintext.",
    description="`q` searches: only keys whose label contains it (trimmed; at most 100 "
    "characters, no control characters, else 400 `invalid_parameter`; empty: no search), "
    "compared without regard to case or Unicode normalization form (case folding, NFKC), "
    "combined with `status` and the workspace. A search "
    "reads at most 1,000 of the caller's keys per request: a page may then hold fewer than "
    "`limit` keys, even none, with a `nextCursor` that goes on searching. The search is over "
    "when `nextCursor` is null.",
    **KEY_OPERATION,
)
def list_api_keys(call: Call) -> models.KeyPageBody:
    query: models.KeyListQuery = call.query
    page = services().key_service.list(
        call.principal, query.limit, query.cursor, query.status, query.q
    )
    if isinstance(page, KeyRefusal):
        raise problem(page)
    now = services().clock.now()
    return models.KeyPageBody(
        keys=[models.ApiKeyBody.of(k, now) for k in page.keys], next_cursor=page.next_cursor
    )


@blueprint.operation(
    "GET",
    KEY,
    summary="Get one of the caller's keys",
    find=lambda principal, key_id: services().key_service.get(principal, key_id),
    response=models.ApiKeyBody,
    status=200,
    problems=(NOT_FOUND,),
    answer="The key, without plaintext.",
    **KEY_OPERATION,
)
def get_api_key(call: Call) -> models.ApiKeyBody:
    return models.ApiKeyBody.of(call.found, services().clock.now())


@blueprint.operation(
    "GET",
    KEY + "/reveal",
    summary="Show a key's plaintext again",
    find=lambda principal, key_id: services().key_service.sealed(principal, key_id),
    query=models.RevealQuery,
    response=models.ApiKeyWithSecret,
    status=200,
    secret=True,
    problems=(NOT_FOUND, errors.KEY_REVOKED, errors.KEY_NOT_REVEALABLE),
    answer="The key with its plaintext `key`.",
    **KEY_OPERATION,
)
def reveal_api_key(call: Call) -> Reply:
    api_key, ciphertext = call.found
    return _issued(services().key_service.reveal(call.principal, api_key, ciphertext), False)


@blueprint.operation(
    "POST",
    KEY + "/rotate",
    summary="Replace a key by a new one",
    find=lambda principal, key_id: services().key_service.owned(
        principal, key_id, hands_out=True
    ),
    body=models.Rotation,
    body_required=False,
    response=models.ApiKeyWithSecret,
    status=201,
    idempotent=True,
    secret=True,
    problems=(NOT_FOUND, errors.INVALID_GRACE_PERIOD, errors.KEY_NOT_ACTIVE),
    answer="The successor, with its plaintext `key`; the old key is revoked. The same "
    "successor again for a retry with the same Idempotency-Key.",
    description="The successor inherits label, category, workspace, scopes, lifetime and "
    "`allowedCidrs`. Without a grace period the old key is revoked at once; with one it keeps "
    "working until the grace ends.",
    **KEY_OPERATION,
)
def rotate_api_key(call: Call) -> Reply:
    body: models.Rotation = call.body
    grace = timedelta(seconds=body.grace_period_seconds)
    key_service = services().key_service
    return _issued(key_service.rotate(call.principal, call.found, grace, call.idempotent), True)


@blueprint.operation(
    "PATCH",
    KEY,
    summary="Change a key's label, IP allow-list or daily quota",
    find=owned,
    body=models.ApiKeyChanges,
    response=models.ApiKeyBody,
    status=200,
    problems=(
        NOT_FOUND,
        errors.INVALID_LABEL,
        errors.INVALID_CIDR,
        errors.INVALID_QUOTA,
        errors.KEY_NOT_ACTIVE,
    ),
    answer="The key, without plaintext.",
    description="Effective on the next request. `allowedCidrs: null` removes the list; "
    "`requestsPerDay: null` removes the quota.",
    **KEY_OPERATION,
)
def update_api_key(call: Call) -> models.ApiKeyBody:
    body: models.ApiKeyChanges = call.body
    changes = KeyChanges(
        label=body.label,
        cidrs_given="allowed_cidrs" in body.model_fields_set,
        allowed_cidrs=body.allowed_cidrs,
        quota_given="requests_per_day" in body.model_fields_set,
        requests_per_day=body.requests_per_day,
    )
    updated = services().key_service.update(call.principal, call.found, changes)
    return models.ApiKeyBody.of(updated, services().clock.now())


@blueprint.operation(
    "DELETE",
    KEY,
    summary="Revoke a key",
    find=owned,
    response=None,
    status=204,
    problems=(NOT_FOUND,),
    description="Revocation takes effect on the very next request. A revoked key stays "
    "readable (status `revoked`) for 30 days; revoking it again is 204.",
    **KEY_OPERATION,
)
def revoke_api_key(call: Call) -> None:
    services().key_service.revoke(call.principal, call.found)


@blueprint.operation(
    "GET",
    KEY + "/usage",
    summary="A key's requests by hour or day",
    find=owned,
    query=models.UsageQuery,
    response=models.KeyUsage,
    status=200,
    problems=(NOT_FOUND,),
    answer="The key's counted requests per UTC hour or day, every bucket of the range.",
    description="Successful decisions on the key (its delegated tokens' included), counted "
    "per UTC hour. Counts reach the store within one usage write window (5 minutes) of the "
    "request; a bucket is final (`complete`) one window after its end. Default: the last 7 "
    "days by day; at most 31 days by hour, 400 by day.",
    **KEY_OPERATION,
)
def key_usage(call: Call) -> models.KeyUsage:
    query: models.UsageQuery = call.query
    found = services().key_service.usage(
        call.found,
        query.granularity,
        query.from_,
        query.to,
        services().settings.usage_flush_seconds,
    )
    if isinstance(found, KeyRefusal):
        raise problem(found)
    return models.KeyUsage(
        key_id=call.found.id,
        granularity=found.granularity,
        buckets=[
            models.UsageBucket(start=str(rfc3339(b.start)), requests=b.requests)
            for b in found.buckets
        ],
        complete=found.complete,
    )
