// A login session: an access/refresh pair that stays usable. Before a call, an access token
// within `refreshMargin` of its expiry is refreshed first; a 401 (the token was refused,
// so nothing was executed) refreshes once and the call is tried once more. Concurrent
// calls share one refresh: refresh tokens are single use, and a second refresh with the
// same token, once its successor is used or 60 s later, would be taken for theft and end
// the session (the service's README, "Retries").

import { OAuthError } from "./errors.js";
import type { TokenContext, TokenProvider } from "./transport.js";
import type { TokenSet } from "./types.js";

export const DEFAULT_REFRESH_MARGIN_MS = 60_000;

/** The pair a session holds; a TokenSet from exchange or refresh fits as it is. */
export interface SessionTokens {
  accessToken: string;
  refreshToken: string;
  /** When the access token expires, in milliseconds since the epoch. */
  expiresAt: number;
}

/** What the session refreshes through: any MemoryClient (it needs no credential). */
export interface TokenRefresher {
  auth: {
    refreshAccessToken(refreshToken: string): Promise<TokenSet>;
    /** Sign-out (`signOut`); any MemoryClient has it. */
    revoke?(refreshToken: string): Promise<void>;
  };
}

export interface SessionOptions {
  client: TokenRefresher;
  tokens: SessionTokens;
  /** Refresh this many milliseconds before the access token expires. Default 60 000. */
  refreshMargin?: number;
  /** The clock, in milliseconds since the epoch. Default Date.now. */
  now?: () => number;
  /** Called with every new pair, e.g. to store it; the old refresh token is now spent. */
  onRefresh?: (tokens: TokenSet) => void | Promise<void>;
}

export class Session {
  /** Pass as a MemoryClient's `tokenProvider`. */
  readonly tokenProvider: TokenProvider;
  readonly #client: TokenRefresher;
  readonly #margin: number;
  readonly #now: () => number;
  readonly #onRefresh: ((tokens: TokenSet) => void | Promise<void>) | undefined;
  #tokens: SessionTokens;
  #refreshing: Promise<SessionTokens> | undefined;
  #ended: OAuthError | undefined;

  constructor(options: SessionOptions) {
    const { accessToken, refreshToken, expiresAt } = options.tokens;
    if (typeof accessToken !== "string" || typeof refreshToken !== "string" || !Number.isFinite(expiresAt)) {
      throw new TypeError("tokens needs accessToken, refreshToken and expiresAt.");
    }
    this.#client = options.client;
    this.#tokens = { accessToken, refreshToken, expiresAt };
    this.#margin = options.refreshMargin ?? DEFAULT_REFRESH_MARGIN_MS;
    this.#now = options.now ?? Date.now;
    this.#onRefresh = options.onRefresh;
    this.tokenProvider = (context: TokenContext) => this.#provide(context);
  }

  /** The pair held now (to store it); its refresh token is the only unspent one. */
  get tokens(): SessionTokens {
    return { ...this.#tokens };
  }

  /** True once a refresh was refused (reuse, expiry, revocation): log in again. */
  get ended(): boolean {
    return this.#ended !== undefined;
  }

  /** A usable access token, refreshed first when it is within the margin of its expiry. */
  async accessToken(): Promise<string> {
    if (this.#refreshing !== undefined) return (await this.#refreshing).accessToken;
    if (this.#now() < this.#tokens.expiresAt - this.#margin) return this.#tokens.accessToken;
    return (await this.refresh()).accessToken;
  }

  /**
   * Refreshes now, or joins the refresh already under way. Once the service has refused a
   * refresh (a 4xx OAuthError such as `invalid_grant`), the session is ended and every later
   * refresh throws that error again without a request.
   */
  refresh(): Promise<SessionTokens> {
    if (this.#ended !== undefined) return Promise.reject(this.#ended);
    this.#refreshing ??= this.#refreshOnce().finally(() => {
      this.#refreshing = undefined;
    });
    return this.#refreshing;
  }

  /**
   * Signs out for real: revokes the refresh token (and with it every successor and the
   * sign-in's access tokens) at the service, then ends the session locally, so no later call
   * refreshes.
   */
  async signOut(): Promise<void> {
    await this.#refreshing?.catch(() => undefined);
    if (this.#ended === undefined) {
      await this.#client.auth.revoke?.(this.#tokens.refreshToken);
    }
    this.#ended ??= new OAuthError({ status: 400, code: "invalid_grant", detail: "Signed out." });
  }

  async #provide(context: TokenContext): Promise<string> {
    if (context.rejectedToken === undefined) return this.accessToken();
    // Several calls can be refused with the same token; the first refreshes, the others
    // find a newer token already here (or the refresh under way) and use that.
    if (this.#refreshing !== undefined) return (await this.#refreshing).accessToken;
    if (context.rejectedToken !== this.#tokens.accessToken) return this.#tokens.accessToken;
    return (await this.refresh()).accessToken;
  }

  async #refreshOnce(): Promise<SessionTokens> {
    let fresh: TokenSet;
    try {
      fresh = await this.#client.auth.refreshAccessToken(this.#tokens.refreshToken);
    } catch (error) {
      // A refusal (reuse, expiry, revocation) is final; an outage (429, 5xx) is not.
      if (error instanceof OAuthError && error.status < 500 && error.status !== 429) this.#ended = error;
      throw error;
    }
    const tokens: TokenSet = { ...fresh, expiresAt: this.#now() + fresh.expiresIn * 1000 };
    this.#tokens = {
      accessToken: tokens.accessToken,
      refreshToken: tokens.refreshToken,
      expiresAt: tokens.expiresAt,
    };
    await this.#onRefresh?.(tokens);
    return { ...this.#tokens };
  }
}
