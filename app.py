"""Wiring only: the Chalice app, its middleware, its route blueprints and the authorizer."""

import os
from typing import Any

from chalice import Chalice

from chalicelib import snapstart
from chalicelib.access import authorizer as data_plane

app = Chalice(app_name="memory-auth")
# Both functions run with SnapStart: what a restored copy must renew (chalicelib/snapstart.py).
snapstart.register()


@app.lambda_function(name="authorizer")
def authorizer(event: dict[str, Any], context: Any) -> dict[str, Any]:
    """The data-plane REQUEST authorizer (decisions.md "Data-plane authorizer")."""
    return data_plane.handle(event)


# Lambda names each function's handler in `_HANDLER`. The authorizer's function (handler
# `app.authorizer`) never routes HTTP, so its cold start skips the routes and their imports.
if os.environ.get("_HANDLER") != "app.authorizer":
    from chalicelib.api import dashboard, edge, identity, keys, login, oauth, workspaces

    app.register_middleware(edge.errors_as_problems, "http")
    app.register_blueprint(keys.blueprint)
    app.register_blueprint(identity.blueprint)
    app.register_blueprint(workspaces.blueprint)
    app.register_blueprint(login.blueprint)
    app.register_blueprint(oauth.blueprint)
    app.register_blueprint(dashboard.blueprint)
