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

The tricks.  Measured together with instruction counts (``valgrind --tool=callgrind``,
repeatable where wall-clock time on a shared 2-core machine moved by 10-40% between
runs): with the layer off, the reference example's forward + backward executes 3.4%
more instructions and a 1,000-op scalar chain 8.0% more.  ``benchmarks/bench_fast_layer.py``
times each trick switched off alone; the figures and their noise are in
``benchmarks/README.md``.

``paused_gc``
    A backward pass or a static run allocates per node while the whole graph is alive:
    left on, Python's cyclic garbage collector rescans that graph again and again (the
    cost grows with the graph: it matters from ~10,000 nodes up).  Graphs are acyclic
    and freed by reference counting, so the collector is paused for the pass.
``is_unshared``
    A leaf's gradient array that nothing else refers to becomes its ``.grad`` without a
    copy (PyTorch's AccumulateGrad steals a gradient whose use count is 1); the count is
    ``sys.getrefcount``, calibrated at import.  Off: ``.grad`` is always a fresh copy,
    which for an MLP's weight matrices is a copy of every gradient on every step.
``cached_meta``
    Nodes keep the shape and dtype of inputs they do not save; one shared ``Meta`` per
    (shape, dtype) instead of a new object per node.
``node_class_of_op``
    The ``grad_fn`` class of an op whose PyTorch name does not depend on the call is
    looked up once per op instead of by name on every call.

Static mode (its tricks live in a module of their own, :mod:`naivegraph.static.fastrun`,
because they need the static executor's plans; this switch turns them off too):

``straight-line plans``
    A compiled function (``graph.compile``) runs its plan as one generated Python
    function, one line per step: one ``np.errstate`` per run instead of one per op,
    locals instead of a slot list, fused chains written out inline, and ufunc steps
    writing into a dying input's buffer (``out=``) when it is large, owned and
    unshared.  Measured gains are in that module's docstring and
    ``benchmarks/README.md``.
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
class paused_gc:  # lower case: used like a function, ``with fast.paused_gc():``
    """Pause Python's cyclic garbage collector for one pass over a whole graph.

    A class, not a generator-based context manager: it is entered once per backward
    pass, and a generator costs more than the pause saves on a small graph.
    """

    __slots__ = ("paused",)

    def __enter__(self) -> None:
        self.paused = enabled and gc.isenabled()
        if self.paused:
            gc.disable()

    def __exit__(self, *exc: object) -> None:
        if self.paused:
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
def cached_meta(make: Callable) -> Callable:
    """``meta(array)``: ``make(array.shape, array.dtype)``, one shared object per (shape,
    dtype) while the fast layer is on (a node is made per op: this saves an allocation)."""
    shared: dict[tuple, object] = {}

    def meta(array):
        if not enabled:
            return make(array.shape, array.dtype)
        key = (array.shape, array.dtype)
        found = shared.get(key)
        if found is None:
            if len(shared) > 4096:  # a bound, for programs that see endless new shapes
                shared.clear()
            found = shared[key] = make(array.shape, array.dtype)
        return found

    return meta


# -- node_class_cache --------------------------------------------------------------------
#: op -> its grad_fn class, for ops whose PyTorch name does not depend on the call; read
#: only while the fast layer is on (``node.find_node_class``).
node_class_of_op: dict[object, type] = {}
