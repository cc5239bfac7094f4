"""The global random generator (per thread), and the generator a ``generator=`` argument
names; numpy's generators draw the numbers."""

from __future__ import annotations

import threading
from typing import Any

import numpy as np


class _Random(threading.local):
    generator = np.random.default_rng()


_random = _Random()


def generator_rng(generator: Any) -> np.random.Generator:
    """The numpy generator behind ``generator`` (an ``ng.Generator``), or the global one."""
    if generator is None:
        return _random.generator
    rng = getattr(generator, "_rng", None)
    if not isinstance(rng, np.random.Generator):
        raise TypeError(f"generator must be a naivegraph Generator, got {type(generator).__name__}")
    return rng
