"""Python client of the hosted memory service: configuration and `client.auth`."""

from memory_sdk.auth import UNCHANGED, AuthClient, SessionsClient, Unchanged, UnsupportedAuth
from memory_sdk.client import MemoryClient
from memory_sdk.config import (
    DEFAULT_ENDPOINT,
    Backend,
    BoltSettings,
    ClientSettings,
    SvcOptions,
)
from memory_sdk.dpop import DpopKey
from memory_sdk.errors import (
    ApiError,
    AuthenticationError,
    BadRequestError,
    ConfigurationError,
    ConflictError,
    DelegatedTokenExpiredError,
    GoneError,
    MemorySDKError,
    NetworkError,
    NotFoundError,
    NotSupportedError,
    OAuthError,
    PermissionDeniedError,
    RateLimitError,
    RequestTimeoutError,
    RequestValidationError,
    ServerError,
    ServiceError,
    ServiceUnavailableError,
    UnexpectedResponseError,
)
from memory_sdk.models import (
    ApiKey,
    AuditEvent,
    CredentialKind,
    DelegatedToken,
    EventPage,
    EventType,
    KeyCategory,
    KeyStatus,
    KeyUsage,
    Principal,
    SystemActor,
    TokenPair,
    UsageBucket,
    UserActor,
    UserSession,
)
from memory_sdk.service_client import ServiceClientCredentials, ServiceClientError
from memory_sdk.webhooks import WebhookVerificationError
from memory_sdk.webhooks import verify as verify_webhook
from memory_sdk.workload import WorkloadIdentity, WorkloadIdentityError

__version__ = "0.1.0"

__all__ = [
    "DEFAULT_ENDPOINT",
    "UNCHANGED",
    "ApiError",
    "ApiKey",
    "AuditEvent",
    "AuthClient",
    "AuthenticationError",
    "Backend",
    "BadRequestError",
    "BoltSettings",
    "ClientSettings",
    "ConfigurationError",
    "ConflictError",
    "CredentialKind",
    "DelegatedToken",
    "DelegatedTokenExpiredError",
    "DpopKey",
    "EventPage",
    "EventType",
    "GoneError",
    "KeyCategory",
    "KeyStatus",
    "KeyUsage",
    "MemoryClient",
    "MemorySDKError",
    "NetworkError",
    "NotFoundError",
    "NotSupportedError",
    "OAuthError",
    "PermissionDeniedError",
    "Principal",
    "RateLimitError",
    "RequestTimeoutError",
    "RequestValidationError",  # deprecated alias of BadRequestError
    "ServerError",
    "ServiceClientCredentials",
    "ServiceClientError",
    "ServiceError",  # deprecated alias of ServerError
    "ServiceUnavailableError",
    "SessionsClient",
    "SvcOptions",
    "SystemActor",
    "TokenPair",
    "Unchanged",
    "UnexpectedResponseError",
    "UnsupportedAuth",
    "UsageBucket",
    "UserActor",
    "UserSession",
    "WebhookVerificationError",
    "WorkloadIdentity",
    "WorkloadIdentityError",
    "__version__",
    "verify_webhook",
]
