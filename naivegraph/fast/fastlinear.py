"""Dynamic mode's fast layer for a dense layer's two ops: the matrix product ``x @ w`` of
two 2-D tensors of one floating dtype, and ``x.relu()`` of a floating tensor.

The readable way (``__matmul__`` -> ``Tensor.matmul`` -> ``OpMethods.matmul``, its mode
and dimension checks -> ``tensor.apply`` -> the op's quiet forward -> ``tensor._record``,
which finds the node's class by the operands' shapes) is general.  For these two ops
most of it is known in advance, so :func:`forward_ops` builds exactly the tensor and
the ``grad_fn`` node the readable path builds (same class, fields, saved values,
version stamps, edges, weak references) in one function, as :mod:`.fastpath` does for
``+ - * /``: ``needs``, what is saved and the node class are worked out once per
pattern.  The value is the readable one by construction: ``np.matmul`` on the two
arrays (the op's forward, whose dtype check is this path's own test) and relu's own
forward function, both under numpy's "ignore" error state.  It steps aside (the
readable path runs) for anything else: 1-D or batched operands, operands of two
dtypes, integer, bool or complex tensors, a non-tensor operand, anomaly mode,
saved-tensor hooks, forward-mode dual levels, and any error (the readable path then
raises it, with its own message).  Switch: ``fastlinear.enabled`` (and the whole
layer's).  What it saves in an MLP step: ``benchmarks/README.md``, "The fast layer,
module by module".
"""

from __future__ import annotations

import weakref
from typing import Callable

import numpy as np

from ..dynamic import node as nodes
from ..dynamic import saved as saved_values
from ..dynamic.anomaly_mode import mode as anomaly
from ..dynamic.forward import dual
from ..dynamic.grad_mode import _state, inference_users, mark_inference
from ..ops import OPS
from ..ops.methods import _NO_ATTRS
from . import tricks as fast
from .fastpath import _NO_EDGE, _is_plain, fastnode

#: this trick's own switch (the whole fast layer's switch turns it off too)
enabled: bool = True

_new = object.__new__
_MATMUL = OPS["matmul"]
_RELU = OPS["relu"]


class _MatmulPlan:
    """The per-pattern part of a matrix product's node: needs, what is saved."""

    __slots__ = ("needs", "save_x", "save_y")

    def __init__(self, needs: tuple) -> None:
        saves = _MATMUL.saves_for(needs)
        self.needs = needs
        self.save_x = 0 in saves
        self.save_y = 1 in saves


def forward_ops(readable: type) -> tuple:
    """``__matmul__`` and ``relu`` for the Tensor class: this path, or ``readable``'s
    method of the same name where it steps aside.

    >>> import naivegraph as ng
    >>> x = ng.ones(2, 3)
    >>> w = ng.ones(3, 1, requires_grad=True)
    >>> (x @ w).relu()      # this path: the same tensors and nodes as the readable one
    tensor([[3.],
            [3.]], grad_fn=<ReluBackward0>)
    >>> ng.ones(3) @ w      # a vector: the readable path (torch's three nodes)
    tensor([3.], grad_fn=<SqueezeBackward4>)
    """
    return _matmul(readable.__matmul__), _relu(readable.relu)


def _matmul(readable: Callable) -> Callable:
    """``x @ y`` of two 2-D tensors of one floating dtype: ``MmBackward0``."""
    op = _MATMUL
    # what matmul() builds by hand: one edge per input, the output never saved
    assert op.edge_inputs is None and "out" not in op.saves and op.differentiable
    cls = nodes.node_class(op.grad_fn_name(_NO_ATTRS, [(1, 1), (1, 1)]))
    # plans[2 * x_requires_grad + y_requires_grad]; plan 0 records no node
    plans = tuple(
        _MatmulPlan((x_grad, y_grad)) for x_grad in (False, True) for y_grad in (False, True)
    )

    def matmul(x, y):
        if not (enabled and fast.enabled) or dual.active:
            return readable(x, y)
        tensor = nodes.tensor_class
        if (type(x) is not tensor and not _is_plain(type(x))) or (
            type(y) is not tensor and not _is_plain(type(y))
        ):
            return readable(x, y)
        xd = x._data
        yd = y._data
        if type(xd) is not np.ndarray or type(yd) is not np.ndarray:
            return readable(x, y)
        dtype = xd.dtype
        if (
            yd.dtype != dtype
            or dtype.kind != "f"
            or xd.ndim != 2
            or yd.ndim != 2
            or xd.shape[1] != yd.shape[0]
        ):
            return readable(x, y)
        try:
            out = fast.call_quietly(np.matmul, (xd, yd), _NO_ATTRS)
        except Exception:
            return readable(x, y)  # which raises the error, explained

        result = _new(tensor)
        result._data = out
        result._output_nr = 0
        x_grad = x._requires_grad
        y_grad = y._requires_grad
        if not ((x_grad or y_grad) and _state.enabled):
            result._requires_grad = False
            result.grad_fn = None
            return mark_inference(result) if inference_users[0] and _state.inference else result
        if anomaly.enabled or saved_values.hook_stack:
            return readable(x, y)  # their bookkeeping is the readable path's
        result._requires_grad = True

        # -- its node: what ``tensor._record`` builds, field for field ---------------------
        plan = plans[2 * x_grad + y_grad]
        constants = None
        sources: tuple = ()
        if plan.save_x:
            counter = x._version_counter
            saved = [xd]
            sources = ((0, x, counter.value if counter is not None else 0),)
        else:
            saved = [nodes.meta_of(xd)]
        if plan.save_y:
            counter = y._version_counter
            saved.append(yd)
            sources += ((1, y, counter.value if counter is not None else 0),)
        else:
            saved.append(nodes.meta_of(yd))
        if x_grad:
            fn = x.grad_fn
            edge_x = (fn, x._output_nr) if fn is not None else (x._accumulator(), 0)
        else:
            edge_x = _NO_EDGE
            constants = {0: weakref.ref(x)}
        if y_grad:
            fn = y.grad_fn
            edge_y = (fn, y._output_nr) if fn is not None else (y._accumulator(), 0)
        else:
            edge_y = _NO_EDGE
            constants = {1: weakref.ref(y)}  # x requires grad here: no entry for it
        meta = nodes.meta_of(out)
        node = fastnode(
            cls,
            op,
            _NO_ATTRS,
            (edge_x, edge_y),
            saved,
            meta,
            sources,
            plan.needs,
            constants,
            weakref.ref(result),
        )
        result.grad_fn = node
        return result

    _named_as(matmul, readable, "__matmul__")
    return matmul


def _relu(readable: Callable) -> Callable:
    """``x.relu()`` of a floating tensor: ``ReluBackward0``, which saves the output."""
    op = _RELU
    needs = (True,)
    # what relu() builds by hand: one edge, the output saved and nothing else
    assert op.edge_inputs is None and op.saves_for(needs) == {"out"} and op.differentiable
    cls = nodes.node_class(op.grad_fn_name(_NO_ATTRS, [()]))
    forward = op.forward  # relu's own forward, quiet: the readable value by construction

    def relu(x):
        if not (enabled and fast.enabled) or dual.active:
            return readable(x)
        tensor = nodes.tensor_class
        if type(x) is not tensor and not _is_plain(type(x)):
            return readable(x)
        xd = x._data
        if type(xd) is not np.ndarray or xd.dtype.kind != "f":
            return readable(x)  # bool raises, integers and complex: the readable way
        try:
            out = forward(xd)
        except Exception:
            return readable(x)
        if type(out) is not np.ndarray:
            out = np.asarray(out)

        result = _new(tensor)
        result._data = out
        result._output_nr = 0
        if not (x._requires_grad and _state.enabled):
            result._requires_grad = False
            result.grad_fn = None
            return mark_inference(result) if inference_users[0] and _state.inference else result
        if anomaly.enabled or saved_values.hook_stack:
            return readable(x)
        result._requires_grad = True
        counter = result._counter()
        fn = x.grad_fn
        edge = (fn, x._output_nr) if fn is not None else (x._accumulator(), 0)
        saved = [nodes.meta_of(xd)]
        sources = (("out", counter, counter.value),)
        node = fastnode(
            cls, op, _NO_ATTRS, (edge,), saved, out, sources, needs, None, weakref.ref(result)
        )
        result.grad_fn = node
        return result

    _named_as(relu, readable, "relu")
    return relu


def _named_as(function: Callable, readable: Callable, name: str) -> None:
    function.__name__ = name
    function.__qualname__ = getattr(readable, "__qualname__", name)
    function.__doc__ = readable.__doc__
