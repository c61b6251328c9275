"""The service role's permissions, held against the AWS operations the code performs.

The functional tests record every operation the deployed code (`app.py`, `chalicelib/`)
sends to AWS into build/aws-operations.json (tests/functional/conftest.py). Here each one
must be allowed by the packaged IAM policy on the resource it acts on, and the policy may
allow nothing else: no action the code never performs, no resource it never touches.
"""

from __future__ import annotations

import fnmatch
import json
from typing import Any

import pytest

from chalicelib.tokens import _KMS_ALGORITHM
from chalicelib.vault import encryption_context
from tests.infra.conftest import Packaged
from tools.infra import (
    NO_PREVIOUS_SLOT,
    PROJECT_DIR,
    SIGNING_KEY_SLOTS,
    Stack,
    load_template,
)

OPERATIONS_FILE = PROJECT_DIR / "build" / "aws-operations.json"
LOGS_SID = "WriteOwnLogs"

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
    ("kms", "GetPublicKey"): ("TOKEN_SIGNING_KEY_ID", "TOKEN_PREVIOUS_SIGNING_KEY_ID"),
}

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
def recorded() -> set[tuple[str, ...]]:
    if not OPERATIONS_FILE.is_file():
        pytest.fail(f"{OPERATIONS_FILE} is missing: run `make test-functional` first")
    return {tuple(entry) for entry in json.loads(OPERATIONS_FILE.read_text())}


def actions_of(entry: tuple[str, ...], recorded: set[tuple[str, ...]]) -> set[str]:
    service, operation = entry
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
    return {packaged.key_for_alias(name) for name in names}


def required_grants(
    recorded: set[tuple[str, ...]], packaged: Packaged, env: dict[str, str]
) -> set[Grant]:
    grants = set()
    for entry in recorded:
        if len(entry) != 2:
            continue  # a transaction member kind, read by actions_of
        for action in actions_of(entry, recorded):
            grants.update((action, resource) for resource in resources_of(entry, packaged, env))
    return grants


def service_statements(packaged: Packaged) -> list[dict[str, Any]]:
    policies = [
        policy["Properties"]
        for policy in packaged.resources("AWS::IAM::Policy").values()
        if {"Ref": "ServiceRole"} in policy["Properties"]["Roles"]
    ]
    assert len(policies) == 1, "one policy, and only one, grants the service role anything"
    statements: list[dict[str, Any]] = policies[0]["PolicyDocument"]["Statement"]
    return statements


def as_list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else [value]


def allowed_grants(packaged: Packaged) -> set[Grant]:
    grants = set()
    for statement in service_statements(packaged):
        if statement.get("Sid") == LOGS_SID:
            continue
        for resource in as_list(statement["Resource"]):
            assert isinstance(resource, dict) and "Fn::GetAtt" in resource, resource
            name, attribute = resource["Fn::GetAtt"]
            assert attribute == "Arn"
            grants.update((action, name) for action in as_list(statement["Action"]))
    return grants


# -- the policy against the recorded operations ----------------------------------------


def test_the_functional_tests_recorded_the_request_path(recorded: set[tuple[str, ...]]) -> None:
    assert ("dynamodb", "GetItem") in recorded


def test_every_operation_the_code_performs_is_allowed_on_its_resource(
    recorded: set[tuple[str, ...]], packaged: Packaged, config_env: dict[str, str]
) -> None:
    missing = required_grants(recorded, packaged, config_env) - allowed_grants(packaged)

    assert not missing, f"the code performs these, the policy does not allow them: {missing}"


def test_the_policy_allows_nothing_the_code_does_not_perform(
    recorded: set[tuple[str, ...]], packaged: Packaged, config_env: dict[str, str]
) -> None:
    unused = allowed_grants(packaged) - required_grants(recorded, packaged, config_env)

    assert not unused, f"allowed, never performed (or no test performs them): {unused}"


def test_statements_allow_named_actions_on_named_resources_only(packaged: Packaged) -> None:
    for statement in service_statements(packaged):
        assert statement["Effect"] == "Allow"
        assert not {"NotAction", "NotResource", "NotPrincipal"} & set(statement)
        for action in as_list(statement["Action"]):
            assert "*" not in action, statement
        for resource in as_list(statement["Resource"]):
            assert resource != "*" and "*" not in json.dumps(resource), statement


def test_the_only_other_grant_is_writing_the_functions_own_logs(packaged: Packaged) -> None:
    (logs,) = [s for s in service_statements(packaged) if s.get("Sid") == LOGS_SID]
    groups = set(packaged.resources("AWS::Logs::LogGroup"))

    # The Lambda runtime writes these, not the code, so the recorder never sees them; the
    # log groups exist already (the template creates them), hence no logs:CreateLogGroup.
    assert sorted(logs["Action"]) == ["logs:CreateLogStream", "logs:PutLogEvents"]
    assert {r["Fn::GetAtt"][0] for r in logs["Resource"]} == groups


def test_kms_conditions_match_what_the_code_sends(packaged: Packaged) -> None:
    by_sid = {s.get("Sid"): s for s in service_statements(packaged)}
    sealing = by_sid["SealAndOpenStoredKeys"]["Condition"]
    signing = by_sid["SignUserTokens"]["Condition"]

    assert sealing["ForAllValues:StringEquals"]["kms:EncryptionContextKeys"] == sorted(
        encryption_context("key_x", "usr_x")
    )
    assert signing["StringEquals"]["kms:SigningAlgorithm"] == _KMS_ALGORITHM


# -- key policies -----------------------------------------------------------------------


def assert_only_the_service_role_uses_keys_as_iam_allows(packaged: Packaged) -> None:
    iam = allowed_grants(packaged)
    for name, key in packaged.resources("AWS::KMS::Key").items():
        used_by_role: set[str] = set()
        for statement in key["Properties"]["KeyPolicy"]["Statement"]:
            actions = as_list(statement["Action"])
            principal = statement["Principal"]["AWS"]
            if principal == {"Fn::GetAtt": ["ServiceRole", "Arn"]}:
                used_by_role.update(actions)
                continue
            assert principal == "arn:${AWS::Partition}:iam::${AWS::AccountId}:root", name
            for pattern in actions:
                assert not fnmatch.filter(KEY_USE_ACTIONS, pattern), (name, pattern)

        assert used_by_role == {action for action, resource in iam if resource == name}, name


def test_only_the_service_role_may_use_each_key_and_only_as_its_iam_policy_says(
    packaged: Packaged,
) -> None:
    assert_only_the_service_role_uses_keys_as_iam_allows(packaged)


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
    grants = allowed_grants(step)

    assert {resource for action, resource in grants if action == "kms:Sign"} == {
        SIGNING_KEY_SLOTS[current]
    }
    assert {resource for action, resource in grants if action == "kms:GetPublicKey"} == published
    assert set(step.resources("AWS::KMS::Key")) == published | {"KeyEncryptionKey"}
    assert_only_the_service_role_uses_keys_as_iam_allows(step)
