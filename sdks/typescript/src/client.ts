// The client: its configuration, resolved once, and the `auth` accessor.

import { AuthClient } from "./auth.js";
import { DpopKey } from "./dpop.js";
import { environmentDefaults } from "./environment.js";
import { ConfigurationError } from "./errors.js";
import { DEFAULT_RETRIES, MAX_RETRIES } from "./retry.js";
import { Transport, type Credential, type FetchFunction, type TokenProvider } from "./transport.js";
import { WorkspacesClient } from "./workspaces.js";

export { DEFAULT_RETRIES } from "./retry.js";

/** The service's base URL when neither `endpoint` nor MEMORY_ENDPOINT names another. */
export const DEFAULT_ENDPOINT = "https://auth.memory.example.com";
export const DEFAULT_TIMEOUT_MS = 30_000;

export interface ClientOptions {
  /**
   * The service's base URL. Node falls back to MEMORY_ENDPOINT, then DEFAULT_ENDPOINT.
   * `https` is required, except on loopback (localhost, 127.0.0.0/8, ::1).
   */
  endpoint?: string;
  /** Sent as X-Workspace-Id (per-call arguments win). Node falls back to MEMORY_WORKSPACE_ID. */
  workspaceId?: string;
  /** An API key (`svc_…`). Node falls back to MEMORY_API_KEY when no tokenProvider is given. */
  apiKey?: string;
  /** Hands out a bearer token per request instead of an apiKey, e.g. `session.tokenProvider`. */
  tokenProvider?: TokenProvider;
  /** Milliseconds to wait for each answer. Default 30 000. */
  timeout?: number;
  /** How many times a retryable failure is retried (see the README). Default 2. */
  retries?: number;
  /** The fetch to use; default the platform's global fetch. */
  fetch?: FetchFunction;
  /**
   * Sign a DPoP proof (RFC 9449) for every request: `true` makes a new P-256 pair with a
   * non-extractable private key (WebCrypto), a `DpopKey` uses that pair (a key-bound API
   * key's). The credential is then sent as `Authorization: DPoP`, and sign-ins made by this
   * client get tokens bound to the pair.
   */
  dpop?: boolean | DpopKey;
}

/** localhost, 127.0.0.0/8 or ::1, as the URL parser spells a hostname (IPv6 in brackets). */
export function isLoopback(hostname: string): boolean {
  if (hostname === "localhost" || hostname === "[::1]") return true;
  // The parser has already normalised any IPv4 spelling (127.1, 0x7f.1) to dotted decimal.
  return /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(hostname);
}

function endpointUrl(value: string): string {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new ConfigurationError("endpoint must be an absolute http(s) URL.");
  }
  if (url.protocol !== "https:" && url.protocol !== "http:") {
    throw new ConfigurationError("endpoint must be an absolute http(s) URL.");
  }
  if (url.username !== "" || url.password !== "" || url.search !== "" || url.hash !== "") {
    throw new ConfigurationError("endpoint must not carry credentials, a query or a fragment.");
  }
  if (url.protocol === "http:" && !isLoopback(url.hostname)) {
    // A bearer credential over plain HTTP is readable by anyone on the path.
    const host = url.hostname.replace(/^\[(.*)\]$/, "$1");
    throw new ConfigurationError(
      `endpoint uses scheme http with host ${host}: plain http is allowed only for a loopback ` +
        "host (localhost, 127.0.0.0/8, ::1); use https.",
    );
  }
  return url.toString().replace(/\/+$/, "");
}

function credential(apiKey: string | undefined, tokenProvider: TokenProvider | undefined): Credential {
  if (apiKey !== undefined && tokenProvider !== undefined) {
    throw new ConfigurationError("Pass either apiKey or tokenProvider, not both.");
  }
  if (tokenProvider !== undefined) {
    if (typeof tokenProvider !== "function") throw new ConfigurationError("tokenProvider must be a function.");
    return { tokenProvider };
  }
  if (apiKey === undefined) return null;
  // A key with white space or control characters cannot be a key, and fetch would quote it
  // in its own error message; refuse it here without repeating it.
  if (typeof apiKey !== "string" || !/^[\x21-\x7e]+$/.test(apiKey)) {
    throw new ConfigurationError("apiKey must be a non-empty string without spaces.");
  }
  return { apiKey };
}

function whole(value: number, name: string, min: number, max: number): number {
  if (!Number.isInteger(value) || value < min || value > max) {
    throw new ConfigurationError(`${name} must be a whole number from ${min} to ${max}.`);
  }
  return value;
}

function platformFetch(): FetchFunction {
  const found = (globalThis as { fetch?: FetchFunction }).fetch;
  if (typeof found !== "function") {
    throw new ConfigurationError("This platform has no global fetch; pass the fetch option.");
  }
  // Called unbound, the browser's fetch throws "Illegal invocation".
  return found.bind(globalThis);
}

export class MemoryClient {
  /** The base URL requests go to. */
  readonly endpoint: string;
  /** The default workspace (X-Workspace-Id), if any. */
  readonly workspaceId: string | undefined;
  readonly timeout: number;
  readonly retries: number;
  /** API-key management, whoami, and the token endpoints (exchange, refresh). */
  readonly auth: AuthClient;
  /** The key pair this client signs DPoP proofs with (the `dpop` option), if any. */
  readonly dpopKey: Promise<DpopKey> | undefined;
  /** Workspaces and their members. */
  readonly workspaces: WorkspacesClient;

  constructor(options: ClientOptions = {}) {
    const defaults = environmentDefaults();
    this.endpoint = endpointUrl(options.endpoint ?? defaults.endpoint ?? DEFAULT_ENDPOINT);
    this.workspaceId = options.workspaceId ?? defaults.workspaceId;
    this.timeout = whole(options.timeout ?? DEFAULT_TIMEOUT_MS, "timeout", 1, 600_000);
    this.retries = whole(options.retries ?? DEFAULT_RETRIES, "retries", 0, MAX_RETRIES);
    // The environment's key only stands in when the caller chose no credential at all.
    const apiKey = options.apiKey ?? (options.tokenProvider === undefined ? defaults.apiKey : undefined);
    const transport = new Transport({
      endpoint: this.endpoint,
      credential: credential(apiKey, options.tokenProvider),
      timeout: this.timeout,
      retries: this.retries,
      fetch: options.fetch ?? platformFetch(),
      ...(options.dpop === true
        ? { dpop: DpopKey.generate() }
        : options.dpop instanceof DpopKey
          ? { dpop: Promise.resolve(options.dpop) }
          : {}),
    });
    this.dpopKey = transport.dpop;
    this.auth = new AuthClient(transport, this.workspaceId);
    this.workspaces = new WorkspacesClient(transport);
  }
}
