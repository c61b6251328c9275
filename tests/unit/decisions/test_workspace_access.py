"""The one workspace-access rule (`decisions/workspace_access.py`), on a stand-in store: no
I/O. What every route answers is pinned in tests/functional/workspaces/test_workspace_access.py."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from chalicelib.access.principal import Principal, Refusal
from chalicelib.decisions.workspace_access import (
    MEMBERS,
    NO_SUCH_WORKSPACE,
    WorkspaceAccess,
    owner_only,
    workspace_access,
)
from chalicelib.workspaces.model import Workspace

WS = "ws_01ARZ3NDEKTSV4RRFFQ69G5FAV"
TEAM = Workspace(WS, "Team", "usr_owner", datetime(2026, 11, 1, tzinfo=UTC))
OWNER_ONLY = owner_only("Only the workspace owner manages webhooks.")


class Members:
    """A workspace store holding TEAM and its members; counts its reads."""

    def __init__(self, *members: str) -> None:
        self.members = {"usr_owner", *members}
        self.reads = 0

    def is_member(self, workspace_id: str, user_id: str) -> bool:
        self.reads += 1
        return workspace_id == WS and user_id in self.members

    def get(self, workspace_id: str) -> Workspace | None:
        self.reads += 1
        return TEAM if workspace_id == WS else None


def caller(user_id: str) -> Principal:
    return Principal(user_id, "user_token", frozenset({"workspace:admin"}))


@pytest.mark.parametrize("access", [MEMBERS, OWNER_ONLY])
@pytest.mark.parametrize(
    ("user_id", "workspace_id"),
    [
        ("usr_stranger", WS),  # not a member
        ("usr_owner", "ws_01ARZ3NDEKTSV4RRFFQ69G5FAW"),  # no such workspace
        ("usr_owner", "team-1"),  # malformed
    ],
)
def test_a_non_member_an_unknown_and_a_malformed_id_are_one_404_not_found(
    access: WorkspaceAccess, user_id: str, workspace_id: str
) -> None:
    decided = workspace_access(Members(), caller(user_id), workspace_id, access)

    assert isinstance(decided, Refusal) and decided == NO_SUCH_WORKSPACE
    assert (decided.status, decided.code) == (404, "not_found")
    assert decided.detail == "No such workspace."


def test_a_malformed_id_is_refused_without_a_read() -> None:
    store = Members()

    workspace_access(store, caller("usr_owner"), "team-1", MEMBERS)

    assert store.reads == 0


def test_a_member_who_is_not_the_owner_is_403_owner_required_where_only_the_owner_may() -> None:
    decided = workspace_access(Members("usr_member"), caller("usr_member"), WS, OWNER_ONLY)

    assert isinstance(decided, Refusal)
    assert (decided.status, decided.code) == (403, "owner_required")
    assert decided.detail == "Only the workspace owner manages webhooks."


def test_a_member_gets_the_workspace_where_members_may_and_the_owner_everywhere() -> None:
    store = Members("usr_member")

    assert workspace_access(store, caller("usr_member"), WS, MEMBERS) == TEAM
    assert workspace_access(store, caller("usr_owner"), WS, OWNER_ONLY) == TEAM
