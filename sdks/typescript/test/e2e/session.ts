// The session helper against the local stack: refresh before expiry, refresh on a 401,
// one shared refresh for concurrent calls, and the end of a session whose refresh token
// was reused.

import assert from "node:assert/strict";
import { describe, it } from "node:test";

import { MemoryClient, OAuthError, Session, type FetchFunction, type TokenSet } from "../../src/index.js";
import { assertNoSecret, rejection } from "../assertions.js";
import { idToken, type StackInfo } from "../stack.js";

/** The global fetch, recording each request's bearer token and path. */
function recordingFetch(): { fetch: FetchFunction; sent: { token: string | undefined; path: string }[] } {
  const sent: { token: string | undefined; path: string }[] = [];
  const fetchAndRecord: FetchFunction = (url, init) => {
    sent.push({ token: init.headers["Authorization"]?.replace(/^Bearer /, ""), path: new URL(url).pathname });
    return fetch(url, init);
  };
  return { fetch: fetchAndRecord, sent };
}

/** The same JWT with a signature that cannot verify: the service answers 401. */
function tampered(token: string): string {
  const [header, payload] = token.split(".");
  return `${header}.${payload}.${"A".repeat(342)}`;
}

export function sessionSuite(stack: () => StackInfo): void {
  describe("Session", () => {
    async function login(subject: string): Promise<{ login: MemoryClient; tokens: TokenSet; refreshes: ReturnType<typeof recordingFetch> }> {
      const refreshes = recordingFetch();
      const client = new MemoryClient({ endpoint: stack().endpoint, fetch: refreshes.fetch });
      const tokens = await client.auth.exchange(await idToken(stack(), subject));
      refreshes.sent.length = 0;
      return { login: client, tokens, refreshes };
    }

    it("refreshes before expiry, once for concurrent calls, and then sends the new token", async () => {
      const { login: loginClient, tokens, refreshes } = await login("e2e-session-expiry");
      let clock = Date.now();
      const stored: TokenSet[] = [];
      const session = new Session({
        client: loginClient,
        tokens,
        now: () => clock,
        onRefresh: (fresh) => {
          stored.push(fresh);
        },
      });
      const calls = recordingFetch();
      const client = new MemoryClient({ endpoint: stack().endpoint, tokenProvider: session.tokenProvider, fetch: calls.fetch });
      const before = await client.auth.whoami();
      assert.equal(stored.length, 0);

      clock = tokens.expiresAt - 30_000; // inside the default 60 s margin
      const answers = await Promise.all([1, 2, 3, 4, 5].map(() => client.auth.whoami()));

      assert.equal(stored.length, 1);
      assert.equal(refreshes.sent.length, 1);
      assert.equal(refreshes.sent[0]?.path, "/v1/auth/refresh");
      const fresh = session.tokens;
      assert.notEqual(fresh.accessToken, tokens.accessToken);
      assert.notEqual(fresh.refreshToken, tokens.refreshToken);
      assert.equal(fresh.accessToken, stored[0]?.accessToken);
      assert.equal(fresh.expiresAt, clock + 3600_000);
      assert.deepEqual(calls.sent.slice(1).map((call) => call.token === fresh.accessToken), [true, true, true, true, true]);
      assert.ok(answers.every((me) => me.userId === before.userId));
    });

    it("on a 401 refreshes once and retries once, sharing the refresh among concurrent calls", async () => {
      const { login: loginClient, tokens, refreshes } = await login("e2e-session-401");
      const refused = tampered(tokens.accessToken);
      const session = new Session({
        client: loginClient,
        tokens: { ...tokens, accessToken: refused }, // not near expiry: only the 401 can tell
      });
      const calls = recordingFetch();
      const client = new MemoryClient({ endpoint: stack().endpoint, tokenProvider: session.tokenProvider, fetch: calls.fetch });

      const answers = await Promise.all([1, 2, 3, 4].map(() => client.auth.whoami()));

      assert.equal(refreshes.sent.length, 1);
      assert.ok(answers.every((me) => me.credential === "user_token"));
      const fresh = session.tokens.accessToken;
      assert.equal(calls.sent.length, 8);
      assert.equal(calls.sent.filter((call) => call.token === refused).length, 4);
      assert.equal(calls.sent.filter((call) => call.token === fresh).length, 4);
    });

    it("a 401 on a POST is retried too: nothing was executed", async () => {
      const { login: loginClient, tokens } = await login("e2e-session-post");
      const session = new Session({ client: loginClient, tokens: { ...tokens, accessToken: tampered(tokens.accessToken) } });
      const client = new MemoryClient({ endpoint: stack().endpoint, tokenProvider: session.tokenProvider });

      const created = await client.auth.createApiKey({ label: "e2e via session" });

      const page = await client.auth.listApiKeys();
      assert.deepEqual(page.keys.map((key) => key.id), [created.id]);
    });

    it("ends with an OAuthError invalid_grant when its refresh token was already used", async () => {
      const { login: loginClient, tokens, refreshes } = await login("e2e-session-reuse");
      // Spent elsewhere, and its successor used there too: presenting it again is reuse (at
      // once and unused, it would be a retry answered with the same successor).
      const elsewhere = await loginClient.auth.refreshAccessToken(tokens.refreshToken);
      await loginClient.auth.refreshAccessToken(elsewhere.refreshToken);
      const session = new Session({ client: loginClient, tokens, now: () => tokens.expiresAt });
      const client = new MemoryClient({ endpoint: stack().endpoint, tokenProvider: session.tokenProvider });

      const error = await rejection(client.auth.whoami());
      const again = await rejection(client.auth.whoami());

      assert.ok(error instanceof OAuthError);
      assert.equal(error.status, 400);
      assert.equal(error.code, "invalid_grant");
      assert.equal(session.ended, true);
      assert.equal(again, error);
      assert.equal(refreshes.sent.length, 3, "the two refreshes elsewhere, then one by the session");
      assertNoSecret(error, [tokens.refreshToken, tokens.accessToken]);
    });
  });
}
