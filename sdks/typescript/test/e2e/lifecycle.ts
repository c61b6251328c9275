// Lifetime, grace rotation, rename and allow-list, last use and audit events, through the SDK
// against the local stack over real HTTP (its server sees every request from 127.0.0.1).

import assert from "node:assert/strict";
import { before, describe, it } from "node:test";
import { setTimeout as sleep } from "node:timers/promises";

import { AuthenticationError, BadRequestError, ConflictError, MemoryClient, PermissionDeniedError } from "../../src/index.js";
import { rejection } from "../assertions.js";
import { idToken, type StackInfo } from "../stack.js";

const DAY_MS = 24 * 3600 * 1000;

export function lifecycleSuite(stack: () => StackInfo): void {
  describe("keys beyond the basics: lifetime, grace, allow-list, last use, events", () => {
    let user: MemoryClient;

    before(() => {
      user = new MemoryClient({ endpoint: stack().endpoint, tokenProvider: () => stack().token });
    });

    function asKey(key: string): MemoryClient {
      return new MemoryClient({ endpoint: stack().endpoint, apiKey: key });
    }

    it("a chosen lifetime is kept by rotation", async () => {
      const created = await user.auth.createApiKey({ label: "ts ten days", expiresInDays: 10 });

      const next = await user.auth.rotateApiKey(created.id);

      assert.equal(Date.parse(created.expiresAt) - Date.parse(created.createdAt), 10 * DAY_MS);
      assert.equal(Date.parse(next.expiresAt) - Date.parse(next.createdAt), 10 * DAY_MS);
    });

    it("the old key works during a short grace and is refused right after", async () => {
      const old = await user.auth.createApiKey({ label: "ts grace" });

      const next = await user.auth.rotateApiKey(old.id, { gracePeriodSeconds: 2 });

      const during = await user.auth.getApiKey(old.id);
      assert.equal(during.status, "active");
      assert.equal(during.replacedBy, next.id);
      assert.equal((await asKey(old.key).auth.whoami()).keyId, old.id);
      await sleep(Math.max(0, Date.parse(during.expiresAt) - Date.now()) + 200);
      const refused = await rejection(asKey(old.key).auth.whoami());
      assert.ok(refused instanceof AuthenticationError);
      assert.equal(refused.code, "revoked_credentials");
      assert.equal((await asKey(next.key).auth.whoami()).keyId, next.id);
      const again = await rejection(user.auth.rotateApiKey(old.id, { gracePeriodSeconds: 60 }));
      assert.ok(again instanceof ConflictError);
    });

    it("lastUsedAt appears after a use, to five minutes", async () => {
      const created = await user.auth.createApiKey({ label: "ts used" });
      assert.equal(created.lastUsedAt, null);

      await asKey(created.key).auth.whoami();

      const used = (await user.auth.getApiKey(created.id)).lastUsedAt;
      assert.ok(typeof used === "string");
      const at = new Date(used);
      assert.equal(at.getUTCMinutes() % 5, 0);
      assert.equal(at.getUTCSeconds(), 0);
    });

    it("an allow-list admits the inside, refuses the outside, and can be cleared", async () => {
      const created = await user.auth.createApiKey({ label: "ts fenced", allowedCidrs: ["127.0.0.0/8"] });
      const client = asKey(created.key);
      assert.equal((await client.auth.whoami()).keyId, created.id);

      const moved = await user.auth.updateApiKey(created.id, { allowedCidrs: ["10.0.0.0/8"] });
      const refused = await rejection(client.auth.whoami());
      const cleared = await user.auth.updateApiKey(created.id, { label: "ts open", allowedCidrs: null });

      assert.deepEqual(moved.allowedCidrs, ["10.0.0.0/8"]);
      assert.ok(refused instanceof PermissionDeniedError);
      assert.equal(refused.code, "ip_not_allowed");
      assert.equal(cleared.label, "ts open");
      assert.equal(cleared.allowedCidrs, null);
      assert.equal((await client.auth.whoami()).keyId, created.id);
      const empty = await rejection(user.auth.updateApiKey(created.id, { allowedCidrs: [] }));
      assert.ok(empty instanceof BadRequestError);
      assert.equal(empty.code, "invalid_cidr");
    });

    it("every action is an audit event with its actor and no secret", async () => {
      const tokens = await new MemoryClient({ endpoint: stack().endpoint }).auth.exchange(await idToken(stack(), "ts-events"));
      const owner = new MemoryClient({ endpoint: stack().endpoint, tokenProvider: () => tokens.accessToken });
      const me = (await owner.auth.whoami()).userId;
      const created = await owner.auth.createApiKey({ label: "ts audited" });
      const revealed = await owner.auth.revealApiKey(created.id);
      await owner.auth.updateApiKey(created.id, { label: "ts audited 2" });
      const next = await owner.auth.rotateApiKey(created.id);
      await owner.auth.revokeApiKey(next.id);

      const page = await owner.auth.listEvents({ limit: 100 });
      const revealedOnly = await owner.auth.listEvents({ keyId: created.id, type: "key.revealed" });

      assert.deepEqual(
        page.events.map((e) => e.type),
        ["key.revoked", "key.rotated", "key.updated", "key.revealed", "key.created"],
      );
      for (const event of page.events) {
        // The person as their sign-in named them (the development issuer sends the email).
        assert.deepEqual(event.actor, {
          userId: me, credential: "user_token", keyId: null, email: "ts-events@example.com",
        });
        assert.equal(event.sourceIp, "127.0.0.1");
      }
      const text = JSON.stringify(page);
      for (const secret of [created.key, revealed.key, next.key, tokens.accessToken]) assert.ok(!text.includes(secret));
      assert.deepEqual(revealedOnly.events.map((e) => e.type), ["key.revealed"]);
    });
  });
}
