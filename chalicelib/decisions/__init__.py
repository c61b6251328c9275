"""Who is calling, and whether they may: the credential resolver and the data-plane authorizer.

Above the domains (it reads keys, workspaces and, for a JWT, the sessions' token verifier),
below the composition root that builds it; the vocabulary it answers in lives in `access`.
"""
