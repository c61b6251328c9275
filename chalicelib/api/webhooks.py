"""`/v1/workspaces/{id}/webhooks`: a workspace's subscriptions to its audit events, their
signing secrets, and their deliveries (docs/guides/webhooks.md).

Owner only, by user token or admin key with workspace:admin: a member gets 403
`owner_required`, anyone else 404 (`decisions/workspace_access.py`).
"""

from __future__ import annotations

from typing import Any

from chalicelib import errors
from chalicelib.api import webhooks_models as models
from chalicelib.api.operations import MANAGER, Call, Operations, Reply
from chalicelib.decisions.workspace_access import owner_only
from chalicelib.runtime import services
from chalicelib.webhooks.service import LIMIT

blueprint = Operations(__name__)
COLLECTION = "/v1/workspaces/{workspace_id}/webhooks"
ITEM = COLLECTION + "/{webhook_id}"
OPERATION: dict[str, Any] = {
    "tag": "Webhooks",
    "policy": MANAGER,
    "workspace": owner_only("Only the workspace owner manages webhooks."),
}


def _with_secret(created: Any) -> models.WebhookWithSecret:
    now = services().clock.now()
    shown = models.WebhookBody.of(created.webhook, now).model_dump()
    return models.WebhookWithSecret.model_validate({**shown, "secret": created.secret})


@blueprint.operation(
    "POST",
    COLLECTION,
    summary="Subscribe a URL to the workspace's events (owner only)",
    body=models.NewWebhook,
    response=models.WebhookWithSecret,
    status=201,
    secret=True,
    problems=(errors.INVALID_WEBHOOK, errors.LIMIT_REACHED),
    answer="The subscription, with its signing secret: shown once.",
    description=f"At most {LIMIT} per workspace. Deliveries are signed per Standard Webhooks "
    "with the secret answered here, and only here.",
    **OPERATION,
)
def create_webhook(call: Call) -> Reply:
    created = services().webhook_service.create(call.principal, call.workspace, call.body)
    location = f"{COLLECTION.format(workspace_id=call.workspace.id)}/{created.webhook.id}"
    return Reply(_with_secret(created), None, {"Location": location})


@blueprint.operation(
    "GET",
    COLLECTION,
    summary="A workspace's webhooks, in creation order (owner only)",
    response=models.WebhookList,
    status=200,
    answer="The subscriptions, without their secrets.",
    **OPERATION,
)
def list_webhooks(call: Call) -> models.WebhookList:
    now = services().clock.now()
    found = services().webhook_service.list(call.workspace)
    return models.WebhookList(webhooks=[models.WebhookBody.of(w, now) for w in found])


@blueprint.operation(
    "GET",
    ITEM,
    summary="A webhook (owner only)",
    response=models.WebhookBody,
    status=200,
    problems=(errors.NOT_FOUND,),
    answer="The subscription, without its secret.",
    **OPERATION,
)
def get_webhook(call: Call) -> models.WebhookBody:
    webhook = services().webhook_service.get(call.workspace, call.path["webhook_id"])
    return models.WebhookBody.of(webhook, services().clock.now())


@blueprint.operation(
    "PATCH",
    ITEM,
    summary="Change a webhook's URL, events or enabled (owner only)",
    body=models.WebhookChanges,
    response=models.WebhookBody,
    status=200,
    problems=(errors.NOT_FOUND, errors.INVALID_WEBHOOK),
    answer="The subscription as changed.",
    description="Enabling a subscription again starts its count of failing days over.",
    **OPERATION,
)
def update_webhook(call: Call) -> models.WebhookBody:
    webhook = services().webhook_service.update(
        call.principal, call.workspace, call.path["webhook_id"], call.body
    )
    return models.WebhookBody.of(webhook, services().clock.now())


@blueprint.operation(
    "POST",
    ITEM + "/rotate-secret",
    summary="A new signing secret; the old one also signs for 24 hours (owner only)",
    response=models.WebhookWithSecret,
    status=200,
    secret=True,
    problems=(errors.NOT_FOUND,),
    answer="The subscription, with its new secret: shown once.",
    **OPERATION,
)
def rotate_webhook_secret(call: Call) -> models.WebhookWithSecret:
    rotated = services().webhook_service.rotate_secret(
        call.principal, call.workspace, call.path["webhook_id"]
    )
    return _with_secret(rotated)


@blueprint.operation(
    "DELETE",
    ITEM,
    summary="Delete a webhook: nothing more is delivered to it",
    response=None,
    status=204,
    problems=(errors.NOT_FOUND,),
    **OPERATION,
)
def delete_webhook(call: Call) -> None:
    services().webhook_service.delete(call.principal, call.workspace, call.path["webhook_id"])


@blueprint.operation(
    "GET",
    ITEM + "/deliveries",
    summary="A webhook's deliveries, newest first (owner only)",
    query=models.DeliveryQuery,
    response=models.DeliveryPage,
    status=200,
    problems=(errors.NOT_FOUND, errors.INVALID_PARAMETER),
    answer="A page of deliveries: attempts, the last status code, the next attempt.",
    description="Deliveries are kept 30 days.",
    **OPERATION,
)
def list_webhook_deliveries(call: Call) -> models.DeliveryPage:
    query: models.DeliveryQuery = call.query
    found, cursor = services().webhook_service.deliveries(
        call.workspace, call.path["webhook_id"], query.limit, query.cursor
    )
    return models.DeliveryPage(
        deliveries=[models.DeliveryBody.of(d) for d in found], next_cursor=cursor
    )


@blueprint.operation(
    "POST",
    ITEM + "/deliveries/{delivery_id}/retry",
    summary="Try a delivery again now (owner only)",
    response=models.DeliveryBody,
    status=202,
    problems=(errors.NOT_FOUND,),
    answer="The delivery, due again (a pending one is left as it is).",
    **OPERATION,
)
def retry_webhook_delivery(call: Call) -> models.DeliveryBody:
    delivery = services().webhook_service.retry(
        call.workspace, call.path["webhook_id"], call.path["delivery_id"]
    )
    return models.DeliveryBody.of(delivery)
