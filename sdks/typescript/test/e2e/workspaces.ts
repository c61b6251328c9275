// client.workspaces against the local stack: an owner creates a workspace, adds a second
// signed-in user, the member's workspace key works, and stops working once removed.

import assert from "node:assert/strict";
import { before, describe, it } from "node:test";

import { ConflictError, MemoryClient, PermissionDeniedError } from "../../src/index.js";
import { rejection } from "../assertions.js";
import { idToken, type StackInfo } from "../stack.js";

async function signedIn(info: StackInfo, subject: string): Promise<MemoryClient> {
  const tokens = await new MemoryClient({ endpoint: info.endpoint }).auth.exchange(await idToken(info, subject));
  return new MemoryClient({ endpoint: info.endpoint, tokenProvider: () => tokens.accessToken });
}

export function workspaceSuite(stack: () => StackInfo): void {
  describe("client.workspaces: workspaces and members", () => {
    let owner: MemoryClient;
    let member: MemoryClient;
    let memberId: string;

    before(async () => {
      owner = await signedIn(stack(), "e2e-ws-owner");
      member = await signedIn(stack(), "e2e-ws-member");
      memberId = (await member.auth.whoami()).userId;
    });

    it("createWorkspace makes the caller its owner, and listWorkspaces shows the role", async () => {
      const created = await owner.workspaces.createWorkspace("e2e team");

      assert.match(created.id, /^ws_/);
      assert.equal(created.name, "e2e team");
      const listed = await owner.workspaces.listWorkspaces();
      assert.deepEqual(
        listed.filter((w) => w.id === created.id).map((w) => w.role),
        ["owner"],
      );
      const members = await owner.workspaces.listMembers(created.id);
      assert.deepEqual(members.map((m) => m.role), ["owner"]);
    });

    it("an added member can bind keys to the workspace until removed", async () => {
      const workspace = await owner.workspaces.createWorkspace("e2e shared");

      const added = await owner.workspaces.addMember(workspace.id, memberId);
      assert.equal(added.role, "member");
      assert.deepEqual((await owner.workspaces.addMember(workspace.id, memberId)).userId, memberId);
      const key = await member.auth.createApiKey({ label: "member key", category: "workspace", workspaceId: workspace.id });
      const withKey = new MemoryClient({ endpoint: stack().endpoint, apiKey: key.key });
      assert.equal((await withKey.auth.whoami()).workspaceId, workspace.id);

      await owner.workspaces.removeMember(workspace.id, memberId);

      const refused = await rejection(withKey.auth.whoami());
      assert.ok(refused instanceof PermissionDeniedError);
      assert.equal(refused.code, "not_a_member");
      assert.ok(!(await owner.workspaces.listMembers(workspace.id)).some((m) => m.userId === memberId));
    });

    it("only the owner changes members, and the owner cannot leave", async () => {
      const workspace = await owner.workspaces.createWorkspace("e2e owned");
      await owner.workspaces.addMember(workspace.id, memberId);
      const ownerId = (await owner.auth.whoami()).userId;

      const notOwner = await rejection(member.workspaces.removeMember(workspace.id, ownerId));
      assert.ok(notOwner instanceof PermissionDeniedError);
      assert.equal(notOwner.code, "owner_required");
      const leaving = await rejection(owner.workspaces.removeMember(workspace.id, ownerId));
      assert.ok(leaving instanceof ConflictError);
      assert.equal(leaving.code, "owner_cannot_leave");
    });
  });
}
