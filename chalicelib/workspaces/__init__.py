"""Workspaces and their members: the records, the store and the service."""
