"""The development identity provider can never run outside local mode (local/idp.py)."""

from __future__ import annotations

import pytest

from local.idp import DevIdpServer, NotLocal, main


@pytest.mark.parametrize("value", [None, "", "0", "true"])
def test_dev_idp_refuses_to_start_without_local_mode(
    monkeypatch: pytest.MonkeyPatch, value: str | None
) -> None:
    if value is None:
        monkeypatch.delenv("LOCAL_MODE", raising=False)
    else:
        monkeypatch.setenv("LOCAL_MODE", value)
    with pytest.raises(NotLocal):
        DevIdpServer(port=0)
    assert main(["--port", "0"]) == 2


def test_dev_idp_binds_loopback_only(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("LOCAL_MODE", "1")
    with pytest.raises(NotLocal):
        DevIdpServer(host="0.0.0.0", port=0)

