"""The local stack as a child process: the one way every test suite starts it.

`running_stack()` starts `python -m local.stack --port 0 --quiet --ready-file …` (moto, the
development issuer and the service on free loopback ports), waits for its ready file and
stops it, moto included, on the way out. The end-to-end tests and the Python SDK's tests call
it; the TypeScript SDK's tests spawn the same command (sdks/typescript/test/stack.ts).

The ready file is the stack's answer (endpoint, ports, the development user and its token).
`write_ready_file` writes it whole to a temporary file in the same folder, then renames it
into place, so whoever sees the file sees all of it: a reader never retries a half-written
one. Nothing here imports the service's code or its dependencies: the SDKs' tests import
this module from outside the project.

`on_output` hands each line the stack prints (its JSON log lines) to the caller as it is
printed, from a thread reading the stack's stdout: the end-to-end tests wait on a line (the
stack saying it did something) instead of for a while.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import Any

from infra.template import PROJECT_DIR

STARTUP_SECONDS = 90.0
STOP_SECONDS = 15.0


class StackDidNotStart(RuntimeError):
    """The stack exited, or wrote no ready file in time; the message ends with its stderr."""


def write_ready_file(path: Path, info: Mapping[str, Any]) -> None:
    """`info` as JSON at `path`, appearing all at once (rename within one folder is atomic)."""
    descriptor, temporary = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    try:
        with os.fdopen(descriptor, "w") as out:
            json.dump(info, out)
        os.replace(temporary, path)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(temporary)
        raise


def read_ready_file(path: Path) -> dict[str, Any] | None:
    """The stack's ready file, or None while it does not exist (it is never half written)."""
    try:
        text = path.read_text()
    except FileNotFoundError:
        return None
    info: dict[str, Any] = json.loads(text)
    return info


@contextlib.contextmanager
def running_stack(
    *arguments: str,
    environment: Mapping[str, str] | None = None,
    startup_seconds: float = STARTUP_SECONDS,
    on_output: Callable[[str], None] | None = None,
) -> Iterator[dict[str, Any]]:
    """A local stack on free ports for the duration of the block; yields its ready file.

    `arguments` are added to `python -m local.stack`'s; `environment` to this process's
    (TRUSTED_ISSUERS adds issuers to the development one). Its stdout, which prints the
    development token, is discarded, unless `on_output`: then each of its lines (without the
    line break) is handed to it, in order, from a thread of this process, for tests that
    wait on the service's log lines. Its stderr ends the error when it does not start.
    """
    with tempfile.TemporaryDirectory(prefix="memory-auth-stack-") as scratch:
        ready_file = Path(scratch) / "ready.json"
        errors = Path(scratch) / "stderr.log"
        with errors.open("wb") as stderr:
            process = subprocess.Popen(  # noqa: S603 (this interpreter, our module, no shell)
                [
                    sys.executable, "-m", "local.stack", "--port", "0", "--quiet",
                    "--ready-file", str(ready_file), *arguments,
                ],
                cwd=PROJECT_DIR,
                env={**os.environ, **(environment or {})},
                stdout=subprocess.DEVNULL if on_output is None else subprocess.PIPE,
                stderr=stderr,
            )
        reader = None
        if on_output is not None and process.stdout is not None:
            reader = threading.Thread(
                target=_hand_lines, args=(process.stdout, on_output), name="stack-output",
                daemon=True,
            )
            reader.start()
        try:
            yield _wait_until_ready(process, ready_file, errors, startup_seconds)
        finally:
            _stop(process)
            if reader is not None:
                reader.join(timeout=STOP_SECONDS)  # ends at the pipe's end, once it stopped


def _hand_lines(stdout: Any, on_output: Callable[[str], None]) -> None:
    """Reads the stack's stdout to its end (the stack never blocks on a full pipe)."""
    with stdout:
        for raw in stdout:
            on_output(raw.decode(errors="replace").rstrip("\r\n"))


def _wait_until_ready(
    process: subprocess.Popen[bytes], ready_file: Path, errors: Path, seconds: float
) -> dict[str, Any]:
    deadline = time.monotonic() + seconds
    while (info := read_ready_file(ready_file)) is None:
        if process.poll() is not None:
            raise StackDidNotStart(
                f"the local stack exited ({process.returncode}) before it was ready:\n"
                + _tail(errors)
            )
        if time.monotonic() > deadline:
            raise StackDidNotStart(
                f"the local stack was not ready within {seconds:.0f} s:\n" + _tail(errors)
            )
        time.sleep(0.1)
    return info


def _stop(process: subprocess.Popen[bytes]) -> None:
    """SIGTERM, as Ctrl-C: the stack stops moto and the issuer itself."""
    if process.poll() is None:
        process.send_signal(signal.SIGTERM)
    try:
        process.wait(timeout=STOP_SECONDS)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()


def _tail(path: Path, characters: int = 3000) -> str:
    return path.read_text(errors="replace")[-characters:]
