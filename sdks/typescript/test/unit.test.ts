// Unit tests, no I/O: configuration, requests, retries, errors, the session's refresh rules
// and redaction, with a fake fetch standing in for the service.

import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { describe, it } from "node:test";
import { fileURLToPath } from "node:url";
import { inspect } from "node:util";

import {
  ApiError,
  AuthenticationError,
  BadRequestError,
  ConfigurationError,
  DelegatedTokenExpiredError,
  DpopKey,
  MemoryClient,
  MemoryError,
  MemorySDKError,
  NetworkError,
  NotFoundError,
  OAuthError,
  PermissionDeniedError,
  RateLimitError,
  RequestTimeoutError,
  ServerError,
  ServiceUnavailableError,
  Session,
  UnexpectedResponseError,
  delegatedTokenProvider,
  type ClientOptions,
  type FetchFunction,
  type TokenContext,
  type TokenSet,
} from "../src/index.js";
import { redact } from "../src/redaction.js";
import {
  BACKOFF_BASE_MS,
  BACKOFF_CAP_MS,
  DEFAULT_RETRIES,
  MAX_RETRIES,
  RETRY_AFTER_MAX_SECONDS,
  RETRYABLE_STATUSES,
  REFRESH_RETRY_WINDOW_MS,
  retryDelay,
  shouldRetry,
} from "../src/retry.js";
import { Transport, retryAfterSeconds, type Call } from "../src/transport.js";
import { assertNoSecret, rejection } from "./assertions.js";

const ENDPOINT = "https://memory.test";
const API_KEY = "sv" + "c_" + "unitTestKeyBody0123456789abcdefghijklmnopqrstuvwx";
const OTHER_KEY = "sv" + "c_" + "otherTestKeyBody0123456789abcdefghijklmnopqrstuv";
const PRINCIPAL = { userId: "usr_1", credential: "api_key", keyId: "key_1", category: "admin", workspaceId: null, scopes: [] };
const ENV_NAMES = ["MEMORY_API_KEY", "MEMORY_ENDPOINT", "MEMORY_WORKSPACE_ID"] as const;

type Reply = { status: number; body?: unknown; headers?: Record<string, string> } | Error;
interface Sent {
  url: string;
  method: string;
  headers: Record<string, string>;
  body: string | undefined;
}

/** A fetch that answers from a script and records what it was sent. */
function scripted(...replies: Reply[]): { fetch: FetchFunction; sent: Sent[] } {
  const sent: Sent[] = [];
  const fetchFromScript: FetchFunction = async (url, init) => {
    sent.push({ url, method: init.method, headers: { ...init.headers }, body: init.body });
    const reply = replies.shift();
    if (reply === undefined) throw new Error("the script has no more replies");
    if (reply instanceof Error) throw reply;
    const text = reply.body === undefined ? "" : typeof reply.body === "string" ? reply.body : JSON.stringify(reply.body);
    return { status: reply.status, headers: new Headers(reply.headers ?? {}), text: async () => text };
  };
  return { fetch: fetchFromScript, sent };
}

function problem(status: number, code: string, detail = "Refused."): Reply {
  return {
    status,
    headers: { "Content-Type": "application/problem+json" },
    body: { type: `https://docs.memory-auth.dev/errors/${code}`, title: "Refused", status, detail, code },
  };
}

function client(fetch: FetchFunction, options: ClientOptions = {}): MemoryClient {
  return new MemoryClient({ endpoint: ENDPOINT, apiKey: API_KEY, retries: 2, fetch, ...options });
}

/** A transport whose waits are recorded instead of slept, with the jitter at its maximum. */
function recordingTransport(fetch: FetchFunction, retries = 2): { transport: Transport; waits: number[] } {
  const waits: number[] = [];
  const transport = new Transport({
    endpoint: ENDPOINT,
    credential: { apiKey: API_KEY },
    timeout: 1_000,
    retries,
    fetch,
    sleep: async (ms) => {
      waits.push(ms);
    },
    random: () => 1,
  });
  return { transport, waits };
}

const GET: Call = { method: "GET", path: "/v1/auth/api-keys", authenticated: true };
const REVOKE: Call = { method: "DELETE", path: "/v1/auth/api-keys/key_1", authenticated: true };
const CREATE: Call = { method: "POST", path: "/v1/auth/api-keys", body: { label: "x" }, authenticated: true };
const REFRESH: Call = {
  method: "POST",
  path: "/v1/auth/refresh",
  body: { refresh_token: "refresh-token-value" },
  authenticated: false,
  oauth: true,
};
const ROTATE: Call = { method: "POST", path: "/v1/auth/api-keys/key_1/rotate", authenticated: true };

function systemError(code: string): Error {
  return Object.assign(new TypeError("fetch failed"), { cause: { code } });
}

/** Runs `body` with the MEMORY_* variables set to `values` (unset when absent), then restores them. */
function withEnvironment<T>(values: Partial<Record<(typeof ENV_NAMES)[number], string>>, body: () => T): T {
  const saved = ENV_NAMES.map((name) => process.env[name]);
  for (const name of ENV_NAMES) {
    const value = values[name];
    if (value === undefined) delete process.env[name];
    else process.env[name] = value;
  }
  try {
    return body();
  } finally {
    ENV_NAMES.forEach((name, index) => {
      const value = saved[index];
      if (value === undefined) delete process.env[name];
      else process.env[name] = value;
    });
  }
}

function tokenSet(accessToken: string, refreshToken: string, expiresIn = 3600): TokenSet {
  return { accessToken, refreshToken, tokenType: "Bearer", expiresIn, expiresAt: Date.now() + expiresIn * 1000 };
}

describe("configuration", () => {
  it("explicit options win over the environment", async () => {
    const script = scripted({ status: 200, body: PRINCIPAL });
    const memory = withEnvironment(
      { MEMORY_API_KEY: OTHER_KEY, MEMORY_ENDPOINT: "https://env.test", MEMORY_WORKSPACE_ID: "ws_env" },
      () => client(script.fetch, { workspaceId: "ws_option" }),
    );

    await memory.auth.whoami();

    assert.equal(script.sent[0]?.url, `${ENDPOINT}/v1/auth/whoami`);
    assert.equal(script.sent[0]?.headers["Authorization"], `Bearer ${API_KEY}`);
    assert.equal(script.sent[0]?.headers["X-Workspace-Id"], "ws_option");
  });

  it("in Node, MEMORY_* variables fill the options left unset", async () => {
    const script = scripted({ status: 200, body: PRINCIPAL });
    const memory = withEnvironment(
      { MEMORY_API_KEY: OTHER_KEY, MEMORY_ENDPOINT: "https://env.test/", MEMORY_WORKSPACE_ID: "ws_env" },
      () => new MemoryClient({ fetch: script.fetch }),
    );

    await memory.auth.whoami();

    assert.equal(memory.endpoint, "https://env.test");
    assert.equal(memory.workspaceId, "ws_env");
    assert.equal(script.sent[0]?.headers["Authorization"], `Bearer ${OTHER_KEY}`);
  });

  it("a tokenProvider keeps MEMORY_API_KEY out", async () => {
    const script = scripted({ status: 200, body: PRINCIPAL });
    const memory = withEnvironment({ MEMORY_API_KEY: OTHER_KEY }, () =>
      new MemoryClient({ endpoint: ENDPOINT, tokenProvider: () => "provided-token", fetch: script.fetch }),
    );

    await memory.auth.whoami();

    assert.equal(script.sent[0]?.headers["Authorization"], "Bearer provided-token");
  });

  it("in a browser nothing is read from the environment", () => {
    const descriptor = Object.getOwnPropertyDescriptor(globalThis, "process");
    assert.ok(descriptor !== undefined);
    const memory = withEnvironment({ MEMORY_ENDPOINT: "https://env.test", MEMORY_WORKSPACE_ID: "ws_env" }, () => {
      // No `process` at all, as in a browser; restored before anything else can run.
      Object.defineProperty(globalThis, "process", { value: undefined, configurable: true, writable: true });
      try {
        return new MemoryClient({ fetch: scripted().fetch });
      } finally {
        Object.defineProperty(globalThis, "process", descriptor);
      }
    });

    assert.equal(memory.endpoint, "https://auth.memory.example.com");
    assert.equal(memory.workspaceId, undefined);
  });

  it("apiKey and tokenProvider together are refused", () => {
    assert.throws(
      () => new MemoryClient({ apiKey: API_KEY, tokenProvider: () => "t", fetch: scripted().fetch }),
      ConfigurationError,
    );
  });

  it("an endpoint must be an http(s) URL, and loses its trailing slash", () => {
    assert.throws(() => client(scripted().fetch, { endpoint: "memory.test" }), ConfigurationError);
    assert.throws(() => client(scripted().fetch, { endpoint: "ftp://memory.test" }), ConfigurationError);
    assert.throws(() => client(scripted().fetch, { endpoint: "https://user:pw@memory.test" }), ConfigurationError);
    assert.equal(client(scripted().fetch, { endpoint: "https://memory.test/base/" }).endpoint, "https://memory.test/base");
  });

  it("plain http is allowed on loopback only", () => {
    const loopback = [
      "http://127.0.0.1:8000",
      "http://127.1.2.3",
      "http://127.255.255.254:9/",
      "http://localhost:8000",
      "http://LOCALHOST",
      "http://[::1]:8000",
      "http://[0:0:0:0:0:0:0:1]",
    ];

    const endpoints = loopback.map((endpoint) => client(scripted().fetch, { endpoint }).endpoint);

    assert.deepEqual(endpoints, [
      "http://127.0.0.1:8000",
      "http://127.1.2.3",
      "http://127.255.255.254:9",
      "http://localhost:8000",
      "http://localhost",
      "http://[::1]:8000",
      "http://[::1]",
    ]);
  });

  it("plain http elsewhere is refused at construction, naming scheme and host but no key", () => {
    const refused: [string, string][] = [
      ["http://memory.example.org", "memory.example.org"],
      ["http://10.0.0.8:8000/stage", "10.0.0.8"],
      ["http://192.168.1.1", "192.168.1.1"],
      ["http://localhost.example.org", "localhost.example.org"],
      ["http://127.0.0.1.example.org", "127.0.0.1.example.org"],
      ["http://[::2]", "::2"],
      ["http://0.0.0.0:8000", "0.0.0.0"],
    ];
    for (const [endpoint, host] of refused) {
      const script = scripted();
      let thrown: unknown;
      try {
        new MemoryClient({ endpoint, apiKey: API_KEY, fetch: script.fetch });
      } catch (error) {
        thrown = error;
      }

      assert.ok(thrown instanceof ConfigurationError, endpoint);
      assert.ok(thrown.message.includes(`uses scheme http with host ${host}:`), thrown.message);
      assert.ok(thrown.message.includes("use https"));
      assertNoSecret(thrown, [API_KEY]);
      assert.equal(script.sent.length, 0);
    }
  });

  it("plain http from MEMORY_ENDPOINT is refused too", () => {
    assert.throws(
      () =>
        withEnvironment({ MEMORY_ENDPOINT: "http://memory.example.org", MEMORY_API_KEY: API_KEY }, () =>
          new MemoryClient({ fetch: scripted().fetch }),
        ),
      /scheme http with host memory\.example\.org/,
    );
  });

  it("timeout and retries must be whole numbers in range", () => {
    assert.throws(() => client(scripted().fetch, { timeout: 0 }), ConfigurationError);
    assert.throws(() => client(scripted().fetch, { retries: -1 }), ConfigurationError);
    assert.throws(() => client(scripted().fetch, { retries: 1.5 }), ConfigurationError);
  });

  it("an apiKey with white space is refused without being quoted", () => {
    const broken = `${API_KEY}\n`;

    const error = (() => {
      try {
        client(scripted().fetch, { apiKey: broken });
      } catch (thrown) {
        return thrown;
      }
      return undefined;
    })();

    assert.ok(error instanceof ConfigurationError);
    assertNoSecret(error, [API_KEY]);
  });

  it("the client never shows its key when inspected or serialized", () => {
    const memory = client(scripted().fetch);

    const shown = [inspect(memory, { depth: 10, showHidden: true }), JSON.stringify(memory), String(memory)];

    assert.ok(shown.every((text) => !text.includes(API_KEY)));
  });

  it("a call that needs a credential fails locally without one", async () => {
    const script = scripted();
    const memory = withEnvironment({}, () => new MemoryClient({ endpoint: ENDPOINT, fetch: script.fetch }));

    const error = await rejection(memory.auth.listApiKeys());

    assert.ok(error instanceof ConfigurationError);
    assert.equal(script.sent.length, 0);
  });
});

describe("requests", () => {
  it("listApiKeys with { allWorkspaces: true } sends no workspace, whatever the client's", async () => {
    const page = { keys: [], nextCursor: null };
    const script = scripted({ status: 200, body: page }, { status: 200, body: page });
    const memory = client(script.fetch, { workspaceId: "ws_default" });

    await memory.auth.listApiKeys(undefined, { allWorkspaces: true, limit: 5 });
    await memory.auth.whoami().catch(() => undefined);

    assert.equal(script.sent[0]?.headers["X-Workspace-Id"], undefined);
    assert.equal(script.sent[0]?.url, `${ENDPOINT}/v1/auth/api-keys?limit=5`);
    assert.equal(script.sent[1]?.headers["X-Workspace-Id"], "ws_default");
  });

  it("listApiKeys refuses a workspace together with allWorkspaces, before any request", async () => {
    const script = scripted();

    const error = await rejection(client(script.fetch).auth.listApiKeys("ws_1", { allWorkspaces: true }));

    assert.ok(error instanceof TypeError);
    assert.equal(script.sent.length, 0);
  });

  it("listApiKeys sends the call's workspace, else the client's, and null sends none", async () => {
    const page = { keys: [], nextCursor: null };
    const script = scripted({ status: 200, body: page }, { status: 200, body: page }, { status: 200, body: page });
    const memory = client(script.fetch, { workspaceId: "ws_default" });

    await memory.auth.listApiKeys("ws_call", { limit: 10, cursor: "abc", status: "active" });
    await memory.auth.listApiKeys();
    await memory.auth.listApiKeys(null);

    assert.equal(script.sent[0]?.headers["X-Workspace-Id"], "ws_call");
    assert.equal(script.sent[0]?.url, `${ENDPOINT}/v1/auth/api-keys?limit=10&cursor=abc&status=active`);
    assert.equal(script.sent[1]?.headers["X-Workspace-Id"], "ws_default");
    assert.equal(script.sent[1]?.url, `${ENDPOINT}/v1/auth/api-keys`);
    assert.equal(script.sent[2]?.headers["X-Workspace-Id"], undefined);
  });

  it("listApiKeys with a query asks the service to search (q), with the cursor of a search page", async () => {
    const script = scripted(
      { status: 200, body: { keys: [], nextCursor: "c1" } },
      { status: 200, body: { keys: [], nextCursor: null } },
      { status: 200, body: { keys: [], nextCursor: null } },
    );
    const memory = client(script.fetch);

    const first = await memory.auth.listApiKeys(undefined, { query: "bulk key 01", status: "active" });
    await memory.auth.listApiKeys(undefined, { query: "bulk key 01", cursor: String(first.nextCursor) });
    await memory.auth.listApiKeys(undefined, { query: "" });

    assert.equal(script.sent[0]?.url, `${ENDPOINT}/v1/auth/api-keys?status=active&q=bulk+key+01`);
    assert.equal(script.sent[1]?.url, `${ENDPOINT}/v1/auth/api-keys?cursor=c1&q=bulk+key+01`);
    assert.equal(script.sent[2]?.url, `${ENDPOINT}/v1/auth/api-keys`);
  });

  it("createApiKey sends only the fields given, and binds a workspace key to the client's workspace", async () => {
    const script = scripted({ status: 201, body: {} }, { status: 201, body: {} });
    const memory = client(script.fetch, { workspaceId: "ws_default" });

    await memory.auth.createApiKey({ label: "admin" });
    await memory.auth.createApiKey({ label: "bound", category: "workspace", scopes: ["memory"] });

    assert.deepEqual(JSON.parse(script.sent[0]?.body ?? ""), { label: "admin" });
    assert.deepEqual(JSON.parse(script.sent[1]?.body ?? ""), {
      label: "bound",
      category: "workspace",
      workspaceId: "ws_default",
      scopes: ["memory"],
    });
    assert.equal(script.sent[1]?.headers["Content-Type"], "application/json");
  });

  it("key ids are escaped in the path, and the methods use their verbs", async () => {
    const script = scripted({ status: 201, body: {} }, { status: 204 }, { status: 200, body: {} });
    const memory = client(script.fetch);

    await memory.auth.rotateApiKey("key/../x");
    await memory.auth.revokeApiKey("key_1");
    await memory.auth.revealApiKey("key_1");

    assert.deepEqual(
      script.sent.map((call) => `${call.method} ${new URL(call.url).pathname}`),
      ["POST /v1/auth/api-keys/key%2F..%2Fx/rotate", "DELETE /v1/auth/api-keys/key_1", "GET /v1/auth/api-keys/key_1/reveal"],
    );
    assert.equal(script.sent[0]?.body, undefined);
  });

  it("the token endpoints send no credential and answer camelCase token sets", async () => {
    const answer = { access_token: "a.b.c", token_type: "Bearer", expires_in: 3600, refresh_token: "r1" };
    const script = scripted({ status: 200, body: answer }, { status: 200, body: answer });
    const memory = client(script.fetch, { workspaceId: "ws_default" });

    const tokens = await memory.auth.exchange("id.token.here");
    await memory.auth.refreshAccessToken("r0");

    assert.equal(tokens.accessToken, "a.b.c");
    assert.equal(tokens.refreshToken, "r1");
    assert.equal(tokens.expiresIn, 3600);
    assert.ok(Math.abs(tokens.expiresAt - (Date.now() + 3600_000)) < 5_000);
    assert.deepEqual(JSON.parse(script.sent[0]?.body ?? ""), { id_token: "id.token.here" });
    assert.deepEqual(JSON.parse(script.sent[1]?.body ?? ""), { refresh_token: "r0" });
    assert.ok(script.sent.every((call) => !("Authorization" in call.headers) && !("X-Workspace-Id" in call.headers)));
  });

  it("empty ids are refused before any request", async () => {
    const script = scripted();

    const error = await rejection(client(script.fetch).auth.revealApiKey(""));

    assert.ok(error instanceof TypeError);
    assert.equal(script.sent.length, 0);
  });
});

describe("workspaces, key updates, grace rotation and events", () => {
  it("client.workspaces uses the workspace routes, escapes ids and sends no X-Workspace-Id", async () => {
    const workspace = { id: "ws_1", name: "Team", ownerId: "usr_1", createdAt: "2026-01-01T00:00:00Z" };
    const member = { workspaceId: "ws_1", userId: "usr_2", role: "member", addedAt: "2026-01-01T00:00:00Z" };
    const script = scripted(
      { status: 201, body: workspace },
      { status: 200, body: { workspaces: [{ ...workspace, role: "owner" }] } },
      { status: 200, body: { members: [member] } },
      { status: 201, body: member },
      { status: 204 },
    );
    const memory = client(script.fetch, { workspaceId: "ws_default" });

    assert.deepEqual(await memory.workspaces.createWorkspace("Team"), workspace);
    assert.equal((await memory.workspaces.listWorkspaces())[0]?.role, "owner");
    assert.deepEqual(await memory.workspaces.listMembers("ws_1"), [member]);
    assert.deepEqual(await memory.workspaces.addMember("ws_1", "usr_2"), member);
    await memory.workspaces.removeMember("ws_1", "usr/2");

    assert.deepEqual(
      script.sent.map((call) => `${call.method} ${new URL(call.url).pathname}`),
      [
        "POST /v1/workspaces",
        "GET /v1/workspaces",
        "GET /v1/workspaces/ws_1/members",
        "PUT /v1/workspaces/ws_1/members/usr_2",
        "DELETE /v1/workspaces/ws_1/members/usr%2F2",
      ],
    );
    assert.deepEqual(JSON.parse(script.sent[0]?.body ?? ""), { name: "Team" });
    assert.equal(script.sent[3]?.body, undefined);
    assert.ok(script.sent.every((call) => !("X-Workspace-Id" in call.headers)));
  });

  it("empty workspace or user ids are refused before any request", async () => {
    const script = scripted();
    const memory = client(script.fetch);

    assert.ok((await rejection(memory.workspaces.addMember("ws_1", " "))) instanceof TypeError);
    assert.ok((await rejection(memory.workspaces.listMembers(""))) instanceof TypeError);
    assert.ok((await rejection(memory.workspaces.createWorkspace(""))) instanceof TypeError);
    assert.equal(script.sent.length, 0);
  });

  it("createApiKey sends a lifetime and an allow-list only when given", async () => {
    const script = scripted({ status: 201, body: {} });

    await client(script.fetch).auth.createApiKey({ label: "short", expiresInDays: 7, allowedCidrs: ["10.0.0.0/8"] });

    assert.deepEqual(JSON.parse(script.sent[0]?.body ?? ""), {
      label: "short",
      expiresInDays: 7,
      allowedCidrs: ["10.0.0.0/8"],
    });
  });

  it("rotateApiKey sends a grace period only when one is asked for", async () => {
    const script = scripted({ status: 201, body: {} }, { status: 201, body: {} });
    const memory = client(script.fetch);

    await memory.auth.rotateApiKey("key_1", { gracePeriodSeconds: 3600 });
    await memory.auth.rotateApiKey("key_2", {});

    assert.deepEqual(JSON.parse(script.sent[0]?.body ?? ""), { gracePeriodSeconds: 3600 });
    assert.equal(script.sent[1]?.body, undefined);
  });

  it("updateApiKey patches only the fields given; null clears the allow-list", async () => {
    const script = scripted({ status: 200, body: {} }, { status: 200, body: {} });
    const memory = client(script.fetch);

    await memory.auth.updateApiKey("key_1", { label: "renamed" });
    await memory.auth.updateApiKey("key_1", { allowedCidrs: null });

    assert.equal(script.sent[0]?.method, "PATCH");
    assert.equal(new URL(script.sent[0]?.url ?? "").pathname, "/v1/auth/api-keys/key_1");
    assert.deepEqual(JSON.parse(script.sent[0]?.body ?? ""), { label: "renamed" });
    assert.deepEqual(JSON.parse(script.sent[1]?.body ?? ""), { allowedCidrs: null });
  });

  it("createApiKey and updateApiKey send a daily quota only when given; null removes it", async () => {
    const script = scripted({ status: 201, body: {} }, { status: 200, body: {} }, { status: 200, body: {} });
    const memory = client(script.fetch);

    await memory.auth.createApiKey({ label: "capped", requestsPerDay: 500 });
    await memory.auth.updateApiKey("key_1", { requestsPerDay: null });
    await memory.auth.updateApiKey("key_1", { label: "x" });

    assert.deepEqual(JSON.parse(script.sent[0]?.body ?? ""), { label: "capped", requestsPerDay: 500 });
    assert.deepEqual(JSON.parse(script.sent[1]?.body ?? ""), { requestsPerDay: null });
    assert.deepEqual(JSON.parse(script.sent[2]?.body ?? ""), { label: "x" });
  });

  it("usage asks for the granularity and range and answers the buckets", async () => {
    const body = {
      keyId: "key_1",
      granularity: "hour",
      buckets: [{ start: "2026-11-21T10:00:00Z", requests: 12 }],
      complete: false,
    };
    const script = scripted({ status: 200, body }, { status: 200, body });
    const memory = client(script.fetch);

    const usage = await memory.auth.usage("key_1", { granularity: "hour", from: "2026-11-21T10:00:00Z" });
    await memory.auth.usage("key_1");

    const url = new URL(script.sent[0]?.url ?? "");
    assert.equal(url.pathname, "/v1/auth/api-keys/key_1/usage");
    assert.equal(url.searchParams.get("granularity"), "hour");
    assert.equal(url.searchParams.get("from"), "2026-11-21T10:00:00Z");
    assert.equal(url.searchParams.get("to"), null);
    assert.equal(new URL(script.sent[1]?.url ?? "").searchParams.get("granularity"), "day");
    assert.deepEqual(usage.buckets, [{ start: "2026-11-21T10:00:00Z", requests: 12 }]);
    assert.equal(usage.complete, false);
  });

  it("a service without PATCH answers 405, thrown with its detail", async () => {
    const script = scripted(problem(405, "method_not_allowed", "This method is not allowed here."));

    const error = await rejection(client(script.fetch).auth.updateApiKey("key_1", { label: "x" }));

    assert.ok(error instanceof ApiError);
    assert.equal(error.status, 405);
    assert.equal(error.detail, "This method is not allowed here.");
  });

  it("listEvents sends its filters as query parameters and no workspace", async () => {
    const script = scripted({ status: 200, body: { events: [], nextCursor: null } });
    const memory = client(script.fetch, { workspaceId: "ws_default" });

    const page = await memory.auth.listEvents({ limit: 20, type: "key.revoked", keyId: "key_1", cursor: "c" });

    assert.deepEqual(page, { events: [], nextCursor: null });
    assert.equal(script.sent[0]?.url, `${ENDPOINT}/v1/auth/events?limit=20&cursor=c&type=key.revoked&keyId=key_1`);
    assert.equal(script.sent[0]?.headers["X-Workspace-Id"], undefined);
  });

  it("listEvents names a workspace only when asked to", async () => {
    const script = scripted({ status: 200, body: { events: [], nextCursor: null } });

    await client(script.fetch, { workspaceId: "ws_default" }).auth.listEvents({ workspaceId: "ws_1" });

    assert.equal(script.sent[0]?.headers["X-Workspace-Id"], "ws_1");
  });

  it("a PATCH whose answer was lost is not re-sent", async () => {
    const script = scripted(systemError("ECONNRESET"), { status: 200, body: {} });

    const error = await rejection(client(script.fetch).auth.updateApiKey("key_1", { label: "x" }));

    assert.ok(error instanceof NetworkError);
    assert.equal(error.mayHaveReached, true);
    assert.equal(script.sent.length, 1);
  });
});

describe("retries", () => {
  it("a 429 is retried after Retry-After for a GET", async () => {
    const script = scripted({ ...problem(429, "rate_limited"), headers: { "Retry-After": "1" } }, { status: 200, body: PRINCIPAL });
    const started = Date.now();

    const me = await client(script.fetch).auth.whoami();

    assert.equal(me.userId, "usr_1");
    assert.equal(script.sent.length, 2);
    assert.ok(Date.now() - started >= 950, "waited for Retry-After");
  });

  it("a Retry-After beyond a minute is handed to the caller at once", async () => {
    const script = scripted({ ...problem(429, "rate_limited"), headers: { "Retry-After": "120" } });

    const error = await rejection(client(script.fetch).auth.whoami());

    assert.ok(error instanceof RateLimitError);
    assert.equal(error.status, 429);
    assert.equal(error.retryAfter, 120);
    assert.equal(script.sent.length, 1);
  });

  it("retries stop after `retries` and the last error is thrown", async () => {
    const limited = { ...problem(429, "rate_limited"), headers: { "Retry-After": "0" } };
    const script = scripted(limited, limited);

    const error = await rejection(client(script.fetch, { retries: 1 }).auth.whoami());

    assert.ok(error instanceof RateLimitError);
    assert.equal(error.retryAfter, 0);
    assert.equal(script.sent.length, 2);
  });

  it("a 503 is retried for a GET", async () => {
    const script = scripted(problem(503, "dependency_unavailable"), { status: 200, body: PRINCIPAL });

    const me = await client(script.fetch).auth.whoami();

    assert.equal(me.userId, "usr_1");
    assert.equal(script.sent.length, 2);
  });

  it("502, 503 and 504 back off exponentially for a GET, capped", async () => {
    const script = scripted(
      { status: 502 },
      problem(503, "dependency_unavailable"),
      { status: 504 },
      { status: 503 },
      { status: 502 },
      { status: 504 },
      { status: 200, body: {} },
    );
    const { transport, waits } = recordingTransport(script.fetch, 6);

    await transport.request(GET);

    assert.deepEqual(waits, [500, 1_000, 2_000, 4_000, 8_000, 8_000]);
    assert.equal(script.sent.length, 7);
  });

  it("a DELETE (revoke) is retried like a GET: it is idempotent", async () => {
    for (const status of [429, 502, 503, 504]) {
      const script = scripted({ status }, { status: 204 });
      const { transport, waits } = recordingTransport(script.fetch);

      const answer = await transport.request(REVOKE);

      assert.equal(answer.status, 204);
      assert.equal(script.sent.length, 2, String(status));
      assert.deepEqual(waits, [500]);
    }
  });

  it("a 500, or any status but 429, 502, 503 and 504, is never retried", async () => {
    for (const call of [GET, REVOKE]) {
      for (const status of [500, 501, 505, 400, 401, 403, 404, 409, 410]) {
        const script = scripted(problem(status, status >= 500 ? "internal_error" : "refused"), { status: 200, body: {} });
        const { transport, waits } = recordingTransport(script.fetch);

        const error = await rejection(transport.request(call));

        assert.ok(error instanceof ApiError);
        assert.equal(error.status, status);
        assert.equal(script.sent.length, 1, `${call.method} ${status}`);
        assert.deepEqual(waits, []);
      }
    }
  });

  it("a POST without an Idempotency-Key or a retry window is never re-sent once it may have reached the service", async () => {
    const failures: Reply[] = [
      { ...problem(429, "rate_limited"), headers: { "Retry-After": "0" } },
      { status: 502 },
      problem(503, "dependency_unavailable"),
      { status: 504 },
      { status: 500 },
      systemError("ECONNRESET"),
      new TypeError("Failed to fetch"),
    ];
    for (const call of [CREATE, ROTATE, REFRESH]) {
      for (const failure of failures) {
        const script = scripted(failure, { status: 201, body: {} });
        const { transport, waits } = recordingTransport(script.fetch);

        const error = await rejection(transport.request(call));

        assert.ok(error instanceof ApiError || error instanceof NetworkError);
        if (error instanceof NetworkError) assert.equal(error.mayHaveReached, true);
        assert.equal(script.sent.length, 1, call.path);
        assert.deepEqual(waits, []);
      }
    }
  });

  it("create, rotate and createWorkspace send a new Idempotency-Key per call, outside the body", async () => {
    const script = scripted(...Array.from({ length: 5 }, () => ({ status: 201, body: {} })));
    const memory = client(script.fetch);

    await memory.auth.createApiKey({ label: "a" });
    await memory.auth.createApiKey({ label: "a" });
    await memory.auth.rotateApiKey("key_1");
    await memory.workspaces.createWorkspace("Team");
    await memory.auth.createApiKey({ label: "a", idempotencyKey: "my-own-key" });

    const keys = script.sent.map((request) => request.headers["Idempotency-Key"]);
    assert.equal(new Set(keys.slice(0, 4)).size, 4);
    assert.ok(keys.slice(0, 4).every((key) => typeof key === "string" && /^[0-9a-f]{32}$/.test(key)));
    assert.equal(keys[4], "my-own-key");
    assert.deepEqual(JSON.parse(script.sent[4]?.body ?? ""), { label: "a" });
  });

  it("a create whose answer was lost or refused with 503 is re-sent with the same key", async () => {
    const script = scripted(
      systemError("ECONNRESET"),
      problem(503, "dependency_unavailable"),
      { status: 201, body: { id: "key_1", key: "the-plaintext" } },
    );

    const created = await client(script.fetch).auth.createApiKey({ label: "a" });

    assert.equal(created.id, "key_1");
    assert.equal(script.sent.length, 3);
    assert.equal(new Set(script.sent.map((request) => request.headers["Idempotency-Key"])).size, 1);
    assert.equal(new Set(script.sent.map((request) => request.body)).size, 1);
  });

  it("a rotation answered 503 is re-sent with its key; a 500 never is", async () => {
    const retried = scripted(problem(503, "dependency_unavailable"), { status: 201, body: { id: "key_2" } });
    const broken = scripted(problem(500, "internal_error"), { status: 201, body: {} });

    const successor = await client(retried.fetch).auth.rotateApiKey("key_1");
    const error = await rejection(client(broken.fetch).auth.rotateApiKey("key_1"));

    assert.equal(successor.id, "key_2");
    assert.equal(retried.sent[0]?.headers["Idempotency-Key"], retried.sent[1]?.headers["Idempotency-Key"]);
    assert.ok(error instanceof ApiError);
    assert.equal(broken.sent.length, 1);
  });

  it("an exchange answered 503 is re-sent: the same ID token signs the same user in", async () => {
    const tokens = { access_token: "a.b.c", token_type: "Bearer", expires_in: 3600, refresh_token: "rt_x" };
    const script = scripted(problem(503, "temporarily_unavailable"), { status: 200, body: tokens });

    await client(script.fetch).auth.exchange("id-token-value");

    assert.equal(script.sent.length, 2);
  });

  it("a refresh is re-sent within its window from the first send, and not after it", async () => {
    let now = 0;
    const slow = (ms: number): FetchFunction => async () => {
      now += ms;
      throw systemError("ECONNRESET");
    };
    const transportAt = (fetch: FetchFunction): Transport =>
      new Transport({
        endpoint: ENDPOINT,
        credential: null,
        timeout: 1_000,
        retries: 2,
        fetch,
        sleep: async () => {},
        random: () => 1,
        now: () => now,
      });
    const windowed: Call = { ...REFRESH, repeatableWithinMs: REFRESH_RETRY_WINDOW_MS };

    const within = scripted(systemError("ECONNRESET"), { status: 200, body: {} });
    let first = true;
    const withinFetch: FetchFunction = async (url, init) => {
      if (first) {
        first = false;
        now += REFRESH_RETRY_WINDOW_MS - 1;
      }
      return within.fetch(url, init);
    };
    await transportAt(withinFetch).request(windowed);
    const late = await rejection(transportAt(slow(REFRESH_RETRY_WINDOW_MS + 1)).request(windowed));

    assert.equal(within.sent.length, 2);
    assert.ok(late instanceof NetworkError);
  });

  it("a connection never made is retried for every call, a POST too", async () => {
    for (const code of ["ECONNREFUSED", "ENOTFOUND", "EAI_AGAIN", "UND_ERR_CONNECT_TIMEOUT"]) {
      const script = scripted(systemError(code), { status: 201, body: { id: "key_1" } });
      const { transport, waits } = recordingTransport(script.fetch);

      const answer = await transport.request(CREATE);

      assert.equal(answer.status, 201);
      assert.equal(script.sent.length, 2, code);
      assert.deepEqual(waits, [500]);
    }
  });

  it("a network failure is retried for a GET, and for a refresh within its window", async () => {
    const getScript = scripted(systemError("ECONNRESET"), { status: 200, body: PRINCIPAL });
    const resetScript = scripted(...Array.from({ length: 3 }, () => systemError("ECONNRESET")));
    const refusedScript = scripted(...Array.from({ length: 3 }, () => systemError("ECONNREFUSED")));

    await client(getScript.fetch).auth.whoami();
    const reset = await rejection(client(resetScript.fetch).auth.refreshAccessToken("refresh-token-value"));
    const refused = await rejection(client(refusedScript.fetch, { retries: 2 }).auth.refreshAccessToken("refresh-token-value"));

    assert.equal(getScript.sent.length, 2);
    assert.equal(resetScript.sent.length, 3);
    assert.ok(reset instanceof NetworkError);
    assert.equal(reset.mayHaveReached, true);
    assert.match(reset.message, /ECONNRESET/);
    assert.equal(refusedScript.sent.length, 3);
    assert.ok(refused instanceof NetworkError);
    assert.equal(refused.mayHaveReached, false);
  });

  it("the policy: its table and its budget are the Python SDK's", () => {
    assert.equal(DEFAULT_RETRIES, 2);
    assert.deepEqual([...RETRYABLE_STATUSES].sort(), [429, 502, 503, 504]);
    const table: [string, number | undefined, boolean, boolean][] = [
      ["GET", 429, true, true],
      ["GET", 502, true, true],
      ["GET", 503, true, true],
      ["GET", 504, true, true],
      ["GET", undefined, true, true],
      ["DELETE", 503, true, true],
      ["DELETE", undefined, true, true],
      ["GET", 500, true, false],
      ["DELETE", 500, true, false],
      ["GET", 501, true, false],
      ["GET", 404, true, false],
      ["POST", 429, true, false],
      ["POST", 503, true, false],
      ["POST", undefined, true, false],
      ["POST", undefined, false, true],
      ["GET", undefined, false, true],
    ];
    for (const [method, status, sent, expected] of table) {
      assert.equal(shouldRetry(method, { status, sent }), expected, `${method} ${status} ${sent}`);
    }
    // A POST the service takes again (an Idempotency-Key, a refresh in its window) is a GET.
    const repeatable: [number | undefined, boolean, boolean][] = [
      [429, true, true],
      [503, true, true],
      [undefined, true, true],
      [500, true, false],
      [409, true, false],
      [undefined, false, true],
    ];
    for (const [status, sent, expected] of repeatable) {
      assert.equal(shouldRetry("POST", { status, sent }, true), expected, `POST ${status} ${sent}`);
    }
    const waits = [0, 1, 2, 3, 4, 5].map((attempt) => retryDelay(attempt, undefined, () => 1));
    assert.deepEqual(waits, [500, 1_000, 2_000, 4_000, 8_000, 8_000]);
    assert.equal(retryDelay(0, undefined, () => 0), 250);
    assert.equal(retryDelay(0, 60, () => 1), 60_000);
    assert.equal(retryDelay(0, 61, () => 1), undefined);
  });

  it("both READMEs state the policy in the same words, with the numbers the code applies", () => {
    // build-test/test/unit.test.js -> the package folder; the Python SDK sits beside it.
    const packageDir = resolve(dirname(fileURLToPath(import.meta.url)), "../..");
    const block = (path: string): string => {
      const text = readFileSync(path, "utf8");
      const start = text.indexOf("<!-- retry-policy:start");
      const end = text.indexOf("<!-- retry-policy:end -->", start);
      assert.ok(start >= 0 && end > start, `${path} has no retry-policy block`);
      return text.slice(start, end);
    };

    const ours = block(join(packageDir, "README.md"));
    const theirs = block(join(packageDir, "..", "python", "README.md"));

    assert.equal(ours, theirs);
    assert.ok(ours.includes(`default ${DEFAULT_RETRIES} (${DEFAULT_RETRIES + 1} attempts`));
    assert.ok(ours.includes(`from 0 to ${MAX_RETRIES}`));
    assert.ok(ours.includes(`min(${BACKOFF_CAP_MS / 1000} s, ${BACKOFF_BASE_MS / 1000} s × 2ⁿ)`));
    assert.ok(ours.includes(`over ${RETRY_AFTER_MAX_SECONDS} s is not waited for`));
    assert.ok(ours.includes(`for ${REFRESH_RETRY_WINDOW_MS / 1000} s from its first send`));
  });

  it("no answer within the timeout is a RequestTimeoutError", async () => {
    const hanging: FetchFunction = (_url, init) =>
      new Promise((_resolve, reject) => {
        init.signal.addEventListener("abort", () => reject(new DOMException("aborted", "AbortError")));
      });

    const error = await rejection(client(hanging, { timeout: 50, retries: 0 }).auth.whoami());

    assert.ok(error instanceof RequestTimeoutError);
    assert.ok(error instanceof NetworkError);
    assert.equal(error.mayHaveReached, true);
  });

  it("Retry-After is read as seconds or as an HTTP date", () => {
    const now = Date.parse("2026-11-21T12:00:00Z");

    assert.equal(retryAfterSeconds("7", now), 7);
    assert.equal(retryAfterSeconds("Sat, 21 Nov 2026 12:00:30 GMT", now), 30);
    assert.equal(retryAfterSeconds("Sat, 21 Nov 2026 11:00:00 GMT", now), 0);
    assert.equal(retryAfterSeconds("soon", now), undefined);
    assert.equal(retryAfterSeconds(null, now), undefined);
  });
});

describe("errors", () => {
  it("a problem+json answer becomes its typed error with status, code and detail", async () => {
    const script = scripted(problem(404, "not_found", "No API key with this id."), problem(403, "not_a_member"));

    const missing = await rejection(client(script.fetch).auth.getApiKey("key_1"));
    const denied = await rejection(client(script.fetch).auth.listApiKeys());

    assert.ok(missing instanceof NotFoundError);
    assert.ok(missing instanceof ApiError);
    assert.equal(missing.status, 404);
    assert.equal(missing.code, "not_found");
    assert.equal(missing.detail, "No API key with this id.");
    assert.equal(missing.message, "404 not_found: No API key with this id.");
    assert.equal(missing.name, "NotFoundError");
    assert.ok(denied instanceof PermissionDeniedError);
    assert.equal(denied.code, "not_a_member");
  });

  it("an OAuth body becomes an OAuthError carrying the OAuth code", async () => {
    const script = scripted({ status: 400, body: { error: "invalid_grant", error_description: "The refresh token was already used." } });

    const error = await rejection(client(script.fetch).auth.refreshAccessToken("refresh-token-value"));

    assert.ok(error instanceof OAuthError);
    assert.equal(error.status, 400);
    assert.equal(error.code, "invalid_grant");
    assert.equal(error.detail, "The refresh token was already used.");
  });

  it("an answer that is not JSON is still a typed error", async () => {
    const script = scripted({ status: 502, body: "<html>Bad Gateway</html>" }, { status: 200, body: "not json" });

    const gateway = await rejection(client(script.fetch, { retries: 0 }).auth.whoami());
    const garbled = await rejection(client(script.fetch).auth.whoami());

    assert.ok(gateway instanceof ServerError);
    assert.equal(gateway.code, "unexpected_response");
    assert.ok(garbled instanceof UnexpectedResponseError);
    assert.ok(garbled instanceof ApiError);
    assert.equal(garbled.code, "unexpected_response");
  });

  it("each status has the Python SDK's class name", async () => {
    const expected: [number, string][] = [
      [400, "BadRequestError"],
      [413, "BadRequestError"],
      [422, "BadRequestError"],
      [401, "AuthenticationError"],
      [403, "PermissionDeniedError"],
      [404, "NotFoundError"],
      [409, "ConflictError"],
      [410, "GoneError"],
      [429, "RateLimitError"],
      [500, "ServerError"],
      [502, "ServerError"],
      [503, "ServiceUnavailableError"],
      [504, "ServerError"],
      [405, "ApiError"],
    ];
    for (const [status, name] of expected) {
      const error = await rejection(client(scripted(problem(status, "some_code")).fetch, { retries: 0 }).auth.whoami());

      assert.ok(error instanceof ApiError);
      assert.equal(error.name, name, String(status));
      assert.equal(error.constructor.name, name);
    }
    const tooLarge = await rejection(client(scripted(problem(413, "payload_too_large")).fetch).auth.whoami());
    assert.ok(tooLarge instanceof BadRequestError);
  });

  it("an OAuth-shaped body outside the token endpoints is typed by its status", async () => {
    const script = scripted({ status: 404, body: { error: "not here" } });

    const error = await rejection(client(script.fetch).auth.getApiKey("key_1"));

    assert.ok(error instanceof NotFoundError);
    assert.ok(!(error instanceof OAuthError));
  });

  it("a problem+json answer from a token endpoint is typed by its status", async () => {
    const script = scripted(problem(503, "dependency_unavailable"));

    const error = await rejection(
      client(script.fetch, { retries: 0 }).auth.refreshAccessToken("refresh-token-value"),
    );

    assert.ok(error instanceof ServiceUnavailableError);
  });

  it("MemoryError is the deprecated name of MemorySDKError", async () => {
    const error = await rejection(client(scripted(problem(404, "not_found")).fetch).auth.whoami());

    assert.equal(MemoryError, MemorySDKError);
    assert.ok(error instanceof MemorySDKError);
    assert.ok(error instanceof MemoryError);
  });

  it("no key or token reaches an error, even when the service echoes one", async () => {
    const jwt = "eyJhbGciOiJSUzI1NiJ9" + ".eyJzdWIiOiJ1c3JfMSJ9.c2lnbmF0dXJlc2lnbmF0dXJl";
    const refreshToken = "opaque-refresh-token-0123456789";
    const script = scripted(
      problem(401, "invalid_credentials", `Key ${API_KEY} and ${OTHER_KEY} are unknown.`),
      { status: 400, body: { error: "invalid_grant", error_description: `Token ${refreshToken} or ${jwt} was used.` } },
    );

    const keyError = await rejection(client(script.fetch).auth.whoami());
    const tokenError = await rejection(client(script.fetch).auth.refreshAccessToken(refreshToken));

    assert.ok(keyError instanceof AuthenticationError);
    assertNoSecret(keyError, [API_KEY, OTHER_KEY]);
    assert.ok(tokenError instanceof OAuthError);
    assertNoSecret(tokenError, [refreshToken, jwt]);
  });
});

describe("a 401 with a tokenProvider", () => {
  it("asks the provider once for a fresh token and retries once", async () => {
    const script = scripted(problem(401, "expired_credentials"), { status: 200, body: PRINCIPAL });
    const asked: TokenContext[] = [];
    const memory = new MemoryClient({
      endpoint: ENDPOINT,
      fetch: script.fetch,
      tokenProvider: (context) => {
        asked.push(context);
        return context.rejectedToken === undefined ? "old-token" : "new-token";
      },
    });

    await memory.auth.createApiKey({ label: "x" });

    assert.deepEqual(asked, [{}, { rejectedToken: "old-token" }]);
    assert.deepEqual(script.sent.map((call) => call.headers["Authorization"]), ["Bearer old-token", "Bearer new-token"]);
  });

  it("a second 401 is thrown, not retried again", async () => {
    const script = scripted(problem(401, "invalid_credentials"), problem(401, "invalid_credentials"));
    let issued = 0;
    const memory = new MemoryClient({ endpoint: ENDPOINT, fetch: script.fetch, tokenProvider: () => `token-${(issued += 1)}` });

    const error = await rejection(memory.auth.whoami());

    assert.ok(error instanceof AuthenticationError);
    assert.equal(script.sent.length, 2);
  });

  it("a provider that hands back the refused token gives up after one request", async () => {
    const script = scripted(problem(401, "invalid_credentials"));
    const memory = new MemoryClient({ endpoint: ENDPOINT, fetch: script.fetch, tokenProvider: () => "same-token" });

    const error = await rejection(memory.auth.whoami());

    assert.ok(error instanceof AuthenticationError);
    assert.equal(script.sent.length, 1);
  });

  it("an API key is never retried on 401", async () => {
    const script = scripted(problem(401, "revoked_credentials"));

    const error = await rejection(client(script.fetch).auth.whoami());

    assert.ok(error instanceof AuthenticationError);
    assert.equal(error.code, "revoked_credentials");
    assert.equal(script.sent.length, 1);
  });

  it("a provider's unusable token is refused before fetch can quote it", async () => {
    const script = scripted();
    const memory = new MemoryClient({ endpoint: ENDPOINT, fetch: script.fetch, tokenProvider: () => "two words" });

    const error = await rejection(memory.auth.whoami());

    assert.ok(error instanceof ConfigurationError);
    assert.ok(!error.message.includes("two words"));
    assert.equal(script.sent.length, 0);
  });
});

describe("Session", () => {
  /** A refresher whose refreshes finish when the test says so. */
  function refresher(): {
    client: { auth: { refreshAccessToken(token: string): Promise<TokenSet> } };
    presented: string[];
    finish(result: TokenSet | Error): void;
  } {
    const presented: string[] = [];
    const waiting: ((result: TokenSet | Error) => void)[] = [];
    return {
      presented,
      client: {
        auth: {
          refreshAccessToken(token: string) {
            presented.push(token);
            return new Promise<TokenSet>((resolve, reject) => {
              waiting.push((result) => (result instanceof Error ? reject(result) : resolve(result)));
            });
          },
        },
      },
      finish(result) {
        waiting.shift()?.(result);
      },
    };
  }

  it("hands out the held token while it is outside the margin", async () => {
    const fake = refresher();
    const session = new Session({ client: fake.client, tokens: tokenSet("a1", "r1"), now: () => Date.now() });

    const token = await session.accessToken();

    assert.equal(token, "a1");
    assert.deepEqual(fake.presented, []);
  });

  it("concurrent calls near expiry share one refresh", async () => {
    const fake = refresher();
    let clock = 1_000_000;
    const refreshed: TokenSet[] = [];
    const session = new Session({
      client: fake.client,
      tokens: { accessToken: "a1", refreshToken: "r1", expiresAt: clock + 3_600_000 },
      refreshMargin: 60_000,
      now: () => clock,
      onRefresh: (tokens) => {
        refreshed.push(tokens);
      },
    });
    clock += 3_600_000 - 59_000;

    const pending = Promise.all([session.accessToken(), session.tokenProvider({}), session.accessToken()]);
    await new Promise((resolve) => setImmediate(resolve));
    fake.finish(tokenSet("a2", "r2", 3600));
    const tokens = await pending;

    assert.deepEqual(tokens, ["a2", "a2", "a2"]);
    assert.deepEqual(fake.presented, ["r1"]);
    assert.equal(refreshed[0]?.expiresAt, clock + 3_600_000);
    assert.deepEqual(session.tokens, { accessToken: "a2", refreshToken: "r2", expiresAt: clock + 3_600_000 });
  });

  it("several 401s for one token cause one refresh; a 401 for an old token causes none", async () => {
    const fake = refresher();
    const session = new Session({ client: fake.client, tokens: tokenSet("a1", "r1") });

    const pending = Promise.all([
      session.tokenProvider({ rejectedToken: "a1" }),
      session.tokenProvider({ rejectedToken: "a1" }),
    ]);
    await new Promise((resolve) => setImmediate(resolve));
    fake.finish(tokenSet("a2", "r2"));
    const tokens = await pending;
    const late = await session.tokenProvider({ rejectedToken: "a1" });

    assert.deepEqual(tokens, ["a2", "a2"]);
    assert.equal(late, "a2");
    assert.deepEqual(fake.presented, ["r1"]);
  });

  it("an outage does not end the session; a refused refresh does, for good", async () => {
    const fake = refresher();
    const session = new Session({ client: fake.client, tokens: { accessToken: "a1", refreshToken: "r1", expiresAt: 0 } });

    const outage = session.accessToken();
    fake.finish(new ServiceUnavailableError({ status: 503, code: "temporarily_unavailable" }));
    const outageError = await rejection(outage);
    const refused = session.accessToken();
    await new Promise((resolve) => setImmediate(resolve));
    fake.finish(new OAuthError({ status: 400, code: "invalid_grant" }));
    const refusedError = await rejection(refused);
    const afterwards = await rejection(session.accessToken());

    assert.ok(outageError instanceof ServiceUnavailableError);
    assert.ok(refusedError instanceof OAuthError);
    assert.equal(session.ended, true);
    assert.equal(afterwards, refusedError);
    assert.deepEqual(fake.presented, ["r1", "r1"]);
  });
});

describe("redaction", () => {
  // Split so that secret scanners stay quiet; not real keys. A legacy key is `legacy_` and
  // any printable, non-space ASCII: every one of those characters appears in one of these.
  const LEGACY = "leg" + "acy_";
  const LEGACY_KEYS = [
    LEGACY + "ab-cd.ef~gh+ij/kl=mn%op",
    LEGACY + "A1-B2.C3~D4+E5/F6==",
    LEGACY + "%2Fpath%3D~user.name+tag",
    LEGACY + "x!\"#$&'()*,:;<>?@[\\]^_`{|}y",
    LEGACY + "-.~+/=%",
  ];
  const ODD_SVC_KEY = "sv" + "c_" + "odd-chars.~+/=%0123456789";

  it("removes known secrets and anything shaped like a key or a JWT, and keeps the prose", () => {
    const jwt = "eyJhbGciOiJSUzI1NiJ9" + ".eyJzdWIiOiJ1c3JfMSJ9.c2lnbmF0dXJl";
    const legacy = "leg" + "acy_" + "0123456789abcdef";
    const text = `key ${API_KEY} legacy ${legacy} jwt ${jwt}, token opaque-0123456789, hint svc_…wxyz, prefix svc_ alone, header Bearer abc.def`;

    const clean = redact(text, ["opaque-0123456789"]);

    assert.equal(
      clean,
      "key svc_[redacted] legacy legacy_[redacted] jwt [redacted], token [redacted], hint svc_…wxyz, prefix svc_ alone, header Bearer [redacted]",
    );
  });

  it("redacts a key whole, whatever printable characters it holds", () => {
    for (const key of [...LEGACY_KEYS, ODD_SVC_KEY, API_KEY]) {
      const prefix = key.slice(0, key.indexOf("_"));

      const clean = redact(`the key ${key} is unknown`);

      assert.equal(clean, `the key ${prefix}_[redacted] is unknown`);
      assert.ok(!clean.includes(key.slice(key.indexOf("_") + 1)));
    }
  });

  it("takes punctuation right after a key for part of it", () => {
    assert.equal(redact(`unknown key ${LEGACY_KEYS[0]}.`), "unknown key legacy_[redacted]");
  });

  it("no legacy key echoed by the service reaches an error", async () => {
    for (const key of LEGACY_KEYS) {
      const script = scripted(
        problem(401, "invalid_credentials", `Key ${key} is unknown.`),
        { status: 400, body: { error: "invalid_grant", error_description: `grant ${key} refused` } },
      );
      // Not the client's own key, so that only the pattern can catch it.
      const memory = client(script.fetch);

      const keyError = await rejection(memory.auth.whoami());
      const tokenError = await rejection(memory.auth.refreshAccessToken("refresh-token-value"));

      assert.ok(keyError instanceof AuthenticationError);
      assert.equal(keyError.detail, "Key legacy_[redacted] is unknown.");
      assert.ok(tokenError instanceof OAuthError);
      assert.equal(tokenError.detail, "grant legacy_[redacted] refused");
      assertNoSecret(keyError, [key]);
      assertNoSecret(tokenError, [key]);
    }
  });

  it("a legacy key of the client's own is sent, and never shown", async () => {
    for (const key of LEGACY_KEYS) {
      const script = scripted(problem(403, "insufficient_scope", `Key ${key} may not.`));
      const memory = client(script.fetch, { apiKey: key });

      const error = await rejection(memory.auth.listApiKeys());

      assert.equal(script.sent[0]?.headers["Authorization"], `Bearer ${key}`);
      assert.ok(error instanceof PermissionDeniedError);
      assertNoSecret(error, [key]);
      assert.ok(!inspect(memory, { depth: 10, showHidden: true }).includes(key));
    }
  });

  it("caps long text", () => {
    assert.equal(redact("x".repeat(2000)).length, 501);
  });
});

describe("delegation and sign-out", () => {
  const DELEGATED = "eyJ" + "hbGciOiJSUzI1NiJ9.eyJyb290Ijoia2V5XzEifQ.ZGVsZWdhdGVk";

  it("delegate hands the client's own key on for a narrower token", async () => {
    const answer = {
      access_token: DELEGATED,
      issued_token_type: "urn:ietf:params:oauth:token-type:access_token",
      token_type: "Bearer",
      expires_in: 300,
      scope: "memory",
    };
    const script = scripted({ status: 200, body: answer });

    const token = await client(script.fetch).auth.delegate({
      workspaceId: "ws_01JD7Q2X9V3K5M8N1P4R6T0W2Y",
      scopes: ["memory"],
      expiresIn: 300,
      actor: "browser",
    });

    assert.equal(script.sent[0]?.url, `${ENDPOINT}/v1/auth/exchange`);
    assert.equal(script.sent[0]?.headers["Authorization"], undefined);
    assert.deepEqual(JSON.parse(script.sent[0]?.body ?? "{}"), {
      subject_token_type: "urn:ietf:params:oauth:token-type:access_token",
      subject_token: API_KEY,
      workspace_id: "ws_01JD7Q2X9V3K5M8N1P4R6T0W2Y",
      scope: "memory",
      expires_in: 300,
      actor: "browser",
    });
    assert.deepEqual([token.accessToken, token.expiresIn, token.scopes], [DELEGATED, 300, ["memory"]]);
  });

  it("a client on a delegated token says clearly that it cannot refresh", async () => {
    const script = scripted(problem(401, "expired_credentials"));
    const delegatedClient = new MemoryClient({
      endpoint: ENDPOINT,
      tokenProvider: delegatedTokenProvider(DELEGATED),
      fetch: script.fetch,
    });

    const error = await delegatedClient.auth.whoami().then(
      () => undefined,
      (raised: unknown) => raised,
    );

    assert.ok(error instanceof DelegatedTokenExpiredError);
    assert.ok(error instanceof AuthenticationError);
    assert.match(error.message, /cannot be refreshed/);
  });

  it("Session.signOut revokes the refresh token, then refreshes no more", async () => {
    const revoked: string[] = [];
    const refreshed: string[] = [];
    const session = new Session({
      client: {
        auth: {
          async refreshAccessToken(token: string) {
            refreshed.push(token);
            return tokenSet("a2", "r2");
          },
          async revoke(token: string) {
            revoked.push(token);
          },
        },
      },
      tokens: tokenSet("a1", "r1"),
    });

    await session.signOut();

    assert.deepEqual(revoked, ["r1"]);
    assert.equal(session.ended, true);
    await assert.rejects(session.refresh(), OAuthError);
    assert.deepEqual(refreshed, []);
  });

  it("auth.revoke posts the refresh token to /v1/auth/revoke", async () => {
    const script = scripted({ status: 200 });

    await client(script.fetch).auth.revoke("rt_" + "unitTestRefresh");

    assert.equal(script.sent[0]?.url, `${ENDPOINT}/v1/auth/revoke`);
    assert.deepEqual(JSON.parse(script.sent[0]?.body ?? "{}"), { token: "rt_" + "unitTestRefresh" });
  });
});

describe("sign-ins: client.auth.sessions and signOutEverywhere", () => {
  const USER_TOKEN = "eyJ" + "hbGciOiJSUzI1NiJ9.eyJzaWQiOiJzZXNfMDEifQ.c2lnbmF0dXJl";
  const SIGN_IN = {
    id: "01JDXK4P9V3K5M8N1P4R6T0W2B",
    createdAt: "2026-11-27T11:00:00Z",
    lastRefreshedAt: null,
    expiresAt: "2026-12-27T11:00:00Z",
    userAgent: "Mozilla/5.0 (X11; Linux x86_64) Chrome/131.0",
    ipAddress: "203.0.113.7",
    current: true,
  };

  function userClient(fetch: FetchFunction, tokenProvider: ClientOptions["tokenProvider"] = () => USER_TOKEN): MemoryClient {
    return new MemoryClient({ endpoint: ENDPOINT, workspaceId: "ws_default", tokenProvider, retries: 2, fetch });
  }

  it("list answers the sign-ins as sent, with the user token and no X-Workspace-Id", async () => {
    const other = { ...SIGN_IN, id: "01JDXK4P9V3K5M8N1P4R6T0W2A", current: false, lastRefreshedAt: "2026-11-27T10:00:00Z", userAgent: null };
    const script = scripted({ status: 200, body: { sessions: [SIGN_IN, other] } });

    const sessions = await userClient(script.fetch).auth.sessions.list();

    assert.deepEqual(sessions, [SIGN_IN, other]);
    assert.equal(script.sent[0]?.method, "GET");
    assert.equal(script.sent[0]?.url, `${ENDPOINT}/v1/auth/sessions`);
    assert.equal(script.sent[0]?.headers["Authorization"], `Bearer ${USER_TOKEN}`);
    assert.equal(script.sent[0]?.headers["X-Workspace-Id"], undefined);
  });

  it("a list answer without its sessions is an UnexpectedResponseError", async () => {
    const script = scripted({ status: 200, body: { items: [] } });

    const error = await rejection(userClient(script.fetch).auth.sessions.list());

    assert.ok(error instanceof UnexpectedResponseError);
    assert.equal((error as UnexpectedResponseError).code, "unexpected_response");
  });

  it("an API key is refused with the service's 403 and its code", async () => {
    const script = scripted(problem(403, "insufficient_scope", "Sessions need a user token."));

    const error = await rejection(client(script.fetch).auth.sessions.list());

    assert.ok(error instanceof PermissionDeniedError);
    assert.equal((error as PermissionDeniedError).code, "insufficient_scope");
  });

  it("revoke deletes one sign-in by its escaped id, without a workspace", async () => {
    const script = scripted({ status: 204 }, { status: 204 });
    const memory = userClient(script.fetch);

    await memory.auth.sessions.revoke("01JDXK4P9V3K5M8N1P4R6T0W2A");
    await memory.auth.sessions.revoke("../api-keys");

    assert.deepEqual(
      script.sent.map((call) => `${call.method} ${new URL(call.url).pathname}`),
      ["DELETE /v1/auth/sessions/01JDXK4P9V3K5M8N1P4R6T0W2A", "DELETE /v1/auth/sessions/..%2Fapi-keys"],
    );
    assert.ok(script.sent.every((call) => !("X-Workspace-Id" in call.headers) && call.body === undefined));
  });

  it("revoking another person's or an unknown sign-in is a NotFoundError (404 not_found)", async () => {
    const script = scripted(problem(404, "not_found", "No such sign-in."));

    const error = await rejection(userClient(script.fetch).auth.sessions.revoke("01JDXK4P9V3K5M8N1P4R6T0W2C"));

    assert.ok(error instanceof NotFoundError);
    assert.deepEqual([(error as NotFoundError).status, (error as NotFoundError).code], [404, "not_found"]);
    assert.equal(script.sent.length, 1);
  });

  it("an empty session id is refused before any request", async () => {
    const script = scripted();

    const error = await rejection(userClient(script.fetch).auth.sessions.revoke(""));

    assert.ok(error instanceof TypeError);
    assert.equal(script.sent.length, 0);
  });

  it("signOutEverywhere deletes every sign-in; the session's next call ends it for good", async () => {
    const script = scripted({ status: 204 }, problem(401, "revoked_credentials", "The sign-in has ended."));
    const refreshed: string[] = [];
    const session = new Session({
      client: {
        auth: {
          async refreshAccessToken(token: string) {
            refreshed.push(token);
            throw new OAuthError({ status: 400, code: "invalid_grant", detail: "The refresh token was revoked." });
          },
        },
      },
      tokens: { accessToken: USER_TOKEN, refreshToken: "rt_" + "unitTestRefresh", expiresAt: Date.now() + 3_600_000 },
    });
    const memory = userClient(script.fetch, session.tokenProvider);

    await memory.auth.signOutEverywhere();
    const error = await rejection(memory.auth.whoami());

    assert.equal(script.sent[0]?.method, "DELETE");
    assert.equal(script.sent[0]?.url, `${ENDPOINT}/v1/auth/sessions`);
    assert.equal(script.sent[0]?.headers["X-Workspace-Id"], undefined);
    assert.ok(error instanceof OAuthError);
    assert.equal((error as OAuthError).code, "invalid_grant");
    assert.deepEqual(refreshed, ["rt_" + "unitTestRefresh"]);
    assert.equal(session.ended, true);
    assert.equal(script.sent.length, 2);
  });

  it("after a sign-in ends, a client on its token alone is refused 401 revoked_credentials", async () => {
    const script = scripted({ status: 204 }, problem(401, "revoked_credentials"));
    const memory = userClient(script.fetch);

    await memory.auth.sessions.revoke("01JDXK4P9V3K5M8N1P4R6T0W2B");
    const error = await rejection(memory.auth.whoami());

    assert.ok(error instanceof AuthenticationError);
    assert.deepEqual([(error as AuthenticationError).status, (error as AuthenticationError).code], [401, "revoked_credentials"]);
  });
});

describe("DPoP", () => {
  const decode = (part: string): Record<string, unknown> =>
    JSON.parse(Buffer.from(part, "base64url").toString("utf8")) as Record<string, unknown>;

  async function verifies(proof: string, jwk: Record<string, unknown>): Promise<boolean> {
    const [header, claims, signature] = proof.split(".");
    const key = await crypto.subtle.importKey("jwk", jwk, { name: "ECDSA", namedCurve: "P-256" }, false, ["verify"]);
    return crypto.subtle.verify(
      { name: "ECDSA", hash: "SHA-256" },
      key,
      Buffer.from(signature ?? "", "base64url"),
      new TextEncoder().encode(`${header}.${claims}`),
    );
  }

  it("a DpopKey is P-256 with a non-extractable private key and an RFC 7638 thumbprint", async () => {
    const key = await DpopKey.generate();
    const canonical = JSON.stringify({ crv: "P-256", kty: "EC", x: key.jwk.x, y: key.jwk.y });
    const digest = Buffer.from(await crypto.subtle.digest("SHA-256", new TextEncoder().encode(canonical)));

    assert.equal(key.thumbprint, digest.toString("base64url"));
    assert.equal("d" in key.jwk, false);
  });

  it("a bound key is sent as DPoP with a proof per request that verifies and names the request", async () => {
    const key = await DpopKey.generate();
    const script = scripted({ status: 200, body: PRINCIPAL }, { status: 200, body: PRINCIPAL });
    const memory = client(script.fetch, { dpop: key });

    await memory.auth.whoami();
    await memory.auth.whoami();

    const proof = script.sent[0]?.headers["DPoP"] ?? "";
    const [head, body] = proof.split(".").slice(0, 2).map((part) => decode(part));
    assert.equal(script.sent[0]?.headers["Authorization"], `DPoP ${API_KEY}`);
    assert.equal(await verifies(proof, key.jwk as unknown as Record<string, unknown>), true);
    assert.equal(head?.["typ"], "dpop+jwt");
    assert.equal(body?.["htu"], `${ENDPOINT}/v1/auth/whoami`);
    assert.equal(body?.["htm"], "GET");
    const ath = Buffer.from(await crypto.subtle.digest("SHA-256", new TextEncoder().encode(API_KEY)));
    assert.equal(body?.["ath"], ath.toString("base64url"));
    assert.notEqual(script.sent[1]?.headers["DPoP"], proof);
  });

  it("use_dpop_nonce is retried once by itself, with the nonce in the new proof", async () => {
    const asks: Reply = {
      status: 400,
      headers: { "DPoP-Nonce": "n-1" },
      body: { error: "use_dpop_nonce", error_description: "Sign again with the nonce." },
    };
    const tokens = { access_token: "a.b.c", token_type: "DPoP", expires_in: 900, refresh_token: "rt_x" };
    const script = scripted(asks, { status: 200, body: tokens });
    const memory = client(script.fetch, { dpop: true });

    await memory.auth.exchange("id-" + "token");

    assert.equal(script.sent.length, 2);
    const first = decode(script.sent[0]?.headers["DPoP"]?.split(".")[1] ?? "");
    const second = decode(script.sent[1]?.headers["DPoP"]?.split(".")[1] ?? "");
    assert.equal(first["nonce"], undefined);
    assert.equal(first["ath"], undefined);
    assert.equal(second["nonce"], "n-1");
    assert.ok(memory.dpopKey !== undefined);
  });

  it("a nonce asked for twice is not retried again", async () => {
    const asks = (nonce: string): Reply => ({
      status: 400,
      headers: { "DPoP-Nonce": nonce },
      body: { error: "use_dpop_nonce", error_description: "Sign again with the nonce." },
    });
    const script = scripted(asks("n-1"), asks("n-2"));

    const error = await rejection(client(script.fetch, { dpop: true }).auth.exchange("id-" + "token"));

    assert.ok(error instanceof OAuthError);
    assert.equal(error.code, "use_dpop_nonce");
    assert.equal(script.sent.length, 2);
  });
});
