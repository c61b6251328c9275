"""Wiring only: the Chalice app, its middleware, its route blueprints and the authorizer."""

import os
from typing import Any

from chalice import Chalice

from chalicelib.access import authorizer as data_plane

app = Chalice(app_name="memory-auth")


@app.lambda_function(name="authorizer")
def authorizer(event: dict[str, Any], context: Any) -> dict[str, Any]:
    """The data-plane REQUEST authorizer (decisions.md "Data-plane authorizer")."""
    return data_plane.handle(event)


# Lambda names each function's handler in `_HANDLER`. The authorizer's function (handler
# `app.authorizer`) never routes HTTP, so its cold start skips the routes and their imports.
if os.environ.get("_HANDLER") != "app.authorizer":
    from chalicelib.api import (
        cors,
        dashboard,
        edge,
        identity,
        keys,
        login,
        oauth,
        reference,
        workspaces,
    )

    # The first registered middleware is the outermost: CORS headers go on every answer,
    # the problems the next one renders included.
    app.register_middleware(cors.cross_origin, "http")
    app.register_middleware(edge.errors_as_problems, "http")
    app.register_blueprint(keys.blueprint)
    app.register_blueprint(identity.blueprint)
    app.register_blueprint(workspaces.blueprint)
    app.register_blueprint(login.blueprint)
    app.register_blueprint(oauth.blueprint)
    app.register_blueprint(dashboard.blueprint)
    app.register_blueprint(reference.blueprint)
    cors.register_preflights(app)  # last: one OPTIONS route beside every route above
