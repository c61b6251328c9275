"""The OAuth 2.1 authorization server of the memory service's MCP endpoint.

Metadata (RFC 8414, RFC 9728), clients (Client ID Metadata Documents, Dynamic Client
Registration), the authorization flow with sign-in at the login provider and consent, the
token grants and revocation. The README's "MCP clients" section walks through it.
"""
