"""The data-plane REQUEST authorizer as the packaged template declares and exports it."""

from __future__ import annotations

from tests.infra.conftest import Packaged

# Only Authorization: API Gateway refuses with 401, before calling the authorizer, a request
# that lacks any listed identity source. X-Workspace-Id is optional for a workspace key
# (optional for a workspace key), and the authorizer answers an admin key without it with 403
# workspace_required, so it must not be listed. With caching off (TTL 0) identity sources
# are not a cache key, and the authorizer still receives every header in the event.
IDENTITY_SOURCES = "method.request.header.Authorization"


def test_the_authorizer_function_is_the_apps_authorizer_handler(packaged: Packaged) -> None:
    function = packaged.functions()["Authorizer"]["Properties"]

    assert function["Handler"] == "app.authorizer"


def test_the_authorizer_is_a_request_authorizer_on_authorization_without_caching(
    packaged: Packaged,
) -> None:
    (authorizer,) = packaged.resources("AWS::ApiGateway::Authorizer").values()
    properties = authorizer["Properties"]

    assert properties["Type"] == "REQUEST"
    assert properties["IdentitySource"] == IDENTITY_SOURCES
    assert properties["AuthorizerResultTtlInSeconds"] == 0
    assert properties["RestApiId"] == {"Ref": "RestAPI"}


def test_api_gateway_calls_the_authorizers_live_alias(packaged: Packaged) -> None:
    # SnapStart starts published versions only: the unqualified function would cold-start.
    (name,) = packaged.resources("AWS::ApiGateway::Authorizer")
    text, variables = packaged.template["Resources"][name]["Properties"]["AuthorizerUri"]["Fn::Sub"]

    assert text.endswith(":lambda:path/2015-03-31/functions/${Alias}/invocations")
    assert variables == {"Alias": {"Ref": "Authorizer.Alias"}}


def test_api_gateway_may_invoke_the_authorizer_as_an_authorizer_only(packaged: Packaged) -> None:
    permissions = [
        p["Properties"]
        for p in packaged.resources("AWS::Lambda::Permission").values()
        if p["Properties"]["FunctionName"] == {"Ref": "Authorizer.Alias"}
    ]

    assert len(permissions) == 1
    (permission,) = permissions
    assert permission["Action"] == "lambda:InvokeFunction"
    assert permission["Principal"] == "apigateway.amazonaws.com"
    assert permission["SourceArn"].endswith("/authorizers/*")
    assert "${AWS::AccountId}" in permission["SourceArn"]


def test_the_authorizer_arn_is_exported_per_stage(packaged: Packaged) -> None:
    output = packaged.template["Outputs"]["AuthorizerArn"]

    assert output["Value"] == {"Ref": "Authorizer.Alias"}
    assert packaged.stack.value(output["Export"]["Name"]) == (
        f"memory-auth-{packaged.stage}-AuthorizerArn"
    )


def test_the_authorizer_moves_to_its_role_only_once_that_role_may_read_the_table(
    packaged: Packaged,
) -> None:
    # CloudFormation would otherwise switch the function to its (new) role in parallel with
    # attaching the role's policy: every data-plane request in between fails with 500.
    authorizer = packaged.template["Resources"]["Authorizer"]
    role = packaged.role_of("Authorizer")
    reading = [
        name
        for name, policy in packaged.policies_of(role).items()
        if any(
            "dynamodb:GetItem" in statement["Action"]
            for statement in policy["Properties"]["PolicyDocument"]["Statement"]
        )
    ]

    assert reading and set(reading) <= set(authorizer.get("DependsOn", []))
