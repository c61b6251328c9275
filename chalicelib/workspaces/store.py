"""Workspaces and their members in DynamoDB.

A membership is two items: `WS#<ws>`/`MEMBER#<user>`, which the request path reads with one
strongly consistent GetItem, and `USER#<user>`/`WS#<ws>`, which lists a user's workspaces.
No change uses a transaction (table.py, "commit points"): the member item is each change's
commit point (added only if absent, removed only if present), and the user's item follows
it, so a user's list may lag a failed call while a decision never does. Removing a member
deletes the member item first, so that member's keys fail on the next request.

The counts with a maximum are counters: the workspaces a user owns (`items.user_counts`,
`workspaces`) and the members of a workspace (`items.workspace_counts`, `members`), each
taken before the change that adds one.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from functools import cache
from typing import TYPE_CHECKING, Any

from botocore.exceptions import ClientError

from chalicelib import items
from chalicelib.clock import parse_rfc3339, rfc3339
from chalicelib.table import (
    EXISTS,
    Attribute,
    Item,
    Pending,
    Shape,
    commit,
    complete,
    delete,
    get_consistent,
    get_many_consistent,
    give_back,
    is_condition_failure,
    put_if_absent,
    take_one,
    to_item,
    under,
    was_retried,
    write_once,
)

if TYPE_CHECKING:
    # Not needed by a decision (membership reads answer a bool): loaded where a workspace or
    # a member is read, so that the authorizer's cold start does not build them.
    from chalicelib.workspaces.model import Member, Workspace

OWNER = "owner"
MEMBER = "member"


class WorkspaceNotCreated(Exception):
    """Another request claimed this creation's Idempotency-Key first."""


class LimitReached(Exception):
    """A maximum count (workspaces per owner, members per workspace) is reached."""


OWNED = "workspaces"  # the attribute of `items.user_counts` counting workspaces owned
MEMBERS = "members"  # the attribute of `items.workspace_counts`


def _moment(text: str) -> datetime:
    parsed = parse_rfc3339(text)
    assert parsed is not None  # written by rfc3339
    return parsed


@cache
def _workspace_shape() -> Shape[Workspace]:
    """A workspace's item (`WS#<ws>`/`WS`), and the member's copy of it (`USER#<user>`/
    `WS#<ws>`, with the member's `role`), declared once. Built on first use: a decision never
    reads a workspace record."""
    from chalicelib.workspaces.model import Workspace

    return Shape(
        Workspace,
        [
            Attribute("workspaceId", "id"),
            Attribute("name"),
            Attribute("ownerId", "owner_id"),
            Attribute("createdAt", "created_at", rfc3339, _moment),
            Attribute("role", written=False, missing=MEMBER),  # the member's copy's
        ],
    )


@cache
def _member_shape() -> Shape[Member]:
    """A membership as the workspace sees it (`WS#<ws>`/`MEMBER#<user>`), declared once."""
    from chalicelib.workspaces.model import Member

    return Shape(
        Member,
        [
            Attribute("workspaceId", "workspace_id"),
            Attribute("userId", "user_id"),
            Attribute("role"),
            Attribute("addedAt", "added_at", rfc3339, _moment),
        ],
    )


class WorkspaceStore:
    def __init__(self, client: Any, table_name: str):
        self._client = client
        self._table = table_name

    def _put(self, item: dict[str, Any]) -> dict[str, Any]:
        return put_if_absent(self._table, item)

    def _membership_items(
        self, workspace: Workspace, user_id: str, role: str, now: datetime
    ) -> list[dict[str, Any]]:
        from chalicelib.workspaces.model import Member

        member = to_item(_member_shape().values(Member(workspace.id, user_id, role, now)))
        member.update(items.member(workspace.id, user_id))
        mine = to_item({**_workspace_shape().values(workspace), "role": role})
        mine.update(items.membership(user_id, workspace.id))
        return [self._put(member), self._put(mine)]

    def take_slot(self, owner_id: str, limit: int) -> bool:
        """One of the owner's `limit` workspace slots (workspaces owned), if one is left."""
        return take_one(
            self._client, self._table, items.user_counts(owner_id), OWNED, limit,
            initial=lambda: sum(
                1 for w in self.list_for_user(owner_id) if w.owner_id == owner_id
            ),
        )

    def give_slot_back(self, owner_id: str) -> None:
        give_back(self._client, self._table, items.user_counts(owner_id), OWNED)

    def create(
        self,
        workspace: Workspace,
        also: Sequence[dict[str, Any] | Pending] = (),
        counted: bool = False,
    ) -> None:
        """Writes the workspace and its owner's membership, and `also` (its event) through
        the outbox. WorkspaceNotCreated if its id was taken (then the slot `take_slot` took
        for it, if `counted`, is given back).

        Commit point: the owner's member item (what a decision reads), only if absent."""
        owner = workspace.owner_id
        record = to_item(_workspace_shape().values(workspace))
        record.update(items.workspace(workspace.id))
        member, mine = self._membership_items(workspace, owner, OWNER, workspace.created_at)
        at = workspace.created_at
        then = [Pending(self._put(record), at), Pending(mine, at)]
        try:
            commit(self._client, member, [*then, *also])
        except ClientError as error:
            if not is_condition_failure(error):
                raise
            # A fresh workspace id never collides: if it is there, an earlier attempt of
            # this very write was applied and its answer lost.
            if not self.is_member(workspace.id, owner):
                if counted:
                    self.give_slot_back(owner)
                raise WorkspaceNotCreated(workspace.id) from None
            complete(self._client, member)

    def get(self, workspace_id: str) -> Workspace | None:
        values = get_consistent(self._client, self._table, items.workspace(workspace_id))
        return _workspace_shape().record(values) if values else None

    def is_member(self, workspace_id: str, user_id: str) -> bool:
        """The request path's membership read: strongly consistent, key attributes only."""
        found = get_consistent(
            self._client, self._table, items.member(workspace_id, user_id), "#pk"
        )
        return found is not None

    def read(self, item: Item) -> dict[str, Any] | None:
        """A decision's one round trip for a credential that needs one item of its own and
        no membership (a workload token's trust policy): one strongly consistent GetItem."""
        return get_consistent(self._client, self._table, item)

    def read_with_membership(
        self, item: Item, workspace_id: str, user_id: str
    ) -> tuple[dict[str, Any] | None, bool]:
        """A decision's one round trip for a credential that needs an item of its own (an MCP
        grant, a delegated token's root key) and its owner's membership: both strongly
        consistent in one BatchGetItem, so neither a revocation nor a removal is ever stale."""
        found, membership = get_many_consistent(
            self._client, self._table, [item, items.member(workspace_id, user_id)]
        )
        return found, membership is not None

    def _query(self, pk: str, prefix: str) -> list[dict[str, Any]]:
        return list(under(self._client, self._table, pk, prefix, consistent=True))

    def list_for_user(self, user_id: str) -> list[Workspace]:
        shape = _workspace_shape()
        return [
            shape.record(values)
            for values in self._query(items.user_pk(user_id), items.WORKSPACE_PREFIX)
        ]

    def members(self, workspace_id: str) -> list[Member]:
        shape = _member_shape()
        return [
            shape.record(values)
            for values in self._query(items.workspace_pk(workspace_id), items.MEMBER_PREFIX)
        ]

    def add_member(
        self,
        workspace: Workspace,
        user_id: str,
        now: datetime,
        also: Sequence[dict[str, Any] | Pending] = (),
        limit: int | None = None,
    ) -> bool:
        """True when added; False when the user already was a member. `also` (an event)
        is written only with an addition. With `limit`, one of the workspace's member slots
        is taken first (LimitReached when none is left).

        Commit point: the member item, put only if absent (of two additions, one adds)."""
        counter = items.workspace_counts(workspace.id)
        if limit is not None and not take_one(
            self._client, self._table, counter, MEMBERS, limit,
            initial=lambda: len(self.members(workspace.id)),
        ):
            if self.is_member(workspace.id, user_id):
                return False
            raise LimitReached(limit)
        member, mine = self._membership_items(workspace, user_id, MEMBER, now)
        try:
            commit(self._client, member, [Pending(mine, now), *also])
        except ClientError as error:
            if not is_condition_failure(error):
                raise
            if limit is not None:
                give_back(self._client, self._table, counter, MEMBERS)
            return False
        return True

    def remove_member(
        self, workspace_id: str, user_id: str, also: Sequence[dict[str, Any] | Pending] = ()
    ) -> bool:
        """True when removed; False when the user was not a member.

        Commit point: the member item, deleted only if present: from then on the member's
        credentials are refused. The user's item, the count and `also` follow it."""
        point = delete(self._table, items.member(workspace_id, user_id), EXISTS)
        try:
            commit(self._client, point, also)
        except ClientError as error:
            if not is_condition_failure(error):
                raise
            # After a retry, the member may be gone because the first attempt removed them
            # (its answer lost): this call did remove them. Otherwise they were not there.
            if not was_retried(error):
                return False
        mine = delete(self._table, items.membership(user_id, workspace_id), EXISTS)
        if write_once(self._client, mine):
            give_back(self._client, self._table, items.workspace_counts(workspace_id), MEMBERS)
        return True
