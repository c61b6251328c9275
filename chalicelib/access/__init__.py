"""Who is calling and what they may do.

Principals and refusals, scopes, policy, request resolution and the data-plane authorizer.
"""
