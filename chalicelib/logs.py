"""Structured JSON logs (Powertools). Log lines carry ids, never a key, token or header."""

from __future__ import annotations

from aws_lambda_powertools import Logger

logger = Logger(service="memory-auth")
