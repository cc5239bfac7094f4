"""The fast layer's ``cross_entropy`` for a dynamic batch: logits (N, C), class indices (N,).

The readable ``cross_entropy`` (:mod:`naivegraph.ops.functions`) checks the class
indices (dtype, shapes, and their range with a ``max`` and a ``min``), builds
``input.log_softmax(1)`` and calls ``nll_loss``, which checks the same indices again
before it dispatches op ``nll_loss``.  Here the indices are checked once, their range
in one reduction (:func:`naivegraph.fast.indices_below`: a negative index read as an
unsigned integer of its size is out of range too), and the two ops are applied straight
to the tensors, by the same ``apply`` the methods reach: the same tensors, the same
``LogSoftmaxBackward0`` and ``NllLossBackward0`` nodes, the same bits.  Anything else
(a probability target, an unbatched sample, another type, an index out of range, a bad
reduction) takes the readable way, which gives its own result or error.

>>> import naivegraph as ng
>>> logits = ng.zeros(2, 4, requires_grad=True)
>>> loss = ng.nn.functional.cross_entropy(logits, ng.tensor([0, 3]))
>>> loss.grad_fn, loss.grad_fn.next_functions[0][0]
(<NllLossBackward0 object at ...>, <LogSoftmaxBackward0 object at ...>)

The fused forward (:func:`_fused`, switch ``fused``): for float32 and float64 logits the
values of both ops are computed in one function (:func:`_values`: the same numpy calls
as ``ops.table._log_softmax`` and ``_nll_loss``, with ``np.max``, ``np.sum`` and
``ndarray.mean`` replaced by the ufunc reductions they make) and the two nodes built
field for field as ``tensor._record`` builds them, without two passes through ``apply``.
The backward of both nodes has its own fast kernels (``fast.nll_loss_grad`` and
``fast.log_softmax_grad``, hooked in their rules in :mod:`naivegraph.ops.table`).
What they save in an MLP step: ``benchmarks/README.md``, "The fast layer, module by
module".
"""

from __future__ import annotations

import weakref

import numpy as np

from ..dynamic import node as nodes
from ..dynamic import saved as saved_values
from ..dynamic.anomaly_mode import mode as anomaly
from ..dynamic.forward import dual
from ..dynamic.grad_mode import _state
from ..dynamic.tensor import Tensor, apply
from ..ops import OPS
from ..ops.methods import _NO_ATTRS
from . import tricks as fast
from .fastpath import fastnode, without_history

#: this trick's own switch (the whole fast layer's switch turns it off too)
on: bool = True

#: the fused forward's own switch (:func:`_fused`; off: the two ops through ``apply``)
fused: bool = True

_LOG_SOFTMAX = OPS["log_softmax"]
_NLL_LOSS = OPS["nll_loss"]
_REDUCTIONS = ("mean", "sum", "none")


def cross_entropy(input, target, reduction) -> Tensor | None:
    """``F.cross_entropy(input, target, reduction)`` for a float tensor (N, C) and an
    integer tensor (N,) of indices in range; None (the readable way) for anything else."""
    if not (on and fast.enabled) or type(input) is not Tensor or type(target) is not Tensor:
        return None
    if type(reduction) is not str or reduction not in _REDUCTIONS:
        return None
    x, t = input._data, target._data
    if type(x) is not np.ndarray or x.ndim != 2 or x.dtype.kind != "f":
        return None
    if t.shape != x.shape[:1] or t.dtype.kind not in "iu" or not fast.indices_below(t, x.shape[1]):
        return None
    if fused and x.dtype in _FUSED_DTYPES and not (dual.active or anomaly.enabled):
        if not (saved_values.hook_stack or target._requires_grad):
            return _fused(input, target, reduction)
    logp = apply(_LOG_SOFTMAX, (input,), {"dim": 1})
    return apply(_NLL_LOSS, (logp, target), {"reduction": reduction})


# -- the fused forward -----------------------------------------------------------------------
#: float16's mean adds up in float32 (numpy's ``_mean``): it keeps the two ops' way
_FUSED_DTYPES = (np.dtype(np.float32), np.dtype(np.float64))


def _values(x: np.ndarray, target: np.ndarray, reduction: str) -> tuple:
    """The values of ``log_softmax(x, 1)`` and of ``nll_loss`` on it: the numpy calls of
    ``ops.table._log_softmax`` and ``_nll_loss`` (``np.max`` and ``np.sum`` are these
    ufuncs' reductions, ``ndarray.mean`` is numpy's ``_methods._mean`` on a float32 or
    float64 vector: a sum, then a division by the count as an ``intp``, in the sum's own
    type), without their Python layers."""
    shifted = np.subtract(x, np.maximum.reduce(x, axis=1, keepdims=True))
    e = np.exp(shifted)
    logs = np.log(np.add.reduce(e, axis=1, keepdims=True))
    logp = np.subtract(shifted, logs, out=e)  # e's buffer: nothing reads it any more
    picked = np.negative(logp[np.arange(logp.shape[0]), target])
    if reduction == "none":
        return logp, picked
    total = np.add.reduce(picked, axis=None)
    if reduction == "sum":
        return logp, np.asarray(total)
    return logp, np.asarray(total.dtype.type(total / np.intp(picked.shape[0])))


def _fused(input: Tensor, target: Tensor, reduction: str) -> Tensor:
    """``cross_entropy`` as ``apply`` builds it from its two ops (the same tensors, the
    same ``LogSoftmaxBackward0`` and ``NllLossBackward0`` nodes, field for field, as
    ``tensor._record`` makes them), with the values of :func:`_values`."""
    x, t = input._data, target._data
    logp_data, loss_data = fast.call_quietly(_values, (x, t, reduction), _NO_ATTRS)
    logp, loss = without_history(logp_data), without_history(loss_data)
    if not (input._requires_grad and _state.enabled):
        return loss
    logp._requires_grad = loss._requires_grad = True
    # LogSoftmaxBackward0: the output saved, one edge
    fn = input.grad_fn
    edge = (fn, input._output_nr) if fn is not None else (input._accumulator(), 0)
    counter = logp._counter()
    saved = [nodes.meta_of(x)]
    attrs = {"dim": 1}
    logp.grad_fn = fastnode(
        nodes.find_node_class(_LOG_SOFTMAX, attrs, saved),
        _LOG_SOFTMAX,
        attrs,
        (edge,),
        saved,
        logp_data,
        (("out", counter, counter.value),),
        (True,),
        None,
        weakref.ref(logp),
    )
    # NllLossBackward0: the targets saved, an edge for the log-probabilities only
    saved = [nodes.meta_of(logp_data), t]
    attrs = {"reduction": reduction}
    loss.grad_fn = fastnode(
        nodes.find_node_class(_NLL_LOSS, attrs, saved),
        _NLL_LOSS,
        attrs,
        ((logp.grad_fn, 0),),
        saved,
        nodes.meta_of(loss_data),
        ((1, target, target._saved_version),),
        (True, False),
        {1: weakref.ref(target)},
        weakref.ref(loss),
    )
    return loss
