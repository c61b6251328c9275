"""Each hand-written field schema of a request (a `WithJsonSchema` the OpenAPI document
publishes instead of pydantic's own) against the model that validates the field: a value the
schema allows is accepted, and values just outside it (past a bound, another type, a value
no enum or pattern has) are refused, by the model or, where the model leaves the rule to the
service, by the step named (`LATER`). Every such field has its cases here: a new one without
them fails `test_every_hand_written_request_schema_has_its_cases`."""

from __future__ import annotations

import ipaddress
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

import pytest
from jsonschema import Draft202012Validator, FormatChecker
from pydantic import BaseModel, RootModel, ValidationError, WithJsonSchema

from chalicelib import ids
from chalicelib.access.scopes import CATEGORIES, DATA_PLANE_SCOPES, SCOPES_BY_CATEGORY
from chalicelib.api import (
    credentials_models,
    events_models,
    keys_models,
    oauth_models,
    service_clients_models,
    sessions_models,
    trust_policies_models,
    webhooks_models,
    workspaces_models,
)
from chalicelib.api.openapi import DECLARED, PUBLIC
from chalicelib.api.wire import WireSchema
from chalicelib.errors import ServiceError
from chalicelib.keys import usage
from chalicelib.keys.refusals import KeyRefusal
from chalicelib.service_clients import model as clients
from chalicelib.webhooks import model as hooks
from chalicelib.workloads import model as trust

WS = "ws_01JQ0000000000000000000000"
KEY = "key_01JQ0000000000000000000000"
JKT = "0ZcOCORZNYy-DWpqq30jZyJGHTN0d2HglBV3uiguA4I"
EXCHANGE = sessions_models.TOKEN_EXCHANGE_GRANT
SERVED = {"resources": frozenset({"https://memory.test.example/mcp"})}
JWK = {"kty": "EC", "crv": "P-256", "x": "x", "y": "y"}
TOO_LONG_LABEL = "a" * 101

# A valid request of each model: a case changes one field of it.
BASES: dict[type[BaseModel], dict[str, Any]] = {
    keys_models.NewApiKey: {"label": "ci"},
    keys_models.ApiKeyChanges: {},
    keys_models.KeyListQuery: {},
    keys_models.RevealQuery: {},
    keys_models.UsageQuery: {},
    workspaces_models.NewWorkspace: {"name": "Research"},
    trust_policies_models.NewTrustPolicy: {
        "name": "deploys",
        "issuer": "https://token.example.com",
        "audience": "memory",
        "subject": "repo:acme/agents:ref:refs/heads/main",
        "scopes": ["memory"],
    },
    webhooks_models.NewWebhook: {"url": "https://hooks.example.com/a", "events": ["*"]},
    webhooks_models.WebhookChanges: {},
    webhooks_models.DeliveryQuery: {},
    service_clients_models.NewServiceClient: {
        "name": "ci",
        "scopes": ["memory"],
        "jwksUri": "https://machines.example.com/jwks.json",
    },
    credentials_models.CredentialReport: {"credentials": ["x"]},
    events_models.EventQuery: {},
    sessions_models.ExchangeRequest: {"id_token": "a.b.c"},
    sessions_models.TokenExchangeForm: {
        "grant_type": EXCHANGE,
        "subject_token": "a.b.c",
        "subject_token_type": sessions_models.ID_TOKEN_TYPE,
    },
    sessions_models.RefreshRequest: {"refresh_token": "r"},
    oauth_models.RevocationForm: {"token": "t"},
    oauth_models.ClientMetadata: {"redirect_uris": ["https://app.example.com/cb"]},
    oauth_models.AuthorizationQuery: {
        "client_id": "c",
        "redirect_uri": "https://app.example.com/cb",
        "response_type": "code",
        "code_challenge": "a" * 43,
        "code_challenge_method": "S256",
        "resource": "https://memory.test.example/mcp",
    },
    oauth_models.CallbackQuery: {},
    oauth_models.ConsentQuery: {},
    oauth_models.ConsentForm: {},
    oauth_models.AuthorizationCodeGrant: {
        "grant_type": "authorization_code",
        "client_id": "c",
        "code": "x",
        "redirect_uri": "https://app.example.com/cb",
        "code_verifier": "v",
    },
    oauth_models.RefreshTokenGrant: {
        "grant_type": "refresh_token",
        "client_id": "c",
        "refresh_token": "r",
    },
    oauth_models.ClientCredentialsForm: {
        "grant_type": "client_credentials",
        "client_assertion_type": "urn:ietf:params:oauth:client-assertion-type:jwt-bearer",
        "client_assertion": "a.b.c",
    },
    oauth_models.JwtBearerForm: {
        "grant_type": "urn:ietf:params:oauth:grant-type:jwt-bearer",
        "assertion": "a.b.c",
    },
}

# The models of query parameters with a number's schema (`limit`): every value a string.
QUERIES = {
    keys_models.KeyListQuery,
    keys_models.RevealQuery,
    keys_models.UsageQuery,
    webhooks_models.DeliveryQuery,
    events_models.EventQuery,
}

# A string parameter with no rule of its own: any string is allowed, and a query or form
# cannot carry anything else; sent in JSON, another type is refused.
ANY = (["x", "x y", ""], [1, True])
ANY_IN_QUERY = (["x", ""], [])

# (model, wire name): (values the schema allows, values just outside it).
CASES: dict[tuple[type[BaseModel], str], tuple[list[Any], list[Any]]] = {
    # -- keys
    (keys_models.NewApiKey, "label"): (
        ["a", " a ", "a" * 100, "Ångström 👩‍💻"],
        ["", "  ", TOO_LONG_LABEL, "a\x00", 1, None],
    ),
    (keys_models.NewApiKey, "category"): (["admin", None], [1, "root", ""]),
    (keys_models.NewApiKey, "workspaceId"): ([None, ""], [1, "ws_1", KEY]),
    (keys_models.NewApiKey, "workspace_id"): ([None, ""], [1, "ws_1"]),
    (keys_models.NewApiKey, "scopes"): (
        [["memory"], ["workspace:admin"], None],
        [[], ["nope"], [1], "memory"],
    ),
    (keys_models.NewApiKey, "allowedCidrs"): (
        [["10.0.0.0/8"], ["2001:db8::/32"], None],
        [[], ["10.0.0.1/8"], ["nonsense"], ["10.0.0.0/8"] * 21, "10.0.0.0/8"],
    ),
    (keys_models.NewApiKey, "requestsPerDay"): ([1, 10_000_000, None], [0, 10_000_001, "5", 1.5]),
    (keys_models.NewApiKey, "dpopJkt"): ([JKT, None], [JKT[:-1], JKT + "A", "+" * 43, 1]),
    (keys_models.ApiKeyChanges, "label"): (["a", "a" * 100], ["", TOO_LONG_LABEL, None, 1]),
    (keys_models.ApiKeyChanges, "allowedCidrs"): ([["10.0.0.0/8"], None], [[], ["10.0.0.1/8"]]),
    (keys_models.ApiKeyChanges, "requestsPerDay"): ([1, None], [0, 10_000_001]),
    (keys_models.KeyListQuery, "limit"): (["1", "50", "100"], ["0", "101", "x", "", "1.5"]),
    (keys_models.KeyListQuery, "cursor"): (["c"], []),
    (keys_models.KeyListQuery, "workspace_id"): ([WS, ""], ["ws_1"]),
    (keys_models.KeyListQuery, "q"): (["bulk key", "", "x" * 100], ["x" * 101, "a\u0000b"]),
    (keys_models.RevealQuery, "workspace_id"): ([WS, ""], ["ws_1"]),
    (keys_models.UsageQuery, "granularity"): (["hour", "day"], ["week", ""]),
    (keys_models.UsageQuery, "from"): (["2026-11-21T12:00:00Z"], ["yesterday"]),
    (keys_models.UsageQuery, "to"): (["2026-11-21T12:00:00Z"], ["yesterday"]),
    (keys_models.UsageQuery, "workspace_id"): ([WS, ""], ["ws_1"]),
    # -- workspaces
    (workspaces_models.NewWorkspace, "name"): (
        ["R", "a" * 100, " Research "],
        ["", " ", TOO_LONG_LABEL, "\u202e", 1],
    ),
    # -- trust policies (more in test_trust_policy_schema_properties.py)
    (trust_policies_models.NewTrustPolicy, "name"): (["a", "a" * 100], ["", TOO_LONG_LABEL, 1]),
    (trust_policies_models.NewTrustPolicy, "issuer"): (
        ["https://token.actions.githubusercontent.com", "https://a.example.com:8443/t"],
        [
            "http://a.example.com",
            "https://10.0.0.1",
            "https://0x7f",
            "https://a.example.com?x",
            "",
            1,
        ],
    ),
    (trust_policies_models.NewTrustPolicy, "audience"): (["a", "a" * 255], ["", " ", "a" * 256, 1]),
    (trust_policies_models.NewTrustPolicy, "subject"): (
        ["repo:acme/x", "repo:a*", "abcde/*"],
        ["*", "ab:*", "a*b*", "", 1],
    ),
    (trust_policies_models.NewTrustPolicy, "claims"): (
        [{"repository_owner": "acme"}],
        [None, {"aud": "x"}, {"a": ""}, {f"c{i}": "x" for i in range(11)}, {"a": 1}],
    ),
    (trust_policies_models.NewTrustPolicy, "scopes"): (
        [["memory"], ["memory", "skills"]],
        [[], ["workspace:admin"], ["memory", "memory"], "memory"],
    ),
    (trust_policies_models.NewTrustPolicy, "maxLifetimeSeconds"): ([60, 3600], [59, 3601, "60"]),
    # -- webhooks
    (webhooks_models.NewWebhook, "url"): (
        ["https://hooks.example.com/a"],
        [1, "http://hooks.example.com/a", "", "https://hooks.example.com/" + "a" * 2048],
    ),
    (webhooks_models.NewWebhook, "events"): (
        [["*"], ["key.created", "key.revoked"]],
        [[1], "key.created", [], ["key.nope"], ["*", "*"]],
    ),
    (webhooks_models.NewWebhook, "description"): (
        ["alerts", None],
        ["", TOO_LONG_LABEL, "a\x07", 1],
    ),
    (webhooks_models.WebhookChanges, "url"): (
        ["https://hooks.example.com/a"],
        [None, 1, "http://hooks.example.com/a"],
    ),
    (webhooks_models.WebhookChanges, "events"): ([["*"]], [None, [1], [], ["key.nope"]]),
    (webhooks_models.WebhookChanges, "enabled"): ([True, False], [None, "true", 1]),
    (webhooks_models.DeliveryQuery, "limit"): (["1", "100"], ["0", "101"]),
    (webhooks_models.DeliveryQuery, "cursor"): (["c"], []),
    # -- service clients
    (service_clients_models.NewServiceClient, "name"): (["a", "a" * 100], ["", TOO_LONG_LABEL]),
    (service_clients_models.NewServiceClient, "scopes"): (
        [["memory"], ["skills", "memory"]],
        [[1], "memory", [], ["workspace:admin"], ["memory", "memory"]],
    ),
    (service_clients_models.NewServiceClient, "jwks"): (
        [{"keys": [JWK]}],
        [None, [JWK], {"keys": []}, {"keys": [{**JWK, "d": "x"}]}, {"keys": [{"kty": "oct"}]}],
    ),
    (service_clients_models.NewServiceClient, "jwksUri"): (
        ["https://machines.example.com/j"],
        [None, 1, "http://machines.example.com/j"],
    ),
    # -- leaked credentials
    (credentials_models.CredentialReport, "credentials"): (
        [["x"], ["x" * 200], ["x"] * 1000],
        [[], [""], ["x" * 201], ["x"] * 1001, [1], "x"],
    ),
    # -- audit events
    (events_models.EventQuery, "limit"): (["1", "100"], ["0", "101"]),
    (events_models.EventQuery, "cursor"): (["c"], []),
    (events_models.EventQuery, "type"): (["key.created"], []),
    (events_models.EventQuery, "keyId"): ([KEY], []),
    (events_models.EventQuery, "workspace_id"): ([WS, ""], ["ws_1"]),
    # -- sessions: the JSON exchange and refresh, the RFC 8693 form
    (sessions_models.ExchangeRequest, "grant_type"): ([EXCHANGE], ["refresh_token", 1]),
    (sessions_models.ExchangeRequest, "id_token"): (["a.b.c"], [1]),
    (sessions_models.ExchangeRequest, "subject_token"): ANY,
    (sessions_models.ExchangeRequest, "subject_token_type"): (
        [*sessions_models.SUBJECT_TOKEN_TYPES],
        ["jwt", 1],
    ),
    (sessions_models.ExchangeRequest, "workspace_id"): ANY,
    (sessions_models.ExchangeRequest, "scope"): ANY,
    (sessions_models.ExchangeRequest, "expires_in"): ([60, 3600], [59, 3601, "900"]),
    (sessions_models.ExchangeRequest, "actor"): (["browser", "a" * 100], ["", TOO_LONG_LABEL, 1]),
    (sessions_models.TokenExchangeForm, "workspace_id"): ANY,
    (sessions_models.TokenExchangeForm, "scope"): ANY,
    (sessions_models.TokenExchangeForm, "requested_token_type"): (
        [sessions_models.ACCESS_TOKEN_TYPE],
        [sessions_models.ID_TOKEN_TYPE],
    ),
    (sessions_models.TokenExchangeForm, "audience"): ANY,
    (sessions_models.TokenExchangeForm, "resource"): ANY,
    (sessions_models.TokenExchangeForm, "expires_in"): ([60, 3600], [59, 3601]),
    (sessions_models.TokenExchangeForm, "actor"): (["browser"], ["", TOO_LONG_LABEL]),
    (sessions_models.RefreshRequest, "grant_type"): (["refresh_token"], ["authorization_code", 1]),
    # -- the MCP authorization server
    (oauth_models.RevocationForm, "token_type_hint"): ANY,
    (oauth_models.RevocationForm, "client_id"): ANY,
    (oauth_models.ClientMetadata, "redirect_uris"): (
        [
            ["https://app.example.com/cb"],
            ["http://127.0.0.1:9/cb"],
            ["https://a.example.com/cb"] * 10,
        ],
        [
            [],
            ["https://a.example.com/cb"] * 11,
            ["https://a.example.com/" + "a" * 2000],
            [1],
            "https://a.example.com/cb",
        ],
    ),
    (oauth_models.ClientMetadata, "grant_types"): (
        [["authorization_code"], ["authorization_code", "refresh_token"]],
        [[], ["refresh_token"], ["implicit"], "authorization_code"],
    ),
    (oauth_models.ClientMetadata, "client_name"): (["Claude", "a" * 100], ["", "a" * 101, None, 1]),
    (oauth_models.AuthorizationQuery, "scope"): (
        ["memory", "memory offline_access", " memory\tskills ", ""],
        ["openid", "memory openid"],
    ),
    (oauth_models.AuthorizationQuery, "prompt"): ANY_IN_QUERY,
    (oauth_models.CallbackQuery, "state"): ANY_IN_QUERY,
    (oauth_models.CallbackQuery, "iss"): ANY_IN_QUERY,
    (oauth_models.CallbackQuery, "code"): ANY_IN_QUERY,
    (oauth_models.CallbackQuery, "error"): ANY_IN_QUERY,
    (oauth_models.CallbackQuery, "error_description"): ANY_IN_QUERY,
    (oauth_models.ConsentQuery, "consent"): ANY_IN_QUERY,
    (oauth_models.ConsentForm, "consent"): ANY_IN_QUERY,
    (oauth_models.ConsentForm, "csrf"): ANY_IN_QUERY,
    (oauth_models.ConsentForm, "decision"): (["allow", "deny"], []),
    (oauth_models.ConsentForm, "workspace_id"): ([WS], []),
    (oauth_models.AuthorizationCodeGrant, "resource"): ANY_IN_QUERY,
    (oauth_models.RefreshTokenGrant, "resource"): ANY_IN_QUERY,
    (oauth_models.RefreshTokenGrant, "scope"): ANY_IN_QUERY,
    (oauth_models.ClientCredentialsForm, "client_id"): ANY_IN_QUERY,
    (oauth_models.ClientCredentialsForm, "scope"): ANY_IN_QUERY,
    (oauth_models.ClientCredentialsForm, "resource"): ANY_IN_QUERY,
    (oauth_models.ClientCredentialsForm, "expires_in"): (["60", "900"], []),
    (oauth_models.JwtBearerForm, "workspace_id"): ANY_IN_QUERY,
    (oauth_models.JwtBearerForm, "scope"): ANY_IN_QUERY,
    (oauth_models.JwtBearerForm, "resource"): ANY_IN_QUERY,
    (oauth_models.JwtBearerForm, "client_id"): ANY_IN_QUERY,
}


def refused_by(check: Callable[[Any], Any]) -> Callable[[Any], bool]:
    """Whether the step after the model (a domain rule, the credential's resolution) refuses
    a value."""

    def refuses(value: Any) -> bool:
        try:
            answer = check(value)
        except (ServiceError, trust.InvalidPolicy, ValueError):
            return True
        return isinstance(answer, KeyRefusal)  # a refusal as a value (keys/refusals.py)

    return refuses


def _workspace_query(value: str) -> None:
    # `?workspace_id=` is read with the credential (decisions/resolution.py): empty names none.
    if value and not ids.is_workspace_id(value):
        raise ValueError(value)


def _subset(allowed: tuple[str, ...]) -> Callable[[Any], None]:
    # The services' scope rule (keys/service.py, workloads/service.py,
    # service_clients/service.py): a non-empty subset, each named once.
    def check(scopes: Any) -> None:
        if not scopes or len(set(scopes)) != len(scopes) or not set(scopes) <= set(allowed):
            raise ValueError(scopes)

    return check


def _category(value: Any) -> None:
    if value not in CATEGORIES:
        raise ValueError(value)


NOW = datetime(2026, 11, 21, 12, tzinfo=UTC)

# Values outside a field's schema the model accepts, and the step after it that refuses them:
# the schema states the whole rule, the model only the part it can judge alone (a rule that
# needs the stage, the caller, or another field).
LATER: dict[tuple[type[BaseModel], str], Callable[[Any], bool]] = {
    (keys_models.NewApiKey, "category"): refused_by(_category),
    (keys_models.NewApiKey, "workspaceId"): refused_by(_workspace_query),
    (keys_models.NewApiKey, "workspace_id"): refused_by(_workspace_query),
    (keys_models.NewApiKey, "scopes"): refused_by(_subset(SCOPES_BY_CATEGORY["admin"])),
    (keys_models.KeyListQuery, "workspace_id"): refused_by(_workspace_query),
    (keys_models.RevealQuery, "workspace_id"): refused_by(_workspace_query),
    (keys_models.UsageQuery, "workspace_id"): refused_by(_workspace_query),
    (events_models.EventQuery, "workspace_id"): refused_by(_workspace_query),
    (keys_models.UsageQuery, "from"): refused_by(lambda v: usage.span("day", v, None, NOW)),
    (keys_models.UsageQuery, "to"): refused_by(lambda v: usage.span("day", None, v, NOW)),
    (trust_policies_models.NewTrustPolicy, "issuer"): refused_by(
        lambda v: trust.check_issuer(v, local_mode=False)
    ),
    (trust_policies_models.NewTrustPolicy, "audience"): refused_by(trust.check_audience),
    (trust_policies_models.NewTrustPolicy, "subject"): refused_by(trust.check_subject),
    (trust_policies_models.NewTrustPolicy, "claims"): refused_by(trust.check_claims),
    (trust_policies_models.NewTrustPolicy, "scopes"): refused_by(_subset(DATA_PLANE_SCOPES)),
    (trust_policies_models.NewTrustPolicy, "maxLifetimeSeconds"): refused_by(trust.check_lifetime),
    (webhooks_models.NewWebhook, "url"): refused_by(lambda v: hooks.check_url(v, False)),
    (webhooks_models.NewWebhook, "events"): refused_by(hooks.check_events),
    (webhooks_models.WebhookChanges, "url"): refused_by(lambda v: hooks.check_url(v, False)),
    (webhooks_models.WebhookChanges, "events"): refused_by(hooks.check_events),
    (service_clients_models.NewServiceClient, "scopes"): refused_by(_subset(DATA_PLANE_SCOPES)),
    (service_clients_models.NewServiceClient, "jwks"): refused_by(clients.check_jwks),
    (service_clients_models.NewServiceClient, "jwksUri"): refused_by(
        lambda v: clients.check_jwks_uri(v, local_mode=False)
    ),
}

# Values outside a field's schema the service accepts all the same (the schema is the
# stricter, so a client that keeps to it is never refused for them).
LENIENT: dict[tuple[type[BaseModel], str], list[Any]] = {
    # The JSON exchange reads `expires_in` as its form does, where every value is a string.
    (sessions_models.ExchangeRequest, "expires_in"): ["900"],
    # null, like leaving it out: no claims to match.
    (trust_policies_models.NewTrustPolicy, "claims"): [None],
}

# A field whose case needs another base than its model's.
FIELD_BASES: dict[tuple[type[BaseModel], str], dict[str, Any]] = {
    (sessions_models.ExchangeRequest, "subject_token"): {
        "subject_token_type": sessions_models.ID_TOKEN_TYPE
    },
    (sessions_models.ExchangeRequest, "subject_token_type"): {"subject_token": "a.b.c"},
}


def request_models() -> set[type[BaseModel]]:
    """Every model a request is validated with: bodies, queries, forms (and the members of a
    form told apart by its grant_type)."""
    found: set[type[BaseModel]] = set()
    for op in DECLARED:
        found.update(m for m in (op.body, op.query) if m is not None)
    for public in PUBLIC:
        found.update(public.body.values())
        if public.query is not None:
            found.add(public.query)
    for model in list(found):
        if issubclass(model, RootModel):
            found.discard(model)
            annotation = model.model_fields["root"].annotation
            members = getattr(getattr(annotation, "__origin__", annotation), "__args__", ())
            found.update(m for m in members if isinstance(m, type) and issubclass(m, BaseModel))
    return found


def hand_written() -> set[tuple[type[BaseModel], str]]:
    return {
        (model, info.alias or name)
        for model in request_models()
        if not issubclass(model, RootModel)
        for name, info in model.model_fields.items()
        if any(isinstance(marker, WithJsonSchema) for marker in info.metadata)
    }


# The formats the schemas name, as the document says them: `cidr` (ours: a network, host bits
# zero) and `date-time` (RFC 3339).
FORMATS = FormatChecker(formats=())


@FORMATS.checks("cidr", raises=ValueError)
def _cidr(value: object) -> bool:
    return not isinstance(value, str) or bool(ipaddress.ip_network(value, strict=True))


@FORMATS.checks("date-time", raises=ValueError)
def _date_time(value: object) -> bool:
    return not isinstance(value, str) or bool(datetime.fromisoformat(value).tzinfo)


def as_json(model: type[BaseModel], value: Any) -> Any:
    """A query parameter as its schema reads it: a whole number's digits are the number."""
    if model in QUERIES and isinstance(value, str) and value.isdigit():
        return int(value)
    return value


def schema_of(model: type[BaseModel], wire: str) -> dict[str, Any]:
    schema = model.model_json_schema(mode="validation", schema_generator=WireSchema)
    return schema["properties"][wire]


def accepted(model: type[BaseModel], wire: str, value: Any) -> bool:
    base = FIELD_BASES.get((model, wire), BASES[model])
    try:
        model.model_validate({**base, wire: value}, context=SERVED)
    except ValidationError:
        return False
    return True


def test_every_hand_written_request_schema_has_its_cases() -> None:
    missing = sorted(f"{m.__name__}.{wire}" for m, wire in hand_written() - set(CASES))

    assert missing == []


@pytest.mark.parametrize("model", sorted(BASES, key=lambda m: m.__name__), ids=lambda m: m.__name__)
def test_each_base_request_is_accepted(model: type[BaseModel]) -> None:
    model.model_validate(BASES[model], context=SERVED)


@pytest.mark.parametrize(
    ("model", "wire"),
    sorted(CASES, key=lambda c: (c[0].__name__, c[1])),
    ids=lambda x: getattr(x, "__name__", x),
)
def test_a_value_its_schema_allows_is_accepted_and_one_just_outside_is_refused(
    model: type[BaseModel], wire: str
) -> None:
    schema = Draft202012Validator(schema_of(model, wire), format_checker=FORMATS)
    allowed, outside = CASES[(model, wire)]
    later = LATER.get((model, wire), lambda value: False)
    lenient = LENIENT.get((model, wire), [])

    not_allowed = [v for v in allowed if not schema.is_valid(as_json(model, v))]
    allowed_refused = [v for v in allowed if not accepted(model, wire, v)]
    not_outside = [v for v in outside if schema.is_valid(as_json(model, v))]
    outside_accepted = [
        v for v in outside if v not in lenient and accepted(model, wire, v) and not later(v)
    ]
    lenient_refused = [v for v in lenient if not accepted(model, wire, v)]

    assert not_allowed == []  # the cases: each allowed value is the schema's
    assert allowed_refused == []
    assert not_outside == []  # the cases: each outside value is outside the schema
    assert outside_accepted == []
    assert lenient_refused == []  # a leniency ended: take it out of LENIENT
