"""The token endpoints' grants: one registered class per grant (Authlib's `oauth2/` shape).

`POST /v1/oauth/token` serves every grant; `/v1/auth/exchange` and `/v1/auth/refresh` are
served by the same classes. How a grant is declared and registered: `registry.py`.
"""
