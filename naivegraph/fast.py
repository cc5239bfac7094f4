"""The fast layer: every speed trick of naivegraph, in one place, each one switchable.

The readable modules (the dynamic engine, nodes, the static executor, the renderer)
call the small functions below at the few places where a trick helps; none is needed
for correctness.  With the layer off, each falls back to the plain way, and every
result is the same, bit for bit: the dynamic suite and the differential fuzzer run both
ways (``NAIVEGRAPH_FAST=0 make test``).

Switch it off for a whole process with ``NAIVEGRAPH_FAST=0`` in the environment, or for
a block of code:

>>> import naivegraph as ng
>>> from naivegraph import fast
>>> with fast.disabled():
...     x = ng.tensor(2.0, requires_grad=True)
...     (x * x).backward()
>>> x.grad
tensor(4.)

The tricks, with what each saves (``python benchmarks/bench_fast_layer.py``, which
times the dynamic benchmarks with all tricks on and with each one off in turn; figures
in ``benchmarks/README.md``):

``paused_gc``
    A backward pass or a static run allocates per node while the whole graph is alive:
    left on, Python's cyclic garbage collector rescans that graph again and again (most
    of the cost of a 1,000,000-op chain).  Graphs are acyclic and freed by reference
    counting, so the collector is paused for the pass.
``is_unshared``
    A leaf's gradient array that nothing else refers to becomes its ``.grad`` without a
    copy (PyTorch's AccumulateGrad steals a gradient whose use count is 1); the count is
    ``sys.getrefcount``, calibrated at import.  Off: ``.grad`` is always a fresh copy.
``cached_meta``
    Nodes keep the shape and dtype of inputs they do not save; one shared ``Meta`` per
    (shape, dtype) instead of a new object per node.
``node_class_cache``
    The ``grad_fn`` class of an op whose PyTorch name does not depend on the call is
    looked up once per op instead of by name on every call.
"""

from __future__ import annotations

import gc
import os
import sys
from contextlib import contextmanager
from typing import Callable, Iterator

#: The switch.  Read at every use, so it may be flipped at run time.
enabled: bool = os.environ.get("NAIVEGRAPH_FAST", "1") != "0"


def set_enabled(on: bool) -> None:
    """Turn the whole fast layer on or off."""
    global enabled
    enabled = bool(on)


@contextmanager
def disabled() -> Iterator[None]:
    """Run a block with the fast layer off (the readable path only)."""
    previous = enabled
    set_enabled(False)
    try:
        yield
    finally:
        set_enabled(previous)


# -- paused_gc ---------------------------------------------------------------------------
@contextmanager
def paused_gc() -> Iterator[None]:
    """Pause Python's cyclic garbage collector for one pass over a whole graph."""
    if not enabled or not gc.isenabled():
        yield
        return
    gc.disable()
    try:
        yield
    finally:
        gc.enable()


# -- is_unshared -------------------------------------------------------------------------
def _probe(value) -> int:
    return sys.getrefcount(value)


def _count_when_unshared() -> int:
    """What ``is_unshared`` sees for a caller's local that nothing else holds, measured
    through the same number of calls: interpreters differ in the references a call adds."""
    grad = object()
    return _probe(grad)


_UNSHARED_COUNT = _count_when_unshared()


def is_unshared(value) -> bool:
    """Whether only the caller's own variable refers to ``value`` (so it may be kept
    without a copy).  Always False with the fast layer off."""
    return enabled and sys.getrefcount(value) <= _UNSHARED_COUNT


# -- cached_meta -------------------------------------------------------------------------
_metas: dict[tuple, object] = {}


def cached_meta(shape: tuple, dtype, make: Callable) -> object:
    """``make(shape, dtype)``, shared between calls with the same shape and dtype."""
    if not enabled:
        return make(shape, dtype)
    key = (shape, dtype)
    meta = _metas.get(key)
    if meta is None:
        if len(_metas) > 4096:  # a bound, for programs that see endless new shapes
            _metas.clear()
        meta = _metas[key] = make(shape, dtype)
    return meta


# -- node_class_cache --------------------------------------------------------------------
_node_class_of_op: dict[object, type] = {}


def cached_node_class(op) -> type | None:
    """The grad_fn class remembered for ``op``, if any (None with the layer off)."""
    return _node_class_of_op.get(op) if enabled else None


def remember_node_class(op, cls: type) -> None:
    _node_class_of_op[op] = cls
