"""Hypothesis settings for the unit tier's property tests.

`ci` (the default) is derandomized: each test's examples come from a hash of the test itself,
so every run, here or in CI, tries the same ones and a failure reproduces; nothing is kept
between runs. `HYPOTHESIS_PROFILE=explore` searches wider and at random, by hand.
"""

from __future__ import annotations

import os

from hypothesis import settings

settings.register_profile(
    "ci", derandomize=True, database=None, max_examples=200, deadline=None, print_blob=True
)
settings.register_profile("explore", max_examples=5000, deadline=None)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))
