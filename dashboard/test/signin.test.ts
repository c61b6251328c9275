// The sign-in's protocol without a browser, its provider on a fake `fetch`: discovery, PKCE
// values, the authorization URL, and the answers a tab must refuse (another state, another
// issuer, no issuer from a provider that promised one, an error, a foreign nonce).

import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { describe, it } from "node:test";

import {
  authorizationUrl,
  checkedAnswer,
  discover,
  newSignIn,
  redeem,
  SignInError,
  type Fetch,
  type PendingSignIn,
  type ProviderMetadata,
} from "../src/pkce.js";

const ISSUER = "https://login.example.test";
const CLIENT = "client-1";
const SERVER: ProviderMetadata = {
  issuer: ISSUER,
  authorization_endpoint: `${ISSUER}/authorize?tenant=t1`,
  token_endpoint: `${ISSUER}/token`,
  authorization_response_iss_parameter_supported: true,
};
const PENDING: PendingSignIn = {
  verifier: "v".repeat(43),
  state: "state-1",
  nonce: "nonce-1",
  redirectUri: "https://auth.example.test/dashboard/",
  server: SERVER,
};
const WITHOUT_PROMISE: PendingSignIn = {
  ...PENDING,
  server: { ...SERVER, authorization_response_iss_parameter_supported: false },
};

function base64url(value: unknown): string {
  return Buffer.from(JSON.stringify(value)).toString("base64url");
}

function idToken(claims: Record<string, unknown>): string {
  const now = Math.floor(Date.now() / 1000);
  const all = { iss: ISSUER, aud: CLIENT, sub: "alice", iat: now, exp: now + 600, ...claims };
  return `${base64url({ alg: "RS256", kid: "k1" })}.${base64url(all)}.c2lnbmF0dXJl`;
}

function json(body: unknown, status = 200): Response {
  return new Response(JSON.stringify(body), { status, headers: { "Content-Type": "application/json" } });
}

/** A provider on a fake fetch: answers `url` with `answer`, and keeps what it was sent. */
function provider(answers: Record<string, () => Response>): { fetch: Fetch; sent: { url: string; body: string }[] } {
  const sent: { url: string; body: string }[] = [];
  const fetch: Fetch = async (url, init) => {
    sent.push({ url, body: init.body?.toString() ?? "" });
    const answer = answers[url];
    if (answer === undefined) throw new TypeError("fetch failed");
    return answer();
  };
  return { fetch, sent };
}

const answer = (fields: Record<string, string>): URLSearchParams => new URLSearchParams(fields);

describe("discovery", () => {
  const document = { issuer: ISSUER, authorization_endpoint: `${ISSUER}/authorize`, token_endpoint: `${ISSUER}/token` };
  const WELL_KNOWN = `${ISSUER}/.well-known/openid-configuration`;

  it("keeps whether the provider promises `iss` in its answers (RFC 9207)", async () => {
    const promising = provider({ [WELL_KNOWN]: () => json({ ...document, authorization_response_iss_parameter_supported: true }) });
    const silent = provider({ [WELL_KNOWN]: () => json(document) });

    const [promised, unsaid] = [await discover(ISSUER, undefined, promising.fetch), await discover(ISSUER, undefined, silent.fetch)];

    assert.deepEqual(promised, { ...document, authorization_response_iss_parameter_supported: true });
    assert.equal(unsaid.authorization_response_iss_parameter_supported, false);
  });

  it("a configured token endpoint replaces the document's", async () => {
    const { fetch } = provider({ [WELL_KNOWN]: () => json(document) });

    const found = await discover(ISSUER, "https://tokens.example.test/token", fetch);

    assert.equal(found.token_endpoint, "https://tokens.example.test/token");
  });

  for (const [why, answers] of [
    ["a document for another issuer", { [WELL_KNOWN]: () => json({ ...document, issuer: "https://evil.example.test" }) }],
    ["a document without endpoints", { [WELL_KNOWN]: () => json({ issuer: ISSUER }) }],
    ["an unreachable provider", {}],
    ["a provider that answers 500", { [WELL_KNOWN]: () => json({}, 500) }],
  ] as const) {
    it(`is refused with ${why}`, async () => {
      await assert.rejects(discover(ISSUER, undefined, provider(answers).fetch), SignInError);
    });
  }
});

describe("PKCE", () => {
  it("each sign-in gets fresh random values: a verifier of 43 URL-safe characters, state, nonce", () => {
    const first = newSignIn(SERVER, PENDING.redirectUri);
    const second = newSignIn(SERVER, PENDING.redirectUri);

    assert.match(first.verifier, /^[A-Za-z0-9_-]{43}$/);
    assert.notEqual(first.verifier, second.verifier);
    assert.notEqual(first.state, second.state);
    assert.notEqual(first.nonce, second.nonce);
    assert.equal(first.server, SERVER);
  });

  it("the authorization URL asks for a code with S256, our state and nonce, and keeps the endpoint's query", async () => {
    const url = new URL(await authorizationUrl(CLIENT, PENDING));

    assert.equal(url.origin + url.pathname, `${ISSUER}/authorize`);
    assert.deepEqual(Object.fromEntries(url.searchParams), {
      tenant: "t1",
      response_type: "code",
      client_id: CLIENT,
      redirect_uri: PENDING.redirectUri,
      scope: "openid email profile",
      state: "state-1",
      nonce: "nonce-1",
      // RFC 7636: base64url(SHA-256(verifier)).
      code_challenge: createHash("sha256").update(PENDING.verifier).digest("base64url"),
      code_challenge_method: "S256",
    });
    assert.ok(!url.toString().includes(PENDING.verifier), "the verifier never leaves the tab");
  });
});

describe("the provider's answer", () => {
  it("a code with our state and the provider's issuer is accepted", () => {
    const checked = checkedAnswer(answer({ code: "c1", state: "state-1", iss: ISSUER }), PENDING, CLIENT);

    assert.equal(checked.get("code"), "c1");
  });

  it("without `iss` is accepted only from a provider that does not promise it", () => {
    const checked = checkedAnswer(answer({ code: "c1", state: "state-1" }), WITHOUT_PROMISE, CLIENT);

    assert.equal(checked.get("code"), "c1");
  });

  for (const [why, fields, pending, message] of [
    ["no `iss` from a provider that promises it", { code: "c1", state: "state-1" }, PENDING, /\(iss\)/],
    ["another issuer (mix-up)", { code: "c1", state: "state-1", iss: "https://evil.example.test" }, PENDING, /\(iss\)/],
    ["another issuer, from a provider that does not promise `iss`", { code: "c1", state: "state-1", iss: "https://evil.example.test" }, WITHOUT_PROMISE, /\(iss\)/],
    ["an error without `iss` from a provider that promises it", { error: "access_denied", state: "state-1" }, PENDING, /\(iss\)/],
    ["another state", { code: "c1", state: "state-2", iss: ISSUER }, PENDING, /\(state\)/],
    ["no sign-in started in this tab", { code: "c1", state: "state-1", iss: ISSUER }, null, /not started in this tab/],
    ["no code", { state: "state-1", iss: ISSUER }, PENDING, /no code/],
  ] as const) {
    it(`is refused with ${why}`, () => {
      assert.throws(() => checkedAnswer(answer(fields), pending, CLIENT), (error: unknown) => {
        assert.ok(error instanceof SignInError);
        assert.match(error.message, message);
        return true;
      });
    });
  }

  it("a provider's error is shown with its description", () => {
    const refusal = answer({ error: "access_denied", error_description: "The user said no", state: "state-1", iss: ISSUER });

    assert.throws(() => checkedAnswer(refusal, PENDING, CLIENT), /The user said no/);
  });
});

describe("the code at the token endpoint", () => {
  const checked = (): URLSearchParams => checkedAnswer(answer({ code: "c1", state: "state-1", iss: ISSUER }), PENDING, CLIENT);
  const tokens = (id_token: string) => () => json({ id_token, access_token: "at", token_type: "Bearer", expires_in: 600 });

  it("sends the code with our verifier and redirect URI, and returns the ID token with our nonce", async () => {
    const token = idToken({ nonce: "nonce-1" });
    const { fetch, sent } = provider({ [SERVER.token_endpoint]: tokens(token) });

    const received = await redeem(checked(), PENDING, CLIENT, fetch);

    assert.equal(received, token);
    assert.deepEqual(Object.fromEntries(new URLSearchParams(sent[0]?.body)), {
      grant_type: "authorization_code",
      code: "c1",
      redirect_uri: PENDING.redirectUri,
      code_verifier: PENDING.verifier,
      client_id: CLIENT,
    });
  });

  for (const [why, claims, message] of [
    ["a foreign nonce", { nonce: "nonce-2" }, /\(nonce\)/],
    ["no nonce", {}, /\(nonce\)/],
    ["another issuer", { nonce: "nonce-1", iss: "https://evil.example.test" }, /no usable ID token/],
    ["another audience", { nonce: "nonce-1", aud: "someone-else" }, /no usable ID token/],
    ["an expired token", { nonce: "nonce-1", exp: 1_000_000 }, /no usable ID token/],
  ] as const) {
    it(`refuses an ID token with ${why}, and the refusal never quotes the token`, async () => {
      const token = idToken(claims);
      const { fetch } = provider({ [SERVER.token_endpoint]: tokens(token) });

      await assert.rejects(redeem(checked(), PENDING, CLIENT, fetch), (error: unknown) => {
        assert.ok(error instanceof SignInError);
        assert.match(error.message, message);
        assert.ok(!error.message.includes(token));
        return true;
      });
    });
  }

  it("shows the token endpoint's error, and an unreachable one as such", async () => {
    const refusing = provider({ [SERVER.token_endpoint]: () => json({ error: "invalid_grant", error_description: "The code is used" }, 400) });

    await assert.rejects(redeem(checked(), PENDING, CLIENT, refusing.fetch), /The code is used/);
    await assert.rejects(redeem(checked(), PENDING, CLIENT, provider({}).fetch), /could not be reached/);
  });
});
