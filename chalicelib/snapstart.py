"""Lambda SnapStart: what a snapshot keeps, and what every restored copy renews.

With SnapStart, Lambda runs a function's init once, when a version is published, snapshots
its memory, and starts each new execution environment by restoring that one snapshot. Kept
on purpose: the imported modules, and botocore's loaded service models and endpoint data
(most of a cold start). Renewed in every copy, because copies must not share them:

- `random`'s state: seeded once at init, it would make every copy draw the same numbers,
  botocore's retry jitter among them (throttled copies would retry in step);
- the AWS clients' connections (opened by the copy that was snapshotted, dead in the others)
  and the credentials they resolved (the init's, not the copy's);
- the services built on those clients, with their caches whose age is measured on a
  monotonic clock that does not count the time spent as a snapshot (the signing keys'
  public halves, the identity providers' key sets).

Ids and keys need no help: `secrets` reads the kernel's entropy on every call.

The hooks are registered with `snapshot_restore_py`, which Lambda's Python runtimes ship and
call; it is a development requirement here so that the tests can call them the same way.
"""

from __future__ import annotations

import random
from typing import Any

from chalicelib import runtime

# The botocore session the snapshot's clients were built from: its loaded data (service
# models, endpoints) is immutable and is what the snapshot is for; its credentials are not.
_session: Any = None


def prepare_snapshot() -> None:
    """Before the snapshot: build the AWS clients, so that what they load is in it."""
    global _session
    import boto3
    import botocore.session

    _session = botocore.session.get_session()
    boto3.setup_default_session(botocore_session=_session)
    services = runtime.services()
    services.dynamodb  # noqa: B018 (built for its side effect: loading the service model)
    services.kms  # noqa: B018


def after_restore() -> None:
    """In each restored copy, before its first request."""
    random.seed()  # from os.urandom: this copy's own sequence
    _renew_aws_session()
    runtime.use(None)  # new services: new clients (connections, credentials) and caches
    runtime.services().dynamodb  # noqa: B018 (every request of either function reads it)


def _renew_aws_session() -> None:
    """A new default boto3 session, so that clients resolve this copy's credentials, sharing
    the snapshot's loaded service models (loading them again would cost most of a cold
    start's client creation)."""
    global _session
    import boto3
    import botocore.session

    fresh = botocore.session.get_session()
    if _session is not None:
        fresh.register_component("data_loader", _session.get_component("data_loader"))
    _session = fresh
    boto3.setup_default_session(botocore_session=fresh)


def register() -> None:
    """Registers the hooks with Lambda's runtime. Where nothing is ever snapshotted (the local
    stack, the tests, a function without SnapStart) they are registered and never called."""
    try:
        from snapshot_restore_py import register_after_restore, register_before_snapshot
    except ImportError:  # a runtime without SnapStart support: nothing will call them
        return
    register_before_snapshot(prepare_snapshot)
    register_after_restore(after_restore)
