"""Module-level ops: ``ng.exp(x)``, ``ng.sum(x, dim=0)``, ``ng.cat([a, b])`` ...

They are made by :func:`naivegraph.ops.functions.make_functions`, the one surface of
both modes: given a tensor, each calls the same-named op or Tensor method.  Given a
static node (``naivegraph.static``), it builds a node instead, which is how
``ns.trace`` turns a dynamic-mode function into a static graph.  Anything else
(numbers, lists, arrays) is first made a tensor, as ``ng.tensor`` would.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..ops.functions import make_functions as _make_functions
from .tensor import Tensor


def _lift(value: Any) -> Tensor:
    """A plain value as a tensor: Python numbers and lists as ``ng.tensor`` makes them,
    numpy values in their own dtype."""
    plain = isinstance(value, (int, float, list, tuple))
    return Tensor(value, dtype=None if plain else np.asarray(value).dtype)


_functions = _make_functions(_lift)
globals().update(_functions)

# torch has no top-level function of these names: the losses and avg_pool2d are
# ng.nn.functional's (torch's top-level batch_norm takes other arguments), view and
# expand are methods only.
_NOT_AT_TOP_LEVEL = (
    "view",
    "expand",
    "mse_loss",
    "nll_loss",
    "cross_entropy",
    "avg_pool2d",
    "batch_norm",
    "smooth_l1_loss",
    "huber_loss",
)

__all__ = [name for name in _functions if name not in _NOT_AT_TOP_LEVEL]
