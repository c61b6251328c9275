"""Python client of the hosted memory service: configuration and `client.auth`."""

from memory_sdk.auth import UNCHANGED, AuthClient, Unchanged, UnsupportedAuth
from memory_sdk.client import MemoryClient
from memory_sdk.config import (
    DEFAULT_ENDPOINT,
    Backend,
    BoltSettings,
    ClientSettings,
    SvcOptions,
)
from memory_sdk.errors import (
    ApiError,
    AuthenticationError,
    BadRequestError,
    ConfigurationError,
    ConflictError,
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
    EventPage,
    EventType,
    KeyCategory,
    KeyStatus,
    Principal,
    SystemActor,
    TokenPair,
    UserActor,
)
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
    "EventPage",
    "EventType",
    "GoneError",
    "KeyCategory",
    "KeyStatus",
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
    "ServiceError",  # deprecated alias of ServerError
    "ServiceUnavailableError",
    "SvcOptions",
    "SystemActor",
    "TokenPair",
    "Unchanged",
    "UnexpectedResponseError",
    "UnsupportedAuth",
    "UserActor",
    "WorkloadIdentity",
    "WorkloadIdentityError",
    "__version__",
]
