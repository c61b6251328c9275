"""The memory service's authentication service: everything the Lambda runs besides wiring.

Code map (docs/architecture.md walks a request through it):

  api/         the HTTP edge: request parsing, problem rendering, one module per route group
    edge.py        strict body/query parsing, `authenticate`, `Routes`, the error middleware
    cors.py        cross-origin calls: ALLOWED_ORIGINS, preflights, the CORS middleware
    keys.py        /v1/auth/api-keys            create, list, get, reveal, rotate, update, revoke
    identity.py    /v1/auth/whoami, /.well-known/jwks.json
    login.py       /v1/auth/exchange, /v1/auth/refresh (OAuth-shaped answers)
    oauth.py       /v1/oauth/*, /.well-known/oauth-*: the MCP authorization server
    workspaces.py  /v1/workspaces and their members
    events.py      /v1/auth/events              the caller's audit events
    secret_scanning.py  /v1/auth/secret-scanning/github  GitHub's leaked-key reports
    openapi.py     the OpenAPI 3.1 document of every route
    reference.py   /openapi.json and /docs/errors (what each error code means)
    dashboard.py   /dashboard/: the dashboard's files, security headers, sign-in settings
  access/      who is calling and what they may do
    principal.py   the resolved caller (Principal) and a refusal (Refusal)
    scopes.py      scopes per category and per data-plane path segment
    policy.py      who may manage keys and workspaces
    allow_list.py  a key's allowedCidrs: parsing, and checking a source address
    resolution.py  Authorization + X-Workspace-Id -> Principal or Refusal (routes and authorizer)
    authorizer.py  the data-plane REQUEST authorizer
  keys/        API keys
    model.py       the ApiKey record, its states and lifetimes
    plaintext.py   the `svc_` format (owner and workspace in the body), checksum, hash, hint
    store.py       keys in DynamoDB (owner item + credential item, one transaction)
    vault.py       plaintexts at rest as KMS ciphertext bound to the record
    service.py     the lifecycle: create, list, get, reveal, rotate (with grace), update, revoke
    last_use.py    lastUsedAt, written by the request path at most once per 5 minutes
    expiry.py      the hourly sweep: key.expiring 7 days ahead, key.expired at the end
  workspaces/  workspaces and membership: model.py, store.py, service.py
  events/      audit events
    model.py       the event, its types and actors
    store.py       events in DynamoDB (in the change's own transaction), listed per user
    publisher.py   the stage's EventBridge bus, best effort
    log.py         what the services call; GET /v1/auth/events reads through it
  scanning/    leaked-key reports (GitHub's secret scanning partner program)
    github.py      the key list, the report's signature, the report
    service.py     revoking the active keys a report names
  login/       sign-in
    openid.py      OpenID Connect ID tokens from trusted issuers
    users.py       (issuer, subject) -> a stable `usr_` id
    refresh.py     refresh tokens: hashed, single use, rotated, family revocation, retries
    successors.py  each refresh token's successor, derived with an HMAC key in KMS
    access_tokens.py  RS256 access tokens signed by KMS, verified locally, the JWKS
    service.py     the exchange and refresh flows
  oauth/       the authorization server of the memory service's MCP endpoint
    settings.py    MCP_RESOURCES and LOGIN_PROVIDER
    metadata.py    RFC 8414 and RFC 9728 metadata
    fetch.py       SSRF-safe fetching of Client ID Metadata Documents, with a cache
    clients.py     metadata-document clients, Dynamic Client Registration, redirect rules
    ratelimit.py   registrations per source address
    browser.py     the cookie that binds an authorization to its browser; PKCE and CSRF
    signin.py      this service as an OpenID Connect client of the login provider
    pending.py     authorizations under way (until consent)
    codes.py       authorization codes: 60 s, single use, hashed
    pages.py       the consent and error pages (no script, strict CSP)
    grants.py      whether an MCP grant is in force (read per MCP token by the authorizer)
    service.py     authorize, callback, consent, token grants, revocation
  dashboard/   the web console (source in dashboard/ at the root; built into static/)
    login.py       DASHBOARD_LOGIN: the provider it signs people in with
    assets.py      the built files and the page's security headers

The shared floor, used by every package: config.py (settings from the environment),
runtime.py (services built once per container, the AWS clients' failure budget),
snapstart.py (what each copy restored from a Lambda SnapStart snapshot renews), errors.py
(the error catalogue), dependencies.py (which exceptions mean a dependency failed: 503),
idempotency.py (Idempotency-Key records: a retried create answers the first result),
table.py (the DynamoDB table layer), clock.py, ids.py, parsing.py, logs.py.

Package `__init__` files hold docstrings only: a re-export would load the routes and
Powertools onto the authorizer's cold start.
"""
