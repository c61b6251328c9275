// What the forms send, and how values read on the page.

import assert from "node:assert/strict";
import { describe, it } from "node:test";

import { ApiError, BadRequestError, NetworkError, NotFoundError, RateLimitError, ServerError, ServiceUnavailableError } from "memory-sdk";

import { DAY_MS, eventName, EVENT_TYPES, expiresSoon, lastUsedShown, problemText, sessionEnded, signInAgain, TimedOut, worthRetrying } from "../src/format.js";
import { canonicalJwk, cidrList, jwkThumbprint, newKeyRequest, rotateRequest, updateRequest, type NewKeyForm } from "../src/requests.js";

const FORM: NewKeyForm = {
  label: "  ingest worker ",
  category: "workspace",
  workspaceId: "ws_1",
  scopes: ["memory", "entities"],
  lifetimeDays: "",
  allowedCidrs: "",
};

describe("the create form", () => {
  it("sends label, kind, workspace and scopes, and leaves out the optional fields left empty", () => {
    assert.deepEqual(newKeyRequest(FORM), {
      ok: true,
      value: { label: "ingest worker", category: "workspace", workspaceId: "ws_1", scopes: ["memory", "entities"] },
    });
  });

  it("sends a lifetime and an allow-list once they are filled in", () => {
    const checked = newKeyRequest({ ...FORM, lifetimeDays: " 30 ", allowedCidrs: "10.0.0.0/8,\n2001:db8::/32  " });
    assert.ok(checked.ok);
    assert.equal(checked.value.expiresInDays, 30);
    assert.deepEqual(checked.value.allowedCidrs, ["10.0.0.0/8", "2001:db8::/32"]);
  });

  it("an admin key names no workspace and may hold workspace:admin", () => {
    const checked = newKeyRequest({ ...FORM, category: "admin", scopes: ["memory", "workspace:admin"] });
    assert.deepEqual(checked, { ok: true, value: { label: "ingest worker", category: "admin", scopes: ["memory", "workspace:admin"] } });
  });

  for (const [why, change] of [
    ["an empty label", { label: "   " }],
    ["no scope", { scopes: [] }],
    ["a lifetime of 0 days", { lifetimeDays: "0" }],
    ["a lifetime over 90 days", { lifetimeDays: "91" }],
    ["a lifetime that is not whole", { lifetimeDays: "1.5" }],
    ["a workspace key without a workspace", { workspaceId: "" }],
  ] as const) {
    it(`refuses ${why} before any request`, () => {
      const checked = newKeyRequest({ ...FORM, ...change });
      assert.equal(checked.ok, false);
    });
  }

  it("splits an allow-list on commas, spaces and new lines", () => {
    assert.deepEqual(cidrList(" 1.2.3.4/32\n\n5.6.7.0/24, ::1/128 "), ["1.2.3.4/32", "5.6.7.0/24", "::1/128"]);
  });
});

describe("rotate and rename", () => {
  it("rotating now sends no body; a grace period sends gracePeriodSeconds", () => {
    assert.deepEqual(rotateRequest(0), {});
    assert.deepEqual(rotateRequest(3600), { gracePeriodSeconds: 3600 });
    assert.deepEqual(rotateRequest(604_800), { gracePeriodSeconds: 604_800 });
  });

  it("an edit sends only what changed; an emptied allow-list is null", () => {
    assert.deepEqual(updateRequest({ label: "old" }, { label: " new " }), { ok: true, value: { label: "new" } });
    assert.deepEqual(updateRequest({ label: "same", allowedCidrs: ["10.0.0.0/8"] }, { label: "same", allowedCidrs: "" }), {
      ok: true,
      value: { allowedCidrs: null },
    });
    assert.equal(updateRequest({ label: "same" }, { label: "same" }).ok, false);
    assert.equal(updateRequest({ label: "old" }, { label: "  " }).ok, false);
  });
});

describe("what the page shows", () => {
  const now = Date.parse("2026-11-23T12:00:00Z");
  const at = (days: number): string => new Date(now + days * DAY_MS).toISOString();

  it("an active key is marked 'expires soon' inside 7 days, not before, and never once revoked", () => {
    assert.equal(expiresSoon({ status: "active", expiresAt: at(6.9) }, now), true);
    assert.equal(expiresSoon({ status: "active", expiresAt: at(7) }, now), true);
    assert.equal(expiresSoon({ status: "active", expiresAt: at(7.1) }, now), false);
    assert.equal(expiresSoon({ status: "revoked", expiresAt: at(1) }, now), false);
  });

  it("a fresh 7-day key is not 'expires soon': the window is at most half the key's lifetime", () => {
    assert.equal(expiresSoon({ status: "active", createdAt: at(0), expiresAt: at(7) }, now), false);
    assert.equal(expiresSoon({ status: "active", createdAt: at(-4), expiresAt: at(3) }, now), true);
    assert.equal(expiresSoon({ status: "active", createdAt: at(-80), expiresAt: at(6.9) }, now), true);
    assert.equal(expiresSoon({ status: "active", createdAt: at(-80), expiresAt: at(7.1) }, now), false);
  });

  it("names every event type in words, and an unknown one too, never as a raw code", () => {
    for (const type of ["trust_policy.created", "trust_policy.deleted", "workload.exchanged", "grant.created", "grant.revoked", "session.revoked"]) {
      assert.ok(EVENT_TYPES.includes(type), type);
    }
    for (const type of [...EVENT_TYPES, "future_thing.came_about"]) {
      assert.doesNotMatch(eventName(type), /[._]/, type);
    }
    assert.equal(eventName("future_thing.came_about"), "Future thing came about");
  });

  it("says the session ended once", () => {
    assert.equal(sessionEnded("Your session has ended."), "Your session has ended.");
    assert.equal(signInAgain(sessionEnded("Your session has ended.")), "Your session has ended. Sign in again.");
    assert.equal(sessionEnded("The key was revoked."), "Your session has ended: The key was revoked.");
  });

  it("an invalid CIDR reads as the service's detail, which names the host bits", () => {
    const detail = "'10.0.0.1/24' has host bits set: write its network, 10.0.0.0/24, or the single address 10.0.0.1.";
    assert.equal(problemText(new ApiError({ status: 400, code: "invalid_cidr", detail })), detail);
  });

  it("an error reads as the service's detail, else what happened", () => {
    assert.equal(problemText(new NotFoundError({ status: 404, code: "not_found", detail: "No such key." })), "No such key.");
    assert.equal(problemText(new ApiError({ status: 405, code: "method_not_allowed" })), "The service refused this (method_not_allowed).");
    assert.match(problemText(new NetworkError("GET /x", { mayHaveReached: false })), /could not be reached/);
  });

  it("has a message written for a person for the codes people meet", () => {
    const member = new ApiError({ status: 403, code: "not_a_member", detail: "The caller is not a member of this workspace." });
    const outage = new ApiError({ status: 503, code: "dependency_unavailable", detail: "A dependency (DynamoDB) is unavailable; retry later." });
    const unknown = new ApiError({ status: 403, code: "something_new", detail: "The caller is not allowed this." });
    assert.match(problemText(member), /^You are not a member of this workspace/);
    assert.doesNotMatch(problemText(outage), /DynamoDB|dependency/i);
    assert.equal(problemText(unknown), "You are not allowed this.");
  });

  it("a refused key-pair thumbprint reads in words, not as the field's name", () => {
    const detail = "dpopJkt must be the RFC 7638 SHA-256 thumbprint of a public key: 43 base64url characters.";
    const text = problemText(new BadRequestError({ status: 400, code: "invalid_dpop_jkt", detail }));
    assert.match(text, /^The service did not take the key pair's thumbprint\. Paste the pair's public JWK again/);
    assert.doesNotMatch(text, /dpopJkt|RFC|base64url/);
  });

  it("offers a form's retry for the service's trouble and no answer, not for a refusal", () => {
    assert.equal(worthRetrying(new ServiceUnavailableError({ status: 503, code: "dependency_unavailable" })), true);
    assert.equal(worthRetrying(new ServerError({ status: 500, code: "internal_error" })), true);
    assert.equal(worthRetrying(new RateLimitError({ status: 429, code: "too_many_requests" })), true);
    assert.equal(worthRetrying(new NetworkError("POST /x", { mayHaveReached: false })), true);
    assert.equal(worthRetrying(new TimedOut()), true);
    assert.equal(worthRetrying(new ApiError({ status: 503, code: "dependency_unavailable" })), true); // the dashboard's own calls
    assert.equal(worthRetrying(new ApiError({ status: 409, code: "conflict" })), false);
    assert.equal(worthRetrying(new BadRequestError({ status: 400, code: "invalid_dpop_jkt" })), false);
    assert.equal(worthRetrying(new Error("Give the machine a name.")), false);
  });

  it("says Sign in again once, whatever the reason already said", () => {
    assert.equal(signInAgain("Your session has ended. Sign in again. Sign in again."), "Your session has ended. Sign in again.");
    assert.equal(signInAgain("Your session has ended."), "Your session has ended. Sign in again.");
  });
});

describe("last used", () => {
  it("never reads earlier than created (last use is recorded to 5 minutes)", () => {
    const key = { createdAt: "2026-11-25T10:03:00Z", lastUsedAt: "2026-11-25T10:00:00Z" };
    assert.equal(lastUsedShown(key), "2026-11-25T10:03:00Z");
    assert.equal(lastUsedShown({ ...key, lastUsedAt: "2026-11-25T11:00:00Z" }), "2026-11-25T11:00:00Z");
    assert.equal(lastUsedShown({ ...key, lastUsedAt: null }), null);
  });
});

describe("a key-bound key (DPoP)", () => {
  // RFC 7638 §3.1's example key and its thumbprint.
  const RFC_KEY = {
    kty: "RSA",
    n:
      "0vx7agoebGcQSuuPiLJXZptN9nndrQmbXEps2aiAFbWhM78LhWx4cbbfAAtVT86zwu1RK7aPFFxuhDR1L6tSoc_BJECPebWKRXjBZCiFV4n3oknjhMstn64tZ_2W-5JsGY4Hc5n9yBXArwl93lqt7_RN5w6Cf0h4QyQ5v-65YGjQR0_FDW2QvzqY368QQMicAtaSqzs8KJZgnYb9c7d0zgdAZHzu6qMQvRL5hajrn1n91CbOpbISD08qNLyrdkt-bFTWhAI4vMQFh6WeZu0fM4lFd2NcRwr3XPksINHaQ-G_xBniIqbw0Ls1jF44-csFCur-kEgU8awapJzKnqDKgw",
    e: "AQAB",
    alg: "RS256",
    kid: "2011-04-29",
  };

  it("the thumbprint of a pasted public JWK is its RFC 7638 thumbprint", async () => {
    const canonical = canonicalJwk(JSON.stringify(RFC_KEY));

    assert.ok(canonical.ok && canonical.value !== null);
    assert.equal(await jwkThumbprint(canonical.value), "NzbLsXh8uDCcd-6MNwXF4W_7noWXFZAfHkxZsRGC9Xs");
  });

  it("a JWK with a private part, or not a key, is refused before any request", () => {
    for (const text of [JSON.stringify({ ...RFC_KEY, d: "x" }), "{", "[]", JSON.stringify({ kty: "oct", k: "x" })]) {
      const checked = newKeyRequest({ ...FORM, publicJwk: text });
      assert.equal(checked.ok, false, text);
    }
  });

  it("sends dpopJkt once the thumbprint is known, and nothing for an empty field", () => {
    const bound = newKeyRequest({ ...FORM, publicJwk: JSON.stringify(RFC_KEY), dpopJkt: "NzbLsXh8uDCcd-6MNwXF4W_7noWXFZAfHkxZsRGC9Xs" });
    const bearer = newKeyRequest({ ...FORM, publicJwk: "  " });

    assert.ok(bound.ok && bound.value.dpopJkt === "NzbLsXh8uDCcd-6MNwXF4W_7noWXFZAfHkxZsRGC9Xs");
    assert.ok(bearer.ok && !("dpopJkt" in bearer.value));
  });
});
