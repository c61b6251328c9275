"""The local stand-in for GitHub's secret scanning refuses to run anywhere but locally."""

from __future__ import annotations

import pytest

from chalicelib.scanning.github import PublishedKeys, verify
from local.idp import NotLocal
from local.secret_scanning import DevSecretScanningServer, DevSigner


def test_it_refuses_to_start_without_local_mode(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("LOCAL_MODE", raising=False)

    with pytest.raises(NotLocal):
        DevSecretScanningServer("127.0.0.1", 0)


def test_it_binds_loopback_only(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("LOCAL_MODE", "1")

    with pytest.raises(NotLocal):
        DevSecretScanningServer("0.0.0.0", 0)


def test_its_signatures_verify_with_its_published_list() -> None:
    signer = DevSigner()
    body = b'[{"token": "x"}]'
    keys = PublishedKeys(signer.key_list, clock=lambda: 0.0)

    assert verify(keys, signer.key_identifier, signer.sign(body), body) is True
    assert verify(keys, signer.key_identifier, signer.sign(body), body + b"\n") is False
