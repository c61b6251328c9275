// HTTP for the SDK: one `request` that adds the credential, applies the timeout, retries
// what is safe to retry, and turns every refusal into a typed error.
//
// What is retried, and how long to wait, is the policy in retry.ts. Apart from it, a 401
// with a tokenProvider is tried once more, with the token the provider hands out after
// being told the old one was refused: nothing was executed, so this is safe for every method.

import {
  ApiError,
  ConfigurationError,
  NetworkError,
  OAuthError,
  RequestTimeoutError,
  UnexpectedResponseError,
  problemError,
} from "./errors.js";
import type { DpopKey } from "./dpop.js";
import { redact } from "./redaction.js";
import { IDEMPOTENCY_HEADER, retryDelay, shouldRetry } from "./retry.js";

/** What a tokenProvider is told when it is asked for a token. */
export interface TokenContext {
  /**
   * Set when the service has just refused this token with 401. Return a fresh token to
   * have the request tried once more, or the same token to give up (the 401 is thrown).
   */
  rejectedToken?: string;
}

/** Hands out the bearer token for each request, e.g. a browser session's access token. */
export type TokenProvider = (context: TokenContext) => string | Promise<string>;

/** The part of the platform's `fetch` the SDK uses; the global `fetch` fits it. */
export type FetchFunction = (
  url: string,
  init: {
    method: string;
    headers: Record<string, string>;
    body?: string;
    signal: AbortSignal;
  },
) => Promise<FetchResponse>;

export interface FetchResponse {
  status: number;
  headers: { get(name: string): string | null };
  text(): Promise<string>;
}

export type Credential = { apiKey: string } | { tokenProvider: TokenProvider } | null;

export interface TransportOptions {
  endpoint: string;
  credential: Credential;
  timeout: number;
  retries: number;
  fetch: FetchFunction;
  /** Waits between attempts; tests pass one that records instead of waiting. */
  sleep?: (ms: number) => Promise<void>;
  /** A number in [0, 1) for the backoff's jitter. Default Math.random. */
  random?: () => number;
  /** Milliseconds of a monotonic clock; tests pass one they move. Default performance.now. */
  now?: () => number;
  /**
   * Sign a DPoP proof (RFC 9449) for every request with this key pair: the credential then
   * goes as `Authorization: DPoP`, and a `use_dpop_nonce` refusal is retried once with the
   * nonce the service gave.
   */
  dpop?: Promise<DpopKey>;
}

export interface Call {
  method: "GET" | "POST" | "PUT" | "PATCH" | "DELETE";
  path: string;
  query?: Record<string, string | number | undefined>;
  body?: Record<string, unknown>;
  /** Sent as X-Workspace-Id when set. */
  workspaceId?: string | undefined;
  /** False for the token endpoints, which take their token in the body. */
  authenticated: boolean;
  /** True for the token endpoints, whose refusals are RFC 6749 bodies (OAuthError). */
  oauth?: boolean;
  /** Secrets the call carries in its body, kept out of any error message. */
  secrets?: readonly string[];
  /**
   * Sent as Idempotency-Key: the service answers every send of it with the first result, so
   * the call is safe to repeat (retry.ts).
   */
  idempotencyKey?: string;
  /**
   * Milliseconds from the first send during which a POST without a key may still be
   * repeated (the service takes it again for a while: a refresh); unset: it never is.
   */
  repeatableWithinMs?: number;
  /** True where an empty body is the answer (RFC 7009 revocation answers 200 without one). */
  bodyless?: boolean;
}

export interface Answer {
  status: number;
  headers: { get(name: string): string | null };
  /** The parsed JSON body; undefined for 204. */
  body: unknown;
}

const TOKEN_SHAPE = /^[\x21-\x7e]+$/;
// System error codes of a connection that was never made: nothing of the request was sent.
const NOT_SENT_CODES = new Set([
  "ECONNREFUSED",
  "ENOTFOUND",
  "EAI_AGAIN",
  "ENETUNREACH",
  "EHOSTUNREACH",
  "UND_ERR_CONNECT_TIMEOUT",
]);

function defaultSleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/** Seconds from a `Retry-After` header (delta-seconds or an HTTP date), if it has one. */
export function retryAfterSeconds(value: string | null, now: number = Date.now()): number | undefined {
  if (value === null) return undefined;
  const text = value.trim();
  if (/^\d+$/.test(text)) return Number(text);
  const date = Date.parse(text);
  return Number.isNaN(date) ? undefined : Math.max(0, Math.ceil((date - now) / 1000));
}

function parseJson(text: string): unknown {
  if (text.trim() === "") return undefined;
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}

function field(body: unknown, name: string): string | undefined {
  if (typeof body !== "object" || body === null) return undefined;
  const value = (body as Record<string, unknown>)[name];
  return typeof value === "string" ? value : undefined;
}

/** The typed error for a refusal: problem+json `code` first, then (token endpoints) an OAuth `error`. */
function refusal(
  status: number,
  headers: Answer["headers"],
  text: string,
  secrets: readonly string[],
  oauth: boolean,
): ApiError {
  const body = parseJson(text);
  const retryAfter = retryAfterSeconds(headers.get("retry-after"));
  const code = field(body, "code");
  if (code !== undefined) {
    const detail = field(body, "detail");
    return problemError({
      status,
      code,
      detail: detail === undefined ? undefined : redact(detail, secrets),
      type: field(body, "type"),
      retryAfter,
    });
  }
  const oauthCode = oauth ? field(body, "error") : undefined;
  if (oauthCode !== undefined) {
    const description = field(body, "error_description");
    return new OAuthError({
      status,
      code: oauthCode,
      detail: description === undefined ? undefined : redact(description, secrets),
      retryAfter,
    });
  }
  return problemError({ status, code: "unexpected_response", retryAfter });
}

export class Transport {
  readonly endpoint: string;
  readonly #credential: Credential;
  readonly #timeout: number;
  readonly #retries: number;
  readonly #fetch: FetchFunction;
  readonly #sleep: (ms: number) => Promise<void>;
  readonly #random: () => number;
  readonly #now: () => number;
  readonly dpop: Promise<DpopKey> | undefined;
  #nonce: string | undefined;

  constructor(options: TransportOptions) {
    this.dpop = options.dpop;
    this.endpoint = options.endpoint;
    this.#credential = options.credential;
    this.#timeout = options.timeout;
    this.#retries = options.retries;
    this.#fetch = options.fetch;
    this.#sleep = options.sleep ?? defaultSleep;
    this.#random = options.random ?? Math.random;
    this.#now = options.now ?? (() => performance.now());
  }

  async request(call: Call): Promise<Answer> {
    const started = this.#now();
    const repeatable = (): boolean =>
      call.idempotencyKey !== undefined ||
      (call.repeatableWithinMs !== undefined && this.#now() - started < call.repeatableWithinMs);
    let attempt = 0;
    let renewed = false;
    let rejected: string | undefined;
    let refused: ApiError | undefined;
    let nonceRetried = false;
    for (;;) {
      const token = call.authenticated ? await this.#bearer(rejected) : undefined;
      if (rejected !== undefined) {
        if (token === rejected && refused !== undefined) throw refused;
        rejected = undefined;
        renewed = true;
      }
      const secrets = token === undefined ? call.secrets ?? [] : [token, ...(call.secrets ?? [])];
      let reply: { status: number; headers: Answer["headers"]; text: string };
      try {
        reply = await this.#send(call, token);
      } catch (error) {
        if (!(error instanceof NetworkError)) throw error;
        const wait = this.#retryDelay(call, { sent: error.mayHaveReached }, undefined, attempt, repeatable());
        if (wait === undefined) throw error;
        await this.#sleep(wait);
        attempt += 1;
        continue;
      }
      if (reply.status < 400) {
        const body = parseJson(reply.text);
        if (body === undefined && reply.status !== 204 && !(call.bodyless === true && reply.text === "")) {
          throw new UnexpectedResponseError({
            status: reply.status,
            code: "unexpected_response",
            detail: "The answer is not JSON.",
          });
        }
        return { status: reply.status, headers: reply.headers, body };
      }
      const error = refusal(reply.status, reply.headers, reply.text, secrets, call.oauth === true);
      if (this.dpop !== undefined && !nonceRetried && this.#asksNonce(reply, error)) {
        nonceRetried = true; // the service wants its nonce in the proof: sign again, once
        continue;
      }
      if (reply.status === 401 && token !== undefined && this.#renewable() && !renewed) {
        rejected = token;
        refused = error;
        continue;
      }
      const wait = this.#retryDelay(
        call,
        { status: reply.status, sent: true },
        error.retryAfter,
        attempt,
        repeatable(),
      );
      if (wait === undefined) throw error;
      await this.#sleep(wait);
      attempt += 1;
    }
  }

  #asksNonce(reply: { status: number; headers: Answer["headers"] }, error: ApiError): boolean {
    const nonce = reply.headers.get("dpop-nonce");
    if (nonce === null) return false;
    this.#nonce = nonce;
    const challenge = reply.headers.get("www-authenticate") ?? "";
    return (reply.status === 400 || reply.status === 401) &&
      (error.code === "use_dpop_nonce" || challenge.includes("use_dpop_nonce"));
  }

  #renewable(): boolean {
    return this.#credential !== null && "tokenProvider" in this.#credential;
  }

  /** The client's own bearer credential now (what `delegate` hands on by default). */
  currentCredential(): Promise<string> {
    return this.#bearer(undefined);
  }

  async #bearer(rejected: string | undefined): Promise<string> {
    const credential = this.#credential;
    if (credential === null) {
      throw new ConfigurationError(
        "No credential: pass apiKey or tokenProvider (in Node, MEMORY_API_KEY also works).",
      );
    }
    if ("apiKey" in credential) return credential.apiKey;
    const token = await credential.tokenProvider(rejected === undefined ? {} : { rejectedToken: rejected });
    // Checked here so that a malformed value never reaches fetch, whose header errors quote it.
    if (typeof token !== "string" || !TOKEN_SHAPE.test(token)) {
      throw new ConfigurationError("The tokenProvider returned no usable token (a non-empty string without spaces).");
    }
    return token;
  }

  /** Milliseconds before the next attempt, or undefined to throw: the policy of retry.ts. */
  #retryDelay(
    call: Call,
    failure: { status?: number; sent: boolean },
    retryAfter: number | undefined,
    attempt: number,
    repeatable: boolean,
  ): number | undefined {
    if (attempt >= this.#retries || !shouldRetry(call.method, failure, repeatable)) return undefined;
    return retryDelay(attempt, retryAfter, this.#random);
  }

  #url(call: Call): string {
    const url = new URL(this.endpoint + call.path);
    for (const [name, value] of Object.entries(call.query ?? {})) {
      if (value !== undefined) url.searchParams.set(name, String(value));
    }
    return url.toString();
  }

  async #send(
    call: Call,
    token: string | undefined,
  ): Promise<{ status: number; headers: Answer["headers"]; text: string }> {
    const headers: Record<string, string> = { Accept: "application/json, application/problem+json" };
    if (token !== undefined) headers["Authorization"] = `Bearer ${token}`;
    if (this.dpop !== undefined && (call.authenticated || call.oauth === true)) {
      const key = await this.dpop;
      if (token !== undefined) headers["Authorization"] = `DPoP ${token}`;
      headers["DPoP"] = await key.proof(call.method, this.#url(call), token, this.#nonce);
    }
    if (call.workspaceId !== undefined) headers["X-Workspace-Id"] = call.workspaceId;
    if (call.idempotencyKey !== undefined) headers[IDEMPOTENCY_HEADER] = call.idempotencyKey;
    const controller = new AbortController();
    const init: Parameters<FetchFunction>[1] = { method: call.method, headers, signal: controller.signal };
    if (call.body !== undefined) {
      headers["Content-Type"] = "application/json";
      init.body = JSON.stringify(call.body);
    }
    const timer = setTimeout(() => controller.abort(), this.#timeout);
    const what = `${call.method} ${call.path}`;
    try {
      const response = await this.#fetch(this.#url(call), init);
      const text = await response.text();
      return { status: response.status, headers: response.headers, text };
    } catch (error) {
      if (controller.signal.aborted) {
        throw new RequestTimeoutError(`No answer to ${what} within ${this.#timeout} ms.`, { mayHaveReached: true });
      }
      // The platform's own message is left out on purpose: it can quote header values.
      const code = systemCode(error);
      throw new NetworkError(`Could not reach the service for ${what}${code === undefined ? "" : ` (${code})`}.`, {
        // Without a code that says the connection was never made (a browser gives none), the
        // request may have been sent.
        mayHaveReached: code === undefined || !NOT_SENT_CODES.has(code),
      });
    } finally {
      clearTimeout(timer);
    }
  }
}

/** A short, secret-free reason from a fetch failure: its system error code, if any. */
function systemCode(error: unknown): string | undefined {
  const cause = (error as { cause?: { code?: unknown } } | null)?.cause;
  const code = cause?.code ?? (error as { code?: unknown } | null)?.code;
  return typeof code === "string" && /^[A-Z0-9_]+$/.test(code) ? code : undefined;
}
