// The sign-in's checks without a browser: PKCE values, the authorization URL, and the
// answers a tab must refuse (another state, another issuer, an error, a foreign nonce).

import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { describe, it } from "node:test";

import {
  authorizationUrl,
  base64url,
  callbackCode,
  checkNonce,
  randomToken,
  s256,
  SignInError,
  type PendingSignIn,
} from "../src/pkce.js";

const PENDING: PendingSignIn = {
  verifier: "v".repeat(43),
  state: "state-1",
  nonce: "nonce-1",
  issuer: "https://login.example.test",
  tokenEndpoint: "https://login.example.test/token",
  redirectUri: "https://auth.example.test/dashboard/",
};

function idToken(claims: Record<string, unknown>): string {
  const part = (value: unknown): string => base64url(new TextEncoder().encode(JSON.stringify(value)));
  return `${part({ alg: "RS256" })}.${part(claims)}.c2lnbmF0dXJl`;
}

describe("PKCE", () => {
  it("a verifier carries 32 random bytes in 43 URL-safe characters, never twice the same", () => {
    const first = randomToken();
    assert.match(first, /^[A-Za-z0-9_-]{43}$/);
    assert.notEqual(first, randomToken());
  });

  it("the S256 challenge is base64url(SHA-256(verifier)) as RFC 7636 computes it", async () => {
    // RFC 7636 appendix B's example.
    assert.equal(await s256("dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk"), "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM");
    const verifier = randomToken();
    assert.equal(await s256(verifier), createHash("sha256").update(verifier).digest("base64url"));
  });

  it("the authorization URL asks for a code with S256, our state and nonce, and keeps the endpoint's query", () => {
    const url = new URL(authorizationUrl("https://login.example.test/authorize?tenant=t1", "client-1", PENDING, "challenge-1"));

    assert.equal(url.origin + url.pathname, "https://login.example.test/authorize");
    assert.deepEqual(Object.fromEntries(url.searchParams), {
      tenant: "t1",
      response_type: "code",
      client_id: "client-1",
      redirect_uri: PENDING.redirectUri,
      scope: "openid email profile",
      state: "state-1",
      nonce: "nonce-1",
      code_challenge: "challenge-1",
      code_challenge_method: "S256",
    });
    assert.ok(!url.toString().includes(PENDING.verifier), "the verifier never leaves the tab");
  });
});

describe("the provider's answer", () => {
  const answer = (fields: Record<string, string>): URLSearchParams => new URLSearchParams(fields);

  it("a code with our state and issuer is accepted", () => {
    assert.equal(callbackCode(answer({ code: "c1", state: "state-1", iss: PENDING.issuer }), PENDING), "c1");
    assert.equal(callbackCode(answer({ code: "c1", state: "state-1" }), PENDING), "c1");
  });

  for (const [why, fields, pending] of [
    ["another state", { code: "c1", state: "state-2" }, PENDING],
    ["another issuer (mix-up)", { code: "c1", state: "state-1", iss: "https://evil.example.test" }, PENDING],
    ["no sign-in started in this tab", { code: "c1", state: "state-1" }, null],
    ["no code", { state: "state-1" }, PENDING],
  ] as const) {
    it(`is refused with ${why}`, () => {
      assert.throws(() => callbackCode(answer(fields), pending), SignInError);
    });
  }

  it("a provider's error is shown with its description", () => {
    assert.throws(
      () => callbackCode(answer({ error: "access_denied", error_description: "The user said no", state: "state-1" }), PENDING),
      /The user said no/,
    );
  });

  it("the ID token must carry this sign-in's nonce, and a refusal never quotes the token", () => {
    checkNonce(idToken({ nonce: "nonce-1" }), PENDING);
    const foreign = idToken({ nonce: "nonce-2" });
    assert.throws(() => checkNonce(foreign, PENDING), (error: unknown) => {
      assert.ok(error instanceof SignInError);
      assert.ok(!error.message.includes(foreign));
      return true;
    });
    assert.throws(() => checkNonce("not-a-token", PENDING), SignInError);
  });
});
