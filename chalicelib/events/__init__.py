"""Audit events: every key and workspace change, stored in the table in the change's own
transaction, put on the stage's EventBridge bus, and listed to the user they concern.
"""
