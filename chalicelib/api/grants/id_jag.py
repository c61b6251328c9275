"""ID-JAG (enterprise-managed authorization): not served yet."""

from __future__ import annotations

from typing import Any

from chalicelib import errors
from chalicelib.api.grants.registry import Issued


def issue(parsed: Any) -> Issued:
    raise errors.INVALID_GRANT.oauth_error("No enterprise identity provider is trusted here.")
