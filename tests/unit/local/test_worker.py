"""The local queue worker says once, in one line, that moto stopped answering."""

from __future__ import annotations

import logging
import threading
from types import SimpleNamespace
from typing import Any

import pytest
from botocore.exceptions import EndpointConnectionError

import chalicelib.runtime
from local import worker


class _Stopped:
    """An SQS client whose endpoint is gone: every call fails to connect."""

    def __init__(self, stop_after: int, stop: threading.Event) -> None:
        self.calls = 0
        self._stop_after = stop_after
        self._stop = stop

    def get_queue_url(self, **_: Any) -> dict[str, str]:
        self.calls += 1
        if self.calls >= self._stop_after:
            self._stop.set()
        raise EndpointConnectionError(endpoint_url="http://127.0.0.1:1/")


def test_a_stopped_moto_is_one_warning_without_a_traceback_however_often_it_is_polled(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    queue_worker = worker.QueueWorker()
    sqs = _Stopped(stop_after=4, stop=queue_worker._stop)
    settings = SimpleNamespace(settings=SimpleNamespace(region="us-east-1", webhook_queue_name="q"))
    monkeypatch.setattr(chalicelib.runtime, "services", lambda: settings)
    monkeypatch.setattr(chalicelib.runtime, "aws_client", lambda *_, **__: sqs)
    monkeypatch.setattr(worker, "MAX_BACKOFF", 0.0)
    monkeypatch.setattr(queue_worker._stop, "wait", lambda *_: queue_worker._stop.is_set())

    with caplog.at_level(logging.WARNING):
        queue_worker._run()

    assert sqs.calls == 4
    said = [r for r in caplog.records if "queue worker" in r.getMessage()]
    assert len(said) == 1
    assert said[0].levelno == logging.WARNING
    assert said[0].exc_info is None
