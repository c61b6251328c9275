"""Audit events: every key and workspace change, stored in the table through the change's
outbox (table.py, "commit points"), put on the stage's EventBridge bus, and listed to the
user they concern.
"""
