"""The fast layer's plain SGD step: no momentum, no weight decay, not maximizing.

The readable ``SGD.step`` walks ``Optimizer._updates`` (a generator yielding parameter,
gradient, group and state) and tests each option per parameter before
``Optimizer._write``.  With every option off, what it does per parameter with a
gradient is ``state.setdefault(id(p), {})``, ``p._data -= (lr * g).astype(dtype,
copy=False)`` and one version bump; :func:`sgd_step` does exactly that in one loop
(the same numpy calls in the same order: the same bits, versions and state).  It
steps aside (the readable step runs) when the layer or its switch is off, for a group
with any option on, and for a subclass that redefines ``_updates`` or ``_write``.

``zero_grad`` has no fast twin: its loop is already one attribute store per parameter
(0.14 us for the MLP's four, ``timeit``); in the MLP step its ~5 us are the timer and
the release of the old gradient arrays.

Measured (one machine): the MLP's four parameters as tiny (3,) float32 arrays, so the
loop is all there is, ``timeit`` best of 7 x 3,000 steps, alternating: readable
6.36-6.44 us, this loop 5.32-5.35 us per step.  In the MLP step of
``benchmarks/bench_dynamic.py`` (``benchmarks/bench_mlp_parts.py``, see
:mod:`naivegraph.dynamic.fastlinear`) the update is numpy's arithmetic on the
784 x 256 gradient with cold caches (84-148 us both ways), where the loop's ~1 us is
inside the noise.  A reused scratch array for ``lr * g`` (the same bits) saved ~6 us
there, within the noise too, for 800 kB held per parameter shape: not done.
"""

from __future__ import annotations

from typing import Callable

from .. import fast

#: this trick's own switch (the whole fast layer's switch turns it off too)
enabled: bool = True

_NUMBERS = (float, int)


def sgd_step(readable: Callable, base: type) -> Callable:
    """``SGD.step``: this loop where every group is plain SGD, else ``readable``.
    ``base`` is the class whose ``_updates`` and ``_write`` this loop inlines.

    >>> import naivegraph as ng
    >>> w = ng.tensor([1.0, 2.0], requires_grad=True)
    >>> opt = ng.optim.SGD([w], lr=0.5)
    >>> w.grad = ng.tensor([1.0, -1.0]); opt.step()
    >>> w, w._version
    (tensor([0.5000, 2.5000], requires_grad=True), 1)
    """
    updates, write = base._updates, base._write

    def step(self) -> None:
        cls = type(self)
        if not (enabled and fast.enabled) or cls._updates is not updates or cls._write is not write:
            return readable(self)
        groups = self.param_groups
        for group in groups:
            if group["maximize"] or group["weight_decay"] or group["momentum"]:
                return readable(self)
            if type(group["lr"]) not in _NUMBERS:  # a numpy scalar or a tensor: its own rules
                return readable(self)
        state = self.state
        for group in groups:
            lr = group["lr"]
            for p in group["params"]:
                grad = p._grad
                if grad is None:
                    continue
                state.setdefault(id(p), {})
                data = p._data
                delta = lr * grad._data
                if delta.dtype != data.dtype:
                    delta = delta.astype(data.dtype, copy=False)
                data -= delta
                p._counter().value += 1  # an in-place change, as torch's optimisers make

    step.__name__ = "step"
    step.__qualname__ = getattr(readable, "__qualname__", "step")
    step.__doc__ = readable.__doc__
    return step
