// The token flow: exchange and refreshAccessToken against the local stack (issue 3's
// endpoints and its development identity provider).

import assert from "node:assert/strict";
import { describe, it } from "node:test";

import { MemoryClient, OAuthError } from "../../src/index.js";
import { assertNoSecret, rejection } from "../assertions.js";
import { idToken, type StackInfo } from "../stack.js";

export function tokenSuite(stack: () => StackInfo): void {
  describe("client.auth: exchange and refreshAccessToken", () => {
    // The token endpoints take their token in the body: a client needs no credential for them.
    const anonymous = (): MemoryClient => new MemoryClient({ endpoint: stack().endpoint });

    it("exchange trades an ID token for an access/refresh pair that works", async () => {
      const login = anonymous();

      const tokens = await login.auth.exchange(await idToken(stack(), "e2e-exchange"));

      assert.equal(tokens.tokenType.toLowerCase(), "bearer");
      assert.equal(tokens.expiresIn, 3600);
      assert.ok(tokens.expiresAt > Date.now() + 3500_000);
      assert.ok(tokens.refreshToken.length > 0);
      const client = new MemoryClient({ endpoint: stack().endpoint, tokenProvider: () => tokens.accessToken });
      const me = await client.auth.whoami();
      assert.equal(me.credential, "user_token");
      assert.match(me.userId, /^usr_/);
    });

    it("exchange maps one identity to one stable user", async () => {
      const login = anonymous();
      const first = await login.auth.exchange(await idToken(stack(), "e2e-stable"));
      const second = await login.auth.exchange(await idToken(stack(), "e2e-stable"));

      const users = await Promise.all(
        [first, second].map((tokens) =>
          new MemoryClient({ endpoint: stack().endpoint, tokenProvider: () => tokens.accessToken }).auth.whoami(),
        ),
      );

      assert.equal(users[0]?.userId, users[1]?.userId);
    });

    it("exchange of a forged ID token is an OAuthError that does not quote it", async () => {
      const genuine = await idToken(stack(), "e2e-forged");
      const [header, payload] = genuine.split(".");
      const forged = `${header}.${payload}.${"A".repeat(86)}`;

      const error = await rejection(anonymous().auth.exchange(forged));

      assert.ok(error instanceof OAuthError);
      assert.equal(error.status, 400);
      assert.equal(error.code, "invalid_grant");
      assertNoSecret(error, [forged, genuine]);
    });

    it("refreshAccessToken returns a new pair, and the new access token works", async () => {
      const login = anonymous();
      const first = await login.auth.exchange(await idToken(stack(), "e2e-refresh"));

      const second = await login.auth.refreshAccessToken(first.refreshToken);

      assert.notEqual(second.accessToken, first.accessToken);
      assert.notEqual(second.refreshToken, first.refreshToken);
      assert.equal(second.expiresIn, 3600);
      const client = new MemoryClient({ endpoint: stack().endpoint, tokenProvider: () => second.accessToken });
      assert.equal((await client.auth.whoami()).credential, "user_token");
    });

    it("a refresh presented again at once gets the same successor (a lost answer, retried)", async () => {
      const login = anonymous();
      const first = await login.auth.exchange(await idToken(stack(), "e2e-retry"));
      const second = await login.auth.refreshAccessToken(first.refreshToken);

      const retried = await login.auth.refreshAccessToken(first.refreshToken);

      assert.equal(retried.refreshToken, second.refreshToken);
      assert.notEqual(retried.accessToken, second.accessToken);
      await login.auth.refreshAccessToken(second.refreshToken);
    });

    it("a reused refresh token is an OAuthError invalid_grant and ends its whole family", async () => {
      const login = anonymous();
      const first = await login.auth.exchange(await idToken(stack(), "e2e-reuse"));
      const second = await login.auth.refreshAccessToken(first.refreshToken);
      const third = await login.auth.refreshAccessToken(second.refreshToken);

      // The first token's successor has been used: presenting it again is reuse.
      const reuse = await rejection(login.auth.refreshAccessToken(first.refreshToken));

      assert.ok(reuse instanceof OAuthError);
      assert.equal(reuse.status, 400);
      assert.equal(reuse.code, "invalid_grant");
      assertNoSecret(reuse, [first.refreshToken, second.refreshToken, third.refreshToken]);
      const newest = await rejection(login.auth.refreshAccessToken(third.refreshToken));
      assert.ok(newest instanceof OAuthError);
      assert.equal(newest.code, "invalid_grant");
    });

    it("an unknown refresh token is an OAuthError invalid_grant", async () => {
      const madeUp = "e2e-not-a-refresh-token-" + "x".repeat(24);

      const error = await rejection(anonymous().auth.refreshAccessToken(madeUp));

      assert.ok(error instanceof OAuthError);
      assert.equal(error.code, "invalid_grant");
      assertNoSecret(error, [madeUp]);
    });
  });
}
