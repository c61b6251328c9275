"""`/v1/workspaces/{id}/trust-policies`: which workloads may exchange their platform's OIDC
token for a token of this workspace (workload identity federation).

Owner only, by user token or admin key with workspace:admin: a member gets 403
`owner_required`, anyone else 404 (`decisions/workspace_access.py`).
"""

from __future__ import annotations

from typing import Any

from chalicelib import errors
from chalicelib.api import trust_policies_models as models
from chalicelib.api.operations import MANAGER, Call, Operations, Reply
from chalicelib.decisions.workspace_access import owner_only
from chalicelib.runtime import services

blueprint = Operations(__name__)
COLLECTION = "/v1/workspaces/{workspace_id}/trust-policies"
ITEM = COLLECTION + "/{policy_id}"
OPERATION: dict[str, Any] = {
    "tag": "Workspaces",
    "policy": MANAGER,
    "workspace": owner_only("Only the workspace owner manages trust policies."),
}


@blueprint.operation(
    "POST",
    COLLECTION,
    summary="Create a trust policy (owner only)",
    body=models.NewTrustPolicy,
    response=models.TrustPolicyBody,
    status=201,
    problems=(
        errors.INVALID_NAME,
        errors.INVALID_TRUST_POLICY,
        errors.INVALID_SCOPE,
        errors.LIMIT_REACHED,
    ),
    answer="The policy.",
    **OPERATION,
)
def create_trust_policy(call: Call) -> Reply:
    policy = services().trust_policy_service.create(call.principal, call.workspace, call.body)
    location = f"/v1/workspaces/{policy.workspace_id}/trust-policies/{policy.id}"
    return Reply(models.TrustPolicyBody.of(policy), None, {"Location": location})


@blueprint.operation(
    "GET",
    COLLECTION,
    summary="A workspace's trust policies, in creation order (owner only)",
    response=models.TrustPolicyList,
    status=200,
    answer="The policies; the first that matches an exchange wins.",
    **OPERATION,
)
def list_trust_policies(call: Call) -> models.TrustPolicyList:
    found = services().trust_policy_service.list(call.workspace)
    return models.TrustPolicyList(trust_policies=[models.TrustPolicyBody.of(p) for p in found])


@blueprint.operation(
    "GET",
    ITEM,
    summary="A trust policy (owner only)",
    response=models.TrustPolicyBody,
    status=200,
    problems=(errors.NOT_FOUND,),
    answer="The policy.",
    **OPERATION,
)
def get_trust_policy(call: Call) -> models.TrustPolicyBody:
    policy = services().trust_policy_service.get(call.workspace, call.path["policy_id"])
    return models.TrustPolicyBody.of(policy)


@blueprint.operation(
    "DELETE",
    ITEM,
    summary="Delete a trust policy: its tokens stop working on their next request",
    response=None,
    status=204,
    problems=(errors.NOT_FOUND,),
    **OPERATION,
)
def delete_trust_policy(call: Call) -> None:
    services().trust_policy_service.delete(call.principal, call.workspace, call.path["policy_id"])
