"""The fast layer forced on, for tests that compare it with the readable path.

``make test-readable`` turns the layer off for the whole process; a test module that
compares on with off imports the fixture and uses it on every test::

    from fast_switch import fast_layer_on

    pytestmark = pytest.mark.usefixtures(fast_layer_on.__name__)

and ``both_ways(program, *args)`` runs a program both ways for the comparison.
"""

from __future__ import annotations

from typing import Iterator

import pytest

from naivegraph import fast


@pytest.fixture
def fast_layer_on() -> Iterator[None]:
    """The fast layer on for one test, whatever the process's setting."""
    previous = fast.enabled
    fast.set_enabled(True)
    yield
    fast.set_enabled(previous)


def both_ways(program, *args):
    """``program(*args)`` with the fast layer on, then off: ``(on, off)`` to compare."""
    on = program(*args)
    with fast.disabled():
        off = program(*args)
    return on, off
