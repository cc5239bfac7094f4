"""The fast layer: a plug-in above the readable core, every speed trick in one package.

The core (``ops``, ``dynamic``, ``static``, ``render``) never imports this package.  It
keeps a few *seams*: module-level names (and a few class slots) that hold a readable
function and are always called through that name.  :func:`install` puts a faster
function of the same signature and results into each, :func:`uninstall` puts the
readable one back; :data:`SEAMS` lists them, each with the readable function it
replaces.  ``import naivegraph`` installs the layer unless ``NAIVEGRAPH_FAST=0``; every
result is the same bit for bit either way (``make test-readable`` runs the dynamic,
static and fuzz suites with it off).  Off for a block of code:

>>> import naivegraph as ng
>>> from naivegraph import fast
>>> with fast.disabled():
...     x = ng.tensor(2.0, requires_grad=True)
...     (x * x).backward()
>>> x.grad
tensor(4.)

What each trick saved: ``benchmarks/README.md``, "The fast layer, module by module".
"""

from __future__ import annotations

import functools
import importlib
from contextlib import contextmanager
from typing import Any, Callable, Iterator, NamedTuple

from ..dynamic import engine, factories
from ..dynamic.tensor import Tensor
from ..ops import core, functions, table
from ..ops.methods import OpMethods
from ..static import executor, nodes, session
from . import (
    fastback,
    fastbuild,
    fastgraph,
    fastlinear,
    fastloss,
    fastnodes,
    fastpath,
    fastrules,
    fastrun,
    fastsmall,
    tricks,
)
from .tricks import (
    MASKED_ZERO_MIN_SIZE,
    call_quietly,
    float_scalar,
    ignoring_fp_errors,
    indices_below,
    is_unshared,
    log_softmax_grad,
    masked_zero,
    nll_loss_grad,
    paused_gc,
    promotes_to_itself,
    where,
)

# ``naivegraph.render`` is also the name of the function the package exports
render_package = importlib.import_module("naivegraph.render")


class Seam(NamedTuple):
    """One place the core leaves for this layer: ``owner.name`` holds ``readable`` (the
    function the core's reading order shows) until :func:`install` puts ``fast`` there."""

    owner: Any  # a module or a class
    name: str
    readable: Any  # None: inherited (a class slot the class does not define itself)
    fast: Callable
    why: str


def _paused(function: Callable) -> Callable:
    """``function`` with Python's cyclic collector paused while it runs."""

    @functools.wraps(function)
    def paused(*args: Any, **kwargs: Any) -> Any:
        with paused_gc():
            return function(*args, **kwargs)

    return paused


def _seams() -> list[Seam]:
    found = []

    def seam(owner: Any, name: str, fast: Callable, why: str) -> None:
        readable = vars(owner).get(name) if isinstance(owner, type) else getattr(owner, name)
        found.append(Seam(owner, name, readable, fast, why))

    one_function = "the op's tensor and node built in one function"
    arithmetic = ("__add__", "__sub__", "__mul__", "__truediv__")
    for name, fast in zip(arithmetic, fastpath.operators(Tensor)):  # its __sub__ its own
        seam(Tensor, name, fast, one_function)
    for name, fast in zip(
        ("__radd__", "__rmul__"), fastpath.reflected(Tensor.__radd__, Tensor.__rmul__)
    ):
        seam(Tensor, name, fast, one_function + ", the tensor first")
    for name, fast in zip(("__neg__", "neg"), fastpath.negation(OpMethods)):
        seam(Tensor, name, fast, one_function + ", its edge kept compact (fastnodes)")
    for name, fast in zip(("sum", "mean"), fastpath.reductions(OpMethods)):
        seam(Tensor, name, fast, one_function + " (a whole floating tensor)")
    for name, fast in zip(("__matmul__", "relu"), fastlinear.forward_ops(OpMethods)):
        seam(Tensor, name, fast, one_function + " (a dense layer)")
    seam(core, "call_quietly", tricks.call_quietly, "numpy's error state set directly")
    seam(core, "promote", tricks.promote, "an array and a Python number: nothing to promote")
    seam(table, "select", tricks.where, "relu's and where's zeroing by integer arithmetic")
    seam(table, "nll_loss_grad", tricks.table_nll_loss_grad, "the one-hot gradient, fewer calls")
    seam(table, "log_softmax_grad", tricks.table_log_softmax_grad, "its rule in fewer calls")
    seam(functions, "fused_cross_entropy", fastloss.cross_entropy, "one fused node pair")
    seam(factories, "float_leaf", tricks.float_leaf, "a float's leaf by one Tensor._make")
    seam(factories, "float_constant", tricks.float_constant, "float32 rounding by one C cast")
    seam(factories, "_finish", tricks.finish, "a leaf that requires grad in one call")
    seam(factories, "_filled", tricks.filled, "np.full's two steps as two C calls")
    seam(engine, "execute", fastback.execute, "the backward pass without per-node calls")
    seam(Tensor, "backward", fastsmall.tensor_backward, "a plain backward() straight to that pass")
    node_slots = ("__neg__", "__add__", "__sub__", "__mul__", "__truediv__")
    for name, fast in zip(node_slots, fastbuild.operators(OpMethods)):
        seam(nodes.Node, name, fast, "static operators build their node directly (fastbuild)")
    seam(nodes, "apply", fastbuild.build, "static nodes built without the general checks")
    seam(executor.CompiledFunction, "__call__", fastrun.call, "a plan as straight-line code")
    seam(session, "forward", fastgraph.forward, "a graph's run without a plan object")
    seam(session, "backward", fastgraph.session_backward, "the numeric sweep, inlined")
    seam(
        render_package, "_render", _paused(render_package._render), "drawing, the collector paused"
    )
    seam(
        render_package,
        "dynamic_walkthrough",
        _paused(render_package.dynamic_walkthrough),
        "the same",
    )
    return found


#: Every seam: (owner, name, readable, fast, why), as :func:`install` fills them.
SEAMS: list[Seam] = _seams()

#: Whether the layer is installed (``set_enabled`` keeps it; read it, do not assign it).
enabled: bool = False


def install() -> None:
    """Put the fast function into every seam (the layer on)."""
    for seam in SEAMS:
        setattr(seam.owner, seam.name, seam.fast)
    _switch(True)


def uninstall() -> None:
    """Put the readable function back into every seam (the layer off)."""
    for seam in SEAMS:
        if seam.readable is None:  # a slot the class inherits: remove the layer's own
            if seam.name in vars(seam.owner):
                delattr(seam.owner, seam.name)
        else:
            setattr(seam.owner, seam.name, seam.readable)
    _switch(False)


def _switch(on: bool) -> None:
    global enabled
    enabled = tricks.enabled = on


def set_enabled(on: bool) -> None:
    """Turn the whole fast layer on (:func:`install`) or off (:func:`uninstall`)."""
    install() if on else uninstall()


@contextmanager
def disabled() -> Iterator[None]:
    """Run a block with the fast layer off (the readable path only)."""
    previous = enabled
    set_enabled(False)
    try:
        yield
    finally:
        set_enabled(previous)


__all__ = [
    "SEAMS",
    "Seam",
    "disabled",
    "enabled",
    "install",
    "set_enabled",
    "uninstall",
    *("MASKED_ZERO_MIN_SIZE", "call_quietly", "float_scalar", "ignoring_fp_errors"),
    *("indices_below", "is_unshared", "log_softmax_grad", "masked_zero", "nll_loss_grad"),
    *("paused_gc", "promotes_to_itself", "where", "fastrules", "fastnodes"),
]
