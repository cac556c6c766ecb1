"""Test-session settings shared by every test file.

Hypothesis property tests run derandomized by default (the ``derandomized`` profile: a fixed
example sequence per test), so a clean clone's CI run is reproducible; set
``HYPOTHESIS_PROFILE=explore`` to draw fresh random examples on every run when hunting for
defects (a review reported a batch-vs-single difference of 1.8e-12 from a random example that
800 later draws did not reproduce; a failure there should be found by exploring, then pinned
with ``@example``, not met at random in CI)."""

from __future__ import annotations

import os

from hypothesis import settings

settings.register_profile("derandomized", derandomize=True)
settings.register_profile("explore", derandomize=False)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "derandomized"))
