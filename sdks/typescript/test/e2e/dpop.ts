// DPoP end to end: a sign-in made with { dpop } gets tokens bound to the client's pair (the
// token endpoint's nonce asked and given by the SDK itself), and a key-bound API key works
// from a client with its pair only.

import assert from "node:assert/strict";
import { describe, it } from "node:test";

import { AuthenticationError, DpopKey, MemoryClient } from "../../src/index.js";
import { rejection } from "../assertions.js";
import { idToken, type StackInfo } from "../stack.js";

export function dpopSuite(stack: () => StackInfo): void {
  describe("DPoP: bound tokens and key-bound API keys", () => {
    it("a sign-in with a DPoP key gets bound tokens, useless without the key", async () => {
      const key = await DpopKey.generate();
      const login = new MemoryClient({ endpoint: stack().endpoint, dpop: key });

      const tokens = await login.auth.exchange(await idToken(stack(), "e2e-dpop"));
      const holder = new MemoryClient({ endpoint: stack().endpoint, dpop: key, tokenProvider: () => tokens.accessToken });
      const thief = new MemoryClient({ endpoint: stack().endpoint, tokenProvider: () => tokens.accessToken });

      assert.equal(tokens.tokenType, "DPoP");
      assert.equal((await holder.auth.whoami()).credential, "user_token");
      const refused = await rejection(thief.auth.whoami());
      assert.ok(refused instanceof AuthenticationError);
      assert.equal(refused.code, "dpop_required");
    });

    it("a key-bound API key works only from a client with its pair", async () => {
      const key = await DpopKey.generate();
      const owner = new MemoryClient({ endpoint: stack().endpoint, tokenProvider: () => stack().token });
      const created = await owner.auth.createApiKey({ label: "dpop e2e", dpopJkt: key.thumbprint });
      assert.equal(created.dpopJkt, key.thumbprint);

      const holder = new MemoryClient({ endpoint: stack().endpoint, apiKey: created.key, dpop: key });
      const thief = new MemoryClient({ endpoint: stack().endpoint, apiKey: created.key });

      assert.equal((await holder.auth.whoami()).keyId, created.id);
      const refused = await rejection(thief.auth.whoami());
      assert.ok(refused instanceof AuthenticationError);
      assert.equal(refused.code, "dpop_required");
    });
  });
}
