"""What to do about each error, for the error reference (`/docs/errors` and docs/errors.md).

A problem's `detail` says what went wrong; its remedy says what the caller does next. Keyed by
the entry's anchor (`reference.anchor`): the code of a problem, `oauth-<code>` for an RFC 6749
error. A test holds every catalogued code to having one.
"""

from __future__ import annotations

REMEDIES: dict[str, str] = {
    # -- problem+json ---------------------------------------------------------------------
    "conflicting_workspace_id": "Name the workspace once: send either the header or the query "
    "parameter, or make both the same id.",
    "credential_in_url": "Remove the credential from the URL and send it as "
    "`Authorization: Bearer <key>`. Treat a key that was in a URL as leaked: rotate it.",
    "dashboard_not_configured": "An operator sets `DASHBOARD_LOGIN` (see Configuration) and "
    "redeploys; until then, use API keys.",
    "dependency_unavailable": "Nothing was changed. Retry with backoff; the service answers "
    "again once DynamoDB or KMS does.",
    "dpop_required": "This credential is bound to a key pair: send it as `Authorization: DPoP "
    "<credential>` with a `DPoP` proof signed by that pair (both SDKs do this when given the "
    "key).",
    "expired_credentials": "Refresh the session (`/v1/auth/refresh`) or sign in again; for a "
    "key, create a new one or rotate before expiry.",
    "idempotency_key_reused": "Send a new `Idempotency-Key` for a new request; resend the same "
    "key only with the very same request.",
    "insufficient_scope": "Use a credential with the scope the operation needs: an admin key, "
    "or a token whose scopes include it.",
    "internal_error": "Retry once; if it repeats, report the request id from the response "
    "headers to the operators.",
    "invalid_category": "Send `\"category\": \"workspace\"` (with a `workspaceId`) or "
    "`\"category\": \"admin\"`.",
    "invalid_cidr": "Send networks such as `203.0.113.0/24` or `2001:db8::/32` with their host "
    "bits zero, a bare address for one host, or `null` for any address.",
    "invalid_credentials": "Check that the whole key or token is sent, unchanged, after "
    "`Bearer `; create a new key if this one was lost.",
    "invalid_credentials_list": "Send `{\"credentials\": [...]}` with 1 to 1,000 strings; "
    "split a longer list into several reports.",
    "invalid_dpop_jkt": "Send the RFC 7638 SHA-256 thumbprint of the key pair's public JWK "
    "(43 base64url characters), or leave `dpopJkt` out for a bearer key.",
    "invalid_dpop_proof": "Sign a fresh proof for this very request: `typ` dpop+jwt, the "
    "public key in `jwk`, `htm` and `htu` of this method and URL, `iat` now, and `ath` of the "
    "credential; check the clock of the signing machine.",
    "invalid_grace_period": "Send a whole number of seconds from 0 to 604800, or leave it out "
    "for the default.",
    "invalid_idempotency_key": "Use a short printable ASCII value, such as a UUID.",
    "invalid_json": "Send a JSON object as the body, with `Content-Type: application/json`.",
    "invalid_label": "Shorten the label to 100 characters and remove control characters and "
    "text-direction marks.",
    "invalid_service_client": "Fix the field the detail names: a name by the label rule, "
    "data-plane scopes, and either `jwks` (1 to 5 public RS256 or ES256 keys) or an https "
    "`jwksUri` on a host name.",
    "invalid_lifetime": "Send `expiresInDays` as a whole number from 1 to 90.",
    "invalid_name": "Shorten the name to 100 characters and remove control characters and "
    "text-direction marks.",
    "invalid_parameter": "Correct the query parameter the detail names; the API reference "
    "lists each parameter's values.",
    "invalid_path": "Send the path as the API reference spells it, without dot segments, "
    "encoded slashes or backslashes.",
    "invalid_quota": "Send `requestsPerDay` as a whole number from 1 to 10,000,000, or `null` "
    "for no quota.",
    "invalid_report": "Only GitHub's secret-scanning partner program sends reports here; "
    "send its JSON array unchanged.",
    "invalid_request": "Correct the field the detail names and send the request again.",
    "invalid_scope": "Ask only for scopes of the key's category (the API reference lists "
    "them), at least one.",
    "invalid_signature": "Sign the report with a key GitHub publishes; the service fetches "
    "the list again on an unknown key id.",
    "invalid_trust_policy": "Correct the field the detail names; Workload identity lists each "
    "field of a trust policy.",
    "invalid_user_id": "Name the member by their `usr_` id or the email they sign in with.",
    "invalid_webhook": "Fix the field the detail names: an https URL on a public host name "
    "(never an IP address), event types the service emits or `[\"*\"]`, a description of at "
    "most 500 characters.",
    "invalid_workspace_id": "Send the workspace's id (`ws_…`) as a string.",
    "ip_not_allowed": "Call from an address inside the key's `allowedCidrs`, or widen them "
    "(PATCH the key).",
    "key_not_active": "Rotate only an active key; create a new key in place of an expired or "
    "revoked one.",
    "key_not_revealable": "Rotate the key: its successor can be shown again.",
    "key_revoked": "Create a new key; a revoked key cannot be changed or restored.",
    "limit_reached": "Revoke or delete what is no longer used, or ask the operators to raise "
    "the limit the detail names.",
    "method_not_allowed": "Use a method the `Allow` header lists.",
    "missing_credentials": "Send `Authorization: Bearer <API key or token>`.",
    "not_a_member": "Ask the workspace's owner to add you, or use a workspace you belong to.",
    "not_found": "Check the id and the workspace; an item you may not see answers this too.",
    "owner_cannot_leave": "The owner stays a member; delete the workspace to end it.",
    "owner_required": "Ask the workspace's owner to make this change.",
    "payload_too_large": "Send a body of at most 16 KiB.",
    "quota_exceeded": "Wait for `Retry-After` (the next UTC midnight), or raise or remove the "
    "key's `requestsPerDay`.",
    "revoked_credentials": "Sign in again, or use another key; a revoked credential stays "
    "revoked.",
    "too_many_requests": "Wait for `Retry-After`, then retry with backoff.",
    "unknown_field": "Remove the field the detail names; the API reference lists each "
    "operation's fields.",
    "unknown_parameter": "Remove the query parameter the detail names.",
    "unsupported_media_type": "Send the body with `Content-Type: application/json`.",
    "user_not_found": "Ask the person to sign in to the dashboard once, then add them again.",
    "workspace_id_not_allowed": "Leave `workspaceId` out for an admin key, or send "
    "`\"category\": \"workspace\"` with it.",
    "workspace_id_required": "Send the `workspaceId` a workspace key is bound to.",
    "workspace_mismatch": "Use a key bound to this workspace, or name the workspace the key "
    "is bound to.",
    "workspace_required": "Send `X-Workspace-Id` with the workspace's id.",
    # -- RFC 6749 (token endpoints) -------------------------------------------------------
    "oauth-access_denied": "Start the sign-in again; the person must approve it at the login "
    "provider.",
    "oauth-invalid_client": "Send no client secret: clients here are public and prove "
    "themselves with PKCE.",
    "oauth-invalid_client_metadata": "Correct the field the description names and register "
    "again.",
    "oauth-invalid_dpop_proof": "Sign a fresh proof for the token request: `typ` dpop+jwt, "
    "your public key in `jwk`, `htm` POST and `htu` the token endpoint's URL, `iat` now, and "
    "the server's latest `DPoP-Nonce` as `nonce`.",
    "oauth-invalid_grant": "Start a new authorization: a code is used once, and a refresh "
    "token ends when rotated or revoked.",
    "oauth-invalid_redirect_uri": "Register an https redirect URI (or a loopback http one), "
    "without a fragment.",
    "oauth-invalid_request": "Send a body of at most 16 KiB.",
    "oauth-invalid_scope": "Ask only for the scopes the server's metadata lists under "
    "`scopes_supported`.",
    "oauth-invalid_target": "Name this service's MCP server as the `resource`, or its "
    "audience, as the metadata lists them.",
    "oauth-invalid_token": "Send a current credential of this service as the `subject_token`.",
    "oauth-server_error": "An operator configures sign-in (see Configuration).",
    "oauth-temporarily_unavailable": "Nothing was changed. Retry with backoff.",
    "oauth-too_many_requests": "Wait, then register once and reuse the client.",
    "oauth-unauthorized_client": "Register the client with this grant type in its "
    "`grant_types`, or use one it registered.",
    "oauth-unsupported_grant_type": "Use a grant type the server's metadata lists under "
    "`grant_types_supported`.",
    "oauth-unsupported_response_type": "Send `response_type=code` (with PKCE).",
    "oauth-use_dpop_nonce": "Sign the proof again with the nonce from the answer's `DPoP-Nonce` "
    "header and resend the same request once (both SDKs do this by themselves).",
}
