"""Structured JSON logs (Powertools). Log lines carry ids, never a key, token or header.

Every line logged while a request is served carries its request id (Powertools'
`correlation_id`) and, once the caller is known, who it is: `actor`, with the caller's
`user_id` and, for an API key, its `key_id` (and the request's `workspace_id`). A line's own
`key_id` or `user_id` names what it is about (the key created, the user signed in). The keys
live in a context variable, so the threaded local server never mixes two requests' ids.
"""

from __future__ import annotations

import logging
from typing import Any

from aws_lambda_powertools import Logger

logger = Logger(service="memory-auth")
# Its own handler only: through the root logger (Lambda's runtime, or a library that sets
# one up) each line would print a second time.
logging.getLogger(logger.name).propagate = False

# botocore and urllib3 log whole request and response bodies at DEBUG: KMS Encrypt's
# plaintext, Decrypt's answer, signing inputs. Whatever the root level is set to, they
# never log below WARNING here.
for _name in ("botocore", "boto3", "urllib3"):
    logging.getLogger(_name).setLevel(logging.WARNING)


def start_request(request_id: str | None) -> None:
    """From here on, every line carries this request's id and nothing of an earlier one."""
    logger.thread_safe_clear_keys()
    logger.thread_safe_append_keys(correlation_id=request_id)


def identify_actor(
    user_id: str,
    key_id: str | None = None,
    workspace_id: str | None = None,
    delegation: dict[str, Any] | None = None,
) -> None:
    """The caller, once resolved: ids only, never the credential. `delegation`: a delegated
    token's `root`, `jti` and `act`."""
    ids = {"user_id": user_id, "key_id": key_id, "workspace_id": workspace_id, **(delegation or {})}
    logger.thread_safe_append_keys(actor={name: value for name, value in ids.items() if value})


def end_request() -> None:
    logger.thread_safe_clear_keys()
