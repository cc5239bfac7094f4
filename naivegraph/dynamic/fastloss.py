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

The backward of both nodes has its own fast kernels (``fast.nll_loss_grad`` and
``fast.log_softmax_grad``, hooked in their rules in :mod:`naivegraph.ops.table`).

Measured in the MLP step of ``benchmarks/bench_dynamic.py`` (784-256-10, batch 256,
float32; ``OPENBLAS_NUM_THREADS=1``; CPU time (``time.process_time_ns``) of each part
summed over 5 x 100 steps, the tricks on and off in alternate blocks of one process; a
shared 2-core machine, three runs):

=============================================  ===========  ===========
us per step                                    readable     fast
=============================================  ===========  ===========
``cross_entropy`` forward (this module)        142-175      119-153
NllLossBackward0's rule (``nll_loss_grad``)    34.1-35.6    23.8
LogSoftmaxBackward0's rule (``log_softmax``)   28.4-28.6    19.9-22.3
=============================================  ===========  ===========

About 45 us of a ~2.9 ms step (one BLAS thread): the forward's two validations of the
indices (a ``max`` and a ``min``, twice) become one reduction, and the two methods'
dispatch is gone.  Right after the large matrix products every numpy call runs with
cold caches: the same forward takes ~56 us in a loop of its own.
"""

from __future__ import annotations

import numpy as np

from .. import fast
from ..ops import OPS
from .tensor import Tensor, apply

#: this trick's own switch (the whole fast layer's switch turns it off too)
on: bool = True

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
    logp = apply(_LOG_SOFTMAX, (input,), {"dim": 1})
    return apply(_NLL_LOSS, (logp, target), {"reduction": reduction})


fast.fused_cross_entropy = cross_entropy
