"""The MCP authorization server's routes in each packaged API: all of them, and open.

Discovery, registration, the browser steps and the token endpoint are called without a
credential by design; the data-plane authorizer must never be attached to them, and the
table items they write (clients, authorizations, codes, grants, registration counters) need
no action beyond the API handler's item actions, which test_iam_policy.py holds.
"""

from __future__ import annotations

from tests.infra.conftest import Packaged

PREFIXES = ("/v1/oauth/", "/.well-known/oauth-")


def oauth_routes() -> set[tuple[str, str]]:
    from app import app

    return {
        (path, method.lower())
        for path, methods in app.routes.items()
        if path.startswith(PREFIXES)
        for method in methods
        if method != "OPTIONS"  # every path's CORS preflight (chalicelib/api/cors.py)
    }


def test_every_oauth_route_is_published_without_an_authorizer(packaged: Packaged) -> None:
    paths = packaged.template["Resources"]["RestAPI"]["Properties"]["DefinitionBody"]["paths"]
    routes = oauth_routes()
    assert len(routes) == 14  # metadata, 3 resource depths, register, authorize, callback,
    # consent (GET and POST), token, revoke, the pages' stylesheet, and the connected apps
    # (GET, DELETE /v1/oauth/grants: the service resolves their user token itself, as it does
    # for every /v1/auth route)
    for path, method in routes:
        assert method in paths.get(path, {}), (path, method)
        assert "security" not in paths[path][method], (path, method)
