"""The static graph of lesson 10's loop exercise, built as the lesson builds it."""

from __future__ import annotations

import numpy as np

import naivegraph.static as ns


def poly_graph():
    """The lesson's polynomial graph: a + b x + c x^2 + d x^3, then e x^p in a loop."""
    coef = [0.1, -0.2, 0.3, 0.05, 0.5]
    with ns.Graph() as poly:
        xp = ns.placeholder("x", shape=(None,))
        top = ns.placeholder("top", shape=())
        weights = [ns.Variable(np.array(v), name=n) for v, n in zip(coef, "abcde")]
        a, b, c, d, e = weights
        base = a + b * xp + c * xp**2.0 + d * xp**3.0
    return poly, (lambda p, y: p < top), base, xp, top, weights
