"""Builds the services once per Lambda container, lazily: each piece on first use.

The authorizer's API-key path touches only DynamoDB; KMS clients, the signer and the token
verifier (and with them PyJWT and cryptography) are built when first needed. That is why
each service's module is imported inside the property that builds it, on purpose: a
module-level import would put it on the authorizer's cold start.
"""

from __future__ import annotations

from datetime import datetime
from functools import cached_property
from typing import TYPE_CHECKING, Any

from chalicelib.clock import Clock
from chalicelib.config import Settings
from chalicelib.decisions.resolution import Resolver
from chalicelib.keys.store import KeyStore
from chalicelib.workspaces.store import WorkspaceStore

if TYPE_CHECKING:
    from chalicelib.events.log import EventLog
    from chalicelib.idempotency import IdempotencyStore
    from chalicelib.keys.expiry import ExpirySweep
    from chalicelib.keys.last_use import LastUse
    from chalicelib.keys.model import ApiKey
    from chalicelib.keys.quota import QuotaNotices
    from chalicelib.keys.service import KeyService
    from chalicelib.keys.vault import KeyVault
    from chalicelib.oauth.clients import ClientStore
    from chalicelib.oauth.connected_apps import ConnectedApps
    from chalicelib.oauth.login_provider import ProviderTransport
    from chalicelib.oauth.ratelimit import RegistrationLimit
    from chalicelib.oauth.service import OAuthService
    from chalicelib.replays import Replays
    from chalicelib.scanning.github import PublishedKeys
    from chalicelib.scanning.revocation import PublicRevocation, RevocationLimit
    from chalicelib.scanning.service import LeakReports
    from chalicelib.service_clients.grant import ClientCredentialsGrant
    from chalicelib.service_clients.service import ServiceClientService
    from chalicelib.service_clients.store import ServiceClientStore
    from chalicelib.sessions.access_tokens import SigningKeys, TokenSigner, TokenVerifier
    from chalicelib.sessions.delegation import Delegator
    from chalicelib.sessions.dpop_nonces import DpopNonces
    from chalicelib.sessions.openid import IdTokenVerifier
    from chalicelib.sessions.refresh import RefreshTokenStore
    from chalicelib.sessions.service import SessionService
    from chalicelib.sessions.sign_ins import SignIns
    from chalicelib.sessions.successors import RefreshSuccessors
    from chalicelib.sessions.users import UserStore
    from chalicelib.webhooks.delivery import Deliverer
    from chalicelib.webhooks.queue import WorkQueue
    from chalicelib.webhooks.service import WebhookService
    from chalicelib.webhooks.store import WebhookStore
    from chalicelib.workloads.exchange import WorkloadExchange
    from chalicelib.workloads.issuers import IssuerKeys
    from chalicelib.workloads.service import TrustPolicyService
    from chalicelib.workloads.store import TrustPolicyStore
    from chalicelib.workspaces.service import WorkspaceService


# The failure budget of one AWS call: a frozen DynamoDB or KMS must turn into a 503 within
# 5 s, so that a client can retry (or give up) instead of hanging, and the authorizer
# (10 s timeout) raises well inside its own limit.
#
#   an attempt      <= CONNECT_TIMEOUT + READ_TIMEOUT = 2.0 s
#   two attempts    <= 4.0 s, plus botocore's backoff before the retry: up to 25-50 ms after
#                      a timeout, up to 1 s after throttling (whose answer itself is fast)
#   worst case      <= 5 s; a frozen dependency (accepts, never answers): 2 x 1.5 s = 3 s
#
# Why these numbers: DynamoDB and KMS answer in milliseconds inside a region (a write
# across Regions in tens), so 1.5 s is a stall, not a slow answer; a connection (TCP and
# TLS, reused across invocations anyway) takes milliseconds, so 0.5 s is ample. A second
# attempt rides out a single dropped connection or one throttling answer; a third would push
# a freeze past the budget. More retrying is the client's job, after a 503 that says what it
# may retry (README, "Retries"), because only the client can wait longer than one request.
# A write whose answer was lost may have been applied: every store settles that itself
# (a retry meets its own write), so botocore's retry is safe for every call made here.
CONNECT_TIMEOUT = 0.5
READ_TIMEOUT = 1.5
TOTAL_ATTEMPTS = 2


def aws_client(
    service: str, region: str, timeout: float | None = None, attempts: int | None = None
) -> Any:
    import boto3
    from botocore.config import Config

    config = Config(
        retries={"mode": "standard", "total_max_attempts": TOTAL_ATTEMPTS},
        connect_timeout=CONNECT_TIMEOUT,
        read_timeout=READ_TIMEOUT,
    )
    if timeout is not None and attempts is not None:
        # Bookkeeping calls (lastUsedAt, the event bus) that must never hold a request up.
        config = Config(
            retries={"mode": "standard", "total_max_attempts": attempts},
            connect_timeout=timeout,
            read_timeout=timeout,
        )
    return boto3.client(service, region_name=region, config=config)


class Services:
    def __init__(self, settings: Settings | None = None, clock: Clock | None = None):
        self._settings = settings
        self.clock = clock or Clock()

    @cached_property
    def settings(self) -> Settings:
        return self._settings or Settings.from_env()

    @cached_property
    def dynamodb(self) -> Any:
        from chalicelib.table import expire_by_sweep

        expire_by_sweep(self.settings.expiry_by_sweep)
        return aws_client("dynamodb", self.settings.region)

    @cached_property
    def kms(self) -> Any:
        return aws_client("kms", self.settings.region)

    @cached_property
    def key_store(self) -> KeyStore:
        return KeyStore(self.dynamodb, self.settings.table_name)

    @cached_property
    def workspace_store(self) -> WorkspaceStore:
        return WorkspaceStore(self.dynamodb, self.settings.table_name)

    @cached_property
    def vault(self) -> KeyVault:
        from chalicelib.keys.vault import KeyVault

        return KeyVault(self.kms, self.settings.encryption_key_id)

    @cached_property
    def signing_keys(self) -> SigningKeys:
        from chalicelib.sessions.access_tokens import SigningKeys

        return SigningKeys(self.kms, self.settings.signing_key_ids)

    @cached_property
    def signer(self) -> TokenSigner:
        from chalicelib.sessions.access_tokens import TokenSigner

        return TokenSigner(self.kms, self.signing_keys, self.settings.issuer, self.clock)

    @cached_property
    def verifier(self) -> TokenVerifier:
        from chalicelib.sessions.access_tokens import TokenVerifier

        return TokenVerifier(self.signing_keys, self.settings.issuer)

    @cached_property
    def last_use_dynamodb(self) -> Any:
        from chalicelib.keys.last_use import TIMEOUT_SECONDS

        return aws_client("dynamodb", self.settings.region, TIMEOUT_SECONDS, attempts=1)

    @cached_property
    def last_use(self) -> LastUse:
        from chalicelib.keys.last_use import LastUse

        return LastUse(
            lambda: self.last_use_dynamodb,
            self.settings.table_name,
            flush_seconds=self.settings.usage_flush_seconds,
        )

    @cached_property
    def quota_notices(self) -> QuotaNotices:
        from chalicelib.keys.quota import QuotaNotices

        return QuotaNotices(
            self.last_use_dynamodb, self.settings.table_name, lambda: self.event_log
        )

    @cached_property
    def resolver(self) -> Resolver:
        return Resolver(
            self.key_store,
            self.workspace_store,
            self.clock,
            self.verify_token,
            self.last_use,
            self.announce_quota_exceeded,
        )

    def announce_quota_exceeded(self, api_key: ApiKey, now: datetime) -> None:
        """`key.quota_exceeded`: its module (and the event log's) load when a key first
        reaches its quota, never on the authorizer's cold start."""
        self.quota_notices.announce(api_key, now)

    def verify_token(self, token: str, audience: str | None = None) -> dict[str, Any]:
        """The verifier (and with it the KMS client and PyJWT) is built for the first JWT."""
        return self.verifier.verify(token, audience)

    @cached_property
    def events_client(self) -> Any:
        # At most two short attempts: the event is stored already, the bus is best effort.
        return aws_client("events", self.settings.region, timeout=1, attempts=2)

    @cached_property
    def event_log(self) -> EventLog:
        from chalicelib.events.log import EventLog
        from chalicelib.events.publisher import EventPublisher
        from chalicelib.events.store import EventStore

        return EventLog(
            EventStore(self.dynamodb, self.settings.table_name),
            EventPublisher(lambda: self.events_client, self.settings.event_bus_name),
            self.clock,
            # Built on the first stored event, not with the log: the authorizer's quota
            # event is its only one.
            lambda stored: self.webhook_dispatch.dispatch(stored),
        )

    @cached_property
    def github_keys(self) -> PublishedKeys:
        from chalicelib.scanning.github import PublishedKeys, fetch_key_list

        url, local_mode = self.settings.secret_scanning_keys_url, self.settings.local_mode
        return PublishedKeys(lambda: fetch_key_list(url, local_mode))

    @cached_property
    def leak_reports(self) -> LeakReports:
        from chalicelib.scanning.service import LeakReports

        return LeakReports(self.key_store, self.event_log, self.clock)

    @cached_property
    def expiry_sweep(self) -> ExpirySweep:
        from chalicelib.keys.expiry import ExpirySweep

        return ExpirySweep(
            self.key_store, self.event_log, self.clock, self.dynamodb, self.settings.table_name,
            delete_expired=self.settings.expiry_by_sweep,
        )

    @cached_property
    def idempotency(self) -> IdempotencyStore:
        from chalicelib.idempotency import IdempotencyStore

        return IdempotencyStore(self.dynamodb, self.settings.table_name)

    @cached_property
    def key_service(self) -> KeyService:
        from chalicelib.keys.service import KeyService

        return KeyService(
            self.key_store,
            self.workspace_store,
            self.vault,
            self.clock,
            self.event_log,
            self.idempotency,
            self.settings.key_limit,
            usage_today=self.last_use,
        )

    @cached_property
    def workspace_service(self) -> WorkspaceService:
        from chalicelib.workspaces.service import WorkspaceService

        return WorkspaceService(
            self.workspace_store, self.clock, self.event_log, self.users, self.idempotency,
            self.settings.workspace_limit, self.settings.member_limit,
        )

    @cached_property
    def id_tokens(self) -> IdTokenVerifier:
        from chalicelib.sessions.openid import IdTokenVerifier

        return IdTokenVerifier(self.settings.trusted_issuers)

    @cached_property
    def users(self) -> UserStore:
        from chalicelib.sessions.users import UserStore

        return UserStore(self.dynamodb, self.settings.table_name, self.last_use_dynamodb)

    @cached_property
    def refresh_tokens(self) -> RefreshTokenStore:
        from chalicelib.sessions.refresh import RefreshTokenStore

        return RefreshTokenStore(
            self.dynamodb,
            self.settings.table_name,
            on_sign_in_reused=lambda token, now: self.sign_ins.reuse_detected(token, now),
        )

    @cached_property
    def sign_ins(self) -> SignIns:
        from chalicelib.sessions.sign_ins import SignIns

        return SignIns(
            self.dynamodb, self.settings.table_name, self.refresh_tokens, self.event_log,
            self.clock,
        )

    @cached_property
    def refresh_successors(self) -> RefreshSuccessors:
        from chalicelib.sessions.successors import RefreshSuccessors

        return RefreshSuccessors(self.kms, self.settings.refresh_token_key_id)

    @cached_property
    def dpop_nonces(self) -> DpopNonces:
        from chalicelib.sessions.dpop_nonces import DpopNonces

        return DpopNonces(self.kms, self.settings.refresh_token_key_id)

    @cached_property
    def oauth_clients(self) -> ClientStore:
        from chalicelib.fetch import CachedFetcher, SafeFetcher
        from chalicelib.oauth.clients import ClientStore

        documents = CachedFetcher(SafeFetcher(local_mode=self.settings.local_mode))
        return ClientStore(self.dynamodb, self.settings.table_name, documents)

    @cached_property
    def registration_limit(self) -> RegistrationLimit:
        from chalicelib.oauth.ratelimit import RegistrationLimit

        return RegistrationLimit(
            self.dynamodb, self.settings.table_name, self.settings.registration_limit
        )

    @cached_property
    def login_provider_transport(self) -> ProviderTransport:
        from chalicelib.oauth.login_provider import HttpTransport

        return HttpTransport()

    @cached_property
    def oauth_service(self) -> OAuthService:
        from chalicelib.oauth.codes import CodeStore
        from chalicelib.oauth.consents import ConsentStore
        from chalicelib.oauth.pending import PendingStore
        from chalicelib.oauth.service import OAuthService, login_client

        settings = self.settings
        return OAuthService(
            issuer=settings.issuer,
            resources=settings.mcp_resources,
            login=login_client(
                settings.login_provider, settings.issuer, self.login_provider_transport
            ),
            clients=self.oauth_clients,
            pending=PendingStore(self.dynamodb, settings.table_name),
            codes=CodeStore(self.dynamodb, settings.table_name),
            consents=ConsentStore(self.dynamodb, settings.table_name),
            refresh_tokens=self.refresh_tokens,
            successors=self.refresh_successors,
            signer=self.signer,
            verifier=self.verifier,
            id_tokens=self.id_tokens,
            users=self.users,
            workspaces=self.workspace_store,
            dynamodb=self.dynamodb,
            clock=self.clock,
            connected_apps=self.connected_apps,
        )

    @cached_property
    def connected_apps(self) -> ConnectedApps:
        from chalicelib.oauth.connected_apps import ConnectedApps
        from chalicelib.oauth.consents import ConsentStore

        return ConnectedApps(
            self.dynamodb,
            self.settings.table_name,
            self.refresh_tokens,
            ConsentStore(self.dynamodb, self.settings.table_name),
            self.event_log,
            self.clock,
        )

    @cached_property
    def session_service(self) -> SessionService:
        from chalicelib.sessions.service import SessionService

        return SessionService(
            self.id_tokens,
            self.users,
            self.refresh_tokens,
            self.refresh_successors,
            self.signer,
            self.clock,
            self.sign_ins,
        )

    @cached_property
    def replays(self) -> Replays:
        """Single-use assertion ids (`jti`) of every jwt-bearer and client assertion."""
        from chalicelib.replays import Replays

        return Replays(self.dynamodb, self.settings.table_name)

    @cached_property
    def trust_policies(self) -> TrustPolicyStore:
        from chalicelib.workloads.store import TrustPolicyStore

        return TrustPolicyStore(
            self.dynamodb, self.settings.table_name, self.settings.trust_policy_limit
        )

    @cached_property
    def trust_policy_service(self) -> TrustPolicyService:
        from chalicelib.workloads.service import TrustPolicyService

        return TrustPolicyService(
            self.trust_policies,
            self.event_log,
            self.clock,
            self.settings.local_mode,
        )

    @cached_property
    def service_clients(self) -> ServiceClientStore:
        from chalicelib.service_clients.model import LIMIT
        from chalicelib.service_clients.store import ServiceClientStore

        return ServiceClientStore(self.dynamodb, self.settings.table_name, LIMIT)

    @cached_property
    def service_client_service(self) -> ServiceClientService:
        from chalicelib.service_clients.service import ServiceClientService

        return ServiceClientService(
            self.service_clients,
            self.event_log,
            self.clock,
            self.settings.local_mode,
        )

    @cached_property
    def service_client_keys(self) -> IssuerKeys:
        from chalicelib.workloads.issuers import IssuerKeys, jwks_fetcher

        return IssuerKeys(jwks_fetcher(self.settings.local_mode))

    @cached_property
    def client_credentials_grant(self) -> ClientCredentialsGrant:
        from chalicelib.service_clients.grant import ClientCredentialsGrant

        return ClientCredentialsGrant(
            self.service_clients,
            self.replays,
            self.service_client_keys,
            self.signer,
            self.event_log,
            self.clock,
            self.settings.issuer,
            self.settings.mcp_resources,
        )

    @cached_property
    def workload_issuer_keys(self) -> IssuerKeys:
        from chalicelib.workloads.issuers import IssuerKeys, jwks_fetcher

        return IssuerKeys(jwks_fetcher(self.settings.local_mode))

    @cached_property
    def workload_exchange(self) -> WorkloadExchange:
        from chalicelib.workloads.exchange import WorkloadExchange

        return WorkloadExchange(
            self.trust_policies,
            self.workload_issuer_keys,
            self.signer,
            self.event_log,
            self.clock,
            self.replays,
        )


    @cached_property
    def delegator(self) -> Delegator:
        from chalicelib.sessions.delegation import Delegator

        return Delegator(self.resolver, self.signer, self.clock)

    # -- webhooks and the work queue -------------------------------------------------------

    @cached_property
    def sqs(self) -> Any:
        # Short: a request that queues an event must not wait on a stalled queue (the
        # backlog in the table keeps what the queue refuses).
        return aws_client("sqs", self.settings.region, timeout=1, attempts=2)

    @cached_property
    def work_queue(self) -> WorkQueue:
        from chalicelib.webhooks.queue import WorkQueue

        return WorkQueue(
            lambda: self.sqs,
            self.settings.webhook_queue_name,
            self.dynamodb,
            self.settings.table_name,
            self.clock,
        )

    @cached_property
    def webhook_dispatch(self) -> Any:
        from chalicelib.webhooks.delivery import WebhookDispatch

        return WebhookDispatch(self.work_queue)

    @cached_property
    def webhooks(self) -> WebhookStore:
        from chalicelib.webhooks.service import LIMIT
        from chalicelib.webhooks.store import WebhookStore

        return WebhookStore(self.dynamodb, self.settings.table_name, LIMIT)

    @cached_property
    def deliverer(self) -> Deliverer:
        from datetime import timedelta

        from chalicelib.fetch import SafeFetcher
        from chalicelib.webhooks.delivery import Deliverer

        first = self.settings.webhook_first_retry_seconds
        return Deliverer(
            self.webhooks,
            self.work_queue,
            SafeFetcher(local_mode=self.settings.local_mode),
            self.event_log,
            self.clock,
            timedelta(seconds=first) if first is not None else None,
            lambda user_id: [
                w.id
                for w in self.workspace_store.list_for_user(user_id)
                if w.owner_id == user_id
            ],
            self.vault,
        )

    @cached_property
    def webhook_service(self) -> WebhookService:
        from chalicelib.webhooks.service import WebhookService

        return WebhookService(
            self.webhooks,
            self.deliverer,
            self.event_log,
            self.clock,
            self.settings.local_mode,
            self.vault,
        )

    @cached_property
    def revocation_limit(self) -> RevocationLimit:
        from chalicelib.scanning.revocation import RevocationLimit

        return RevocationLimit(self.dynamodb, self.settings.table_name)

    @cached_property
    def public_revocation(self) -> PublicRevocation:
        from chalicelib.scanning.revocation import PublicRevocation

        return PublicRevocation(self.work_queue.send, self.leak_reports)

    def work_batch(self, records: list[dict[str, Any]]) -> dict[str, Any]:
        """A batch of the queue's messages (SQS records): those whose work failed are
        answered as failures, so the queue gives them again later (then to its dead-letter
        queue). An empty batch (the 5-minute schedule's) hands the queue the backlog it
        refused earlier; so does a batch, which shows the queue takes messages again."""
        import json

        from chalicelib.logs import logger

        failed = []
        for record in records:
            try:
                self.work(json.loads(record["body"]))
            except Exception:  # noqa: BLE001 - the queue tries it again; the rest go on
                logger.exception("queue message failed", extra={"id": record.get("messageId")})
                failed.append({"itemIdentifier": record.get("messageId")})
        try:
            self.work_queue.drain()
        except Exception:  # noqa: BLE001 - the next run drains it
            logger.exception("backlog not drained")
        return {"batchItemFailures": failed}

    def work(self, message: dict[str, Any]) -> None:
        """One message of the work queue, to the service whose it is."""
        from chalicelib.scanning.revocation import REVOKE

        if message.get("kind") == REVOKE:
            self.public_revocation.handle(message)
        else:
            self.deliverer.handle(message)


_current: Services | None = None


def services() -> Services:
    global _current
    if _current is None:
        _current = Services()
    return _current


def use(replacement: Services | None) -> None:
    """Tests and the local stack install their own services (moto, a frozen clock)."""
    global _current
    _current = replacement
