"""Managing a workspace's service clients: owner only, at most LIMIT, each valid."""

from __future__ import annotations

from typing import Any

from chalicelib import errors, ids
from chalicelib.access.principal import Principal
from chalicelib.access.scopes import WORKSPACE_SCOPES_RULE, workspace_scopes
from chalicelib.clock import Clock
from chalicelib.events import model as events
from chalicelib.events.log import EventLog
from chalicelib.service_clients.model import (
    InvalidServiceClient,
    ServiceClient,
    check_jwks,
    check_jwks_uri,
)
from chalicelib.service_clients.store import LimitReached, ServiceClientStore
from chalicelib.workspaces.model import Workspace

NOT_FOUND = "No service client with this id in this workspace."


class ServiceClientService:
    def __init__(
        self,
        clients: ServiceClientStore,
        events: EventLog,
        clock: Clock,
        local_mode: bool,
    ):
        self._clients = clients
        self._events = events
        self._clock = clock
        self._local_mode = local_mode

    def create(self, principal: Principal, workspace: Workspace, body: Any) -> ServiceClient:
        """`body`: the request's fields (`api/service_clients_models.NewServiceClient`),
        checked here."""
        if (body.jwks is None) == (body.jwks_uri is None):
            raise errors.INVALID_SERVICE_CLIENT.error("Send exactly one of jwks and jwksUri.")
        try:
            jwks = check_jwks(body.jwks) if body.jwks is not None else None
            uri = check_jwks_uri(body.jwks_uri, self._local_mode) if body.jwks_uri else None
        except InvalidServiceClient as invalid:
            raise errors.INVALID_SERVICE_CLIENT.error(str(invalid)) from None
        scopes = workspace_scopes(body.scopes)
        if scopes is None:
            raise errors.INVALID_SCOPE.error(WORKSPACE_SCOPES_RULE)
        now = self._clock.now()
        client = ServiceClient(
            id=ids.new_service_client_id(now),
            workspace_id=workspace.id,
            name=body.name,
            scopes=scopes,
            jwks=jwks,
            jwks_uri=uri,
            created_at=now,
            created_by=principal.user_id,
        )
        event = self._events.by(
            principal,
            events.SERVICE_CLIENT_CREATED,
            workspace.owner_id,
            workspace_id=workspace.id,
            data={"clientId": client.id, "name": client.name, "scopes": list(client.scopes)},
        )
        try:
            # The event a member of the commit: a crash after it leaves it to the sweep.
            self._clients.create(client, [self._events.member(event)])
        except LimitReached as full:
            raise errors.LIMIT_REACHED.error(
                f"At most {full.limit} service clients per workspace: delete one first."
            ) from None
        self._events.published(event)
        return client

    def list(self, workspace: Workspace) -> list[ServiceClient]:
        return self._clients.list(workspace.id)

    def get(self, workspace: Workspace, client_id: str) -> ServiceClient:
        client = self._clients.get(client_id) if ids.is_service_client_id(client_id) else None
        if client is None or client.workspace_id != workspace.id:
            raise errors.NOT_FOUND.error(NOT_FOUND)
        return client

    def delete(self, principal: Principal, workspace: Workspace, client_id: str) -> None:
        client = self.get(workspace, client_id)
        event = self._events.by(
            principal,
            events.SERVICE_CLIENT_DELETED,
            workspace.owner_id,
            workspace_id=workspace.id,
            data={"clientId": client.id, "name": client.name},
        )
        if not self._clients.delete(client, [self._events.member(event)]):
            raise errors.NOT_FOUND.error(NOT_FOUND)
        self._events.published(event)
