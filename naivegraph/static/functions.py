"""Module-level functions of static mode: the same names as dynamic mode.

They are made by :func:`naivegraph.ops.functions.make_functions`, the one surface of
both modes, so ``ns.mse_loss`` checks its arguments exactly as ``F.mse_loss`` does.
Each builds a node through :func:`naivegraph.static.nodes.apply`; a plain value in
the first place becomes a constant (of the default graph when no argument is a node
yet), so ``ns.exp(2.0)`` is a node too (nothing is ever computed at build time).

>>> import numpy as np, naivegraph.static as ns
>>> with ns.Graph() as g:
...     x = ns.placeholder("x", shape=(None, 3))
...     loss = ns.mse_loss(ns.relu(x), np.ones((4, 3)))
>>> float(g.forward(x=np.zeros((4, 3)), fetches=[loss])[0])
1.0
"""

from __future__ import annotations

from typing import Any

from ..ops.functions import make_functions as _make_functions
from .nodes import Constant, Node, _refuse_other_modes


def _constant(x: Any) -> Constant:
    """A plain value as a constant; a dynamic tensor is refused (its values enter the
    graph through ``ns.constant(t.numpy())``).  The op the constant feeds registers it,
    in the graph of the op's other inputs or else the default graph."""
    _refuse_other_modes((x,))
    return Constant(x)


def _is_node(x: Any) -> bool:
    return isinstance(x, Node)


_functions = _make_functions(_constant, accepts=_is_node)

# A node has no in-place writes nor a requires_grad flag to copy or cut off.
_DYNAMIC_ONLY = ("clone", "detach")

__all__ = [name for name in _functions if name not in _DYNAMIC_ONLY]
globals().update({name: _functions[name] for name in __all__})

# The shared docstrings' examples run with this module's doctests.
__test__ = {name: _functions[name] for name in __all__ if ">>>" in (_functions[name].__doc__ or "")}
