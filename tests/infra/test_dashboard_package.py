"""The packaged Lambda carries the dashboard's built files (`make package` builds them first),
and each stage names its dashboard login provider, if any, among the issuers it trusts."""

from __future__ import annotations

import json
import re
import zipfile

from chalicelib.config import parse_trusted_issuers
from chalicelib.dashboard import assets
from chalicelib.dashboard.sign_in import parse_dashboard_login
from tests.infra.conftest import Packaged
from tools.package import package_dir


def test_the_deployment_package_holds_the_built_dashboard(packaged: Packaged) -> None:
    with zipfile.ZipFile(package_dir(packaged.stage) / "deployment.zip") as archive:
        names = set(archive.namelist())
        page = archive.read("chalicelib/dashboard/static/index.html").decode()
    referenced = re.findall(r'(?:src|href)="([^"]+)"', page)
    assert referenced, "index.html names no file"
    for name in referenced:
        assert f"chalicelib/dashboard/static/{name}" in names, name
    # The very files this checkout built: a stale or foreign build would differ.
    built = {p.name for p in assets.STATIC_DIR.iterdir()}
    assert {
        n.rsplit("/", 1)[1] for n in names if n.startswith("chalicelib/dashboard/static/")
    } == built
    # The source and its tooling stay out of the Lambda.
    assert not any(n.startswith(("dashboard/", "node_modules/")) for n in names)


def test_each_stage_names_a_usable_dashboard_login_or_none(
    packaged: Packaged, config_env: dict[str, str]
) -> None:
    environment = packaged.environment()
    assert environment["DASHBOARD_LOGIN"] == config_env["DASHBOARD_LOGIN"]
    trusted = parse_trusted_issuers(environment.get("TRUSTED_ISSUERS", ""), local_mode=False)
    # Empty, or a provider the exchange trusts: a deployed stage never serves a sign-in
    # that ends in a refusal.
    parse_dashboard_login(environment["DASHBOARD_LOGIN"], trusted, local_mode=False)
    json.dumps(environment)  # plain strings only
