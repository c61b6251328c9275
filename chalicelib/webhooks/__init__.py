"""Webhooks: a workspace's subscriptions to its audit events, signed deliveries to them
(Standard Webhooks), and the queue that carries them."""
