// Workload identity federation: a credential for CI jobs and pods, with no stored secret.
//
// The platform's OIDC token comes from a file (MEMORY_OIDC_TOKEN_FILE: Kubernetes' projected
// service-account token, GitLab's id_tokens) or from GitHub Actions' token endpoint
// (ACTIONS_ID_TOKEN_REQUEST_URL and ACTIONS_ID_TOKEN_REQUEST_TOKEN, for the audience
// MEMORY_OIDC_AUDIENCE). It is exchanged at /v1/auth/exchange (RFC 8693, subject_token_type
// jwt) for a short-lived token of MEMORY_WORKSPACE_ID, and exchanged again before that one ends.
//
//   const identity = WorkloadIdentity.fromEnv();
//   const client = new MemoryClient({ tokenProvider: identity.tokenProvider });

import { nodeEnv, readTextFile } from "./environment.js";
import { ConfigurationError, MemorySDKError } from "./errors.js";
import { type Fetch, requestToken } from "./token-request.js";
import type { TokenProvider } from "./transport.js";

export const TOKEN_EXCHANGE = "urn:ietf:params:oauth:grant-type:token-exchange";
export const JWT_TOKEN_TYPE = "urn:ietf:params:oauth:token-type:jwt";
export const WORKLOAD_REFRESH_MARGIN_MS = 60_000;

/** The exchange was refused; the message holds the service's error, never a token. */
export class WorkloadIdentityError extends MemorySDKError {
  override name = "WorkloadIdentityError";
}

export interface WorkloadIdentityOptions {
  endpoint: string;
  workspaceId: string;
  tokenFile?: string | undefined;
  requestUrl?: string | undefined;
  requestToken?: string | undefined;
  audience?: string | undefined;
  scope?: string | undefined;
  fetch?: Fetch;
  /** Milliseconds of a monotonic clock; tests pass one they move. */
  now?: () => number;
  readFile?: (path: string) => Promise<string>;
}

export class WorkloadIdentity {
  readonly #options: WorkloadIdentityOptions;
  readonly #fetch: Fetch;
  readonly #now: () => number;
  readonly #read: (path: string) => Promise<string>;
  #token: string | undefined;
  #expiresAt = 0;
  #pending: Promise<string> | undefined;

  constructor(options: WorkloadIdentityOptions) {
    if (!options.workspaceId) {
      throw new ConfigurationError("Set MEMORY_WORKSPACE_ID (the workspace to act in).");
    }
    if (options.tokenFile === undefined && !(options.requestUrl && options.requestToken)) {
      throw new ConfigurationError(
        "Set MEMORY_OIDC_TOKEN_FILE, or run in GitHub Actions with `permissions: id-token: write` " +
          "(ACTIONS_ID_TOKEN_REQUEST_URL/_TOKEN).",
      );
    }
    this.#options = { ...options, endpoint: options.endpoint.replace(/\/+$/, "") };
    this.#fetch = options.fetch ?? (globalThis.fetch as unknown as Fetch);
    this.#now = options.now ?? (() => performance.now());
    this.#read = options.readFile ?? readTextFile;
  }

  static fromEnv(
    env: Record<string, string | undefined> = nodeEnv() ?? {},
    options: Partial<WorkloadIdentityOptions> = {},
  ): WorkloadIdentity {
    const set = (name: string): string | undefined => env[name] || undefined;
    return new WorkloadIdentity({
      endpoint: set("MEMORY_ENDPOINT") ?? "https://api.memory.example",
      workspaceId: set("MEMORY_WORKSPACE_ID") ?? "",
      tokenFile: set("MEMORY_OIDC_TOKEN_FILE"),
      requestUrl: set("ACTIONS_ID_TOKEN_REQUEST_URL"),
      requestToken: set("ACTIONS_ID_TOKEN_REQUEST_TOKEN"),
      audience: set("MEMORY_OIDC_AUDIENCE"),
      ...options,
    });
  }

  /** For `new MemoryClient({ tokenProvider })`. */
  readonly tokenProvider: TokenProvider = () => this.token();

  /** A workload token of the workspace, exchanged again when it is within a minute of its end. */
  async token(): Promise<string> {
    if (this.#token !== undefined && this.#now() < this.#expiresAt - WORKLOAD_REFRESH_MARGIN_MS) {
      return this.#token;
    }
    // Concurrent callers share one exchange.
    this.#pending ??= this.#exchange().finally(() => {
      this.#pending = undefined;
    });
    return this.#pending;
  }

  async #subjectToken(): Promise<string> {
    const options = this.#options;
    if (options.tokenFile !== undefined) {
      return (await this.#read(options.tokenFile)).trim(); // read each time: it is rotated
    }
    const url = new URL(options.requestUrl as string);
    if (options.audience) url.searchParams.set("audience", options.audience);
    const answer = await this.#fetch(url.toString(), {
      method: "GET",
      headers: { Authorization: `Bearer ${options.requestToken as string}` },
    });
    if (answer.status !== 200) {
      throw new WorkloadIdentityError(`GitHub Actions' token endpoint answered ${answer.status}.`);
    }
    const value = (JSON.parse(await answer.text()) as { value?: unknown }).value;
    if (typeof value !== "string") throw new WorkloadIdentityError("GitHub Actions gave no token.");
    return value;
  }

  async #exchange(): Promise<string> {
    const options = this.#options;
    const form = new URLSearchParams({
      grant_type: TOKEN_EXCHANGE,
      subject_token: await this.#subjectToken(),
      subject_token_type: JWT_TOKEN_TYPE,
      workspace_id: options.workspaceId,
    });
    if (options.scope) form.set("scope", options.scope);
    const started = this.#now();
    const { token, expiresIn } = await requestToken(
      this.#fetch,
      `${options.endpoint}/v1/auth/exchange`,
      form,
      WorkloadIdentityError,
      { refused: "The exchange", answered: "The exchange" },
    );
    this.#token = token;
    this.#expiresAt = started + expiresIn * 1000;
    return this.#token;
  }
}
