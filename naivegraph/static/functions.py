"""Module-level functions of static mode: the same names as dynamic mode.

Each one builds a node through :func:`naivegraph.static.nodes.apply`; when no
argument is a node yet, the first one becomes a constant of the default graph, so
``ns.exp(2.0)`` is a node too (nothing is ever computed at build time).
"""

from __future__ import annotations

from typing import Any, Sequence

import numpy as np

from ..ops import OPS
from .graph import get_default_graph
from .nodes import Constant, Node, Operation, _refuse_other_modes, apply


def _node(x: Any) -> Node:
    if isinstance(x, Node):
        return x
    _refuse_other_modes((x,))
    graph = get_default_graph()
    c = Constant(x)
    graph._register(c, None, "const")
    return c


def _unary(name: str):
    def function(x: Any) -> Operation:
        return apply(OPS[name], (_node(x),), {})

    function.__name__ = name
    function.__doc__ = f"Elementwise ``{name}(x)`` as a graph node (computed when the graph runs)."
    return function


exp = _unary("exp")
log = _unary("log")
sqrt = _unary("sqrt")
sin = _unary("sin")
cos = _unary("cos")
tanh = _unary("tanh")
sigmoid = _unary("sigmoid")
relu = _unary("relu")
abs = _unary("abs")
neg = _unary("neg")


def _binary(name: str):
    def function(x: Any, y: Any) -> Operation:
        if not isinstance(x, Node) and not isinstance(y, Node):
            x = _node(x)
        return apply(OPS[name], (x, y), {})

    function.__name__ = name
    function.__doc__ = f"``{name}(x, y)`` with numpy broadcasting, as a graph node."
    return function


add, sub, mul, div = _binary("add"), _binary("sub"), _binary("mul"), _binary("div")
maximum, minimum = _binary("maximum"), _binary("minimum")
eq, ne, gt, ge, lt, le = (_binary(n) for n in ("eq", "ne", "gt", "ge", "lt", "le"))
logical_and, logical_or = _binary("logical_and"), _binary("logical_or")
logical_not = _unary("logical_not")


def pow(x: Any, exponent: Any) -> Operation:
    """``x ** exponent``; a Python number exponent keeps the op ``pow_scalar``."""
    if isinstance(exponent, Node) and not isinstance(x, Node):
        return apply(OPS["pow"], (x, exponent), {})
    return _node(x) ** exponent


def clamp(x: Any, min: Any = None, max: Any = None) -> Operation:
    """Limit ``x`` to ``[min, max]`` (either bound may be None)."""
    return _node(x).clamp(min, max)


def where(condition: Any, x: Any, y: Any) -> Operation:
    """``x`` where ``condition`` holds, else ``y``: the graph's way to branch on data.

    >>> import numpy as np, naivegraph.static as ns
    >>> with ns.Graph() as g:
    ...     v = ns.placeholder("v", shape=(3,))
    ...     r = ns.where(v > 0, v, 0.0)
    >>> g.forward(v=np.array([-1.0, 2.0, -3.0]), fetches=[r])[0].tolist()
    [0.0, 2.0, 0.0]
    """
    if not any(isinstance(a, Node) for a in (condition, x, y)):
        condition = _node(condition)
    return apply(OPS["where"], (condition, x, y), {})


def sum(x: Any, dim: Any = None, keepdim: bool = False) -> Operation:
    """Sum over ``dim`` (all axes when None)."""
    return _node(x).sum(dim=dim, keepdim=keepdim)


def mean(x: Any, dim: Any = None, keepdim: bool = False) -> Operation:
    """Mean over ``dim`` (all axes when None)."""
    return _node(x).mean(dim=dim, keepdim=keepdim)


def max(x: Any, dim: Any = None, keepdim: bool = False):
    """The largest value; along ``dim``, a ``(values, indices)`` pair, as in torch."""
    return _node(x).max(dim=dim, keepdim=keepdim)


def min(x: Any, dim: Any = None, keepdim: bool = False):
    """The smallest value; along ``dim``, a ``(values, indices)`` pair, as in torch."""
    return _node(x).min(dim=dim, keepdim=keepdim)


def argmax(x: Any, dim: int | None = None, keepdim: bool = False) -> Operation:
    """Index of the largest value (over ``dim``; of the flattened ``x`` when None)."""
    return _node(x).argmax(dim=dim, keepdim=keepdim)


def argmin(x: Any, dim: int | None = None, keepdim: bool = False) -> Operation:
    """Index of the smallest value (over ``dim``; of the flattened ``x`` when None)."""
    return _node(x).argmin(dim=dim, keepdim=keepdim)


def reshape(x: Any, *shape: Any) -> Operation:
    """``x`` with a new shape (same number of elements; one ``-1`` is inferred)."""
    return _node(x).reshape(*shape)


view = reshape


def transpose(x: Any, dim0: int, dim1: int) -> Operation:
    """Swap two axes."""
    return _node(x).transpose(dim0, dim1)


def permute(x: Any, *dims: Any) -> Operation:
    """Reorder all axes."""
    return _node(x).permute(*dims)


def t(x: Any) -> Node:
    """Transpose of a matrix (vectors and scalars come back unchanged)."""
    return _node(x).t()


def squeeze(x: Any, dim: Any = None) -> Operation:
    """Drop axes of length 1."""
    return _node(x).squeeze(dim)


def unsqueeze(x: Any, dim: int) -> Operation:
    """Insert an axis of length 1 at ``dim``."""
    return _node(x).unsqueeze(dim)


def expand(x: Any, *sizes: Any) -> Operation:
    """Broadcast ``x`` to ``sizes`` (``-1`` keeps an axis)."""
    return _node(x).expand(*sizes)


def flatten(x: Any, start_dim: int = 0, end_dim: int = -1) -> Node:
    """Merge axes ``start_dim..end_dim`` into one."""
    return _node(x).flatten(start_dim, end_dim)


def cat(tensors: Sequence[Any], dim: int = 0) -> Operation:
    """Concatenate along an existing axis."""
    tensors = list(tensors)
    if not any(isinstance(t_, Node) for t_ in tensors):
        tensors[0] = _node(tensors[0])
    return apply(OPS["cat"], (tensors,), {"dim": dim})


def stack(tensors: Sequence[Any], dim: int = 0) -> Operation:
    """Stack along a new axis."""
    tensors = list(tensors)
    if not any(isinstance(t_, Node) for t_ in tensors):
        tensors[0] = _node(tensors[0])
    return apply(OPS["stack"], (tensors,), {"dim": dim})


def matmul(x: Any, y: Any) -> Operation:
    """Matrix product with numpy's ``@`` rules."""
    if not isinstance(y, Node):
        x = _node(x)
    return apply(OPS["matmul"], (x, y), {})


mm = matmul


def softmax(x: Any, dim: int) -> Operation:
    """``exp(x) / sum(exp(x))`` along ``dim`` (numerically shifted)."""
    return _node(x).softmax(dim)


def log_softmax(x: Any, dim: int) -> Operation:
    """``log(softmax(x))`` along ``dim``, computed stably."""
    return _node(x).log_softmax(dim)


def mse_loss(x: Any, y: Any, reduction: str = "mean") -> Operation:
    """Mean (or summed) squared error."""
    return apply(OPS["mse_loss"], (_node(x), y), {"reduction": reduction})


def nll_loss(log_probs: Any, target: Any, reduction: str = "mean") -> Node:
    """Negative log-likelihood of integer class ``target`` under ``log_probs`` (N, C).

    ``target`` is a fixed array of class indices or a node (a placeholder of labels
    fed with every batch).
    """
    if not isinstance(target, Node):
        target = np.asarray(target)
    return apply(OPS["nll_loss"], (_node(log_probs), target), {"reduction": reduction})


def cross_entropy(x: Any, target: Any, reduction: str = "mean") -> Node:
    """Softmax cross-entropy: ``nll_loss(log_softmax(x, 1), target)``.

    ``target`` holds class indices: a fixed array, or a node (e.g. a placeholder of
    integer labels fed each batch).
    """
    return nll_loss(log_softmax(x, 1), target, reduction)
