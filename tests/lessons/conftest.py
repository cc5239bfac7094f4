"""What every lesson test starts from: each checker on its first try (its first hint),
and grad mode on whatever the test before it left behind."""

from __future__ import annotations

import pytest

import naivegraph as ng
from naivegraph.lessons import checking


@pytest.fixture(autouse=True)
def fresh_tries():
    """Each test starts at the first hint, and leaves grad mode on."""
    checking.TRIES.clear()
    yield
    checking.TRIES.clear()
    ng.set_grad_enabled(True)
