"""The default dtype pinned to float64, for tests whose probes need its precision.

naivegraph's default dtype is torch's float32.  A test module that compares numpy float64
data, symbolic with eager results, or torch's float64 to 1e-10 or closer, and builds
placeholders or tensors from Python floats, imports the fixture and says why::

    from default_dtype import float64_default

    pytestmark = pytest.mark.usefixtures(float64_default.__name__)

``float64()`` does the same for one block or function (``with float64():`` or
``@float64()``), where a fixture cannot reach (helpers, Hypothesis tests).
"""

from __future__ import annotations

import contextlib
from typing import Iterator

import pytest

import naivegraph as ng


@contextlib.contextmanager
def float64() -> Iterator[None]:
    """naivegraph's default dtype float64 inside, the previous one after."""
    previous = ng.get_default_dtype()
    ng.set_default_dtype(ng.float64)
    try:
        yield
    finally:
        ng.set_default_dtype(previous)


@pytest.fixture
def float64_default() -> Iterator[None]:
    """naivegraph's default dtype float64 for one test, the previous one after it."""
    with float64():
        yield
