"""Audit events: every key and workspace change, stored in the table and put on EventBridge.

model.py (the event and its types), store.py (events in DynamoDB, listed per user),
publisher.py (the stage's EventBridge bus, best effort), log.py (what the services call).
"""
