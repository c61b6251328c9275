"""Workload identity federation: trust policies, and the exchange of a workload's OIDC token
for a short-lived token bound to one workspace (docs/guides/workload-identity.md)."""
