// client.auth's key methods and whoami against the local stack, over real HTTP.

import assert from "node:assert/strict";
import { before, describe, it } from "node:test";

import {
  AuthenticationError,
  BadRequestError,
  ConfigurationError,
  ConflictError,
  GoneError,
  MemoryClient,
  NotFoundError,
  PermissionDeniedError,
  type ApiKeyWithSecret,
  type NewApiKey,
} from "../../src/index.js";
import { assertNoSecret, rejection } from "../assertions.js";
import type { StackInfo } from "../stack.js";

const ALL_SCOPES = ["memory", "entities", "reasoning", "ontology", "skills", "workspace:admin"];

/** Another workspace of the development user, for the workspace-binding rules. */
async function createWorkspace(info: StackInfo, name: string): Promise<string> {
  const response = await fetch(`${info.endpoint}/v1/workspaces`, {
    method: "POST",
    headers: { Authorization: `Bearer ${info.token}`, "Content-Type": "application/json" },
    body: JSON.stringify({ name }),
  });
  assert.equal(response.status, 201);
  return ((await response.json()) as { id: string }).id;
}

export function keySuite(stack: () => StackInfo): void {
  describe("client.auth: API keys and whoami", () => {
    // The development user, signed in with its user token, and its workspace as default.
    let user: MemoryClient;
    let adminKey: ApiKeyWithSecret;
    let workspaceKey: ApiKeyWithSecret;

    before(async () => {
      const info = stack();
      user = new MemoryClient({
        endpoint: info.endpoint,
        workspaceId: info.workspaceId,
        tokenProvider: () => info.token,
      });
      adminKey = await user.auth.createApiKey({ label: "e2e admin" });
      workspaceKey = await user.auth.createApiKey({ label: "e2e workspace", category: "workspace" });
    });

    it("createApiKey makes an admin key by default and returns its plaintext", () => {
      assert.match(adminKey.id, /^key_/);
      assert.equal(adminKey.label, "e2e admin");
      assert.equal(adminKey.category, "admin");
      assert.equal(adminKey.workspaceId, null);
      assert.deepEqual(adminKey.scopes, ALL_SCOPES);
      assert.equal(adminKey.status, "active");
      assert.equal(adminKey.revealable, true);
      assert.ok(adminKey.key.startsWith("sv" + "c_"));
      assert.ok(adminKey.hint?.endsWith(adminKey.key.slice(-4)));
      assert.equal(adminKey.revokedAt, null);
      assert.ok(Date.parse(adminKey.expiresAt) > Date.parse(adminKey.createdAt));
    });

    it("createApiKey binds a workspace key to the client's workspace by default", () => {
      assert.equal(workspaceKey.category, "workspace");
      assert.equal(workspaceKey.workspaceId, stack().workspaceId);
      assert.deepEqual(workspaceKey.scopes, ["memory", "entities", "reasoning", "ontology", "skills"]);
    });

    it("createApiKey takes an explicit workspace and a subset of scopes", async () => {
      const created = await user.auth.createApiKey({
        label: "e2e scoped",
        category: "workspace",
        workspaceId: stack().workspaceId,
        scopes: ["skills", "memory"],
      });

      assert.equal(created.workspaceId, stack().workspaceId);
      assert.deepEqual(created.scopes, ["memory", "skills"]);
    });

    it("createApiKey refuses a workspace for an admin key with a typed 400", async () => {
      // The types forbid this; an untyped caller can still send it.
      const input = { label: "e2e wrong", category: "admin", workspaceId: stack().workspaceId } as unknown as NewApiKey;

      const error = await rejection(user.auth.createApiKey(input));

      assert.ok(error instanceof BadRequestError);
      assert.equal(error.status, 400);
      assert.equal(error.code, "workspace_id_not_allowed");
    });

    it("listApiKeys with allWorkspaces lists every key of the caller, without plaintext", async () => {
      const page = await user.auth.listApiKeys(undefined, { allWorkspaces: true });

      const ids = page.keys.map((key) => key.id);
      assert.ok(ids.includes(adminKey.id));
      assert.ok(ids.includes(workspaceKey.id));
      assert.ok(page.keys.every((key) => !("key" in key)));
      assert.ok(ids.indexOf(workspaceKey.id) < ids.indexOf(adminKey.id), "newest first");
    });

    it("listApiKeys with a workspace lists only the keys bound to it", async () => {
      const page = await user.auth.listApiKeys(stack().workspaceId);

      const ids = page.keys.map((key) => key.id);
      assert.ok(ids.includes(workspaceKey.id));
      assert.ok(!ids.includes(adminKey.id));
      assert.ok(page.keys.every((key) => key.workspaceId === stack().workspaceId));
    });

    it("listApiKeys uses the client's workspace when none is passed", async () => {
      const page = await user.auth.listApiKeys();

      assert.ok(page.keys.every((key) => key.workspaceId === stack().workspaceId));
      assert.ok(!page.keys.some((key) => key.id === adminKey.id));
    });

    it("listApiKeys with null (deprecated) still lists every key", async () => {
      const page = await user.auth.listApiKeys(null);

      assert.ok(page.keys.some((key) => key.id === adminKey.id));
    });

    it("listApiKeys pages with limit and cursor", async () => {
      const first = await user.auth.listApiKeys(undefined, { allWorkspaces: true, limit: 1 });
      assert.equal(first.keys.length, 1);
      assert.equal(typeof first.nextCursor, "string");

      const second = await user.auth.listApiKeys(undefined, {
        allWorkspaces: true,
        limit: 1,
        cursor: first.nextCursor ?? "",
      });

      assert.equal(second.keys.length, 1);
      assert.notEqual(second.keys[0]?.id, first.keys[0]?.id);
    });

    it("getApiKey returns one key's metadata without plaintext", async () => {
      const found = await user.auth.getApiKey(adminKey.id);

      assert.equal(found.id, adminKey.id);
      assert.equal(found.label, "e2e admin");
      assert.ok(!("key" in found));
    });

    it("revealApiKey returns the plaintext again", async () => {
      const revealed = await user.auth.revealApiKey(adminKey.id, null);

      assert.equal(revealed.id, adminKey.id);
      assert.equal(revealed.key, adminKey.key);
    });

    it("revealApiKey takes the workspace of a workspace key", async () => {
      const revealed = await user.auth.revealApiKey(workspaceKey.id, stack().workspaceId);

      assert.equal(revealed.key, workspaceKey.key);
    });

    it("whoami with a user token names the user and no key", async () => {
      const me = await user.auth.whoami();

      assert.equal(me.userId, stack().userId);
      assert.equal(me.credential, "user_token");
      assert.equal(me.keyId, null);
      assert.equal(me.category, null);
      assert.equal(me.workspaceId, stack().workspaceId);
      assert.deepEqual(me.scopes, ALL_SCOPES);
    });

    it("whoami with an admin key names the key and the client's workspace", async () => {
      const client = new MemoryClient({
        endpoint: stack().endpoint,
        apiKey: adminKey.key,
        workspaceId: stack().workspaceId,
      });

      const me = await client.auth.whoami();

      assert.equal(me.credential, "api_key");
      assert.equal(me.keyId, adminKey.id);
      assert.equal(me.category, "admin");
      assert.equal(me.workspaceId, stack().workspaceId);
    });

    it("an admin key manages keys: create, reveal, revoke", async () => {
      const client = new MemoryClient({ endpoint: stack().endpoint, apiKey: adminKey.key });

      const created = await client.auth.createApiKey({ label: "made by a key", scopes: ["memory"] });
      const revealed = await client.auth.revealApiKey(created.id);
      await client.auth.revokeApiKey(created.id);

      assert.equal(revealed.key, created.key);
      assert.deepEqual(created.scopes, ["memory"]);
      assert.equal((await client.auth.getApiKey(created.id)).status, "revoked");
    });

    it("a workspace key cannot manage keys: PermissionDeniedError insufficient_scope", async () => {
      const client = new MemoryClient({ endpoint: stack().endpoint, apiKey: workspaceKey.key });

      const error = await rejection(client.auth.listApiKeys());

      assert.ok(error instanceof PermissionDeniedError);
      assert.equal(error.status, 403);
      assert.equal(error.code, "insufficient_scope");
      assertNoSecret(error, [workspaceKey.key]);
    });

    it("a workspace key naming another workspace is refused with workspace_mismatch", async () => {
      const other = await createWorkspace(stack(), "e2e other");
      const client = new MemoryClient({ endpoint: stack().endpoint, apiKey: workspaceKey.key, workspaceId: other });

      const error = await rejection(client.auth.whoami());

      assert.ok(error instanceof PermissionDeniedError);
      assert.equal(error.code, "workspace_mismatch");
    });

    it("rotateApiKey returns a new key and revokes the old one", async () => {
      const old = await user.auth.createApiKey({ label: "e2e rotate me" });

      const rotated = await user.auth.rotateApiKey(old.id);

      assert.notEqual(rotated.id, old.id);
      assert.notEqual(rotated.key, old.key);
      assert.equal(rotated.label, "e2e rotate me");
      assert.equal(rotated.status, "active");
      const previous = await user.auth.getApiKey(old.id);
      assert.equal(previous.status, "revoked");
      assert.equal(previous.replacedBy, rotated.id);
      const withNew = new MemoryClient({ endpoint: stack().endpoint, apiKey: rotated.key });
      assert.equal((await withNew.auth.whoami()).keyId, rotated.id);
      const withOld = new MemoryClient({ endpoint: stack().endpoint, apiKey: old.key });
      const error = await rejection(withOld.auth.whoami());
      assert.ok(error instanceof AuthenticationError);
      assert.equal(error.code, "revoked_credentials");
      assertNoSecret(error, [old.key]);
    });

    it("rotateApiKey of a revoked key is a ConflictError key_not_active", async () => {
      const old = await user.auth.createApiKey({ label: "e2e rotate twice" });
      await user.auth.rotateApiKey(old.id);

      const error = await rejection(user.auth.rotateApiKey(old.id));

      assert.ok(error instanceof ConflictError);
      assert.equal(error.status, 409);
      assert.equal(error.code, "key_not_active");
    });

    it("revokeApiKey takes effect on the next request, and twice is fine", async () => {
      const doomed = await user.auth.createApiKey({ label: "e2e revoke me" });
      const client = new MemoryClient({ endpoint: stack().endpoint, apiKey: doomed.key });
      assert.equal((await client.auth.whoami()).keyId, doomed.id);

      await user.auth.revokeApiKey(doomed.id);
      await user.auth.revokeApiKey(doomed.id);

      const error = await rejection(client.auth.whoami());
      assert.ok(error instanceof AuthenticationError);
      assert.equal(error.status, 401);
      assert.equal(error.code, "revoked_credentials");
      assertNoSecret(error, [doomed.key]);
    });

    it("revealApiKey of a revoked key is a GoneError key_revoked", async () => {
      const doomed = await user.auth.createApiKey({ label: "e2e reveal revoked" });
      await user.auth.revokeApiKey(doomed.id);

      const error = await rejection(user.auth.revealApiKey(doomed.id, null));

      assert.ok(error instanceof GoneError);
      assert.equal(error.status, 410);
      assert.equal(error.code, "key_revoked");
    });

    it("an unknown key id is a NotFoundError", async () => {
      const error = await rejection(user.auth.getApiKey("key_01ZZZZZZZZZZZZZZZZZZZZZZZZ"));

      assert.ok(error instanceof NotFoundError);
      assert.equal(error.status, 404);
      assert.equal(error.code, "not_found");
    });

    it("an unknown key is an AuthenticationError that does not quote it", async () => {
      const madeUp = "sv" + "c_" + "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJ";
      const client = new MemoryClient({ endpoint: stack().endpoint, apiKey: madeUp });

      const error = await rejection(client.auth.whoami());

      assert.ok(error instanceof AuthenticationError);
      assert.equal(error.code, "invalid_credentials");
      assertNoSecret(error, [madeUp]);
    });

    it("a call without any credential fails locally with a ConfigurationError", async () => {
      const saved = process.env["MEMORY_API_KEY"];
      delete process.env["MEMORY_API_KEY"];
      try {
        const client = new MemoryClient({ endpoint: stack().endpoint });

        const error = await rejection(client.auth.whoami());

        assert.ok(error instanceof ConfigurationError);
      } finally {
        if (saved !== undefined) process.env["MEMORY_API_KEY"] = saved;
      }
    });

    it("in Node, MEMORY_API_KEY, MEMORY_ENDPOINT and MEMORY_WORKSPACE_ID configure the client", async () => {
      const names = ["MEMORY_API_KEY", "MEMORY_ENDPOINT", "MEMORY_WORKSPACE_ID"] as const;
      const saved = names.map((name) => process.env[name]);
      process.env["MEMORY_API_KEY"] = adminKey.key;
      process.env["MEMORY_ENDPOINT"] = stack().endpoint;
      process.env["MEMORY_WORKSPACE_ID"] = stack().workspaceId;
      let client: MemoryClient;
      try {
        client = new MemoryClient();
      } finally {
        names.forEach((name, index) => {
          const value = saved[index];
          if (value === undefined) delete process.env[name];
          else process.env[name] = value;
        });
      }

      const me = await client.auth.whoami();

      assert.equal(client.endpoint, stack().endpoint);
      assert.equal(me.keyId, adminKey.id);
      assert.equal(me.workspaceId, stack().workspaceId);
    });
  });
}
