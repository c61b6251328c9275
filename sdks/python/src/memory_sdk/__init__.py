"""Python client of the hosted memory service: configuration and `client.auth`."""

from memory_sdk.auth import AuthClient, UnsupportedAuth
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
from memory_sdk.models import ApiKey, CredentialKind, KeyCategory, KeyStatus, Principal, TokenPair

__version__ = "0.1.0"

__all__ = [
    "DEFAULT_ENDPOINT",
    "ApiError",
    "ApiKey",
    "AuthClient",
    "AuthenticationError",
    "Backend",
    "BadRequestError",
    "BoltSettings",
    "ClientSettings",
    "ConfigurationError",
    "ConflictError",
    "CredentialKind",
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
    "TokenPair",
    "UnexpectedResponseError",
    "UnsupportedAuth",
    "__version__",
]
