// This phase's forms: trust policies (the subject pattern and its preview) and daily quotas.

import assert from "node:assert/strict";
import { describe, it } from "node:test";

import {
  newKeyRequest,
  quotaValue,
  subjectMatches,
  subjectPreview,
  subjectProblem,
  trustPolicyRequest,
  updateRequest,
  type TrustPolicyForm,
} from "../src/requests.js";

const POLICY: TrustPolicyForm = {
  name: " deploy ",
  issuer: "https://token.actions.githubusercontent.com",
  audience: "memory-service",
  subject: "repo:acme/agents:ref:refs/heads/main",
  claims: "",
  scopes: ["memory"],
  lifetimeMinutes: "",
};

describe("a trust policy's subject pattern", () => {
  it("refuses * alone with the service's reason", () => {
    assert.match(subjectProblem("*") ?? "", /would trust every workload of the issuer/);
  });

  it("refuses a prefix without a fixed part, a * inside, and accepts exact and prefix patterns", () => {
    assert.match(subjectProblem("repo*") ?? "", /has no fixed prefix/);
    assert.match(subjectProblem("repo:*:main") ?? "", /one '\*', at its end/);
    assert.equal(subjectProblem("repo:acme/agents:*"), null);
    assert.equal(subjectProblem("repo:acme/agents:ref:refs/heads/main"), null);
  });

  it("previews a prefix with a sibling it does not match", () => {
    assert.deepEqual(subjectPreview("repo:acme/agents:*"), { matches: "repo:acme/agents:…", notMatches: "repo:acme/other:…" });
    assert.ok(subjectMatches("repo:acme/agents:*", "repo:acme/agents:ref:refs/heads/main"));
    assert.ok(!subjectMatches("repo:acme/agents:*", "repo:acme/other:ref:refs/heads/main"));
  });

  it("previews an exact subject as itself, not a sibling", () => {
    const preview = subjectPreview("repo:acme/agents:ref:refs/heads/main");
    assert.equal(preview.matches, "repo:acme/agents:ref:refs/heads/main");
    assert.equal(preview.notMatches, "repo:acme/agents:ref:refs/heads/other");
  });
});

describe("the trust policy form", () => {
  it("sends the trimmed fields, claims as an object and the lifetime in seconds", () => {
    const checked = trustPolicyRequest({ ...POLICY, claims: "repository_owner=acme\n\n environment = prod ", lifetimeMinutes: "30" });
    assert.deepEqual(checked, {
      ok: true,
      value: {
        name: "deploy",
        issuer: POLICY.issuer,
        audience: "memory-service",
        subject: POLICY.subject,
        scopes: ["memory"],
        claims: { repository_owner: "acme", environment: "prod" },
        maxLifetimeSeconds: 1800,
      },
    });
  });

  it("refuses * alone, a claim without a value and a lifetime over an hour", () => {
    assert.equal(trustPolicyRequest({ ...POLICY, subject: "*" }).ok, false);
    assert.equal(trustPolicyRequest({ ...POLICY, claims: "owner" }).ok, false);
    assert.equal(trustPolicyRequest({ ...POLICY, lifetimeMinutes: "61" }).ok, false);
  });
});

describe("a key's daily quota", () => {
  it("reads empty as none and refuses what the service would", () => {
    assert.deepEqual(quotaValue(" "), { ok: true, value: null });
    assert.deepEqual(quotaValue("1,000"), { ok: true, value: 1000 });
    assert.equal(quotaValue("0").ok, false);
    assert.equal(quotaValue("10000001").ok, false);
    assert.equal(quotaValue("1.5").ok, false);
  });

  it("is sent on create when filled in", () => {
    const checked = newKeyRequest({ label: "k", category: "admin", workspaceId: "", scopes: ["memory"], lifetimeDays: "", allowedCidrs: "", requestsPerDay: "500" });
    assert.ok(checked.ok);
    assert.equal(checked.value.requestsPerDay, 500);
  });

  it("is changed, or removed with null, by an edit", () => {
    assert.deepEqual(updateRequest({ label: "k", requestsPerDay: null }, { label: "k", requestsPerDay: "20" }), { ok: true, value: { requestsPerDay: 20 } });
    assert.deepEqual(updateRequest({ label: "k", requestsPerDay: 20 }, { label: "k", requestsPerDay: "" }), { ok: true, value: { requestsPerDay: null } });
    assert.equal(updateRequest({ label: "k", requestsPerDay: 20 }, { label: "k", requestsPerDay: "20" }).ok, false);
  });
});
