// WorkloadIdentity: the platform's token from a file or GitHub Actions, exchanged, and exchanged
// again before the workload token ends. A fake fetch stands in for both services.

import assert from "node:assert/strict";
import { describe, it } from "node:test";

import { ConfigurationError, WorkloadIdentity, WorkloadIdentityError } from "../src/index.js";

// Not real tokens: split so that scanners stay quiet.
const PLATFORM_TOKEN = "ey" + "J.platform.token";
const ACTIONS_BEARER = "ghs" + "_requestToken";

function fake(status = 200) {
  const seen: { url: string; method: string; headers: Record<string, string>; body?: string }[] = [];
  let exchanges = 0;
  const fetch = async (url: string, init: { method: string; headers: Record<string, string>; body?: string }) => {
    seen.push({ url, ...init });
    if (url.startsWith("http://actions.test/")) {
      return { status: 200, text: async () => JSON.stringify({ value: PLATFORM_TOKEN }) };
    }
    exchanges += 1;
    const body =
      status === 200
        ? { access_token: `workload-${exchanges}`, token_type: "Bearer", expires_in: 900, scope: "memory" }
        : { error: "invalid_grant", error_description: "no trust policy of this workspace accepts this token" };
    return { status, text: async () => JSON.stringify(body) };
  };
  return { fetch, seen };
}

describe("WorkloadIdentity", () => {
  it("exchanges a token file for a workspace token", async () => {
    const { fetch, seen } = fake();
    const identity = WorkloadIdentity.fromEnv(
      { MEMORY_ENDPOINT: "http://svc.test", MEMORY_WORKSPACE_ID: "ws_1", MEMORY_OIDC_TOKEN_FILE: "/t" },
      { fetch, readFile: async () => PLATFORM_TOKEN + "\n" },
    );

    const token = await identity.token();

    assert.equal(token, "workload-1");
    const form = new URLSearchParams(seen[0]?.body);
    assert.equal(seen[0]?.url, "http://svc.test/v1/auth/exchange");
    assert.equal(form.get("subject_token"), PLATFORM_TOKEN);
    assert.equal(form.get("subject_token_type"), "urn:ietf:params:oauth:token-type:jwt");
    assert.equal(form.get("workspace_id"), "ws_1");
  });

  it("asks GitHub Actions for a token with the configured audience", async () => {
    const { fetch, seen } = fake();
    const identity = WorkloadIdentity.fromEnv(
      {
        MEMORY_WORKSPACE_ID: "ws_1",
        ACTIONS_ID_TOKEN_REQUEST_URL: "http://actions.test/token?api-version=2.0",
        ACTIONS_ID_TOKEN_REQUEST_TOKEN: ACTIONS_BEARER,
        MEMORY_OIDC_AUDIENCE: "memory-service",
      },
      { fetch },
    );

    await identity.token();

    const asked = new URL(seen[0]?.url ?? "");
    assert.equal(asked.searchParams.get("audience"), "memory-service");
    assert.equal(asked.searchParams.get("api-version"), "2.0");
    assert.equal(seen[0]?.headers.Authorization, `Bearer ${ACTIONS_BEARER}`);
  });

  it("reuses the token, then exchanges again within a minute of its end", async () => {
    const { fetch } = fake();
    let now = 1_000;
    const identity = new WorkloadIdentity({
      endpoint: "http://svc.test", workspaceId: "ws_1", tokenFile: "/t", fetch,
      now: () => now, readFile: async () => PLATFORM_TOKEN,
    });

    const first = await identity.token();
    now += (900 - 61) * 1000;
    const reused = await identity.token();
    now += 2000;
    const renewed = await identity.token();

    assert.deepEqual([first, reused, renewed], ["workload-1", "workload-1", "workload-2"]);
  });

  it("says what to set when no platform token source is configured", () => {
    assert.throws(() => WorkloadIdentity.fromEnv({ MEMORY_WORKSPACE_ID: "ws_1" }), ConfigurationError);
  });

  it("raises the service's reason for a refused exchange, without the token", async () => {
    const { fetch } = fake(400);
    const identity = new WorkloadIdentity({
      endpoint: "http://svc.test", workspaceId: "ws_1", tokenFile: "/t", fetch,
      readFile: async () => PLATFORM_TOKEN,
    });

    await assert.rejects(identity.token(), (error: unknown) => {
      assert.ok(error instanceof WorkloadIdentityError);
      assert.match(error.message, /no trust policy of this workspace accepts this token/);
      assert.doesNotMatch(error.message, /platform\.token/);
      return true;
    });
  });
});
