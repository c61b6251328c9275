"""The official MCP conformance tool's authorization-server metadata scenario, against the
local stack's issuer (tests/conformance/ pins the tool; `npm ci` installs it on demand).

Its interactive code-grant scenario prints a URL for a person to open: tests/interop/
test_conformance.py is that person, for a registered and a metadata-document client.
"""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

from tests.e2e.conftest import Stack
from tests.e2e.node import installed

CONFORMANCE_DIR = Path(__file__).resolve().parents[1] / "conformance"
_COLOURS = re.compile(r"\x1b\[[0-9;]*m")


def test_the_authorization_server_metadata_scenario_passes(stack: Stack) -> None:
    folder = installed(CONFORMANCE_DIR)
    run = subprocess.run(
        ["npm", "run", "--silent", "authorization-metadata", "--", stack.endpoint],
        cwd=folder, capture_output=True, text=True, timeout=180,
    )
    output = _COLOURS.sub("", run.stdout + run.stderr)
    assert run.returncode == 0, output
    assert re.search(r"Passed: (\d+)/\1, 0 failed, 0 warnings", output), output
