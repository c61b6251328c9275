"""Structured JSON logs (Powertools). Log lines carry ids, never a key, token or header."""

from __future__ import annotations

import logging

from aws_lambda_powertools import Logger

logger = Logger(service="memory-auth")

# botocore and urllib3 log whole request and response bodies at DEBUG: KMS Encrypt's
# plaintext, Decrypt's answer, signing inputs. Whatever the root level is set to, they
# never log below WARNING here.
for _name in ("botocore", "boto3", "urllib3"):
    logging.getLogger(_name).setLevel(logging.WARNING)
