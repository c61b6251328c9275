// One small hierarchy. Every error the SDK throws is a MemorySDKError; every answer of the
// service that is not a success is an ApiError carrying its HTTP status and its stable code
// (the problem+json `code`, or the OAuth `error` on the token endpoints). The class names
// are the Python SDK's, status for status.
//
//   MemorySDKError
//   ├── ConfigurationError          bad options, or no credential for a call that needs one
//   ├── NetworkError                no HTTP answer (refused, reset, DNS); mayHaveReached
//   │   └── RequestTimeoutError     no answer within `timeout`
//   └── ApiError                    status, code, detail
//       ├── BadRequestError         400, 413, 422
//       ├── AuthenticationError     401 (missing, invalid, expired or revoked credential)
//       ├── PermissionDeniedError   403
//       ├── NotFoundError           404
//       ├── ConflictError           409
//       ├── GoneError               410
//       ├── RateLimitError          429 (retryAfter in seconds)
//       ├── ServerError             5xx
//       │   └── ServiceUnavailableError  503
//       ├── OAuthError              any status from exchange or refresh with an OAuth body
//       └── UnexpectedResponseError a success whose body is not the documented one
//
// Messages never contain a key or a token: see redaction.ts.

export class MemorySDKError extends Error {
  override name = "MemorySDKError";
}

/** @deprecated The old name of MemorySDKError (the same class). */
export const MemoryError = MemorySDKError;
/** @deprecated The old name of MemorySDKError (the same class). */
export type MemoryError = MemorySDKError;

export class ConfigurationError extends MemorySDKError {
  override name = "ConfigurationError";
}

export interface NetworkErrorOptions {
  /**
   * False when the request certainly never left this process (the connection could not be
   * made); a create or rotate with true may have taken effect.
   */
  mayHaveReached: boolean;
}

export class NetworkError extends MemorySDKError {
  override name = "NetworkError";
  readonly mayHaveReached: boolean;

  constructor(message: string, options: NetworkErrorOptions) {
    super(message);
    this.mayHaveReached = options.mayHaveReached;
  }
}

export class RequestTimeoutError extends NetworkError {
  override name = "RequestTimeoutError";
}

export interface ApiErrorDetails {
  /** The HTTP status of the answer. */
  status: number;
  /** The stable snake_case code clients branch on (`not_found`, `invalid_grant`, ...). */
  code: string;
  /** The service's human-readable explanation (redacted), when it sent one. */
  detail?: string | undefined;
  /** The problem type URI (problem+json answers only). */
  type?: string | undefined;
  /** Seconds to wait before trying again, from `Retry-After`, when the service sent it. */
  retryAfter?: number | undefined;
}

export class ApiError extends MemorySDKError {
  override name = "ApiError";
  readonly status: number;
  readonly code: string;
  readonly detail: string | undefined;
  readonly type: string | undefined;
  readonly retryAfter: number | undefined;

  constructor(details: ApiErrorDetails) {
    const explanation = details.detail ? `: ${details.detail}` : "";
    super(`${details.status} ${details.code}${explanation}`);
    this.status = details.status;
    this.code = details.code;
    this.detail = details.detail;
    this.type = details.type;
    this.retryAfter = details.retryAfter;
  }
}

export class BadRequestError extends ApiError {
  override name = "BadRequestError";
}

export class AuthenticationError extends ApiError {
  override name = "AuthenticationError";
}

/**
 * 401 `expired_credentials` for a delegated token (`delegatedTokenProvider`): it has no refresh
 * token and is never renewed. Mint a new one (`client.auth.delegate`) from the credential it
 * came from.
 */
export class DelegatedTokenExpiredError extends AuthenticationError {
  override name = "DelegatedTokenExpiredError";
}

export class PermissionDeniedError extends ApiError {
  override name = "PermissionDeniedError";
}

export class NotFoundError extends ApiError {
  override name = "NotFoundError";
}

export class ConflictError extends ApiError {
  override name = "ConflictError";
}

export class GoneError extends ApiError {
  override name = "GoneError";
}

export class RateLimitError extends ApiError {
  override name = "RateLimitError";
}

export class ServerError extends ApiError {
  override name = "ServerError";
}

export class ServiceUnavailableError extends ServerError {
  override name = "ServiceUnavailableError";
}

/** An RFC 6749 error from the token endpoints; `code` is the OAuth `error`. */
export class OAuthError extends ApiError {
  override name = "OAuthError";
}

/** A success whose body is not the documented one; `code` is `unexpected_response`. */
export class UnexpectedResponseError extends ApiError {
  override name = "UnexpectedResponseError";
}

const BY_STATUS: Readonly<Record<number, new (details: ApiErrorDetails) => ApiError>> = {
  400: BadRequestError,
  401: AuthenticationError,
  403: PermissionDeniedError,
  404: NotFoundError,
  409: ConflictError,
  410: GoneError,
  413: BadRequestError,
  422: BadRequestError,
  429: RateLimitError,
  503: ServiceUnavailableError,
};

/** The typed error for a problem+json (or unrecognised) answer. */
export function problemError(details: ApiErrorDetails): ApiError {
  const ErrorClass = BY_STATUS[details.status] ?? (details.status >= 500 ? ServerError : ApiError);
  return new ErrorClass(details);
}
