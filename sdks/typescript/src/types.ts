// The service's resources as they travel (the service README, "API reference").
// Times are RFC 3339 UTC strings, exactly as the service sends them.

export type KeyCategory = "workspace" | "admin";
export type KeyStatus = "active" | "revoked" | "expired";

/** The data-plane scopes a workspace key may hold. */
export type DataPlaneScope = "memory" | "entities" | "reasoning" | "ontology" | "skills";
/** Every scope; `workspace:admin` is for admin keys only. Unknown future scopes pass as strings. */
export type Scope = DataPlaneScope | "workspace:admin" | (string & {});

/** An API key's metadata. `key` is present only on the answers of create, reveal and rotate. */
export interface ApiKey {
  id: string;
  label: string;
  category: KeyCategory;
  /** The bound workspace of a workspace key; null for an admin key. */
  workspaceId: string | null;
  scopes: Scope[];
  status: KeyStatus;
  /** `svc_…` and the key's last four characters, to recognise it without revealing it. */
  hint: string | null;
  createdAt: string;
  expiresAt: string;
  revokedAt: string | null;
  /** The id of the key that replaced this one by rotation. */
  replacedBy: string | null;
  /** Whether reveal can return the plaintext (keys created before encryption at rest cannot). */
  revealable: boolean;
  /**
   * When the key last authenticated, to 5 minutes; null until its first use. Optional only
   * for services older than last-use recording.
   */
  lastUsedAt?: string | null;
  /** The networks (CIDRs) the key is accepted from; null: any address. */
  allowedCidrs?: string[] | null;
  key?: string;
}

/** An API key together with its plaintext: the answer of create, reveal and rotate. */
export interface ApiKeyWithSecret extends ApiKey {
  key: string;
}

/** One page of the caller's own keys, newest first. */
export interface ApiKeyPage {
  keys: ApiKey[];
  /** Pass to `listApiKeys(..., { cursor })` for the next page; null on the last page. */
  nextCursor: string | null;
}

export interface ListApiKeysOptions {
  /** 1 to 100; the service's default is 50. */
  limit?: number;
  cursor?: string;
  status?: KeyStatus;
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
export interface Principal {
  userId: string;
  credential: "user_token" | "api_key";
  /** The key's id when the credential is an API key; null for a user token. */
  keyId: string | null;
  category: KeyCategory | null;
  /** The named or bound workspace; null when there is none. */
  workspaceId: string | null;
  scopes: Scope[];
}

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
}

/** The event types the service records; a type added later still arrives as a string. */
export type EventType =
  | "key.created"
  | "key.revealed"
  | "key.rotated"
  | "key.revoked"
  | "key.updated"
  | "key.expiring"
  | "key.expired"
  | "key.leaked"
  | "workspace.created"
  | "member.added"
  | "member.removed";

/** Who did something recorded in an audit event: a caller, or the service itself. */
export type EventActor =
  | { userId: string; credential: "user_token" | "api_key"; keyId: string | null }
  | { system: string };

/** One audit event (`key.created`, `key.revoked`, `member.added`, ...). Never holds a secret. */
export interface AuditEvent {
  id: string;
  type: EventType | (string & {});
  occurredAt: string;
  actor: EventActor;
  keyId: string | null;
  workspaceId: string | null;
  sourceIp: string | null;
  userAgent: string | null;
  data: Record<string, unknown>;
}

export interface EventPage {
  events: AuditEvent[];
  nextCursor: string | null;
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

/** A workspace (`GET /v1/workspaces` adds the caller's `role`). */
export interface Workspace {
  id: string;
  name: string;
  ownerId: string;
  createdAt: string;
  /** The caller's role in it; present in lists. */
  role?: "owner" | "member";
}

/** A member of a workspace. */
export interface Member {
  workspaceId: string;
  userId: string;
  role: "owner" | "member";
  addedAt: string;
}
