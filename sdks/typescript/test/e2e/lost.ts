// Answers lost after the service wrote: the stack's own DynamoDB transaction is applied,
// then its answer is lost (local/faults.py, kind "lost"), so the service answers 503. The
// SDK re-sends, as retry.ts says, and the end state is that of one successful call.

import assert from "node:assert/strict";
import { describe, it } from "node:test";

import { MemoryClient } from "../../src/index.js";
import { idToken, type Fault, type StackInfo } from "../stack.js";

const LOST_WRITE: Fault = { call: 0, kind: "lost", operation: "dynamodb.TransactWriteItems" };

async function signedIn(info: StackInfo, subject: string): Promise<{ client: MemoryClient; refreshToken: string }> {
  const login = new MemoryClient({ endpoint: info.endpoint });
  const tokens = await login.auth.exchange(await idToken(info, subject));
  const client = new MemoryClient({ endpoint: info.endpoint, tokenProvider: () => tokens.accessToken });
  return { client, refreshToken: tokens.refreshToken };
}

async function withFault<T>(arm: (fault: Fault | null) => void, fault: Fault, call: () => Promise<T>): Promise<T> {
  arm(fault);
  try {
    return await call();
  } finally {
    arm(null);
  }
}

export function lostAnswerSuite(stack: () => StackInfo, arm: (fault: Fault | null) => void): void {
  describe("answers lost after the write, re-sent by the SDK", () => {
    it("createApiKey creates one key, and answers it", async () => {
      const { client } = await signedIn(stack(), `e2e-lost-create-${Date.now()}`);

      const created = await withFault(arm, LOST_WRITE, () => client.auth.createApiKey({ label: "lost" }));

      const page = await client.auth.listApiKeys(null, { allWorkspaces: true });
      assert.deepEqual(
        page.keys.map((key) => key.id),
        [created.id],
      );
      const withKey = new MemoryClient({ endpoint: stack().endpoint, apiKey: created.key });
      assert.equal((await withKey.auth.whoami()).keyId, created.id);
    });

    it("rotateApiKey rotates once, and answers the new key", async () => {
      const { client } = await signedIn(stack(), `e2e-lost-rotate-${Date.now()}`);
      const old = await client.auth.createApiKey({ label: "old" });

      const successor = await withFault(arm, LOST_WRITE, () => client.auth.rotateApiKey(old.id));

      const keys = (await client.auth.listApiKeys(null, { allWorkspaces: true })).keys;
      assert.equal(keys.length, 2);
      const before = keys.find((key) => key.id === old.id);
      assert.equal(before?.status, "revoked");
      assert.equal(before?.replacedBy, successor.id);
      const withKey = new MemoryClient({ endpoint: stack().endpoint, apiKey: successor.key });
      assert.equal((await withKey.auth.whoami()).keyId, successor.id);
    });

    it("refreshAccessToken keeps the sign-in: the retry gets the same successor", async () => {
      const { refreshToken } = await signedIn(stack(), `e2e-lost-refresh-${Date.now()}`);
      const login = new MemoryClient({ endpoint: stack().endpoint });

      const refreshed = await withFault(arm, LOST_WRITE, () => login.auth.refreshAccessToken(refreshToken));
      const onward = await login.auth.refreshAccessToken(refreshed.refreshToken);

      assert.notEqual(onward.refreshToken, refreshed.refreshToken);
    });
  });
}
