// The service's resources as they travel (the service README, "API reference").
// Times are RFC 3339 UTC strings, exactly as the service sends them.
//
// The types that describe the wire are derived from the OpenAPI document's schemas
// (src/wire.ts, generated: `make wire-types`), so that `tsc` fails where the document and the
// SDK part ways. The SDK widens a few on purpose (unknown future scopes and event types still
// parse; fields newer than some services are optional).

import type { components } from "./wire.js";

/** The document's schemas, as the service sends and accepts them. */
export type WireSchemas = components["schemas"];
type WireApiKey = WireSchemas["ApiKey"];

export type KeyCategory = WireApiKey["category"];
export type KeyStatus = WireApiKey["status"];

/** The data-plane scopes a workspace key may hold. */
export type DataPlaneScope = Exclude<WireApiKey["scopes"][number], "workspace:admin">;
/** Every scope; `workspace:admin` is for admin keys only. Unknown future scopes pass as strings. */
export type Scope = WireApiKey["scopes"][number] | (string & {});

/** An API key's metadata. `key` is present only on the answers of create, reveal and rotate. */
export interface ApiKey
  extends Omit<WireApiKey, "scopes" | "lastUsedAt" | "allowedCidrs" | "requestsPerDay" | "dpopJkt"> {
  scopes: Scope[];
  /**
   * When the key last authenticated, to 5 minutes; null until its first use. Optional only
   * for services older than last-use recording.
   */
  lastUsedAt?: WireApiKey["lastUsedAt"];
  /** The networks (CIDRs) the key is accepted from; null: any address. */
  allowedCidrs?: WireApiKey["allowedCidrs"];
  /** The daily quota (requests per UTC day, then 429 `quota_exceeded`); null: none. */
  requestsPerDay?: WireApiKey["requestsPerDay"];
  /** The thumbprint of the key pair it is bound to (DPoP); null: a bearer key. */
  dpopJkt?: WireApiKey["dpopJkt"];
  key?: WireSchemas["ApiKeyWithSecret"]["key"];
}

/** An API key together with its plaintext: the answer of create, reveal and rotate. */
export interface ApiKeyWithSecret extends ApiKey {
  key: WireSchemas["ApiKeyWithSecret"]["key"];
}

type WireKeyPage = Omit<WireSchemas["KeyPage"], "keys">;

/** One page of the caller's own keys, newest first. */
export interface ApiKeyPage extends WireKeyPage {
  keys: ApiKey[];
  /** Pass to `listApiKeys(..., { cursor })` for the next page; null on the last page. */
  nextCursor: WireSchemas["KeyPage"]["nextCursor"];
}

export interface ListApiKeysOptions {
  /** 1 to 100; the service's default is 50. */
  limit?: number;
  cursor?: string;
  status?: KeyStatus;
  /**
   * Only keys whose label contains this text, searched by the service (`q`): without regard to
   * case, at most 100 characters, no control characters; empty: no search. A search's page may
   * hold fewer keys than `limit`, even none, while `nextCursor` goes on searching.
   */
  query?: string;
  /**
   * List every key of the caller, whatever the client's `workspaceId`: no X-Workspace-Id is
   * sent. Not together with a `workspaceId` argument.
   */
  allWorkspaces?: boolean;
}

interface NewKeyCommon {
  /** 1 to 100 characters, no control characters. */
  label: string;
  /** Lifetime in days, 1 to 90 (the service's default and maximum: 90). */
  expiresInDays?: number;
  /** IPv4/IPv6 CIDRs the key will be accepted from; default any address. */
  allowedCidrs?: readonly string[];
  /** A daily quota, 1 to 10 000 000 requests per UTC day; default none. */
  requestsPerDay?: number;
  /**
   * Binds the key to a key pair (a `DpopKey`'s `thumbprint`): it then works only from a
   * client made with `dpop:` that pair.
   */
  dpopJkt?: string;
  /**
   * Sent as Idempotency-Key; default a new random one. Pass your own to make your own later
   * retry of this call safe too: the service answers it with the same key. Not sent in the body.
   */
  idempotencyKey?: string;
}

/** An admin key: not bound to a workspace (the service refuses a workspaceId for it). */
export interface NewAdminKey extends NewKeyCommon {
  category?: "admin";
  /** A non-empty subset of all scopes; default: every scope the caller holds. */
  scopes?: readonly Scope[];
  workspaceId?: never;
}

/** A workspace key, bound for good to one workspace the caller is a member of. */
export interface NewWorkspaceKey extends NewKeyCommon {
  category: "workspace";
  /** Default: the client's workspaceId. */
  workspaceId?: string;
  /** A non-empty subset of the data-plane scopes; default: all of them. */
  scopes?: readonly DataPlaneScope[];
}

export type NewApiKey = NewAdminKey | NewWorkspaceKey;

/** Who the service takes the caller to be (`GET /v1/auth/whoami`). */
export interface Principal extends Omit<WireSchemas["Principal"], "scopes"> {
  /** The key's id when the credential is an API key; null for a user token. */
  keyId: WireSchemas["Principal"]["keyId"];
  /** The named or bound workspace; null when there is none. */
  workspaceId: WireSchemas["Principal"]["workspaceId"];
  scopes: Scope[];
}

/**
 * One live sign-in of the caller (`GET /v1/auth/sessions`): `lastRefreshedAt` is null until its
 * first refresh, `userAgent` is cut at 200 characters, `current` marks the sign-in of the token
 * that made the call. It never holds a token. Times are RFC 3339 UTC strings.
 */
export type UserSession = WireSchemas["Session"];

/** An access/refresh token pair from exchange or refresh. */
export interface TokenSet {
  /** The internal JWT, sent as `Authorization: Bearer`. Valid about one hour. */
  accessToken: string;
  tokenType: string;
  /** Lifetime of the access token in seconds, as the service said. */
  expiresIn: number;
  /** When the access token expires, in milliseconds since the epoch (client clock). */
  expiresAt: number;
  /** Single use: each refresh returns a new one; presenting a used one ends the session. */
  refreshToken: string;
}

/** Options of `rotateApiKey`. */
export interface RotateOptions {
  /**
   * Seconds the old key keeps working after the rotation, 0 to 604 800 (7 days). Left out,
   * the old key is revoked at once.
   */
  gracePeriodSeconds?: number;
  /** Sent as Idempotency-Key; default a new random one (see NewApiKey). */
  idempotencyKey?: string;
}

export interface CreateWorkspaceOptions {
  /** Sent as Idempotency-Key; default a new random one (see NewApiKey). */
  idempotencyKey?: string;
}

/** The changes `updateApiKey` sends; only the fields given are changed. */
export interface ApiKeyUpdate {
  label?: string;
  /**
   * A new allow-list of 1 to 20 CIDRs; null accepts any address again. An empty list is
   * refused by the service (BadRequestError, `invalid_cidr`): it would admit no one.
   */
  allowedCidrs?: readonly string[] | null;
  /** A daily quota, 1 to 10 000 000 requests per UTC day; null removes it. */
  requestsPerDay?: number | null;
}

/** A key's counted requests by UTC hour or day (`GET /v1/auth/api-keys/{id}/usage`). */
export type KeyUsage = WireSchemas["KeyUsage"];

/** Options of `usage`: the granularity and the range (RFC 3339 times, rounded to it). */
export interface UsageOptions {
  /** Default `day`. */
  granularity?: "hour" | "day";
  /** The first bucket's start; default the last 7 days (by day) or 24 hours (by hour). */
  from?: string;
  /** The end of the range (exclusive); default now. At most 31 days by hour, 400 by day. */
  to?: string;
}

/** The event types the service records; a type added later still arrives as a string. */
export type EventType = WireSchemas["Event"]["type"];

// The document declares the actor as one object whose fields are all optional; the SDK tells
// its two shapes apart, from the same fields.
type WireActor = Required<WireSchemas["Event"]["actor"]>;

/** Who did something recorded in an audit event: a caller, or the service itself. */
export type EventActor =
  | {
      userId: WireActor["userId"];
      credential: WireActor["credential"];
      keyId: WireActor["keyId"];
      /** The person's verified email, when known. */
      email?: WireActor["email"];
      /** The person's name, when known. */
      name?: WireActor["name"];
    }
  | { system: WireActor["system"] };

/** One audit event (`key.created`, `key.revoked`, `member.added`, ...). Never holds a secret. */
export interface AuditEvent extends Omit<WireSchemas["Event"], "type" | "actor"> {
  type: EventType | (string & {});
  actor: EventActor;
}

export interface EventPage extends Omit<WireSchemas["EventPage"], "events"> {
  events: AuditEvent[];
}

export interface ListEventsOptions {
  /** 1 to 100. */
  limit?: number;
  cursor?: string;
  /** Only events of this type, e.g. `key.revoked`. */
  type?: EventType | (string & {});
  /** Only events of this key. */
  keyId?: string;
  /**
   * Only the events of this workspace (sent as X-Workspace-Id). The client's own
   * `workspaceId` does not filter events.
   */
  workspaceId?: string;
}

type WireWorkspace = WireSchemas["Workspace"];

/** A workspace (`GET /v1/workspaces` adds the caller's `role`). */
export interface Workspace extends WireWorkspace {
  /** The caller's role in it; present in lists. */
  role?: WireSchemas["WorkspaceList"]["workspaces"][number]["role"];
}

/** A member of a workspace, with their verified `email` and `name` (null when unknown). */
export type Member = WireSchemas["Member"];
