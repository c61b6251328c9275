"""Wiring only: the Chalice app, its middleware and its route blueprints."""

from chalice import Chalice

from chalicelib import web
from chalicelib.api import identity, keys, tokens, workspaces

app = Chalice(app_name="memory-auth")
app.register_middleware(web.errors_as_problems, "http")
app.register_blueprint(keys.blueprint)
app.register_blueprint(identity.blueprint)
app.register_blueprint(workspaces.blueprint)
app.register_blueprint(tokens.blueprint)
