"""Deterministic work counts, so complexity is tested without timing anything.

``lines_run(fn)`` counts the source lines of naivegraph that ``fn()`` executes: the
same code on the same input always gives the same count, on any machine and under any
load.  A linear algorithm run on a 10x larger input counts about 10x the lines; a
quadratic one about 100x.
"""

from __future__ import annotations

import os
import sys
from typing import Callable

import naivegraph

_PACKAGE = os.path.dirname(os.path.abspath(naivegraph.__file__))


def lines_run(fn: Callable[[], object]) -> int:
    count = 0

    def local(frame, event, arg):
        nonlocal count
        if event == "line":
            count += 1
        return local

    def global_(frame, event, arg):
        # Trace lines only inside the package: numpy and the test itself are not work.
        return local if frame.f_code.co_filename.startswith(_PACKAGE) else None

    previous = sys.gettrace()
    sys.settrace(global_)
    try:
        fn()
    finally:
        sys.settrace(previous)
    return count


def growth(run: Callable[[int], object], small: int, large: int) -> float:
    """How much more work ``run(large)`` does than ``run(small)``."""
    return lines_run(lambda: run(large)) / max(lines_run(lambda: run(small)), 1)
