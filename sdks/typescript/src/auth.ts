// `client.auth`: the key-management accessor (listApiKeys, revealApiKey, rotateApiKey, revokeApiKey,
// refreshAccessToken), plus createApiKey, getApiKey, exchange and whoami; `client.auth.sessions`
// and `signOutEverywhere` for the caller's sign-ins.

import { DelegatedTokenExpiredError, UnexpectedResponseError } from "./errors.js";
import { REFRESH_RETRY_WINDOW_MS, newIdempotencyKey } from "./retry.js";
import type { Call, TokenContext, TokenProvider, Transport } from "./transport.js";
import type {
  ApiKey,
  ApiKeyPage,
  ApiKeyUpdate,
  ApiKeyWithSecret,
  EventPage,
  KeyUsage,
  ListApiKeysOptions,
  ListEventsOptions,
  NewApiKey,
  Principal,
  RotateOptions,
  TokenSet,
  UsageOptions,
  UserSession,
  WireSchemas,
} from "./types.js";

const KEYS = "/v1/auth/api-keys";
const SESSIONS = "/v1/auth/sessions";

function requireText(value: unknown, name: string): string {
  if (typeof value !== "string" || value.trim() === "") {
    throw new TypeError(`${name} must be a non-empty string.`);
  }
  return value;
}

function keyPath(keyId: string, suffix = ""): string {
  return `${KEYS}/${encodeURIComponent(requireText(keyId, "keyId"))}${suffix}`;
}

/** An RFC 6749 token answer as a TokenSet, or a typed error if it is not one. */
function tokenSet(body: unknown, status: number): TokenSet {
  // The document's field names, each checked here before it is trusted.
  type Answer = { [Field in keyof WireSchemas["TokenPair"]]?: unknown };
  const answer: Answer = typeof body === "object" && body !== null ? body : {};
  const { access_token, token_type, expires_in, refresh_token } = answer;
  if (
    typeof access_token !== "string" ||
    typeof refresh_token !== "string" ||
    typeof expires_in !== "number" ||
    !Number.isFinite(expires_in)
  ) {
    throw new UnexpectedResponseError({
      status,
      code: "unexpected_response",
      detail: "The token answer lacks access_token, refresh_token or expires_in.",
    });
  }
  return {
    accessToken: access_token,
    tokenType: typeof token_type === "string" ? token_type : "Bearer",
    expiresIn: expires_in,
    expiresAt: Date.now() + expires_in * 1000,
    refreshToken: refresh_token,
  };
}

/** What `delegate` asks for; every field is optional. */
export interface DelegateOptions {
  /** The credential to delegate from (default: the client's own key or token). */
  subject?: string;
  /** The workspace the token is bound to (default: the client's; a workspace key's own). */
  workspaceId?: string;
  /** At most the subject's data-plane scopes (default: all of them). */
  scopes?: readonly string[];
  /** Seconds, 60 to 3600 (default 900); never longer than the subject lives. */
  expiresIn?: number;
  /** A label of who will hold it (`browser`, `sub-agent`), recorded in its `act` claim. */
  actor?: string;
}

/** A delegated token: bound to one workspace, narrower than its subject, no refresh token. */
export interface DelegatedToken {
  accessToken: string;
  tokenType: string;
  expiresIn: number;
  /** When it expires, in milliseconds since the epoch (client clock). */
  expiresAt: number;
  scopes: string[];
}

/**
 * A MemoryClient `tokenProvider` for a delegated token, e.g. in a browser or a sub-agent
 * handed one. It never refreshes: once the service refuses the token as expired, calls throw
 * DelegatedTokenExpiredError, which says so.
 */
export function delegatedTokenProvider(token: string): TokenProvider {
  const held = requireText(token, "token");
  return (context: TokenContext) => {
    if (context.rejectedToken !== undefined) {
      throw new DelegatedTokenExpiredError({
        status: 401,
        code: "expired_credentials",
        detail:
          "This client runs on a delegated token, which was refused (expired or its key " +
          "revoked) and cannot be refreshed: mint a new one (client.auth.delegate).",
      });
    }
    return held;
  };
}

/**
 * `client.auth.sessions`: the caller's sign-ins (each login, in the dashboard or with an SDK,
 * with every token refreshed from it). A user token only: an API key or a delegated
 * token is refused (PermissionDeniedError). No X-Workspace-Id is sent: a sign-in is the
 * person's, not a workspace's.
 */
export class SessionsClient {
  readonly #transport: Transport;

  constructor(transport: Transport) {
    this.#transport = transport;
  }

  /** The caller's live sign-ins, newest first; `current` marks this client's own. */
  async list(): Promise<UserSession[]> {
    const answer = await this.#transport.request({ method: "GET", path: SESSIONS, authenticated: true });
    const sessions = (answer.body as Partial<WireSchemas["SessionList"]> | undefined)?.sessions;
    if (!Array.isArray(sessions)) {
      throw new UnexpectedResponseError({
        status: answer.status,
        code: "unexpected_response",
        detail: "The answer lacks its list of sessions.",
      });
    }
    return sessions;
  }

  /**
   * Ends one sign-in of the caller: its access and refresh tokens are refused from their next
   * request. Another person's, an unknown or an already ended one is a NotFoundError (404), so
   * a re-send after a lost answer may throw it: the sign-in has ended all the same. Ending this
   * client's own (`current`) ends this client's session too.
   */
  async revoke(sessionId: string): Promise<void> {
    await this.#transport.request({
      method: "DELETE",
      path: `${SESSIONS}/${encodeURIComponent(requireText(sessionId, "sessionId"))}`,
      authenticated: true,
    });
  }
}

export class AuthClient {
  /** The caller's sign-ins: `list()` and `revoke(sessionId)`. */
  readonly sessions: SessionsClient;
  readonly #transport: Transport;
  readonly #workspaceId: string | undefined;

  constructor(transport: Transport, workspaceId: string | undefined) {
    this.#transport = transport;
    this.#workspaceId = workspaceId;
    this.sessions = new SessionsClient(transport);
  }

  /** A call's workspace: its own, else the client's; `null` names none at all. */
  #workspace(workspaceId: string | null | undefined): string | undefined {
    if (workspaceId === null) return undefined;
    return workspaceId === undefined ? this.#workspaceId : requireText(workspaceId, "workspaceId");
  }

  /**
   * The caller's own keys, newest first, one page at a time. By default the list is filtered
   * to one workspace, the argument or else the client's `workspaceId`: only the keys bound to
   * it (so no admin keys). With neither, or with `{ allWorkspaces: true }`, every key of the
   * caller is listed. (`null` for `workspaceId` still means all workspaces, but is deprecated.)
   */
  async listApiKeys(workspaceId?: string | null, options: ListApiKeysOptions = {}): Promise<ApiKeyPage> {
    if (options.allWorkspaces === true && typeof workspaceId === "string") {
      throw new TypeError("Pass either workspaceId or { allWorkspaces: true }, not both.");
    }
    const answer = await this.#transport.request({
      method: "GET",
      path: KEYS,
      query: {
        limit: options.limit,
        cursor: options.cursor,
        status: options.status,
        q: options.query === "" ? undefined : options.query,
      },
      workspaceId: this.#workspace(options.allWorkspaces === true ? null : workspaceId),
      authenticated: true,
    });
    const page: ApiKeyPage = answer.body as WireSchemas["KeyPage"];
    return page;
  }

  /** One of the caller's keys, without its plaintext. */
  async getApiKey(keyId: string): Promise<ApiKey> {
    const answer = await this.#transport.request({
      method: "GET",
      path: keyPath(keyId),
      workspaceId: this.#workspace(undefined),
      authenticated: true,
    });
    const key: ApiKey = answer.body as WireSchemas["ApiKey"];
    return key;
  }

  /** One of the caller's keys with its plaintext `key`. A revoked key is a GoneError (410). */
  async revealApiKey(keyId: string, workspaceId?: string | null): Promise<ApiKeyWithSecret> {
    const answer = await this.#transport.request({
      method: "GET",
      path: keyPath(keyId, "/reveal"),
      workspaceId: this.#workspace(workspaceId),
      authenticated: true,
    });
    const key: ApiKeyWithSecret = answer.body as WireSchemas["ApiKeyWithSecret"];
    return key;
  }

  /**
   * A new key; its plaintext `key` is returned this once (reveal can show it again later).
   * `category` defaults to `admin`; a `workspace` key without `workspaceId` is bound to the
   * client's workspace. Sent with an Idempotency-Key, so it is retried like a read: however
   * often it is sent, one key is created and its answer returned.
   */
  async createApiKey(input: NewApiKey): Promise<ApiKeyWithSecret> {
    const body: WireSchemas["NewApiKey"] = { label: requireText(input.label, "label") };
    if (input.category !== undefined) body.category = input.category;
    const workspaceId =
      input.workspaceId ?? (input.category === "workspace" ? this.#workspaceId : undefined);
    if (workspaceId !== undefined) body.workspaceId = workspaceId;
    // A scope newer than the document this SDK was built with is sent as it is.
    if (input.scopes !== undefined) {
      body.scopes = [...input.scopes] as NonNullable<WireSchemas["NewApiKey"]["scopes"]>;
    }
    if (input.expiresInDays !== undefined) body.expiresInDays = input.expiresInDays;
    if (input.allowedCidrs !== undefined) body.allowedCidrs = [...input.allowedCidrs];
    if (input.requestsPerDay !== undefined) body.requestsPerDay = input.requestsPerDay;
    if (input.dpopJkt !== undefined) body.dpopJkt = input.dpopJkt;
    const answer = await this.#transport.request({
      method: "POST",
      path: KEYS,
      body,
      workspaceId: this.#workspace(undefined),
      authenticated: true,
      idempotencyKey: input.idempotencyKey ?? newIdempotencyKey(),
    });
    const key: ApiKeyWithSecret = answer.body as WireSchemas["ApiKeyWithSecret"];
    return key;
  }

  /**
   * Replaces a key: the answer is the new key with its plaintext; the old key's `replacedBy`
   * names the new one. The old key is revoked at once, or keeps working for
   * `gracePeriodSeconds` when given. Rotating a key that is not active, or that already has
   * a successor, is a ConflictError (409). Sent with an Idempotency-Key: a retry after a
   * lost answer gets the same new key instead of a 409.
   */
  async rotateApiKey(keyId: string, options: RotateOptions = {}): Promise<ApiKeyWithSecret> {
    const call: Call = {
      method: "POST",
      path: keyPath(keyId, "/rotate"),
      workspaceId: this.#workspace(undefined),
      authenticated: true,
      idempotencyKey: options.idempotencyKey ?? newIdempotencyKey(),
    };
    if (options.gracePeriodSeconds !== undefined) {
      const body: WireSchemas["Rotation"] = { gracePeriodSeconds: options.gracePeriodSeconds };
      call.body = body;
    }
    const answer = await this.#transport.request(call);
    const key: ApiKeyWithSecret = answer.body as WireSchemas["ApiKeyWithSecret"];
    return key;
  }

  /**
   * Renames a key or changes its allow-list or daily quota; answers the key. Only the fields
   * given change.
   */
  async updateApiKey(keyId: string, changes: ApiKeyUpdate): Promise<ApiKey> {
    const body: WireSchemas["ApiKeyChanges"] = {};
    if (changes.label !== undefined) body.label = requireText(changes.label, "label");
    if (changes.allowedCidrs !== undefined) {
      body.allowedCidrs = changes.allowedCidrs === null ? null : [...changes.allowedCidrs];
    }
    if (changes.requestsPerDay !== undefined) body.requestsPerDay = changes.requestsPerDay;
    const answer = await this.#transport.request({
      method: "PATCH",
      path: keyPath(keyId),
      body,
      workspaceId: this.#workspace(undefined),
      authenticated: true,
    });
    const key: ApiKey = answer.body as WireSchemas["ApiKey"];
    return key;
  }

  /**
   * A key's counted requests per UTC hour or day, every bucket of the range (zeros included).
   * Counts arrive within one usage window (5 minutes); `complete` is false while a bucket
   * may still receive some.
   */
  async usage(keyId: string, options: UsageOptions = {}): Promise<KeyUsage> {
    const answer = await this.#transport.request({
      method: "GET",
      path: keyPath(keyId, "/usage"),
      query: { granularity: options.granularity ?? "day", from: options.from, to: options.to },
      workspaceId: this.#workspace(undefined),
      authenticated: true,
    });
    const usage: KeyUsage = answer.body as WireSchemas["KeyUsage"];
    return usage;
  }

  /**
   * Audit events, newest first, one page at a time: those of the caller's own keys and of
   * the workspaces it owns. Only `options.workspaceId` names a workspace (never the client's).
   */
  async listEvents(options: ListEventsOptions = {}): Promise<EventPage> {
    const answer = await this.#transport.request({
      method: "GET",
      path: "/v1/auth/events",
      query: { limit: options.limit, cursor: options.cursor, type: options.type, keyId: options.keyId },
      workspaceId: options.workspaceId,
      authenticated: true,
    });
    // Not checked against WireSchemas["EventPage"]: the document declares an event's actor as
    // one object whose fields are all optional, and EventActor tells its two shapes apart.
    return answer.body as EventPage;
  }

  /** Revokes a key, effective on its next use. Revoking a revoked key succeeds again. */
  async revokeApiKey(keyId: string): Promise<void> {
    await this.#transport.request({
      method: "DELETE",
      path: keyPath(keyId),
      workspaceId: this.#workspace(undefined),
      authenticated: true,
    });
  }

  /** Who the service takes this client's credential to be, in which workspace, with which scopes. */
  async whoami(): Promise<Principal> {
    const answer = await this.#transport.request({
      method: "GET",
      path: "/v1/auth/whoami",
      workspaceId: this.#workspace(undefined),
      authenticated: true,
    });
    const principal: Principal = answer.body as WireSchemas["Principal"];
    return principal;
  }

  /**
   * Trades an identity provider's OpenID Connect ID token for an access/refresh pair. Retried
   * like a read: the same ID token always signs the same user in.
   */
  async exchange(idToken: string): Promise<TokenSet> {
    const token = requireText(idToken, "idToken");
    const answer = await this.#transport.request({
      method: "POST",
      path: "/v1/auth/exchange",
      body: { id_token: token } satisfies WireSchemas["ExchangeRequest"],
      authenticated: false,
      oauth: true,
      secrets: [token],
      repeatableWithinMs: Number.POSITIVE_INFINITY,
    });
    return tokenSet(answer.body, answer.status);
  }

  /**
   * A new access/refresh pair for a refresh token. Refresh tokens are single use, but the
   * service answers one presented again within 60 s of its use (while its successor is
   * unused) with the same successor: so a refresh whose answer was lost is retried, within
   * REFRESH_RETRY_WINDOW_MS of its first send. Later, presenting it a second time is an
   * OAuthError (`invalid_grant`) and ends its whole session.
   */
  /**
   * A token for a browser or an agent (RFC 8693 token exchange): bound to one workspace, with
   * at most the subject's data-plane scopes, short-lived, never able to manage anything. It
   * stops working on the next request once the key it comes from is revoked.
   */
  async delegate(options: DelegateOptions = {}): Promise<DelegatedToken> {
    const body: Record<string, string | number> = {
      subject_token_type: "urn:ietf:params:oauth:token-type:access_token",
    };
    const subject =
      options.subject === undefined
        ? await this.#transport.currentCredential()
        : requireText(options.subject, "subject");
    body.subject_token = subject;
    const workspace = options.workspaceId ?? this.#workspaceId;
    if (workspace !== undefined) body.workspace_id = workspace;
    if (options.scopes !== undefined) body.scope = options.scopes.join(" ");
    if (options.expiresIn !== undefined) body.expires_in = options.expiresIn;
    if (options.actor !== undefined) body.actor = options.actor;
    const answer = await this.#transport.request({
      method: "POST",
      path: "/v1/auth/exchange",
      body,
      authenticated: false,
      oauth: true,
      secrets: [subject],
    });
    const found = (typeof answer.body === "object" && answer.body !== null ? answer.body : {}) as {
      [Field in keyof WireSchemas["WorkspaceToken"]]?: unknown;
    };
    const { access_token, token_type, expires_in, scope } = found;
    if (typeof access_token !== "string" || typeof expires_in !== "number" || typeof scope !== "string") {
      throw new UnexpectedResponseError({
        status: answer.status,
        code: "unexpected_response",
        detail: "The token answer lacks access_token, expires_in or scope.",
      });
    }
    return {
      accessToken: access_token,
      tokenType: typeof token_type === "string" ? token_type : "Bearer",
      expiresIn: expires_in,
      expiresAt: Date.now() + expires_in * 1000,
      scopes: scope.split(" ").filter((s) => s !== ""),
    };
  }

  /**
   * Ends every sign-in of the caller, this client's own included: each one's access and
   * refresh tokens are refused from their next request, so this client must sign in again.
   * A user token only. Re-sent like any DELETE when its answer is lost; the re-send then meets
   * the ended sign-in and is refused (`revoked_credentials`, or with a Session's tokenProvider
   * an OAuthError `invalid_grant` from the refresh it tries): every sign-in has ended all the same.
   */
  async signOutEverywhere(): Promise<void> {
    await this.#transport.request({ method: "DELETE", path: SESSIONS, authenticated: true });
  }

  /**
   * Sign out: revokes a login refresh token and every successor (RFC 7009), and with them the
   * sign-in they belong to: its access tokens are refused from their next request too.
   * Succeeds for an unknown or already revoked token.
   */
  async revoke(refreshToken: string): Promise<void> {
    const token = requireText(refreshToken, "refreshToken");
    await this.#transport.request({
      method: "POST",
      path: "/v1/auth/revoke",
      body: { token } satisfies WireSchemas["RevokeRequest"],
      authenticated: false,
      oauth: true,
      secrets: [token],
      repeatableWithinMs: Number.POSITIVE_INFINITY,
      bodyless: true,
    });
  }

  async refreshAccessToken(refreshToken: string): Promise<TokenSet> {
    const token = requireText(refreshToken, "refreshToken");
    const answer = await this.#transport.request({
      method: "POST",
      path: "/v1/auth/refresh",
      body: { refresh_token: token } satisfies WireSchemas["RefreshRequest"],
      authenticated: false,
      oauth: true,
      secrets: [token],
      repeatableWithinMs: REFRESH_RETRY_WINDOW_MS,
    });
    return tokenSet(answer.body, answer.status);
  }
}
