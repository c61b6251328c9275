"""The key of every item in the one table: the only place that spells `KEY#…` or `CRED#…`.

  USER#<userId>        KEY#<keyId>        an API key, as its owner sees it (list, get, reveal)
  CRED#<sha256>        CRED               the same key, found by the hash of its plaintext
  WS#<wsId>            WS                 a workspace
  WS#<wsId>            MEMBER#<userId>    a membership, as the workspace sees it
  WS#<wsId>            TP#<policyId>      a trust policy of the workspace (workload identity)
  WS#<wsId>            TPCOUNT            how many trust policies the workspace has
  WS#<wsId>            COUNTS             how many members the workspace has (`members`)
  WS#<wsId>            WLSEEN#<policyId>#<sha256>  when a workload's exchange was last recorded
  WS#<wsId>            WH#<webhookId>     a webhook subscription of the workspace
  WS#<wsId>            WHCOUNT            how many webhook subscriptions the workspace has
  WS#<wsId>            WHDLV#<webhookId>#<evtId>  one event's delivery to one subscription
  WHBACKLOG            <messageId>        a queue message the queue refused, until it takes it
  REVOKELIMIT#<address> WINDOW#<start>    public revocation requests from one address
  WS#<wsId>            SCLIENTS           the workspace's service client ids (the limit's set)
  SCLIENT#<clientId>   SCLIENT            a service client (private_key_jwt), found by its id
  SCLIENT#<clientId>   TOKENSEEN          until when its last token_issued event stands
  USER#<userId>        WS#<wsId>          the same membership, as the member sees it
  USER#<userId>        EVT#<evtId>        an audit event of that user's log
  USER#<userId>        COUNTS             how many keys and workspaces the user has
  OUTBOX               <pk>#<sk>          a deleting change's events, until delivered
  USER#<userId>        PROFILE            a user's profile, written at the first sign-in
  USER#<userId>        GRANT#<familyId>   an MCP grant, as the person sees it (connected apps)
  USER#<userId>        GRANT#cns_<sha256> an MCP client's remembered consent, by its id's hash
                                          (listed among the connected apps)
  USER#<userId>        SIGNIN#<familyId>  a sign-in, as the person sees it (GET /v1/auth/sessions)
  IDP#<iss>#<sub>      IDP                a login: which user an issuer's subject is
  EMAIL#<email>        EMAIL              who last signed in with this verified email (lowercase)
  REFRESH#<sha256>     REFRESH            a refresh token, by the hash of its plaintext
  RFAMILY#<familyId>   FAMILY             a refresh token family (a sign-in, an MCP grant)
  OAUTHCLIENT#<id>     CLIENT             a registered MCP client
  OAUTHREQ#<id>        REQ                an authorization under way
  OAUTHCODE#<sha256>   CODE               an authorization code, by its hash
  DCRLIMIT#<address>   WINDOW#<start>     registrations from one address in one window
  IDEMPOTENCY#<sha256> IDEMPOTENCY        an Idempotency-Key's result
  JTI#<sha256>         JTI                an assertion's `jti` once spent (its issuer's)
  USAGE#<keyId>        HOUR#<yyyy-mm-ddThh> a key's counted requests in one UTC hour

Each function gives the key in DynamoDB's form (`table.key`); the prefixes are those the
queries read a partition by.
"""

from __future__ import annotations

from chalicelib.table import Item, key

KEY_PREFIX = "KEY#"
WORKSPACE_PREFIX = "WS#"
MEMBER_PREFIX = "MEMBER#"
EVENT_PREFIX = "EVT#"
GRANT_PREFIX = "GRANT#"
SIGN_IN_PREFIX = "SIGNIN#"
CREDENTIAL_SK = "CRED"
TRUST_POLICY_PREFIX = "TP#"
HOUR_PREFIX = "HOUR#"
WEBHOOK_PREFIX = "WH#"
DELIVERY_PREFIX = "WHDLV#"
BACKLOG_PK = "WHBACKLOG"


def user_pk(user_id: str) -> str:
    """The partition of everything a user owns: keys, memberships, events, profile."""
    return f"USER#{user_id}"


def workspace_pk(workspace_id: str) -> str:
    return WORKSPACE_PREFIX + workspace_id


def credential_pk(key_hash: str) -> str:
    return f"CRED#{key_hash}"


def api_key(owner_id: str, key_id: str) -> Item:
    return key(user_pk(owner_id), KEY_PREFIX + key_id)


def credential(key_hash: str) -> Item:
    return key(credential_pk(key_hash), CREDENTIAL_SK)


def workspace(workspace_id: str) -> Item:
    return key(workspace_pk(workspace_id), "WS")


def member(workspace_id: str, user_id: str) -> Item:
    return key(workspace_pk(workspace_id), MEMBER_PREFIX + user_id)


def membership(user_id: str, workspace_id: str) -> Item:
    return key(user_pk(user_id), WORKSPACE_PREFIX + workspace_id)


def event(user_id: str, event_id: str) -> Item:
    return key(user_pk(user_id), EVENT_PREFIX + event_id)


def profile(user_id: str) -> Item:
    return key(user_pk(user_id), "PROFILE")


def login(issuer: str, subject: str) -> Item:
    return key(f"IDP#{issuer}#{subject}", "IDP")


def email(address: str) -> Item:
    """Emails compare case-insensitively here: an owner types them as they please."""
    return key(f"EMAIL#{address.lower()}", "EMAIL")


def refresh_token(digest: str) -> Item:
    return key(f"REFRESH#{digest}", "REFRESH")


def refresh_family(family_id: str) -> Item:
    return key(f"RFAMILY#{family_id}", "FAMILY")


def oauth_client(client_id: str) -> Item:
    return key(f"OAUTHCLIENT#{client_id}", "CLIENT")


def oauth_request(request_id: str) -> Item:
    return key(f"OAUTHREQ#{request_id}", "REQ")


def oauth_code(digest: str) -> Item:
    return key(f"OAUTHCODE#{digest}", "CODE")


def registration_window(address: str, start: int) -> Item:
    return key(f"DCRLIMIT#{address[:64]}", f"WINDOW#{start}")


def spent_assertion(digest: str) -> Item:
    return key(f"JTI#{digest}", "JTI")


def idempotency_record(digest: str) -> Item:
    return key(f"IDEMPOTENCY#{digest}", "IDEMPOTENCY")


def trust_policy(workspace_id: str, policy_id: str) -> Item:
    return key(workspace_pk(workspace_id), TRUST_POLICY_PREFIX + policy_id)


COUNTS_SK = "COUNTS"


def user_counts(user_id: str) -> Item:
    """The user's maximum counts: `keys` (not revoked), `workspaces` (owned)."""
    return key(user_pk(user_id), COUNTS_SK)


def workspace_counts(workspace_id: str) -> Item:
    """The workspace's maximum counts: `members`."""
    return key(workspace_pk(workspace_id), COUNTS_SK)


def trust_policy_count(workspace_id: str) -> Item:
    return key(workspace_pk(workspace_id), "TPCOUNT")


def workload_seen(workspace_id: str, policy_id: str, subject_digest: str) -> Item:
    return key(workspace_pk(workspace_id), f"WLSEEN#{policy_id}#{subject_digest}")


def usage_pk(key_id: str) -> str:
    return f"USAGE#{key_id}"


def usage_hour(key_id: str, hour: str) -> Item:
    """`hour`: the UTC hour as `yyyy-mm-ddThh` (sorts as time does)."""
    return key(usage_pk(key_id), HOUR_PREFIX + hour)


def user_grant(user_id: str, grant_id: str) -> Item:
    return key(user_pk(user_id), GRANT_PREFIX + grant_id)


def user_sign_in(user_id: str, family_id: str) -> Item:
    return key(user_pk(user_id), SIGN_IN_PREFIX + family_id)
def webhook(workspace_id: str, webhook_id: str) -> Item:
    return key(workspace_pk(workspace_id), WEBHOOK_PREFIX + webhook_id)


def webhook_count(workspace_id: str) -> Item:
    return key(workspace_pk(workspace_id), "WHCOUNT")


def deliveries_prefix(webhook_id: str) -> str:
    return f"{DELIVERY_PREFIX}{webhook_id}#"


def delivery(workspace_id: str, webhook_id: str, event_id: str) -> Item:
    return key(workspace_pk(workspace_id), deliveries_prefix(webhook_id) + event_id)


def backlog_message(message_id: str) -> Item:
    return key(BACKLOG_PK, message_id)


def revocation_window(address: str, start: int) -> Item:
    return key(f"REVOKELIMIT#{address[:64]}", f"WINDOW#{start}")


def service_client(client_id: str) -> Item:
    return key(f"SCLIENT#{client_id}", "SCLIENT")


def service_clients_of(workspace_id: str) -> Item:
    return key(workspace_pk(workspace_id), "SCLIENTS")


def service_client_token_seen(client_id: str) -> Item:
    return key(f"SCLIENT#{client_id}", "TOKENSEEN")
