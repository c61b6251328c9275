"""Workspaces and membership (README, "Workspaces")."""

from __future__ import annotations

from dataclasses import replace
from typing import Any, Protocol

from chalicelib import errors, ids
from chalicelib.access.principal import Principal
from chalicelib.clock import Clock
from chalicelib.config import DEFAULT_LIMITS, MEMBER_LIMIT, WORKSPACE_LIMIT
from chalicelib.errors import DependencyUnavailable
from chalicelib.events import model as events
from chalicelib.events.log import EventLog
from chalicelib.idempotency import IdempotencyStore, IdempotentRequest, Recorder
from chalicelib.table import Pending
from chalicelib.workspaces.model import Member, Person, Workspace
from chalicelib.workspaces.store import LimitReached, WorkspaceNotCreated, WorkspaceStore


def _created_maybe(idempotent: IdempotentRequest | None) -> str:
    if idempotent is not None:
        return (
            "The workspace may have been created. Retry with the same Idempotency-Key: "
            "you get it."
        )
    return (
        "The workspace may have been created: list your workspaces (GET /v1/workspaces) "
        "before creating another, or send an Idempotency-Key to make creation safe to retry."
    )


class KnowsUsers(Protocol):
    def exists(self, user_id: str) -> bool: ...

    def person(self, user_id: str) -> Person: ...

    def people(self, user_ids: list[str]) -> dict[str, Person]: ...

    def find_by_email(self, email: str) -> str | None: ...


def is_email(text: str) -> bool:
    """An address as the member routes take it: something@domain, no spaces, no slash."""
    local, at, domain = text.rpartition("@")
    return (
        bool(at and local and "." in domain.strip("."))
        and len(text) <= 320
        and not any(c.isspace() or c == "/" for c in text)
    )


def _with_person(member: Member, person: Person | None) -> Member:
    if person is None:
        return member
    return replace(member, email=person.email, name=person.name)


class WorkspaceService:
    def __init__(
        self,
        workspaces: WorkspaceStore,
        clock: Clock,
        events: EventLog,
        users: KnowsUsers,
        idempotency: IdempotencyStore,
        workspace_limit: int = DEFAULT_LIMITS[WORKSPACE_LIMIT],
        member_limit: int = DEFAULT_LIMITS[MEMBER_LIMIT],
    ):
        self._workspace_limit = workspace_limit
        self._member_limit = member_limit
        self._workspaces = workspaces
        self._clock = clock
        self._events = events
        self._users = users
        self._idempotency = idempotency

    def create(
        self, principal: Principal, name: str, idempotent: IdempotentRequest | None = None
    ) -> tuple[Workspace, bool]:
        """The new workspace, and whether it is the answer to an earlier request with the
        same Idempotency-Key (then nothing was created)."""
        try:
            return self._idempotency.run(
                idempotent,
                self._clock.now,
                self._replay,
                lambda record: self._create(principal, name, record, idempotent),
                WorkspaceNotCreated,
            )
        except WorkspaceNotCreated:  # it committed, yet no record: a conflict, not a race lost
            raise DependencyUnavailable("DynamoDB", _created_maybe(idempotent)) from None

    def _create(
        self,
        principal: Principal,
        name: str,
        record: Recorder,
        idempotent: IdempotentRequest | None,
    ) -> Workspace:
        now = self._clock.now()
        workspace = Workspace(ids.new_workspace_id(now), name, principal.user_id, now)
        event = self._events.by(
            principal, events.WORKSPACE_CREATED, workspace.owner_id,
            workspace_id=workspace.id, data={"name": name},
        )
        # The limit is a counter, one slot taken before the creation: exact under
        # concurrency. A failure here is before anything was made: a plain 503.
        if not self._workspaces.take_slot(principal.user_id, self._workspace_limit):
            raise errors.LIMIT_REACHED.error(
                f"At most {self._workspace_limit} workspaces owned per user (WORKSPACE_LIMIT)."
            )
        try:
            # The Idempotency-Key claimed last, just before the commit point.
            also: list[dict[str, Any] | Pending] = [
                self._events.member(event), *record(workspace.id)
            ]
        except BaseException:
            self._workspaces.give_slot_back(principal.user_id)
            raise
        try:
            self._workspaces.create(workspace, also, counted=True)
        except DependencyUnavailable as failure:
            raise DependencyUnavailable(failure.dependency, _created_maybe(idempotent)) from None
        self._events.published(event)
        return workspace

    def _replay(self, result_id: str) -> Workspace | None:
        """The workspace an Idempotency-Key created (None: not yet written)."""
        return self._workspaces.get(result_id)

    def list_mine(self, principal: Principal) -> list[Workspace]:
        return self._workspaces.list_for_user(principal.user_id)

    def members(self, workspace: Workspace) -> list[Member]:
        """The members of `workspace` (one the caller belongs to:
        `decisions/workspace_access.py`), each with the email and name their last sign-in
        gave."""
        found = self._workspaces.members(workspace.id)
        people = self._users.people([m.user_id for m in found])
        return [_with_person(m, people.get(m.user_id)) for m in found]

    def _user_named(self, user_id_or_email: str) -> str:
        """The user id a member route names: a `usr_` id, or a verified email's user."""
        if is_email(user_id_or_email):
            user_id = self._users.find_by_email(user_id_or_email)
            if user_id is None:
                raise errors.USER_NOT_FOUND.error(
                    "No user has signed in with this verified email. Ask them to sign in "
                    "once, then add them again."
                )
            return user_id
        if not ids.is_user_id(user_id_or_email):
            raise errors.INVALID_USER_ID.error()
        return user_id_or_email

    def add_member(
        self, principal: Principal, workspace: Workspace, user_id_or_email: str
    ) -> tuple[Member, bool]:
        """Add a user (by id or verified email) to `workspace` (one the caller owns:
        `decisions/workspace_access.py`); True when they were not a member."""
        workspace_id = workspace.id
        user_id = self._user_named(user_id_or_email)
        if not self._users.exists(user_id):
            # A member who can never sign in would only be a placeholder for a typo.
            raise errors.USER_NOT_FOUND.error()
        person = self._users.person(user_id)
        now = self._clock.now()
        data = {"userId": user_id, "role": "member", "email": person.email, "name": person.name}
        event = self._events.by(
            principal, events.MEMBER_ADDED, workspace.owner_id,
            workspace_id=workspace_id, data={k: v for k, v in data.items() if v is not None},
        )
        try:
            added = self._workspaces.add_member(
                workspace, user_id, now, [self._events.member(event)], self._member_limit
            )
        except LimitReached:
            raise errors.LIMIT_REACHED.error(
                f"At most {self._member_limit} members per workspace (MEMBER_LIMIT)."
            ) from None
        if added:
            self._events.published(event)
        member = next(
            (m for m in self._workspaces.members(workspace_id) if m.user_id == user_id), None
        )
        return _with_person(member or Member(workspace_id, user_id, "member", now), person), added

    def remove_member(
        self, principal: Principal, workspace: Workspace, user_id_or_email: str
    ) -> None:
        """Remove a user (by id or verified email) from `workspace` (one the caller owns:
        `decisions/workspace_access.py`)."""
        workspace_id = workspace.id
        user_id = user_id_or_email
        if is_email(user_id_or_email):
            user_id = self._users.find_by_email(user_id_or_email) or ""
        if user_id == workspace.owner_id:
            raise errors.OWNER_CANNOT_LEAVE.error()
        if not ids.is_user_id(user_id):
            raise errors.NOT_FOUND.error("This user is not a member of the workspace.")
        person = self._users.person(user_id)
        data = {"userId": user_id, "email": person.email, "name": person.name}
        event = self._events.by(
            principal, events.MEMBER_REMOVED, workspace.owner_id,
            workspace_id=workspace_id, data={k: v for k, v in data.items() if v is not None},
        )
        if not self._workspaces.remove_member(
            workspace_id, user_id, [self._events.member(event)]
        ):
            raise errors.NOT_FOUND.error("This user is not a member of the workspace.")
        self._events.published(event)
