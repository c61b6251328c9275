"""The packaged template of each stage, held against the code and its configuration."""

from __future__ import annotations

import ast
import json
import subprocess
from collections import Counter
from http import HTTPStatus
from pathlib import Path
from typing import Any

import pytest

from chalicelib import table
from chalicelib.access.principal import GATEWAY_CHALLENGE
from chalicelib.api.edge import PROBLEM_JSON
from chalicelib.errors import PROBLEMS, TITLES, problem_body
from infra.template import CHALICE_CONFIG, PROJECT_DIR, REQUEST_ORIGIN, TEMPLATE
from local.stack import unknown_route_body
from tests.infra.conftest import Packaged, load
from tools.package import BIN_DIR

CHALICELIB = PROJECT_DIR / "chalicelib"
CONFIG = json.loads(CHALICE_CONFIG.read_text())


def index_names_used_by_code() -> set[str]:
    """Every IndexName the code passes to DynamoDB, resolved to its value.

    An index is named by a string literal or by a module-level constant; anything else
    fails here, so that this test can never miss an index the code queries.
    """
    found: set[str] = set()
    for path in sorted(CHALICELIB.rglob("*.py")):
        tree = ast.parse(path.read_text())
        constants = {
            target.id: node.value.value
            for node in tree.body
            if isinstance(node, ast.Assign) and isinstance(node.value, ast.Constant)
            for target in node.targets
            if isinstance(target, ast.Name)
        }
        constants.update(
            {name: getattr(table, name) for name in dir(table) if name.isupper()}
        )
        for node in ast.walk(tree):
            values: list[ast.expr] = []
            # boto3's IndexName, or the table layer's `query(..., index=...)`
            if isinstance(node, ast.keyword) and node.arg in ("IndexName", "index"):
                values.append(node.value)
            if isinstance(node, ast.Dict):
                values.extend(
                    v for k, v in zip(node.keys, node.values, strict=True)
                    if isinstance(k, ast.Constant) and k.value == "IndexName"
                )
            for value in values:
                if isinstance(value, ast.Constant) and isinstance(value.value, str):
                    found.add(value.value)
                elif isinstance(value, ast.Name) and isinstance(constants.get(value.id), str):
                    found.add(constants[value.id])
                else:
                    raise AssertionError(f"{path}: name indexes with a constant")
    return found


# -- configuration and template agree --------------------------------------------------


def test_functions_get_exactly_the_stage_environment_of_chalice_config(
    packaged: Packaged, config_env: dict[str, str]
) -> None:
    assert packaged.environment() == config_env
    assert config_env["STAGE"] == packaged.stage


def test_parameters_are_pinned_to_the_stage_they_were_packaged_for(packaged: Packaged) -> None:
    stage = packaged.template["Parameters"]["Stage"]

    assert stage["Default"] == packaged.stage
    assert stage["AllowedValues"] == [packaged.stage]
    assert all(len(p["AllowedValues"]) == 1 for p in packaged.template["Parameters"].values())


def test_no_account_id_or_secret_is_committed_in_config_or_template() -> None:
    for path in (CHALICE_CONFIG, TEMPLATE):
        text = path.read_text()
        assert "arn:aws:" not in text  # ARNs are built with ${AWS::Partition}/${AWS::AccountId}
        assert not any(word.isdigit() and len(word) == 12 for word in _words(text)), path
    assert "iam_role_arn" not in CONFIG
    assert CONFIG["manage_iam_role"] is False


def _words(text: str) -> list[str]:
    return "".join(c if c.isalnum() else " " for c in text).split()


# -- the table --------------------------------------------------------------------------


def test_the_table_the_code_uses_has_its_key_schema_and_ttl_attribute(
    packaged: Packaged, config_env: dict[str, str]
) -> None:
    name = packaged.table_named(config_env["AUTH_TABLE"])
    properties = packaged.resource(name)["Properties"]
    types = {a["AttributeName"]: a["AttributeType"] for a in properties["AttributeDefinitions"]}

    assert properties["KeySchema"] == [
        {"AttributeName": table.PARTITION_KEY, "KeyType": "HASH"},
        {"AttributeName": table.SORT_KEY, "KeyType": "RANGE"},
    ]
    assert types[table.PARTITION_KEY] == "S" and types[table.SORT_KEY] == "S"
    assert properties["TimeToLiveSpecification"] == {
        "AttributeName": table.TTL_ATTRIBUTE,
        "Enabled": True,
    }


def test_every_index_the_code_queries_exists(
    packaged: Packaged, config_env: dict[str, str]
) -> None:
    name = packaged.table_named(config_env["AUTH_TABLE"])
    properties = packaged.resource(name)["Properties"]
    declared = {
        index["IndexName"]
        for kind in ("GlobalSecondaryIndexes", "LocalSecondaryIndexes")
        for index in properties.get(kind, [])
    }

    assert index_names_used_by_code() <= declared


def test_the_notice_index_is_the_codes_and_projects_what_the_sweep_reads(
    packaged: Packaged, config_env: dict[str, str]
) -> None:
    from chalicelib.keys.model import NOTICE_AT
    from chalicelib.keys.notice import Notice
    from chalicelib.keys.store import NOTICE_INDEX, NOTICE_SHARD

    properties = packaged.resource(packaged.table_named(config_env["AUTH_TABLE"]))["Properties"]
    (index,) = [i for i in properties["GlobalSecondaryIndexes"] if i["IndexName"] == NOTICE_INDEX]
    types = {a["AttributeName"]: a["AttributeType"] for a in properties["AttributeDefinitions"]}
    projected = {"noticeAt", *index["Projection"]["NonKeyAttributes"]}
    sample = {name: "2026-01-01T00:00:00Z" for name in projected}

    assert index["KeySchema"] == [
        {"AttributeName": NOTICE_SHARD, "KeyType": "HASH"},
        {"AttributeName": NOTICE_AT, "KeyType": "RANGE"},
    ]
    assert types[NOTICE_SHARD] == types[NOTICE_AT] == "S"
    assert index["Projection"]["ProjectionType"] == "INCLUDE"  # never the ciphertext
    Notice.from_values(sample)  # everything it reads is projected (a KeyError otherwise)


def test_the_sweep_runs_hourly(packaged: Packaged) -> None:
    (event,) = packaged.functions()["ExpirySweep"]["Properties"]["Events"].values()

    assert event == {"Type": "Schedule", "Properties": {"Schedule": "rate(1 hour)"}}


def test_the_configured_event_bus_is_the_templates(
    packaged: Packaged, config_env: dict[str, str]
) -> None:
    name = packaged.bus_named(config_env["EVENT_BUS_NAME"])

    assert set(packaged.resources("AWS::Events::EventBus")) == {name}


def test_the_table_is_on_demand_encrypted_recoverable_and_retained(packaged: Packaged) -> None:
    for name, resource in packaged.resources("AWS::DynamoDB::Table").items():
        properties = resource["Properties"]

        assert properties["BillingMode"] == "PAY_PER_REQUEST", name
        assert properties["SSESpecification"]["SSEEnabled"] is True, name
        assert properties["PointInTimeRecoverySpecification"] == {
            "PointInTimeRecoveryEnabled": True
        }, name
        assert properties["DeletionProtectionEnabled"] is (packaged.stage == "prod"), name
        assert resource["DeletionPolicy"] == resource["UpdateReplacePolicy"] == "Retain", name


# -- the keys ---------------------------------------------------------------------------


def test_the_encryption_key_alias_names_a_rotating_symmetric_key(
    packaged: Packaged, config_env: dict[str, str]
) -> None:
    key = packaged.resource(packaged.key_for_alias(config_env["KEY_ENCRYPTION_KEY_ID"]))
    properties = key["Properties"]

    assert properties["KeySpec"] == "SYMMETRIC_DEFAULT"
    assert properties["KeyUsage"] == "ENCRYPT_DECRYPT"
    assert properties["EnableKeyRotation"] is True
    assert key["DeletionPolicy"] == "Retain"  # losing it loses every revealable key


def test_the_refresh_token_key_alias_names_a_retained_hmac_key(
    packaged: Packaged, config_env: dict[str, str]
) -> None:
    key = packaged.resource(packaged.key_for_alias(config_env["REFRESH_TOKEN_KEY_ID"]))
    properties = key["Properties"]

    assert properties["KeySpec"] == "HMAC_256"
    assert properties["KeyUsage"] == "GENERATE_VERIFY_MAC"
    assert key["DeletionPolicy"] == "Retain"  # refresh retries depend on it


def test_the_signing_key_aliases_name_rsa_signing_keys(
    packaged: Packaged, config_env: dict[str, str]
) -> None:
    published = [
        config_env[v]
        for v in ("TOKEN_SIGNING_KEY_ID", "TOKEN_PREVIOUS_SIGNING_KEY_ID")
        if config_env.get(v)
    ]
    for alias in published:
        properties = packaged.resource(packaged.key_for_alias(alias))["Properties"]

        assert properties["KeySpec"] == "RSA_2048", alias
        assert properties["KeyUsage"] == "SIGN_VERIFY", alias


def test_the_template_creates_no_key_the_configuration_does_not_name(
    packaged: Packaged, config_env: dict[str, str]
) -> None:
    named = {
        packaged.key_for_alias(config_env[v])
        for v in (
            "KEY_ENCRYPTION_KEY_ID",
            "REFRESH_TOKEN_KEY_ID",
            "TOKEN_SIGNING_KEY_ID",
            "TOKEN_PREVIOUS_SIGNING_KEY_ID",
        )
        if config_env.get(v)
    }

    assert set(packaged.resources("AWS::KMS::Key")) == named


# -- functions, logs, API ---------------------------------------------------------------


def test_each_function_runs_as_its_own_template_role_and_chalice_makes_no_role(
    packaged: Packaged,
) -> None:
    roles = packaged.resources("AWS::IAM::Role")

    # Chalice makes none (manage_iam_role false); ours carry no inline or managed policy, so
    # every permission is in an AWS::IAM::Policy that test_iam_policy.py reads.
    assert {packaged.role_of(name) for name in packaged.functions()} == set(roles)
    assert dict(Counter(packaged.role_of(name) for name in packaged.functions())) == dict.fromkeys(
        roles, 1
    )
    for name, role in roles.items():
        assert not {"Policies", "ManagedPolicyArns"} & set(role["Properties"]), name
        (statement,) = role["Properties"]["AssumeRolePolicyDocument"]["Statement"]
        assert statement["Principal"] == {"Service": "lambda.amazonaws.com"}, name


# API Gateway stops waiting for a REST API integration after 29 s (its default maximum) and
# answers 504, while a longer-lived function would go on working for nobody.
API_GATEWAY_INTEGRATION_TIMEOUT = 29
# Lambda does not count a cold start's init phase in the timeout, and API Gateway adds its
# own latency: the API handler stops this much earlier than API Gateway gives up.
INIT_AND_GATEWAY_ALLOWANCE = 4
# Chalice's names of the packaged functions in .chalice/config.json "lambda_functions".
CHALICE_NAMES = {
    "APIHandler": "api_handler", "Authorizer": "authorizer", "ExpirySweep": "expiry_sweep",
    "WebhookDelivery": "webhook_delivery",
}


def client_budget() -> tuple[float, float, int]:
    """connect timeout, read timeout and total attempts of the code's AWS clients, as botocore
    applies them."""
    from chalicelib.runtime import aws_client

    config = aws_client("dynamodb", "us-east-1").meta.config
    return config.connect_timeout, config.read_timeout, config.retries["total_max_attempts"]


def test_each_function_has_the_timeout_of_chalice_config(packaged: Packaged) -> None:
    for name, function in packaged.functions().items():
        configured = CONFIG["lambda_functions"][CHALICE_NAMES[name]]["lambda_timeout"]

        assert function["Properties"]["Timeout"] == configured, name


def test_the_api_handler_stops_before_api_gateway_gives_up(packaged: Packaged) -> None:
    timeout = packaged.functions()["APIHandler"]["Properties"]["Timeout"]

    assert timeout <= API_GATEWAY_INTEGRATION_TIMEOUT - INIT_AND_GATEWAY_ALLOWANCE


def test_the_authorizer_gives_up_on_a_failing_dependency_itself_inside_its_timeout(
    packaged: Packaged,
) -> None:
    timeout = packaged.functions()["Authorizer"]["Properties"]["Timeout"]
    connect, read, attempts = client_budget()
    # The longest one call can take before the code answers itself (raising
    # DependencyUnavailable, which API Gateway answers with 500, never Allow): every attempt
    # waiting out both timeouts, plus botocore's standard backoff before each retry (at most
    # 1 s x 2**i, after throttling; far less after a timeout).
    worst_call = attempts * (connect + read) + sum(2**i for i in range(attempts - 1))
    # A decision makes at most two reads (the key, then the membership): even both at their
    # worst end before Lambda would stop the function.
    assert 2 * worst_call <= timeout
    assert timeout < packaged.functions()["APIHandler"]["Properties"]["Timeout"]


def test_every_function_has_its_own_log_group_with_the_stage_retention(
    packaged: Packaged,
) -> None:
    groups = {
        group["Properties"]["LogGroupName"]: group["Properties"]["RetentionInDays"]
        for group in packaged.resources("AWS::Logs::LogGroup").values()
    }
    retention = CONFIG["stages"][packaged.stage]["log_retention_in_days"]

    assert groups == {f"/aws/lambda/${{{name}}}": retention for name in packaged.functions()}


def test_the_stage_is_throttled(packaged: Packaged) -> None:
    (settings,) = packaged.resource("RestAPI")["Properties"]["MethodSettings"]

    assert settings["ResourcePath"] == "/*" and settings["HttpMethod"] == "*"
    assert 0 < settings["ThrottlingRateLimit"] <= settings["ThrottlingBurstLimit"]


# -- gateway responses: problem+json, never API Gateway's default body -----------------

# response type → (status, code, detail); the bodies must read as the service's own.
GATEWAY_RESPONSES = {
    "UNAUTHORIZED": (
        401,
        "invalid_credentials",
        "A valid credential is required: it is missing, malformed, unknown, expired or revoked.",
    ),
    "ACCESS_DENIED": (403, "$context.authorizer.code", "The credential may not make this request."),
    "MISSING_AUTHENTICATION_TOKEN": (404, "not_found", "No such route."),
    "RESOURCE_NOT_FOUND": (404, "not_found", "No such route."),
    "REQUEST_TOO_LARGE": (413, "payload_too_large", "The request body is too large."),
    "UNSUPPORTED_MEDIA_TYPE": (415, "unsupported_media_type", "Send application/json."),
    "THROTTLED": (429, "too_many_requests", "Too many requests; retry later."),
}


def gateway_responses(packaged: Packaged) -> dict[str, Any]:
    body = packaged.resource("RestAPI")["Properties"]["DefinitionBody"]
    responses: dict[str, Any] = body["x-amazon-apigateway-gateway-responses"]
    return responses


# The API Gateway stage every service stage deploys its API under (.chalice/config.json).
API_STAGE = "v1api"


def rendered(response: dict[str, Any], **context: str) -> dict[str, Any]:
    """The body API Gateway sends: plain variable substitution (no VTL in gateway responses)."""
    (template,) = response["responseTemplates"].values()
    for name, value in {"stage": API_STAGE, **context}.items():
        template = template.replace(f"$context.{name}", value)
    assert "$" not in template
    body: dict[str, Any] = json.loads(template)
    return body


@pytest.mark.parametrize("response_type", sorted(GATEWAY_RESPONSES))
def test_gateway_responses_are_the_service_problem_bodies(
    packaged: Packaged, response_type: str
) -> None:
    status, code, detail = GATEWAY_RESPONSES[response_type]
    response = gateway_responses(packaged)[response_type]
    sample_code = "workspace_mismatch" if code.startswith("$") else code
    expected = problem_body(status, sample_code, detail, f"/{API_STAGE}")
    expected["title"] = TITLES.get(status, HTTPStatus(status).phrase)

    assert response["statusCode"] == str(status)
    assert response["responseParameters"]["gatewayresponse.header.Content-Type"] == (
        f"'{PROBLEM_JSON}'"
    )
    assert rendered(response, **{"authorizer.code": sample_code}) == expected


@pytest.mark.parametrize(
    "response_type",
    [name for name, (_, code, _) in sorted(GATEWAY_RESPONSES.items()) if not code.startswith("$")]
    + ["DEFAULT_4XX", "DEFAULT_5XX"],
)
def test_every_code_api_gateway_answers_is_in_the_error_catalogue(
    packaged: Packaged, response_type: str
) -> None:
    response = gateway_responses(packaged)[response_type]
    body = rendered(response)
    problem = PROBLEMS.get(body["code"])

    assert problem is not None, body["code"]
    if "statusCode" in response:
        assert int(response["statusCode"]) == problem.status


def test_a_key_over_its_quota_is_denied_as_403_quota_exceeded_with_retry_after(
    packaged: Packaged,
) -> None:
    """A REST API gives one status per gateway response type, and every authorizer Deny is
    ACCESS_DENIED: 403 it stays (a 429 would be every denial's). The authorizer's context
    carries the code (the body's `code`) and the seconds to UTC midnight (`Retry-After`)."""
    response = gateway_responses(packaged)["ACCESS_DENIED"]
    body = rendered(response, **{"authorizer.code": "quota_exceeded"})

    assert response["statusCode"] == "403"
    assert body["code"] == "quota_exceeded"
    assert body["type"].endswith("/docs/errors#quota_exceeded")
    assert response["responseParameters"]["gatewayresponse.header.Retry-After"] == (
        "context.authorizer.retryAfter"
    )


def test_401_challenges_like_the_service_does(packaged: Packaged) -> None:
    headers = gateway_responses(packaged)["UNAUTHORIZED"]["responseParameters"]

    # Bearer, and DPoP with the algorithms a proof may use (RFC 9449 §7.1): a gateway
    # response is static, so neither names an error.
    assert headers["gatewayresponse.header.WWW-Authenticate"] == f"'{GATEWAY_CHALLENGE}'"


@pytest.mark.parametrize("response_type", ["DEFAULT_4XX", "DEFAULT_5XX"])
def test_every_other_gateway_error_is_problem_json_without_api_gateway_text(
    packaged: Packaged, response_type: str
) -> None:
    response = gateway_responses(packaged)[response_type]
    (template,) = response["responseTemplates"].values()
    body = rendered(response)

    # $context.error.message(String) can echo the Authorization header (unknown routes); the
    # stage's name is the only variable these answers use.
    assert "$context" not in template.replace("$context.stage/", "")
    assert set(body) == {"type", "title", "detail", "code", "error"}
    assert body["type"] == f"/{API_STAGE}/docs/errors#" + body["code"]
    assert response["responseParameters"]["gatewayresponse.header.Content-Type"] == (
        f"'{PROBLEM_JSON}'"
    )
    assert "statusCode" not in response  # keeps API Gateway's own status


CORS_HEADERS = (
    "gatewayresponse.header.Access-Control-Allow-Origin",
    "gatewayresponse.header.Access-Control-Expose-Headers",
    "gatewayresponse.header.Vary",
)


def test_gateway_responses_carry_no_cors_headers_where_the_stage_allows_no_origin(
    packaged: Packaged,
) -> None:
    for response in gateway_responses(packaged).values():
        assert not set(CORS_HEADERS) & set(response["responseParameters"])


@pytest.mark.parametrize(
    ("origins", "allow_origin"),
    [
        # One allowed origin: named exactly, as the service names it (quoted: a static value).
        (["https://app.example.com"], "'https://app.example.com'"),
        # Several: API Gateway cannot pick one from a list, so it maps the request's Origin.
        (["https://app.example.com", "https://admin.example.com"], "method.request.header.origin"),
    ],
)
@pytest.mark.parametrize(
    "response_type", sorted([*GATEWAY_RESPONSES, "DEFAULT_4XX", "DEFAULT_5XX"])
)
def test_gateway_responses_carry_the_apps_cors_headers_where_the_stage_allows_origins(
    monkeypatch: pytest.MonkeyPatch, response_type: str, origins: list[str], allow_origin: str
) -> None:
    from chalicelib.api.cors import EXPOSED_HEADERS
    from infra import template as infra_template

    configured = infra_template.stage_environment("prod")
    monkeypatch.setattr(
        infra_template,
        "stage_environment",
        lambda stage: {**configured, "ALLOWED_ORIGINS": json.dumps(origins)},
    )
    template = infra_template.load_template()
    stack = infra_template.stack("prod", template)
    # infra/resources.json holds only what it adds to chalice's RestAPI (no Type of its own).
    body = stack.value(template["Resources"]["RestAPI"]["Properties"]["DefinitionBody"])
    headers = body["x-amazon-apigateway-gateway-responses"][response_type]["responseParameters"]

    # Static values are quoted; an unquoted value maps from the request (its Origin).
    assert headers["gatewayresponse.header.Access-Control-Allow-Origin"] == allow_origin
    assert headers["gatewayresponse.header.Access-Control-Expose-Headers"] == (
        "'" + ", ".join(EXPOSED_HEADERS) + "'"
    )
    assert headers["gatewayresponse.header.Vary"] == "'Origin'"
    assert "gatewayresponse.header.Access-Control-Allow-Credentials" not in headers


@pytest.mark.parametrize("allow_origin", ["'https://app.example.com'", REQUEST_ORIGIN])
def test_a_stage_that_allows_origins_packages_lint_clean(
    allow_origin: str, tmp_path: Path
) -> None:
    # No stage allows an origin yet, so `make package` never lints that branch: the prod
    # package with its CORS parameters pinned as such a stage's would be.
    template = load("prod").template
    for name, value in {"CrossOriginCalls": "on", "GatewayAllowOrigin": allow_origin}.items():
        template["Parameters"][name].update(Default=value, AllowedValues=[value])
    path = tmp_path / "sam.json"
    path.write_text(json.dumps(template))

    linted = subprocess.run(
        [str(BIN_DIR / "cfn-lint"), str(path)], capture_output=True, text=True, timeout=300
    )

    assert linted.returncode == 0, linted.stdout[-3000:]


def test_unknown_routes_answer_as_the_local_stack_does(packaged: Packaged) -> None:
    response = gateway_responses(packaged)["MISSING_AUTHENTICATION_TOKEN"]
    body = rendered(response)
    local = unknown_route_body()

    # The same body, but for the path the API is served under: the gateway's stage, the local
    # server's root.
    assert body.pop("type") == f"/{API_STAGE}" + str(local.pop("type"))
    assert body == local


def test_every_stage_serves_its_api_under_the_stage_the_problem_links_name() -> None:
    config = json.loads(CHALICE_CONFIG.read_text())
    stages = config["stages"]

    assert {stages[name].get("api_gateway_stage") for name in stages} == {API_STAGE}
