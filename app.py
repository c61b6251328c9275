"""Wiring only: the Chalice app, its middleware, its route blueprints and the authorizer."""

import os
from dataclasses import asdict
from typing import Any

from chalice import Chalice, Rate

from chalicelib import snapstart
from chalicelib.decisions import authorizer as data_plane
from chalicelib.runtime import services

# Logs are Powertools' JSON lines (chalicelib/logs.py) on the logger of this name; Chalice's
# own text handler on it would print every line twice, once as text.
app = Chalice(app_name="memory-auth", configure_logs=False)
# Both functions run with SnapStart: what a restored copy must renew (chalicelib/snapstart.py).
snapstart.register()


@app.lambda_function(name="authorizer")
def authorizer(event: dict[str, Any], context: Any) -> dict[str, Any]:
    """The data-plane REQUEST authorizer (README, "Data-plane authorizer")."""
    svc = services()
    return data_plane.authorize(event, svc.resolver, svc.settings.mcp_resources)


@app.schedule(Rate(1, unit=Rate.HOURS), name="expiry_sweep")
def expiry_sweep(event: Any) -> dict[str, int]:
    """Hourly: `key.expiring` 7 days before a key's end, `key.expired` once it passes."""
    return asdict(services().expiry_sweep.run())


# Lambda names each function's handler in `_HANDLER`. The authorizer's and the sweep's
# functions never route HTTP, so their cold starts skip the routes and their imports.
if os.environ.get("_HANDLER") not in ("app.authorizer", "app.expiry_sweep"):
    from chalicelib.api import (
        connected_apps,
        cors,
        dashboard,
        edge,
        events,
        identity,
        keys,
        oauth,
        reference,
        secret_scanning,
        sessions,
        trust_policies,
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
    app.register_blueprint(sessions.blueprint)
    app.register_blueprint(events.blueprint)
    app.register_blueprint(secret_scanning.blueprint)
    app.register_blueprint(oauth.blueprint)
    app.register_blueprint(connected_apps.blueprint)
    app.register_blueprint(dashboard.blueprint)
    app.register_blueprint(reference.blueprint)
    cors.register_preflights(app)  # last: one OPTIONS route beside every route above
