"""How every suite starts the local stack (local/running.py), when the stack cannot start."""

from __future__ import annotations

import pytest

from local.running import StackDidNotStart, running_stack


def test_a_stack_that_exits_before_it_is_ready_fails_with_its_error_output() -> None:
    with pytest.raises(StackDidNotStart) as failed, running_stack("--stage", "nowhere"):
        pass

    assert "exited (1) before it was ready" in str(failed.value)
    assert "nowhere" in str(failed.value)  # the stack's own traceback, for whoever reads it
