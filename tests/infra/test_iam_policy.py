"""Each function's role, held against the AWS operations that function's code performs.

The functional tests record every operation the deployed code (`app.py`, `chalicelib/`)
sends to AWS into build/aws-operations.json, attributed to the Lambda function that performs
it: the authorizer's (`Authorizer`, while its handler runs) or the API handler's
(`APIHandler`, everything else); see tests/functional/aws_operations.py. Each functional run
rewrites that file, so a grant the code stopped using fails here. Here each operation must be
allowed by the packaged IAM policies of its function's role on the resource it acts on, and
those policies may allow nothing else: no action the function never performs, no resource
it never touches. Each KMS key's policy lets exactly those roles use it, for those actions.
"""

from __future__ import annotations

import fnmatch
import json
import re
from typing import Any

import pytest

from chalicelib.keys.store import NOTICE_INDEX
from chalicelib.keys.vault import encryption_context
from chalicelib.sessions.access_tokens import _KMS_ALGORITHM
from chalicelib.sessions.successors import MAC_ALGORITHM
from infra.template import NO_PREVIOUS_SLOT, SIGNING_KEY_SLOTS, Stack, load_template
from tests.functional import aws_operations
from tests.functional.aws_operations import OPERATIONS_FILE, Operations
from tests.infra.conftest import Packaged

# The packaged functions' logical ids.
FUNCTIONS = ("APIHandler", "Authorizer", "ExpirySweep", "WebhookDelivery")
LOGS_SID = "WriteOwnLogs"
# What Lambda's event source mapping does with the consumer's role (not the code): read the
# queue, delete what the function did not fail, and put the failed ones back.
CONSUME_SID = "ConsumeOwnQueue"
CONSUME_ACTIONS = [
    "sqs:ChangeMessageVisibility", "sqs:DeleteMessage", "sqs:GetQueueAttributes",
    "sqs:ReceiveMessage",
]
ACCOUNT_ROOT = "arn:${AWS::Partition}:iam::${AWS::AccountId}:root"

# There is no IAM action for a DynamoDB transaction itself: "Permissions for Put, Update,
# Delete, and Get actions are governed by the permissions used for the underlying PutItem,
# UpdateItem, DeleteItem, and GetItem operations. For the ConditionCheck action, you can use
# the dynamodb:ConditionCheckItem permission" (Amazon DynamoDB Developer Guide, "Using IAM
# with DynamoDB transactions", docs.aws.amazon.com/amazondynamodb/latest/developerguide/
# transaction-apis-iam.html). The recorder notes which kinds of member each transaction
# carried, so the policy grants exactly the item actions the transactions use.
TRANSACTIONS = {"TransactWriteItems", "TransactGetItems"}
TRANSACTION_MEMBER_ACTIONS = {
    "Put": "dynamodb:PutItem",
    "Update": "dynamodb:UpdateItem",
    "Delete": "dynamodb:DeleteItem",
    "ConditionCheck": "dynamodb:ConditionCheckItem",
    "Get": "dynamodb:GetItem",
}

# The variable naming the resource of each operation: the code takes every table and key
# from its environment (chalicelib/config.py). Decrypt names no key (a symmetric ciphertext
# carries its key id), and what it decrypts was sealed by Encrypt under the encryption key.
RESOURCE_VARIABLES: dict[tuple[str, str | None], tuple[str, ...]] = {
    ("dynamodb", None): ("AUTH_TABLE",),
    ("kms", "Encrypt"): ("KEY_ENCRYPTION_KEY_ID",),
    ("kms", "Decrypt"): ("KEY_ENCRYPTION_KEY_ID",),
    ("kms", "Sign"): ("TOKEN_SIGNING_KEY_ID",),
    ("kms", "GenerateMac"): ("REFRESH_TOKEN_KEY_ID",),
    ("kms", "GetPublicKey"): ("TOKEN_SIGNING_KEY_ID", "TOKEN_PREVIOUS_SIGNING_KEY_ID"),
    ("events", None): ("EVENT_BUS_NAME",),
    ("sqs", None): ("WEBHOOK_QUEUE_NAME",),
}
# Notes the recorder adds beside an operation (tests/functional/conftest.py), not members.
INDEX = "index"
ATTRIBUTE = "attribute"
LEADING_KEY = "leading-key"

# KMS actions that use a key (or hand out its use); the account's administrators never get them.
KEY_USE_ACTIONS = [
    "kms:CreateGrant",
    "kms:Decrypt",
    "kms:DeriveSharedSecret",
    "kms:Encrypt",
    "kms:GenerateDataKey",
    "kms:GenerateDataKeyPair",
    "kms:GenerateDataKeyPairWithoutPlaintext",
    "kms:GenerateDataKeyWithoutPlaintext",
    "kms:GenerateMac",
    "kms:ReEncryptFrom",
    "kms:ReEncryptTo",
    "kms:Sign",
    "kms:Verify",
    "kms:VerifyMac",
]

Grant = tuple[str, str]  # (IAM action, logical id of the resource)


@pytest.fixture(scope="session")
def recorded() -> dict[str, Operations]:
    """function → the operations its code was recorded performing, by a whole functional run."""
    if not OPERATIONS_FILE.is_file():
        pytest.fail(f"{OPERATIONS_FILE} is missing: run `make test-functional` first")
    try:
        recording = aws_operations.read(OPERATIONS_FILE)
    except ValueError as unusable:
        pytest.fail(f"{unusable} (an older recorder wrote it): run `make test-functional`")
    if not recording.complete:
        pytest.fail(
            f"{OPERATIONS_FILE} comes from a run of only some functional tests, which cannot "
            "show what the others need: run `make test-functional`"
        )
    return recording.functions


# Operations IAM authorizes as another action: a batch send is "sqs:SendMessage" (Amazon
# SQS Developer Guide, "Amazon SQS API permissions: Actions and resource reference").
AUTHORIZED_AS = {("sqs", "SendMessageBatch"): "sqs:SendMessage"}


def actions_of(entry: tuple[str, ...], recorded: Operations) -> set[str]:
    service, operation = entry[:2]
    if (service, operation) in AUTHORIZED_AS:
        return {AUTHORIZED_AS[(service, operation)]}
    if operation not in TRANSACTIONS:
        return {f"{service}:{operation}"}
    members = {e[2] for e in recorded if len(e) == 3 and e[:2] == entry}
    assert members, f"no member kinds recorded for {operation}: the recorder must note them"
    return {TRANSACTION_MEMBER_ACTIONS[member] for member in members}


def resources_of(
    entry: tuple[str, ...], packaged: Packaged, env: dict[str, str]
) -> set[str]:
    service, operation = entry
    variables = RESOURCE_VARIABLES.get((service, operation)) or RESOURCE_VARIABLES.get(
        (service, None)
    )
    assert variables, f"which resource does {service}:{operation} act on? Add it above."
    names = [env[v] for v in variables if env.get(v)]
    if service == "dynamodb":
        return {packaged.table_named(name) for name in names}
    if service == "events":
        return {packaged.bus_named(name) for name in names}
    if service == "sqs":
        return {packaged.queue_named(name) for name in names}
    return {packaged.key_for_alias(name) for name in names}


def index_resource(table: str, index: str) -> str:
    return f"{table}/index/{index}"


def required_grants(recorded: Operations, packaged: Packaged, env: dict[str, str]) -> set[Grant]:
    grants: set[Grant] = set()
    for entry in recorded:
        if len(entry) == 4 and entry[2] == INDEX:
            service, operation = entry[:2]
            grants.update(
                (f"{service}:{operation}", index_resource(table, entry[3]))
                for table in resources_of(entry[:2], packaged, env)
            )
        if len(entry) != 2:
            continue  # a transaction member kind (read by actions_of), an index or a note
        for action in actions_of(entry, recorded):
            grants.update((action, resource) for resource in resources_of(entry, packaged, env))
    return grants


def role_statements(packaged: Packaged, role: str) -> list[dict[str, Any]]:
    policies = packaged.policies_of(role)
    assert policies, f"no policy grants {role} anything"
    return [
        statement
        for policy in policies.values()
        for statement in policy["Properties"]["PolicyDocument"]["Statement"]
    ]


def all_statements(packaged: Packaged) -> list[dict[str, Any]]:
    return [
        statement
        for policy in packaged.resources("AWS::IAM::Policy").values()
        for statement in policy["Properties"]["PolicyDocument"]["Statement"]
    ]


def as_list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else [value]


def allowed_grants(packaged: Packaged, role: str) -> set[Grant]:
    grants: set[Grant] = set()
    for statement in role_statements(packaged, role):
        if statement.get("Sid") in (LOGS_SID, CONSUME_SID):
            continue
        for resource in as_list(statement["Resource"]):
            name = resource_name(resource)
            grants.update((action, name) for action in as_list(statement["Action"]))
    return grants


def resource_name(resource: Any) -> str:
    """A resource's logical id, or `<table>/index/<name>` for one of a table's indexes
    (`{"Fn::Sub": "${Table.Arn}/index/Name"}`, which the evaluator leaves as that string)."""
    if isinstance(resource, str):
        match = re.fullmatch(r"\$\{(\w+)\.Arn\}/index/(\w+)", resource)
        assert match, resource
        return index_resource(match.group(1), match.group(2))
    assert isinstance(resource, dict) and "Fn::GetAtt" in resource, resource
    name, attribute = resource["Fn::GetAtt"]
    assert attribute == "Arn"
    return str(name)


def function_grants(packaged: Packaged, function: str) -> set[Grant]:
    return allowed_grants(packaged, packaged.role_of(function))


# -- each function's role against what that function was recorded doing -----------------


def test_the_functional_tests_recorded_each_function(
    recorded: dict[str, Operations], packaged: Packaged
) -> None:
    assert set(packaged.functions()) == set(FUNCTIONS)
    assert set(recorded) == set(FUNCTIONS), "a function no functional test ran, or unknown"
    for function in ("APIHandler", "Authorizer"):
        assert ("dynamodb", "GetItem") in recorded[function], function  # the request path
    assert ("dynamodb", "Query", INDEX, NOTICE_INDEX) in recorded["ExpirySweep"]


def test_each_function_runs_as_a_role_of_its_own(packaged: Packaged) -> None:
    roles = [packaged.role_of(function) for function in FUNCTIONS]

    assert len(set(roles)) == len(roles)
    assert set(roles) == set(packaged.resources("AWS::IAM::Role"))


@pytest.mark.parametrize("function", FUNCTIONS)
def test_every_operation_a_function_performs_is_allowed_to_its_role(
    recorded: dict[str, Operations], packaged: Packaged, config_env: dict[str, str], function: str
) -> None:
    required = required_grants(recorded[function], packaged, config_env)

    missing = required - function_grants(packaged, function)

    assert not missing, f"{function} performs these, its role may not: {missing}"


@pytest.mark.parametrize("function", FUNCTIONS)
def test_a_functions_role_allows_nothing_the_function_does_not_perform(
    recorded: dict[str, Operations], packaged: Packaged, config_env: dict[str, str], function: str
) -> None:
    required = required_grants(recorded[function], packaged, config_env)

    unused = function_grants(packaged, function) - required

    assert not unused, f"{function}'s role allows, it never performs (or no test does): {unused}"


def test_the_authorizer_reads_verifies_and_writes_only_use_and_quota_events(
    packaged: Packaged,
) -> None:
    # Equal to the recording above; spelled out because it runs on every product request:
    # widening it (another write, a KMS key use) must be a decision, not a side effect.
    actions = {action for action, _ in function_grants(packaged, "Authorizer")}

    assert actions == {
        "dynamodb:BatchGetItem", "dynamodb:GetItem", "dynamodb:UpdateItem", "dynamodb:PutItem",
        "events:PutEvents", "kms:GetPublicKey",
        # The quota event queued for the workspace's webhooks (chalicelib/webhooks/queue.py).
        "sqs:GetQueueUrl", "sqs:SendMessage",
    }


# The authorizer's attributes named by the day or the container: one IAM pattern each.
_PATTERNS = ((re.compile(r"requestsOn\d{8}"), "requestsOn*"), (re.compile(r"flush_\w+"), "flush_*"))


def _pattern(name: str) -> str:
    return next((p for regex, p in _PATTERNS if regex.fullmatch(name)), name)


@pytest.mark.parametrize(
    ("action", "match"),
    [("UpdateItem", "ForAllValues:StringLike"), ("PutItem", "ForAllValues:StringEquals")],
)
def test_the_authorizers_writes_are_conditioned_on_what_it_was_recorded_writing(
    recorded: dict[str, Operations], packaged: Packaged, action: str, match: str
) -> None:
    notes = recorded["Authorizer"]
    attributes = sorted({_pattern(e[3]) for e in notes if e[:3] == ("dynamodb", action, ATTRIBUTE)})
    prefixes = sorted(e[3] for e in notes if e[:3] == ("dynamodb", action, LEADING_KEY))
    (statement,) = [
        s for s in role_statements(packaged, "AuthorizerRole")
        if f"dynamodb:{action}" in as_list(s["Action"])
    ]
    condition = statement["Condition"]

    assert as_list(statement["Action"]) == [f"dynamodb:{action}"]
    assert attributes and prefixes
    # IAM wants the table's key attributes named too, and they are what the write's Key holds.
    assert sorted(condition[match]["dynamodb:Attributes"]) == attributes
    assert sorted(condition["ForAllValues:StringLike"]["dynamodb:LeadingKeys"]) == [
        prefix + "*" for prefix in prefixes
    ]
    assert condition["StringEqualsIfExists"] == {"dynamodb:ReturnValues": "NONE"}


def test_the_sweep_reads_its_sparse_indexes_only_and_writes_no_key_material(
    packaged: Packaged,
) -> None:
    grants = function_grants(packaged, "ExpirySweep")

    assert {a for a, r in grants if a == "dynamodb:Query"} == {"dynamodb:Query"}
    assert {r for a, r in grants if a == "dynamodb:Query"} == {
        index_resource("AuthTable", index) for index in (NOTICE_INDEX, "Outbox", "Expiry")
    }
    assert "dynamodb:Scan" not in {a for a, _ in grants}
    assert not {a for a, _ in grants if a.startswith("kms:")}


def test_statements_allow_named_actions_on_named_resources_only(packaged: Packaged) -> None:
    for statement in all_statements(packaged):
        assert statement["Effect"] == "Allow"
        assert not {"NotAction", "NotResource", "NotPrincipal"} & set(statement)
        for action in as_list(statement["Action"]):
            assert "*" not in action, statement
        for resource in as_list(statement["Resource"]):
            assert resource != "*" and "*" not in json.dumps(resource), statement


@pytest.mark.parametrize("function", FUNCTIONS)
def test_the_only_other_grant_is_writing_the_functions_own_logs(
    packaged: Packaged, function: str
) -> None:
    statements = role_statements(packaged, packaged.role_of(function))
    (logs,) = [s for s in statements if s.get("Sid") == LOGS_SID]
    (group,) = [
        name
        for name, group in packaged.resources("AWS::Logs::LogGroup").items()
        if group["Properties"]["LogGroupName"] == f"/aws/lambda/${{{function}}}"
    ]

    # The Lambda runtime writes these, not the code, so the recorder never sees them; the
    # log groups exist already (the template creates them), hence no logs:CreateLogGroup.
    assert sorted(logs["Action"]) == ["logs:CreateLogStream", "logs:PutLogEvents"]
    assert logs["Resource"] == [{"Fn::GetAtt": [group, "Arn"]}]


def test_kms_conditions_match_what_the_code_sends(packaged: Packaged) -> None:
    context_keys = sorted(encryption_context("key_x", "usr_x"))
    for statement in all_statements(packaged):
        actions = set(as_list(statement["Action"]))
        if actions & {"kms:Encrypt", "kms:Decrypt"}:
            condition = statement["Condition"]
            assert condition["ForAllValues:StringEquals"]["kms:EncryptionContextKeys"] == (
                context_keys
            )
            assert condition["Null"] == {"kms:EncryptionContextKeys": "false"}
        if "kms:Sign" in actions:
            assert statement["Condition"] == {
                "StringEquals": {"kms:SigningAlgorithm": _KMS_ALGORITHM}
            }
        if "kms:GenerateMac" in actions:
            assert statement["Condition"] == {"StringEquals": {"kms:MacAlgorithm": MAC_ALGORITHM}}


# -- key policies -----------------------------------------------------------------------


def assert_each_key_is_used_by_exactly_the_roles_iam_allows(packaged: Packaged) -> None:
    roles = set(packaged.resources("AWS::IAM::Role"))  # one per function, checked above
    iam = {role: allowed_grants(packaged, role) for role in roles}
    for name, key in packaged.resources("AWS::KMS::Key").items():
        used_by: dict[str, set[str]] = {role: set() for role in roles}
        for statement in key["Properties"]["KeyPolicy"]["Statement"]:
            assert statement["Effect"] == "Allow", name
            actions = as_list(statement["Action"])
            principal = statement["Principal"]["AWS"]
            if principal == ACCOUNT_ROOT:
                for pattern in actions:
                    assert not fnmatch.filter(KEY_USE_ACTIONS, pattern), (name, pattern)
                continue
            assert isinstance(principal, dict) and list(principal) == ["Fn::GetAtt"], name
            role, attribute = principal["Fn::GetAtt"]
            assert attribute == "Arn" and role in roles, (name, principal)
            used_by[role].update(actions)

        for role in roles:
            granted = {action for action, resource in iam[role] if resource == name}
            assert used_by[role] == granted, (name, role)


def test_each_key_lets_exactly_the_roles_that_use_it_use_it_as_their_iam_policy_says(
    packaged: Packaged,
) -> None:
    assert_each_key_is_used_by_exactly_the_roles_iam_allows(packaged)


# -- signing-key rotation (README, "Rotating the signing key") ---------------------------


@pytest.mark.parametrize(
    ("current", "previous"), [("a", "none"), ("a", "b"), ("b", "a"), ("b", "none")]
)
def test_every_rotation_step_signs_with_the_current_slot_and_publishes_both(
    current: str, previous: str
) -> None:
    template = load_template()
    values = {"Stage": "prod", "SigningKeySlot": current, "PreviousSigningKeySlot": previous}
    step = Packaged("prod", template, Stack(template, values))
    published = {SIGNING_KEY_SLOTS[current]}
    if previous != NO_PREVIOUS_SLOT:
        published.add(SIGNING_KEY_SLOTS[previous])
    api = allowed_grants(step, "ServiceRole")
    authorizer = allowed_grants(step, "AuthorizerRole")

    assert {resource for action, resource in api if action == "kms:Sign"} == {
        SIGNING_KEY_SLOTS[current]
    }
    assert {resource for action, resource in api if action == "kms:GetPublicKey"} == published
    # The authorizer verifies tokens signed by either published key, and never signs.
    assert {r for a, r in authorizer if a.startswith("kms:")} == published
    assert {a for a, r in authorizer if a.startswith("kms:")} == {"kms:GetPublicKey"}
    assert set(step.resources("AWS::KMS::Key")) == published | {
        "KeyEncryptionKey",
        "RefreshTokenKey",
    }
    assert_each_key_is_used_by_exactly_the_roles_iam_allows(step)


def test_only_the_queues_consumer_may_consume_it_and_only_as_its_event_source_does(
    packaged: Packaged,
) -> None:
    (mapping,) = packaged.resources("AWS::Lambda::EventSourceMapping").values()
    consumer = mapping["Properties"]["FunctionName"]["Ref"]
    queue = resource_name(mapping["Properties"]["EventSourceArn"])
    consuming = {
        function: [
            s for s in role_statements(packaged, packaged.role_of(function))
            if s.get("Sid") == CONSUME_SID
        ]
        for function in FUNCTIONS
    }

    (statement,) = consuming.pop(consumer)
    assert sorted(statement["Action"]) == CONSUME_ACTIONS
    assert [resource_name(r) for r in statement["Resource"]] == [queue]
    assert not any(consuming.values())
    assert mapping["Properties"]["FunctionResponseTypes"] == ["ReportBatchItemFailures"]
