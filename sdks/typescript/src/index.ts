// memory-sdk: the hosted memory service's `client.auth` and `client.workspaces` for Node 20+
// and browsers.

export { MemoryClient, DEFAULT_ENDPOINT, DEFAULT_RETRIES, DEFAULT_TIMEOUT_MS } from "./client.js";
export type { ClientOptions } from "./client.js";
export { AuthClient, SessionsClient, delegatedTokenProvider } from "./auth.js";
export type { DelegateOptions, DelegatedToken } from "./auth.js";
export { WorkspacesClient } from "./workspaces.js";
export type { NewServiceClient, ServiceClient } from "./workspaces.js";
export { Session, DEFAULT_REFRESH_MARGIN_MS } from "./session.js";
export type { SessionOptions, SessionTokens, TokenRefresher } from "./session.js";
export type { FetchFunction, FetchResponse, TokenContext, TokenProvider } from "./transport.js";
export {
  ApiError,
  AuthenticationError,
  BadRequestError,
  ConfigurationError,
  ConflictError,
  DelegatedTokenExpiredError,
  GoneError,
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
  UnexpectedResponseError,
} from "./errors.js";
export type { ApiErrorDetails, NetworkErrorOptions } from "./errors.js";
export {
  BACKOFF_BASE_MS,
  BACKOFF_CAP_MS,
  MAX_RETRIES,
  REFRESH_RETRY_WINDOW_MS,
  RETRY_AFTER_MAX_SECONDS,
  RETRYABLE_STATUSES,
  newIdempotencyKey,
} from "./retry.js";
export type {
  ApiKey,
  ApiKeyPage,
  ApiKeyUpdate,
  ApiKeyWithSecret,
  AuditEvent,
  CreateWorkspaceOptions,
  DataPlaneScope,
  EventActor,
  EventPage,
  EventType,
  KeyCategory,
  KeyStatus,
  KeyUsage,
  ListApiKeysOptions,
  ListEventsOptions,
  Member,
  NewAdminKey,
  NewApiKey,
  NewWorkspaceKey,
  Principal,
  RotateOptions,
  Scope,
  TokenSet,
  UsageOptions,
  UserSession,
  Workspace,
} from "./types.js";
export {
  WorkloadIdentity,
  WorkloadIdentityError,
  WORKLOAD_REFRESH_MARGIN_MS,
} from "./workload.js";
export type { WorkloadIdentityOptions } from "./workload.js";
export {
  WEBHOOK_SECRET_PREFIX,
  WEBHOOK_TOLERANCE_SECONDS,
  WebhookVerificationError,
  signWebhook,
  verifyWebhook,
} from "./webhooks.js";
export type { VerifyWebhookOptions } from "./webhooks.js";
export {
  CLIENT_ASSERTION_TYPE,
  SERVICE_CLIENT_REFRESH_MARGIN_MS,
  ServiceClientCredentials,
  ServiceClientError,
  thumbprint,
} from "./service-client.js";
export type { Jwk, ServiceClientOptions } from "./service-client.js";
export { DpopKey, type PublicJwk } from "./dpop.js";
