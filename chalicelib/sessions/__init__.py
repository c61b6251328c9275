"""Sign-in.

OpenID Connect ID-token verification, users, refresh tokens, access-token signing and the
exchange service.
"""
