"""Wiring only: the Chalice app, its middleware, its route blueprints and the authorizer."""

import gc
import os
from dataclasses import asdict
from typing import Any

from chalicelib import snapstart
from chalicelib.decisions import authorizer as data_plane
from chalicelib.runtime import services

# Lambda names each function's handler in `_HANDLER`. The authorizer's function calls the
# plain function below and loads nothing else: not Chalice, not the routes.
AUTHORIZER_HANDLER = "app.authorizer"
_HANDLER = os.environ.get("_HANDLER")
# Both functions run with SnapStart: what a restored copy must renew (chalicelib/snapstart.py).
snapstart.register()


def authorizer(event: dict[str, Any], context: Any) -> dict[str, Any]:
    """The data-plane REQUEST authorizer (README, "Data-plane authorizer")."""
    svc = services()
    return data_plane.authorize(event, svc.resolver, svc.settings.mcp_resources)


def webhook_delivery(event: dict[str, Any], context: Any) -> dict[str, Any]:
    """The work queue's consumer (SQS): webhook deliveries and revocation reports."""
    return services().work_batch(event.get("Records", []))


if _HANDLER != AUTHORIZER_HANDLER:
    from chalice import Chalice, Rate

    # Logs are Powertools' JSON lines (chalicelib/logs.py) on the logger of this name;
    # Chalice's own text handler on it would print every line twice, once as text.
    app = Chalice(app_name="memory-auth", configure_logs=False)
    # Declared to Chalice, which packages it as the function `authorizer` whose handler is
    # `app.authorizer`: Lambda calls the module's function, not this registration.
    app.lambda_function(name="authorizer")(authorizer)
    # The same for the work queue's consumer; its event source is in infra/resources.json.
    app.lambda_function(name="webhook_delivery")(webhook_delivery)

    @app.schedule(Rate(1, unit=Rate.HOURS), name="expiry_sweep")
    def expiry_sweep(event: Any) -> dict[str, int]:
        """Hourly: `key.expiring` 7 days before a key's end, `key.expired` once it passes."""
        return asdict(services().expiry_sweep.run())


# The sweep's and the queue's functions never route HTTP either: their cold starts skip the
# routes.
if _HANDLER not in (AUTHORIZER_HANDLER, "app.expiry_sweep", "app.webhook_delivery"):
    from chalicelib.api import (
        connected_apps,
        cors,
        credentials,
        dashboard,
        edge,
        events,
        identity,
        keys,
        oauth,
        reference,
        secret_scanning,
        service_clients,
        sessions,
        sign_ins,
        trust_policies,
        webhooks,
        workspaces,
    )

    # The first registered middleware is the outermost: CORS headers go on every answer,
    # the problems the next one renders included.
    app.register_middleware(cors.cross_origin, "http")
    app.register_middleware(edge.errors_as_problems, "http")
    app.register_blueprint(keys.blueprint)
    app.register_blueprint(identity.blueprint)
    app.register_blueprint(workspaces.blueprint)
    app.register_blueprint(trust_policies.blueprint)
    app.register_blueprint(webhooks.blueprint)
    app.register_blueprint(service_clients.blueprint)
    app.register_blueprint(sessions.blueprint)
    app.register_blueprint(sign_ins.blueprint)
    app.register_blueprint(events.blueprint)
    app.register_blueprint(secret_scanning.blueprint)
    app.register_blueprint(credentials.blueprint)
    app.register_blueprint(oauth.blueprint)
    app.register_blueprint(connected_apps.blueprint)
    app.register_blueprint(dashboard.blueprint)
    app.register_blueprint(reference.blueprint)
    cors.register_preflights(app)  # last: one OPTIONS route beside every route above

# In a Lambda function (which names its handler), what the init imported lives as long as the
# container: frozen, no garbage collection walks it again. The authorizer's first decision
# then builds its DynamoDB client without re-scanning the modules' objects (docs/performance.md,
# "Cold start"), and no later full collection of a warm container walks them.
if _HANDLER is not None:
    gc.freeze()
