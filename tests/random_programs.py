"""Random programs over every op, and one interpreter that runs them on any backend.

A :class:`Program` is a list of input specs and a list of :class:`Step` s.  Each step
applies one op to entries of a *pool* (inputs first, then every step's result, in
order) and appends its result.  The same program runs on

* PyTorch (the oracle): :class:`TorchBackend`,
* naivegraph dynamic mode: :class:`DynamicBackend`,
* naivegraph static mode: :class:`StaticBackend` (nodes built inside a Graph).

Only the backend differs, so any disagreement is a disagreement between libraries.

The generator tracks, for every pool entry, its shape, a bound on its magnitude
(``hi``) and, when it is provably positive, a lower bound (``lo``).  That keeps every
program inside safe numerics: ``log``/``sqrt``/division/fractional powers only see
values >= 0.1, ``exp`` only sees values <= 6, nothing exceeds ~1e4.  Comparisons at
float64 precision (rtol 1e-9) are then meaningful: every backend runs with its default
dtype set to float64 (:func:`float64_default`), so that Python floats, placeholders and
factories mean the same everywhere.

The repr of a program is Python that rebuilds it, so a failing example found by
Hypothesis can be pasted as a named regression test.

Round 2 (bottom of the file) adds small :class:`Case` s aimed at what the programs above
never do: views with in-place writes, repeated backward with ``retain_grad``, NaN/inf/
signed zeros, mixed dtypes and hooks.  ``KNOWN_BUG_CLASSES`` (below) switches off the
features that hit bugs known today.
"""

from __future__ import annotations

import math
import os
import warnings
from dataclasses import dataclass, field
from typing import Any, Sequence

import numpy as np
from default_dtype import float64
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st

# ----------------------------------------------------------------------------------
# Hypothesis profile: modest by default (suite time), raised by an env variable.
# ----------------------------------------------------------------------------------
_EXAMPLES = os.environ.get("NAIVEGRAPH_FUZZ_EXAMPLES")
settings.register_profile(
    "naivegraph-fuzz",
    max_examples=int(_EXAMPLES) if _EXAMPLES else 30,
    deadline=None,
    # The default run is reproducible (same examples every time); a long run with
    # NAIVEGRAPH_FUZZ_EXAMPLES explores new random programs.
    derandomize=not _EXAMPLES,
    suppress_health_check=[
        HealthCheck.too_slow,
        HealthCheck.data_too_large,
        HealthCheck.filter_too_much,
    ],
    print_blob=True,
)
FUZZ = settings.get_profile("naivegraph-fuzz")

RTOL = 1e-9
ATOL = 1e-10

# ----------------------------------------------------------------------------------
# Known bugs: features of the round-2 generators (bottom of this file) that hit bugs
# known today.  The default run leaves them out, so `make test` stays green;
# NAIVEGRAPH_FUZZ_KNOWN_BUGS=1, or deleting a name here once its fix has landed, puts
# them back.  Each name guards generator features with `enabled(...)` and has at least
# one xfail test in test_known_mismatches.py.
# ----------------------------------------------------------------------------------
KNOWN_BUG_CLASSES: dict[str, str] = {
    # none known today; add "name": "what goes wrong" when the fuzzer finds a new class
}


def _bugs_to_fuzz(setting: str) -> frozenset:
    """NAIVEGRAPH_FUZZ_KNOWN_BUGS: "1" fuzzes every known bug, "expanded_write,data_reassign"
    only those (to check one fix), unset or "0" none."""
    if setting in ("", "0"):
        return frozenset()
    if setting == "1":
        return frozenset(KNOWN_BUG_CLASSES)
    names = frozenset(n.strip() for n in setting.split(",") if n.strip())
    unknown = sorted(names - set(KNOWN_BUG_CLASSES))
    if unknown:
        raise ValueError(
            f"NAIVEGRAPH_FUZZ_KNOWN_BUGS names unknown classes {unknown}; "
            f"choose from {sorted(KNOWN_BUG_CLASSES)}, or 1 for all"
        )
    return names


_BUGS_TO_FUZZ = _bugs_to_fuzz(os.environ.get("NAIVEGRAPH_FUZZ_KNOWN_BUGS", ""))


def enabled(feature: str) -> bool:
    """Whether the generators may use ``feature``: always, unless it is a known bug that
    NAIVEGRAPH_FUZZ_KNOWN_BUGS does not ask for.

    >>> enabled("a feature with no known bug")
    True
    """
    return feature in _BUGS_TO_FUZZ or feature not in KNOWN_BUG_CLASSES


# ----------------------------------------------------------------------------------
# Programs
# ----------------------------------------------------------------------------------
@dataclass(frozen=True)
class Input:
    shape: tuple
    domain: str = "real"  # "real": uniform(-2, 2); "positive": uniform(0.5, 2)
    variable: bool = False  # static mode: a Variable instead of a fed placeholder

    def __repr__(self) -> str:
        return f"Input({self.shape!r}, {self.domain!r}, variable={self.variable})"


@dataclass(frozen=True)
class Step:
    op: str
    args: tuple  # pool indices
    attrs: dict = field(default_factory=dict)

    def __repr__(self) -> str:
        extra = f", {self.attrs!r}" if self.attrs else ""
        return f"Step({self.op!r}, {self.args!r}{extra})"


@dataclass(frozen=True)
class Program:
    inputs: tuple
    steps: tuple
    seed: int = 0

    def __repr__(self) -> str:
        inputs = ",\n        ".join(repr(i) for i in self.inputs)
        steps = ",\n        ".join(repr(s) for s in self.steps)
        return (
            f"Program(\n    inputs=(\n        {inputs},\n    ),\n    steps=(\n        {steps},\n"
            f"    ),\n    seed={self.seed})"
        )

    # Data: inputs, output weights (cotangents) and the direction of the second derivative.
    def input_arrays(self) -> list[np.ndarray]:
        rng = np.random.default_rng(self.seed)
        out = []
        for spec in self.inputs:
            if spec.domain == "positive":
                out.append(rng.uniform(0.5, 2.0, size=spec.shape))
            else:
                out.append(rng.uniform(-2.0, 2.0, size=spec.shape))
        return out

    def weights(self, shapes: Sequence[tuple | None]) -> list[np.ndarray | None]:
        rng = np.random.default_rng(self.seed + 1)
        return [None if s is None else rng.normal(size=s) for s in shapes]

    def directions(self) -> list[np.ndarray]:
        rng = np.random.default_rng(self.seed + 2)
        return [rng.normal(size=spec.shape) for spec in self.inputs]


# Ops whose result is a boolean / integer and is not part of the loss.
NON_FLOAT_STEPS = frozenset()


# ----------------------------------------------------------------------------------
# Backends: one small adapter per library; everything else is shared.
# ----------------------------------------------------------------------------------
class DynamicLike:
    """torch and naivegraph dynamic mode spell (almost) everything the same way."""

    M: Any  # module: torch or naivegraph
    F: Any  # functional: torch.nn.functional or naivegraph.nn.functional

    def max_dim(self, x, dim, keepdim, which):
        return getattr(x, which)(dim=dim, keepdim=keepdim).values

    def inplace(self, x, method, *args, **kwargs):
        t = x.clone()
        getattr(t, method)(*args, **kwargs)
        return t

    def iadd(self, x, y):
        t = x.clone()
        t += y
        return t

    def setitem(self, x, index, value):
        t = x.clone()
        t[index] = value
        return t

    def fill(self, x, value):
        t = x.clone()
        t.fill_(value)
        return t


class TorchBackend(DynamicLike):
    name = "torch"

    def __init__(self):
        import torch

        self.torch = torch
        self.M = torch
        self.F = torch.nn.functional

    def leaf(self, array, spec=None, name=None):
        return self.torch.tensor(array, dtype=self.torch.float64, requires_grad=True)

    def target(self, array):
        return self.torch.tensor(array, dtype=self.torch.int64)

    def const(self, array):
        return self.torch.tensor(array, dtype=self.torch.float64)

    def value(self, x):
        return x.detach().numpy()


class DynamicBackend(DynamicLike):
    name = "dynamic"

    def __init__(self):
        import naivegraph as ng

        self.ng = ng
        self.M = ng
        self.F = ng.nn.functional

    def leaf(self, array, spec=None, name=None):
        return self.ng.tensor(array, requires_grad=True)

    def target(self, array):
        return self.ng.tensor(np.asarray(array, dtype=np.int64))

    def const(self, array):
        return self.ng.tensor(array)

    def value(self, x):
        return x.detach().numpy()


class StaticBackend:
    """Builds nodes; the in-place ops of dynamic mode become their out-of-place ops."""

    name = "static"

    def __init__(self):
        import naivegraph.static as ns
        from naivegraph.ops import OPS

        self.ns = ns
        self.M = ns
        self.OPS = OPS
        self.placeholders = []  # (node, array)
        self.leaves = []

    def leaf(self, array, spec=None, name=None):
        if spec is not None and spec.variable:
            node = self.ns.Variable(array, name=name)
        else:
            node = self.ns.placeholder(name, shape=np.shape(array))
            self.placeholders.append((node, array))
        self.leaves.append(node)
        return node

    def target(self, array):
        return np.asarray(array, dtype=np.int64)

    def const(self, array):
        return array

    @property
    def F(self):
        return self.ns

    def max_dim(self, x, dim, keepdim, which):
        return getattr(self.ns, which)(x, dim=dim, keepdim=keepdim).values

    def inplace(self, x, method, *args, **kwargs):
        name = method.rstrip("_")
        if name == "pow":
            return x ** args[0]
        if name in ("add", "sub"):
            other = args[0] if kwargs.get("alpha", 1) == 1 else args[0] * kwargs["alpha"]
            return x + other if name == "add" else x - other
        if name == "exp":
            return x.exp()
        if name == "clamp":
            return x.clamp(*args, **kwargs)
        return x * args[0] if name == "mul" else x / args[0]

    def iadd(self, x, y):
        return x + y

    def setitem(self, x, index, value):
        return self.OPS["index_put"].dispatch(x, value, index=index)

    def fill(self, x, value):
        return self.OPS["fill"].dispatch(x, value=value)


# ----------------------------------------------------------------------------------
# The interpreter
# ----------------------------------------------------------------------------------
def apply_step(B, step: Step, pool: list, leaves: list):
    """Run one step on backend ``B``; ``pool`` holds the backend's values."""
    a = [pool[i] for i in step.args]
    at = step.attrs
    op = step.op
    if op == "input":
        return leaves[at["k"]]
    M = B.M
    # elementwise binary, with broadcasting
    if op == "add":
        return a[0] + a[1]
    if op == "sub":
        return a[0] - a[1]
    if op == "mul":
        return a[0] * a[1]
    if op == "div":
        return a[0] / a[1]
    if op == "pow":
        return a[0] ** a[1]
    if op == "scalar":  # x <op> c or c <op> x
        c, kind, reflected = at["c"], at["kind"], at.get("reflected", False)
        x = a[0]
        if kind == "add":
            return c + x if reflected else x + c
        if kind == "sub":
            return c - x if reflected else x - c
        if kind == "mul":
            return c * x if reflected else x * c
        if kind == "div":
            return c / x if reflected else x / c
        if kind == "pow":
            return c**x if reflected else x**c
        raise ValueError(kind)
    if op in ("maximum", "minimum"):
        return getattr(M, op)(a[0], a[1])
    if op == "where":  # where(a0 > a1, a2, a3 or scalar)
        other = a[3] if len(a) > 3 else at["other"]
        return M.where(a[0] > a[1], a[2], other)
    # elementwise unary
    if op in ("exp", "log", "sqrt", "sin", "cos", "tanh", "sigmoid", "relu", "abs", "neg"):
        return getattr(a[0], op)()
    if op == "negate":
        return -a[0]
    if op == "clamp":
        return a[0].clamp(min=at.get("min"), max=at.get("max"))
    # reductions
    if op in ("sum", "mean"):
        return getattr(a[0], op)(dim=at.get("dim"), keepdim=at.get("keepdim", False))
    if op in ("max", "min"):
        if at.get("dim") is None:
            return getattr(a[0], op)()
        return B.max_dim(a[0], at["dim"], at.get("keepdim", False), op)
    # shapes
    if op == "reshape":
        return a[0].reshape(tuple(at["shape"]))
    if op == "transpose":
        return a[0].transpose(at["dim0"], at["dim1"])
    if op == "permute":
        return a[0].permute(tuple(at["dims"]))
    if op == "t":
        return a[0].t()
    if op == "squeeze":
        return a[0].squeeze(at["dim"]) if at.get("dim") is not None else a[0].squeeze()
    if op == "unsqueeze":
        return a[0].unsqueeze(at["dim"])
    if op == "expand":
        return a[0].expand(tuple(at["shape"]))
    if op == "flatten":
        return a[0].flatten(at["start"], at["end"])
    if op == "getitem":
        return a[0][at["index"]]
    if op == "cat":
        return M.cat(a, dim=at["dim"])
    if op == "stack":
        return M.stack(a, dim=at["dim"])
    # linear algebra
    if op == "matmul":
        return a[0] @ a[1]
    if op == "mm":
        return M.mm(a[0], a[1])
    # nn
    if op in ("softmax", "log_softmax"):
        return getattr(a[0], op)(dim=at["dim"])
    if op == "mse_loss":
        return B.F.mse_loss(a[0], a[1], reduction=at["reduction"])
    if op == "cross_entropy":
        return B.F.cross_entropy(a[0], B.target(at["target"]), reduction=at["reduction"])
    if op == "clone":
        return a[0] * 1.0 if B.name == "static" else a[0].clone()
    # in-place ops (on a clone, so the pool entry itself never changes)
    if op == "inplace":
        method = at["method"]
        args = [pool[i] for i in step.args[1:]] + list(at.get("extra", ()))
        return B.inplace(a[0], method, *args, **at.get("kwargs", {}))
    if op == "iadd":
        return B.iadd(a[0], a[1])
    if op == "setitem":
        value = a[1] if len(a) > 1 else at["value"]
        return B.setitem(a[0], at["index"], value)
    if op == "fill":
        return B.fill(a[0], at["value"])
    raise ValueError(f"unknown step op {op!r}")


def build(B, program: Program):
    """Run ``program`` on backend ``B``: returns (leaves, pool, loss).

    The loss is sum_k sum(entry_k * w_k) over *every* pool entry with fixed random
    weights, so every intermediate result is checked by the gradients.
    """
    arrays = program.input_arrays()
    leaves = [
        B.leaf(arr, spec, name=f"x{i}") for i, (arr, spec) in enumerate(zip(arrays, program.inputs))
    ]
    pool = []
    for step in program.steps:
        pool.append(apply_step(B, step, pool, leaves))
    shapes = [tuple(p.shape) for p in pool]
    weights = program.weights(shapes)
    loss = None
    for entry, w in zip(pool, weights):
        term = (entry * B.const(w)).sum()
        loss = term if loss is None else loss + term
    return leaves, pool, loss


def hvp_objective(grads, directions, zero):
    """sum_i sum(grad_i * v_i): its gradient is the Hessian times v."""
    total = None
    for g, v in zip(grads, directions):
        if g is None:
            continue
        term = (g * v).sum()
        total = term if total is None else total + term
    return zero if total is None else total


def float64_default():
    """naivegraph's default dtype float64 (torch's float32 default is set aside by the
    oracle in the same way): the programs are compared at float64 precision.  Usable as a
    decorator."""
    return float64()


# ----------------------------------------------------------------------------------
# Running a program fully on each backend: values, gradients, Hessian-vector products
# ----------------------------------------------------------------------------------
def run_torch(program: Program) -> dict:
    import torch

    B = TorchBackend()
    leaves, pool, loss = build(B, program)
    grads = torch.autograd.grad(loss, leaves, create_graph=True, allow_unused=True)
    dirs = [torch.tensor(v) for v in program.directions()]
    obj = hvp_objective([g for g in grads], dirs, None)
    if obj is None or not obj.requires_grad:
        second = [None] * len(leaves)
    else:
        second = torch.autograd.grad(obj, leaves, allow_unused=True)
    return _result(
        program,
        [B.value(p) for p in pool],
        float(loss.detach()),
        [_torch_array(g) for g in grads],
        [_torch_array(g) for g in second],
    )


def _torch_array(g):
    # torch may return a ZeroTensor for an identically-zero gradient; it has no storage
    # to share with numpy (and numpy(force=True) on it can crash), so build the zeros.
    if g is None:
        return None
    if g._is_zerotensor():
        return np.zeros(tuple(g.shape))
    return g.detach().numpy().copy()


@float64_default()
def run_dynamic(program: Program, check_backward: bool = True) -> dict:
    import naivegraph as ng

    B = DynamicBackend()
    leaves, pool, loss = build(B, program)
    grads = ng.autograd.grad(loss, leaves, create_graph=True, allow_unused=True)
    dirs = [ng.tensor(v) for v in program.directions()]
    obj = hvp_objective(list(grads), dirs, None)
    if obj is None or not obj.requires_grad:
        second = [None] * len(leaves)
    else:
        second = ng.autograd.grad(obj, leaves, allow_unused=True)
    result = _result(
        program,
        [B.value(p) for p in pool],
        float(loss.detach().item()),
        [None if g is None else g.detach().numpy() for g in grads],
        [None if g is None else g.detach().numpy() for g in second],
    )
    if check_backward:
        # The plain .backward() path (numpy fast path, accumulation into .grad).
        leaves2, _, loss2 = build(B, program)
        loss2.backward()
        result["backward"] = [None if t.grad is None else t.grad.numpy() for t in leaves2]
    return result


@float64_default()
def build_static(program: Program):
    """The program as a static graph, with symbolic first and second derivatives."""
    import naivegraph.static as ns

    B = StaticBackend()
    g = ns.Graph()
    with g:
        leaves, pool, loss = build(B, program)
        grads = ns.gradients(loss, leaves)
        obj = hvp_objective(grads, program.directions(), None)
        second = ns.gradients(obj, leaves) if obj is not None else [None] * len(leaves)
    return g, B, leaves, pool, loss, list(grads), list(second)


@float64_default()
def run_static(program: Program, mode: str) -> dict:
    """mode: "forward" (graph.forward + numeric graph.backward), "compile",
    "compile-optimized", or "optimize" (ns.optimize, then run the new graph)."""
    g, B, leaves, pool, loss, grads, second = build_static(program)
    feeds = {node: arr for node, arr in B.placeholders}
    n = len(leaves)

    def outputs_of(values, i0):
        return values[i0 : i0 + n]

    if mode == "forward":
        for p, _ in B.placeholders:
            p.retain_grad()
        g.forward(feeds)
        values = [np.asarray(p.value) for p in pool]
        loss_value = float(np.asarray(loss.value))
        first = [None if d is None else np.asarray(d.value) for d in grads]
        sec = [None if d is None else np.asarray(d.value) for d in second]
        g.forward(feeds, fetches=[loss])
        g.backward(loss)
        result = _result(program, values, loss_value, first, sec)
        result["backward"] = [None if x.grad is None else np.asarray(x.grad) for x in leaves]
        return result

    fetch = (
        list(pool)
        + [loss]
        + [d for d in grads if d is not None]
        + [d for d in second if d is not None]
    )

    def unpack(values):
        vals = [np.asarray(v) for v in values]
        k = len(pool)
        out_pool, loss_value = vals[:k], float(vals[k])
        rest = vals[k + 1 :]
        first = [None if d is None else rest.pop(0) for d in grads]
        sec = [None if d is None else rest.pop(0) for d in second]
        return _result(program, out_pool, loss_value, first, sec)

    inputs = [p for p, _ in B.placeholders]
    arrays = [a for _, a in B.placeholders]
    if mode in ("compile", "compile-optimized"):
        f = g.compile(inputs, fetch, optimize=(mode == "compile-optimized"))
        return unpack(f(*arrays))
    if mode == "optimize":
        import naivegraph.static as ns

        nodes_before = len(g.nodes)
        new, report = ns.optimize(g, fetches=fetch)
        assert len(g.nodes) == nodes_before, "ns.optimize changed its input graph"
        new_feeds = {report.mapping[p]: a for p, a in B.placeholders if p in report.mapping}
        return unpack(new.forward(new_feeds, fetches=[report.mapping[o] for o in fetch]))
    raise ValueError(mode)


def _result(program, values, loss, first, second) -> dict:
    shapes = [spec.shape for spec in program.inputs]
    fill = lambda gs: [
        np.zeros(s) if g is None else np.asarray(g, dtype=float) for g, s in zip(gs, shapes)
    ]
    return {"values": values, "loss": loss, "grads": fill(first), "second": fill(second)}


def assert_close(actual, expected, what: str, rtol: float = RTOL, atol: float = ATOL) -> None:
    actual = np.asarray(actual, dtype=float)
    expected = np.asarray(expected, dtype=float)
    assert actual.shape == expected.shape, f"{what}: shape {actual.shape} != {expected.shape}"
    finite = expected[np.isfinite(expected)]
    scale = max(1.0, float(np.max(np.abs(finite)))) if finite.size else 1.0
    np.testing.assert_allclose(
        actual, expected, rtol=rtol, atol=atol * scale, equal_nan=True, err_msg=what
    )


def assert_same_results(got: dict, want: dict, label: str) -> None:
    assert len(got["values"]) == len(want["values"])
    for k, (a, b) in enumerate(zip(got["values"], want["values"])):
        assert_close(a, b, f"{label}: value of pool entry {k}")
    assert_close(got["loss"], want["loss"], f"{label}: loss")
    for key in ("grads", "second"):
        for i, (a, b) in enumerate(zip(got[key], want[key])):
            assert_close(a, b, f"{label}: {key}[x{i}]")
    for key in ("backward",):
        if key in got:
            for i, (a, b) in enumerate(zip(got[key], want["grads"])):
                assert_close(np.zeros_like(b) if a is None else a, b, f"{label}: .grad of x{i}")


# ----------------------------------------------------------------------------------
# The generator
# ----------------------------------------------------------------------------------
@dataclass
class Entry:
    shape: tuple
    hi: float  # |value| <= hi
    lo: float | None = None  # value >= lo > 0 when known positive


HI_CAP = 1e4
LO_MIN = 0.1
EXP_MAX = 6.0

DIM = st.integers(1, 3)


def _suffix_compatible(draw, shape: tuple) -> tuple:
    """A shape that broadcasts against ``shape`` to exactly ``shape``."""
    keep = draw(st.integers(0, len(shape)))
    tail = shape[len(shape) - keep :]
    return tuple(1 if draw(st.booleans()) and draw(st.booleans()) else d for d in tail)


class Gen:
    """Draws a program step by step, tracking shapes and magnitude bounds."""

    def __init__(self, draw, max_steps: int):
        self.draw = draw
        self.inputs: list[Input] = []
        self.entries: list[Entry] = []
        self.steps: list[Step] = []
        self.max_steps = max_steps

    # -- pool ---------------------------------------------------------------------
    def new_input(self, shape: tuple, positive: bool | None = None) -> int:
        """A new leaf, placed in the pool by an ``input`` step (indices never shift)."""
        draw = self.draw
        if positive is None:
            positive = draw(st.booleans()) and draw(st.booleans())
        variable = draw(st.booleans()) and draw(st.booleans())
        self.inputs.append(Input(tuple(shape), "positive" if positive else "real", variable))
        return self.add(
            "input",
            (),
            {"k": len(self.inputs) - 1},
            Entry(tuple(shape), 2.0, 0.5 if positive else None),
        )

    def add(self, op: str, args: Sequence[int], attrs: dict, entry: Entry) -> int:
        self.steps.append(Step(op, tuple(args), attrs))
        self.entries.append(entry)
        return len(self.entries) - 1

    def pick(self, pred=lambda e: True) -> int | None:
        choices = [i for i, e in enumerate(self.entries) if pred(e)]
        if not choices:
            return None
        return self.draw(st.sampled_from(choices))

    def positive(self, i: int) -> int:
        """A positive (>= LO_MIN) entry derived from entry ``i``."""
        e = self.entries[i]
        if e.lo is not None and e.lo >= LO_MIN:
            return i
        c = self.draw(st.sampled_from([0.5, 1.0, 1.5]))
        if e.hi <= 30:
            sq = self.add("mul", (i, i), {}, Entry(e.shape, e.hi * e.hi, None))
            return self.add(
                "scalar", (sq,), {"c": c, "kind": "add"}, Entry(e.shape, e.hi * e.hi + c, c)
            )
        s = self.add("sigmoid", (i,), {}, Entry(e.shape, 1.0, None))
        return self.add("scalar", (s,), {"c": c, "kind": "add"}, Entry(e.shape, 1.0 + c, c))

    def bounded(self, i: int, limit: float) -> int:
        e = self.entries[i]
        if e.hi <= limit:
            return i
        return self.add("tanh", (i,), {}, Entry(e.shape, 1.0, None))

    def partner(self, i: int, exact: bool = False, positive: bool = False) -> int:
        """An entry that broadcasts with entry ``i`` (to ``i``'s shape if ``exact``)."""
        draw = self.draw
        shape = self.entries[i].shape

        def ok(e):
            if exact:
                try:
                    return np.broadcast_shapes(shape, e.shape) == shape
                except ValueError:
                    return False
            try:
                np.broadcast_shapes(shape, e.shape)
                return True
            except ValueError:
                return False

        j = self.pick(ok) if draw(st.booleans()) else None
        if j is None:
            if exact or draw(st.booleans()):
                new_shape = _suffix_compatible(draw, shape)
            else:  # the partner has more dims / size-1 dims the other lacks
                lead = tuple(draw(st.lists(DIM, max_size=1)))
                new_shape = lead + tuple(1 if d != 1 and draw(st.booleans()) else d for d in shape)
            j = self.new_input(new_shape, positive=positive or None)
        if positive:
            j = self.positive(j)
        return j

    # -- one step -------------------------------------------------------------------
    def step(self) -> None:
        draw = self.draw
        kind = draw(st.sampled_from(OP_KINDS))
        getattr(self, "op_" + kind)()

    def op_binary(self):
        draw = self.draw
        op = draw(st.sampled_from(["add", "sub", "mul", "div", "pow", "maximum", "minimum"]))
        i = self.pick()
        if op == "pow":
            i = self.positive(i)
            j = self.bounded(self.partner(i), 3.0)
        else:
            j = self.partner(i, positive=(op == "div"))
        if op == "div":
            i = self.bounded(i, 100.0)
        if op == "mul":
            i, j = self.bounded(i, 100.0), self.bounded(j, 100.0)
        if draw(st.booleans()):
            i, j = (j, i) if op != "pow" and op != "div" else (i, j)
        a, b = self.entries[i], self.entries[j]
        shape = tuple(np.broadcast_shapes(a.shape, b.shape))
        if op in ("add", "sub"):
            e = Entry(shape, a.hi + b.hi, (a.lo + b.lo) if op == "add" and a.lo and b.lo else None)
        elif op == "mul":
            e = Entry(shape, a.hi * b.hi, a.lo * b.lo if a.lo and b.lo else None)
        elif op == "div":
            e = Entry(shape, a.hi / b.lo, a.lo / b.hi if a.lo else None)
        elif op == "pow":
            y = b.hi
            e = Entry(shape, max(a.hi, 1 / a.lo) ** y, min(a.lo, 1 / a.hi) ** y)
        else:
            e = Entry(shape, max(a.hi, b.hi), None if not (a.lo and b.lo) else min(a.lo, b.lo))
        self.add(op, (i, j), {}, e)

    def op_scalar(self):
        draw = self.draw
        kind = draw(st.sampled_from(["add", "sub", "mul", "div", "pow"]))
        reflected = draw(st.booleans())
        c = draw(st.sampled_from([-2.0, -0.5, 0.5, 1.0, 1.5, 3.0]))
        i = self.pick()
        e = self.entries[i]
        if kind == "pow":
            if reflected:
                c = abs(c) if c != 1.0 else 2.0
                i = self.bounded(i, 3.0)
                e = self.entries[i]
                hi = max(c, 1 / c) ** e.hi
                self.add(
                    "scalar",
                    (i,),
                    {"c": c, "kind": kind, "reflected": True},
                    Entry(e.shape, hi, 1 / hi),
                )
                return
            c = draw(st.sampled_from([2, 3, 0.5, -1.0, 1.5, 2.0]))
            i = self.bounded(i, 20.0)
            if not (isinstance(c, int) or c == 2.0):
                i = self.positive(i)
            e = self.entries[i]
            hi = max(e.hi, 1 / e.lo if e.lo else 1) ** abs(c)
            lo = (min(e.lo, 1 / e.hi) ** abs(c)) if e.lo else None
            self.add("scalar", (i,), {"c": c, "kind": kind}, Entry(e.shape, hi, lo))
            return
        if kind == "div" and reflected:
            i = self.positive(i)
            e = self.entries[i]
            self.add(
                "scalar",
                (i,),
                {"c": c, "kind": kind, "reflected": True},
                Entry(e.shape, abs(c) / e.lo, abs(c) / e.hi if c > 0 else None),
            )
            return
        hi = (
            e.hi + abs(c)
            if kind in ("add", "sub")
            else e.hi * abs(c)
            if kind == "mul"
            else e.hi / abs(c)
        )
        lo = None
        if e.lo and c > 0 and kind in ("mul", "div"):
            lo = e.lo * c if kind == "mul" else e.lo / c
        if e.lo and kind == "add" and c > 0 and not reflected:
            lo = e.lo + c
        self.add(
            "scalar", (i,), {"c": c, "kind": kind, "reflected": reflected}, Entry(e.shape, hi, lo)
        )

    def op_unary(self):
        draw = self.draw
        op = draw(
            st.sampled_from(
                [
                    "exp",
                    "log",
                    "sqrt",
                    "sin",
                    "cos",
                    "tanh",
                    "sigmoid",
                    "relu",
                    "abs",
                    "neg",
                    "negate",
                    "clamp",
                    "clone",
                ]
            )
        )
        i = self.pick()
        if op in ("log", "sqrt"):
            i = self.positive(i)
        if op == "exp":
            i = self.bounded(i, EXP_MAX)
        e = self.entries[i]
        attrs = {}
        if op == "exp":
            new = Entry(e.shape, math.exp(e.hi), math.exp(-e.hi))
        elif op == "log":
            new = Entry(e.shape, max(abs(math.log(e.lo)), abs(math.log(e.hi))), None)
        elif op == "sqrt":
            new = Entry(e.shape, math.sqrt(e.hi), math.sqrt(e.lo))
        elif op in ("sin", "cos", "tanh"):
            new = Entry(e.shape, 1.0, None)
        elif op == "sigmoid":
            new = Entry(e.shape, 1.0, 1 / (1 + math.exp(e.hi)) if e.hi < 20 else None)
        elif op == "clamp":
            which = draw(st.sampled_from(["min", "max", "both"]))
            lo_c, hi_c = sorted(
                draw(
                    st.lists(
                        st.sampled_from([-1.0, -0.3, 0.2, 0.7, 1.2]),
                        min_size=2,
                        max_size=2,
                        unique=True,
                    )
                )
            )
            if which in ("min", "both"):
                attrs["min"] = lo_c
            if which in ("max", "both"):
                attrs["max"] = hi_c
            new = Entry(e.shape, e.hi if which == "min" else max(e.hi, abs(lo_c), abs(hi_c)), None)
            new.hi = max(new.hi, abs(lo_c), abs(hi_c))
        elif op in ("abs", "clone"):
            new = Entry(e.shape, e.hi, e.lo)
        else:
            new = Entry(e.shape, e.hi, None)
        self.add(op, (i,), attrs, new)

    def op_where(self):
        draw = self.draw
        i = self.pick()
        j = self.partner(i)
        k = self.partner(i, exact=True)
        shape = tuple(np.broadcast_shapes(self.entries[i].shape, self.entries[j].shape))
        hi = self.entries[k].hi
        if draw(st.booleans()):
            other = draw(st.sampled_from([0.0, -1.0, 2.5]))
            self.add("where", (i, j, k), {"other": other}, Entry(shape, max(hi, 2.5), None))
        else:
            m = self.partner(i, exact=True)
            self.add("where", (i, j, k, m), {}, Entry(shape, max(hi, self.entries[m].hi), None))

    def _dim(self, ndim: int) -> int:
        d = self.draw(st.integers(0, ndim - 1))
        return d - ndim if self.draw(st.booleans()) else d

    def op_reduce(self):
        draw = self.draw
        op = draw(st.sampled_from(["sum", "mean", "max", "min"]))
        i = self.pick()
        e = self.entries[i]
        nd = len(e.shape)
        attrs: dict = {}
        if nd and draw(st.booleans()):
            if op in ("sum", "mean") and nd >= 2 and draw(st.booleans()):
                dims = draw(st.lists(st.integers(0, nd - 1), min_size=1, max_size=nd, unique=True))
                attrs["dim"] = tuple(dims)
            else:
                attrs["dim"] = self._dim(nd)
            attrs["keepdim"] = draw(st.booleans())
            shape = (
                np.zeros(e.shape)
                .sum(
                    axis=attrs["dim"] if isinstance(attrs["dim"], tuple) else attrs["dim"],
                    keepdims=attrs["keepdim"],
                )
                .shape
            )
        else:
            shape = ()
        n = int(np.prod(e.shape)) if op == "sum" else 1
        self.add(
            op,
            (i,),
            attrs,
            Entry(tuple(shape), e.hi * n, e.lo if op != "sum" else (e.lo if e.lo else None)),
        )

    def op_shape(self):
        draw = self.draw
        op = draw(
            st.sampled_from(
                [
                    "reshape",
                    "transpose",
                    "permute",
                    "t",
                    "squeeze",
                    "unsqueeze",
                    "expand",
                    "flatten",
                    "getitem",
                    "getitem",
                ]
            )
        )
        i = self.pick()
        e = self.entries[i]
        shape, nd = e.shape, len(e.shape)
        attrs: dict = {}
        if op == "reshape":
            n = int(np.prod(shape))
            dims = []
            rest = n
            for p in (2, 3):
                while rest % p == 0 and draw(st.booleans()):
                    dims.append(p)
                    rest //= p
            if rest != 1:
                dims.append(rest)
            dims = list(draw(st.permutations(dims))) if dims else []
            if draw(st.booleans()):
                dims.insert(draw(st.integers(0, len(dims))), 1)
            new = tuple(dims)
            spelled = list(new)
            if spelled and draw(st.booleans()):
                spelled[draw(st.integers(0, len(spelled) - 1))] = -1
            attrs["shape"] = tuple(spelled)
            out = new
        elif op in ("transpose", "t"):
            if nd < 2:
                op = "t" if nd < 2 else op
                out = shape
            else:
                if op == "t" and nd != 2:
                    op = "transpose"
                if op == "transpose":
                    d0, d1 = self._dim(nd), self._dim(nd)
                    attrs = {"dim0": d0, "dim1": d1}
                    out = list(shape)
                    out[d0], out[d1] = out[d1], out[d0]
                    out = tuple(out)
                else:
                    out = shape[::-1]
        elif op == "permute":
            dims = tuple(draw(st.permutations(range(nd))))
            attrs["dims"] = dims
            out = tuple(shape[d] for d in dims)
        elif op == "squeeze":
            ones = [d for d, s in enumerate(shape) if s == 1]
            if ones and draw(st.booleans()):
                attrs["dim"] = draw(st.sampled_from(ones))
                out = tuple(s for d, s in enumerate(shape) if d != attrs["dim"])
            else:
                attrs["dim"] = None
                out = tuple(s for s in shape if s != 1)
        elif op == "unsqueeze":
            d = draw(st.integers(-nd - 1, nd))
            attrs["dim"] = d
            out = np.expand_dims(np.zeros(shape), d).shape
        elif op == "expand":
            lead = tuple(draw(st.lists(DIM, max_size=1)))
            body = tuple(draw(DIM) if s == 1 and draw(st.booleans()) else s for s in shape)
            spelled = lead + tuple(
                -1 if s == b and draw(st.booleans()) else b for s, b in zip(shape, body)
            )
            attrs["shape"] = spelled
            out = lead + body
            self.add(op, (i,), attrs, Entry(tuple(out), e.hi, e.lo))
            return
        elif op == "flatten":
            if nd == 0:
                attrs = {"start": 0, "end": -1}
                out = (1,)
            else:
                s0 = draw(st.integers(0, nd - 1))
                s1 = draw(st.integers(s0, nd - 1))
                attrs = {"start": s0, "end": s1 - nd if draw(st.booleans()) else s1}
                out = shape[:s0] + (int(np.prod(shape[s0 : s1 + 1])),) + shape[s1 + 1 :]
        else:  # getitem
            if nd == 0:
                index = ...
            else:
                parts = []
                used_list = False
                for s in shape[: draw(st.integers(1, nd))]:
                    kind = draw(st.sampled_from(["int", "slice", "full", "list"]))
                    # numpy and torch disagree on int + list in one index (a known bug,
                    # see test_regressions): keep the fuzzer on the common ground.
                    if (
                        kind == "int"
                        and used_list
                        or kind == "list"
                        and any(isinstance(p, int) for p in parts)
                    ):
                        kind = "full"
                    if kind == "int":
                        parts.append(draw(st.integers(-s, s - 1)))
                    elif kind == "slice":
                        start = draw(st.integers(0, s - 1))
                        stop = draw(st.integers(start + 1, s))
                        parts.append(slice(start, stop, draw(st.sampled_from([1, 1, 2]))))
                    elif kind == "list" and not used_list:
                        used_list = True
                        parts.append(draw(st.lists(st.integers(0, s - 1), min_size=1, max_size=4)))
                    else:
                        parts.append(slice(None))
                if draw(st.booleans()) and len(parts) < nd:
                    parts.append(...)
                index = tuple(parts) if len(parts) > 1 or draw(st.booleans()) else parts[0]
            attrs["index"] = index
            out = np.zeros(shape)[index].shape
        self.add(op, (i,), attrs, Entry(tuple(out), e.hi, e.lo))

    def op_join(self):
        draw = self.draw
        op = draw(st.sampled_from(["cat", "stack"]))
        i = self.pick(lambda e: op == "stack" or len(e.shape) > 0)
        if i is None:
            i = self.new_input((draw(DIM),))
        shape = self.entries[i].shape
        nd = len(shape)
        members = [i]
        if op == "cat":
            d = self._dim(nd)
            for _ in range(draw(st.integers(1, 2))):
                want = list(shape)
                same = [
                    k
                    for k, e in enumerate(self.entries)
                    if len(e.shape) == nd
                    and all(a == b for n_, (a, b) in enumerate(zip(e.shape, shape)) if n_ != d % nd)
                ]
                if same and draw(st.booleans()):
                    members.append(draw(st.sampled_from(same)))
                else:
                    want[d] = draw(DIM)
                    members.append(self.new_input(tuple(want)))
            size = sum(self.entries[m].shape[d] for m in members)
            out = list(shape)
            out[d] = size
            out = tuple(out)
        else:
            d = draw(st.integers(-nd - 1, nd))
            for _ in range(draw(st.integers(1, 2))):
                same = [k for k, e in enumerate(self.entries) if e.shape == shape]
                if draw(st.booleans()):
                    members.append(draw(st.sampled_from(same)))
                else:
                    members.append(self.new_input(shape))
            out = np.stack([np.zeros(shape)] * len(members), axis=d).shape
        hi = max(self.entries[m].hi for m in members)
        los = [self.entries[m].lo for m in members]
        self.add(op, members, {"dim": d}, Entry(tuple(out), hi, min(los) if all(los) else None))

    def op_matmul(self):
        draw = self.draw
        op = draw(st.sampled_from(["matmul", "matmul", "mm"]))
        if op == "mm":
            i = self.pick(lambda e: len(e.shape) == 2)
            if i is None:
                i = self.new_input((draw(DIM), draw(DIM)))
            k = self.entries[i].shape[1]
            wanted = [(k, draw(DIM))]
        else:
            i = self.pick(lambda e: 1 <= len(e.shape) <= 3)
            if i is None:
                i = self.new_input(tuple(draw(st.lists(DIM, min_size=1, max_size=3))))
            shape = self.entries[i].shape
            k = shape[-1]
            m = draw(DIM)
            if len(shape) == 3:
                wanted = [(k, m), (k,), (shape[0], k, m), (1, k, m)]
            else:
                wanted = [(k,), (k, m), (draw(DIM), k, m)]
        target = draw(st.sampled_from(wanted))
        i = self.bounded(i, 100.0)
        j = self.pick(lambda e: e.shape == target) if draw(st.booleans()) else None
        if j is None:
            j = self.new_input(target)
        j = self.bounded(j, 100.0)
        a, b = self.entries[i], self.entries[j]
        out = np.matmul(np.zeros(a.shape), np.zeros(b.shape)).shape
        if draw(st.booleans()) and op == "matmul":
            i, j = j, i  # also try the other order when it is valid
            try:
                out = np.matmul(np.zeros(b.shape), np.zeros(a.shape)).shape
            except ValueError:
                i, j = j, i
        self.add(op, (i, j), {}, Entry(tuple(out), a.hi * b.hi * k, None))

    def op_nn(self):
        draw = self.draw
        op = draw(st.sampled_from(["softmax", "log_softmax", "mse_loss", "cross_entropy"]))
        if op in ("softmax", "log_softmax"):
            i = self.pick(lambda e: len(e.shape) >= 1)
            if i is None:
                i = self.new_input((draw(DIM), draw(DIM)))
            i = self.bounded(i, 100.0)
            e = self.entries[i]
            d = self._dim(len(e.shape))
            n = e.shape[d]
            if op == "softmax":
                new = Entry(e.shape, 1.0, max(math.exp(-2 * e.hi) / n, 1e-300))
            else:
                new = Entry(e.shape, 2 * e.hi + math.log(n) + 1, None)
            self.add(op, (i,), {"dim": d}, new)
        elif op == "mse_loss":
            i = self.bounded(self.pick(), 100.0)
            j = (
                self.pick(lambda e: e.shape == self.entries[i].shape)
                if draw(st.booleans())
                else None
            )
            if j is None:
                j = self.new_input(self.entries[i].shape)
            j = self.bounded(j, 100.0)
            reduction = draw(st.sampled_from(["mean", "sum", "none"]))
            e = self.entries[i]
            hi = (e.hi + self.entries[j].hi) ** 2
            shape = e.shape if reduction == "none" else ()
            if reduction == "sum":
                hi *= max(1, int(np.prod(e.shape)))
            self.add(op, (i, j), {"reduction": reduction}, Entry(shape, hi, None))
        else:
            i = self.pick(lambda e: len(e.shape) == 2)
            if i is None:
                i = self.new_input((draw(DIM), draw(st.integers(2, 4))))
            i = self.bounded(i, 100.0)
            e = self.entries[i]
            n, c = e.shape
            target = tuple(draw(st.lists(st.integers(0, c - 1), min_size=n, max_size=n)))
            reduction = draw(st.sampled_from(["mean", "sum", "none"]))
            self.add(
                op,
                (i,),
                {"target": target, "reduction": reduction},
                Entry((n,) if reduction == "none" else (), (2 * e.hi + 2) * n, None),
            )

    def op_inplace(self):
        draw = self.draw
        method = draw(
            st.sampled_from(
                [
                    "add_",
                    "sub_",
                    "mul_",
                    "div_",
                    "pow_",
                    "exp_",
                    "clamp_",
                    "iadd",
                    "setitem",
                    "fill_",
                    "add_alpha",
                ]
            )
        )
        i = self.pick()
        e = self.entries[i]
        if method in ("add_", "sub_", "mul_", "iadd", "add_alpha"):
            j = self.partner(i, exact=True)
            if method == "mul_":
                i, j = self.bounded(i, 100.0), self.bounded(j, 100.0)
            a, b = self.entries[i], self.entries[j]
            if j == i:  # aliasing in-place ops are tested on their own (regressions)
                j = self.add("clone", (j,), {}, Entry(b.shape, b.hi, b.lo))
            hi = a.hi * b.hi if method == "mul_" else a.hi + 2 * b.hi
            if method == "iadd":
                self.add("iadd", (i, j), {}, Entry(a.shape, hi, None))
            elif method == "add_alpha":
                self.add(
                    "inplace",
                    (i, j),
                    {"method": "add_", "kwargs": {"alpha": 2.0}},
                    Entry(a.shape, hi, None),
                )
            else:
                self.add("inplace", (i, j), {"method": method}, Entry(a.shape, hi, None))
        elif method == "div_":
            j = self.partner(i, exact=True, positive=True)
            i = self.bounded(i, 100.0)
            if j == i:
                j = self.add(
                    "clone",
                    (j,),
                    {},
                    Entry(self.entries[j].shape, self.entries[j].hi, self.entries[j].lo),
                )
            a, b = self.entries[i], self.entries[j]
            self.add("inplace", (i, j), {"method": "div_"}, Entry(a.shape, a.hi / b.lo, None))
        elif method == "pow_":
            i = self.positive(self.bounded(i, 20.0))
            a = self.entries[i]
            c = draw(st.sampled_from([2, 0.5, -1.0]))
            hi = max(a.hi, 1 / a.lo) ** abs(c)
            self.add(
                "inplace",
                (i,),
                {"method": "pow_", "extra": (c,)},
                Entry(a.shape, hi, min(a.lo, 1 / a.hi) ** abs(c)),
            )
        elif method == "exp_":
            i = self.bounded(i, EXP_MAX)
            a = self.entries[i]
            self.add(
                "inplace", (i,), {"method": "exp_"}, Entry(a.shape, math.exp(a.hi), math.exp(-a.hi))
            )
        elif method == "clamp_":
            self.add(
                "inplace",
                (i,),
                {"method": "clamp_", "kwargs": {"min": -0.5, "max": 0.8}},
                Entry(e.shape, max(e.hi, 0.8), None),
            )
        elif method == "fill_":
            self.add("fill", (i,), {"value": 0.25}, Entry(e.shape, 0.25, 0.25))
        else:  # setitem: a scalar or a tensor value into an indexed region
            if not e.shape:
                self.add(
                    "setitem", (i,), {"index": (), "value": 1.5}, Entry(e.shape, max(e.hi, 1.5))
                )
                return
            s = e.shape[0]
            index = draw(
                st.sampled_from(
                    [
                        0,
                        slice(0, max(1, s - 1)),
                        [0, s - 1],
                        (slice(None), 0) if len(e.shape) > 1 else -1,
                    ]
                )
            )
            region = np.zeros(e.shape)[index].shape
            if draw(st.booleans()):
                self.add(
                    "setitem",
                    (i,),
                    {"index": index, "value": -0.75},
                    Entry(e.shape, max(e.hi, 0.75)),
                )
            else:
                j = (
                    self.pick(lambda x: _broadcasts_to(x.shape, region))
                    if draw(st.booleans())
                    else None
                )
                if j is None or j == i:
                    j = self.new_input(_suffix_compatible(draw, region))
                self.add(
                    "setitem",
                    (i, j),
                    {"index": index},
                    Entry(self.entries[i].shape, max(self.entries[i].hi, self.entries[j].hi)),
                )


def _broadcasts_to(shape, target) -> bool:
    try:
        return np.broadcast_shapes(shape, target) == tuple(target)
    except ValueError:
        return False


OP_KINDS = [
    "binary",
    "binary",
    "scalar",
    "unary",
    "unary",
    "where",
    "reduce",
    "reduce",
    "shape",
    "shape",
    "join",
    "matmul",
    "nn",
    "inplace",
    "inplace",
]


@st.composite
def programs(draw, max_steps: int = 8, kinds: Sequence[str] | None = None):
    """A random program of 1..max_steps steps (plus helper steps for safe domains)."""
    gen = Gen(draw, max_steps)
    for _ in range(draw(st.integers(1, 2))):
        gen.new_input(tuple(draw(st.lists(DIM, max_size=3))))
    for _ in range(draw(st.integers(min(3, max_steps), max_steps))):
        if kinds is not None:
            getattr(gen, "op_" + draw(st.sampled_from(list(kinds))))()
        else:
            gen.step()
    # Keep numerics safe: every magnitude bounded (the loss sums them all).
    if any(e.hi > 1e6 for e in gen.entries):
        from hypothesis import reject

        reject()
    seed = draw(st.integers(0, 2**16))
    return Program(tuple(gen.inputs), tuple(gen.steps), seed)


# ==================================================================================
# Round 2: program classes aimed at aliasing, repeated backward, special values,
# dtypes and hooks.  Each class is a Hypothesis strategy of small frozen *cases* and one
# interpreter ``run_case(lib, case)`` shared by torch and dynamic mode (and, for special
# values, a static graph).  An interpreter returns a *trace*: a list of
# ``(label, observation)`` pairs, where an observation is an array, a dtype name,
# ``None`` (no gradient) or ``("raised", ExceptionTypeName)`` (the trace stops there).
# Two traces must agree label for label; see :func:`assert_same_trace`.
# ==================================================================================


@dataclass(frozen=True)
class Case:
    """One round-2 program: ``kind`` names the interpreter, ``data`` its parameters."""

    kind: str
    data: tuple  # ((key, value), ...): hashable and printed as Python

    def __repr__(self) -> str:
        return f"Case({self.kind!r}, {self.data!r})"

    def __getitem__(self, key):
        return dict(self.data)[key]


def _case(kind: str, **data) -> Case:
    return Case(kind, tuple(sorted(data.items())))


# -- libraries: the only place torch and naivegraph differ ---------------------------
class TorchLib:
    name = "torch"

    def __init__(self):
        import torch

        self.M = torch
        self.dtypes = {
            "bool": torch.bool,
            "int32": torch.int32,
            "int64": torch.int64,
            "float32": torch.float32,
            "float64": torch.float64,
        }

    def tensor(self, data, dtype: str = "float64", requires_grad: bool = False):
        return self.M.tensor(
            np.asarray(data), dtype=self.dtypes[dtype], requires_grad=requires_grad
        )

    def array(self, t) -> np.ndarray:
        return _torch_array(t)

    def dtype_name(self, t) -> str:
        return str(t.dtype).replace("torch.", "")


class NgLib:
    name = "dynamic"

    def __init__(self):
        import naivegraph as ng

        self.M = ng
        self.dtypes = {
            "bool": ng.bool_,
            "int32": ng.int32,
            "int64": ng.int64,
            "float32": ng.float32,
            "float64": ng.float64,
        }

    def tensor(self, data, dtype: str = "float64", requires_grad: bool = False):
        return self.M.tensor(
            np.asarray(data, dtype=self.dtypes[dtype]), requires_grad=requires_grad
        )

    def array(self, t) -> np.ndarray:
        return np.array(t.detach().numpy(), copy=True)

    def dtype_name(self, t) -> str:
        return np.dtype(t.dtype).name


class Trace(list):
    """(label, observation) pairs; arrays are copied so later in-place writes cannot leak in."""

    def __init__(self, lib):
        super().__init__()
        self.lib = lib

    def value(self, label: str, t) -> None:
        self.append((label, None if t is None else self.lib.array(t)))

    def grad(self, label: str, t) -> None:
        self.value(label + ".grad", t.grad)


def run_case(lib, case: Case) -> Trace:
    """Interpret ``case`` on ``lib``; an exception ends the trace with its type name."""
    trace = Trace(lib)
    with warnings.catch_warnings():  # numpy's "invalid value" warnings: values are compared
        warnings.simplefilter("ignore")
        try:
            CASE_RUNNERS[case.kind](lib, case, trace)
        except Exception as exc:  # the type is the observation
            trace.append(("raised", type(exc).__name__))
    return trace


def run_case_torch(case: Case) -> Trace:
    """The oracle, with torch's default dtype set to float64 as naivegraph's is in
    :func:`run_case_dynamic`, so that Python floats mean float64 in both."""
    import torch

    old = torch.get_default_dtype()
    torch.set_default_dtype(torch.float64)
    try:
        return run_case(TorchLib(), case)
    finally:
        torch.set_default_dtype(old)


@float64_default()
def run_case_dynamic(case: Case) -> Trace:
    return run_case(NgLib(), case)


# -- comparison ------------------------------------------------------------------------
def assert_same_special(actual, expected, what: str, signed_zeros: bool = True) -> None:
    """Equal shapes; NaN exactly where the oracle has NaN; infinities equal with sign;
    finite values to rtol 1e-9 (float64) / 1e-5 (float32); with ``signed_zeros``, zeros
    equal in sign (``np.signbit``).

    Values are compared with signed zeros (1/x tells -0.0 from 0.0, and IEEE 754 fixes
    the sign for every op used here).  Gradients are not: a zero gradient is +0.0 when a
    library masks (torch) and may be -0.0 when it multiplies by a 0/1 mask (numpy), and
    neither is more right."""
    a, b = np.asarray(actual), np.asarray(expected)
    assert a.shape == b.shape, f"{what}: shape {a.shape} != {b.shape}"
    if b.dtype == np.bool_ or a.dtype == np.bool_ or np.issubdtype(b.dtype, np.integer):
        np.testing.assert_array_equal(a, b, err_msg=what)
        return
    a, b = a.astype(np.float64), b.astype(np.float64)
    assert np.array_equal(np.isnan(a), np.isnan(b)), (
        f"{what}: NaN at {np.isnan(a)} != {np.isnan(b)}\n{a}\n{b}"
    )
    ok = ~np.isnan(b)
    assert np.array_equal(a[ok & np.isinf(b)], b[ok & np.isinf(b)]) and np.array_equal(
        np.isinf(a), np.isinf(b)
    ), f"{what}: infinities differ\n{a}\n{b}"
    zero = ok & (a == 0) & (b == 0) & signed_zeros
    assert np.array_equal(np.signbit(a[zero]), np.signbit(b[zero])), (
        f"{what}: signed zeros differ\n{a!r}\n{b!r}"
    )
    rtol = 1e-5 if np.asarray(expected).dtype == np.float32 else RTOL
    fin = ok & np.isfinite(b)
    np.testing.assert_allclose(a[fin], b[fin], rtol=rtol, atol=ATOL, err_msg=what)


def assert_same_trace(got: Trace, want: Trace, label: str) -> None:
    """Same observations in the same order; an exception must be of the same type."""
    got_labels = [k for k, _ in got]
    want_labels = [k for k, _ in want]
    assert got_labels == want_labels, (
        f"{label}: observed {got_labels} != {want_labels}\n"
        f"  got   {dict(got).get('raised', 'no exception')}\n"
        f"  want  {dict(want).get('raised', 'no exception')}"
    )
    for (k, a), (_, b) in zip(got, want):
        what = f"{label}: {k}"
        if k == "raised" or isinstance(b, str) or isinstance(a, str):
            assert a == b, f"{what}: {a!r} != {b!r}"
        elif a is None or b is None:
            assert a is None and b is None, f"{what}: {a!r} != {b!r}"
        else:
            assert_same_special(a, b, what, signed_zeros=".grad" not in k and "grad(" not in k)


def _data(seed: int, shape, low=-2.0, high=2.0) -> np.ndarray:
    return np.random.default_rng(seed).uniform(low, high, size=shape)


# -- class 1: views with in-place writes ---------------------------------------------
VIEW_OPS = (
    "slice_step",
    "int",
    "list",
    "reshape",
    "view",
    "transpose",
    "t",
    "permute",
    "squeeze",
    "unsqueeze",
    "flatten",
    "expand",
)


def _view_shape(op: str, shape: tuple) -> tuple | None:
    """Shape of ``op`` applied to ``shape``, or None when ``op`` does not apply."""
    z = np.zeros(shape)
    if op == "slice_step":
        return z[::2].shape if shape else None
    if op == "int" and len(shape) == 1 and not enabled("int_index_0d_view"):
        return None
    if op in ("int", "list"):
        return z[0].shape if op == "int" and shape else (z[[0, -1]].shape if shape else None)
    if op in ("reshape", "view"):
        return (int(np.prod(shape)),)
    if op in ("transpose", "permute"):
        return shape[::-1]
    if op == "t":
        return shape[::-1] if len(shape) <= 2 else None
    if op == "squeeze":
        if 1 not in shape and not enabled("noop_squeeze_view"):
            return None
        return tuple(s for s in shape if s != 1)
    if op == "unsqueeze":
        return (1,) + shape
    if op == "flatten":
        return (int(np.prod(shape)),) if shape else (1,)
    if op == "expand":
        return (2,) + shape
    raise ValueError(op)


def _apply_view(t, op: str):
    nd = t.dim() if hasattr(t, "dim") else t.ndim
    if op == "slice_step":
        return t[::2]
    if op == "int":
        return t[0]
    if op == "list":
        return t[[0, -1]]  # advanced indexing: a copy in torch, not a view
    if op == "reshape":
        return t.reshape(-1)
    if op == "view":
        return t.view(-1)
    if op == "transpose":
        return t.transpose(0, nd - 1) if nd else t
    if op == "permute":
        return t.permute(tuple(range(nd))[::-1])
    if op == "t":
        return t.t()
    if op == "squeeze":
        return t.squeeze()
    if op == "unsqueeze":
        return t.unsqueeze(0)
    if op == "flatten":
        return t.flatten()
    if op == "expand":
        return t.expand((2,) + tuple(t.shape))
    raise ValueError(op)


WRITE_METHODS = (
    "add_",
    "sub_",
    "mul_",
    "div_",
    "exp_",
    "clamp_",
    "fill_",
    "zero_",
    "copy_",
    "setitem",
    "iadd",
)


@st.composite
def view_inplace_cases(draw) -> Case:
    """A base (intermediate ``x * c``, a plain tensor, or the leaf itself), a chain of one
    or two views, one in-place write into the base or the last view, then a loss that
    reads the base, the view or both."""
    shape = tuple(draw(st.lists(st.integers(1, 3), min_size=1, max_size=3)))
    base = draw(st.sampled_from(["intermediate", "intermediate", "leaf", "plain"]))
    views, vshape = [], shape
    for _ in range(draw(st.integers(1, 2))):
        ops = [
            op
            for op in VIEW_OPS
            if _view_shape(op, vshape) is not None
            and (op != "view" or not views or enabled("view_of_noncontiguous"))
        ]
        op = draw(st.sampled_from(ops))
        views.append(op)
        vshape = _view_shape(op, vshape)
    target = draw(st.sampled_from(["base", "view"]))
    # the write lands in a view of a non-leaf that requires grad: an intermediate, or a
    # copy of the leaf (list indexing always copies; reshape/flatten copy in torch when
    # the input is not contiguous)
    copies = {"list", "reshape", "flatten"}
    into_grad_view = base == "intermediate" or base == "leaf" and bool(copies & set(views))
    if (
        not enabled("inplace_into_view")
        and into_grad_view
        or not enabled("expanded_write")
        and "expand" in views
    ):
        target = "base"
    tshape = shape if target == "base" else vshape
    method = draw(st.sampled_from(WRITE_METHODS))
    operand = None
    if method in ("add_", "sub_", "mul_", "div_", "copy_", "setitem", "iadd"):
        if base == "plain" or method == "copy_" or draw(st.booleans()):
            region = tshape[1:] if method == "setitem" and tshape else tshape
            # a grad-carrying value written into a view of a plain tensor
            carries_grad = target == "base" or base != "plain" or enabled("plain_view_write")
            operand = (
                "tensor" if carries_grad else "plain_tensor",
                _suffix_compatible(draw, region),
            )
        else:
            operand = ("scalar", draw(st.sampled_from([0.5, -1.5, 2.0])))
    use = draw(st.sampled_from(["base", "view", "both"]))
    # Reading the other alias after a write hits the stale-grad bug, except for a plain
    # base: plain values written in leave nothing to be stale, and a grad-carrying value
    # written into its view is the plain_view_write class.
    plain_write = base == "plain" and (
        operand is None
        or operand[0] != "tensor"
        or target == "view"
        and enabled("plain_view_write")
    )
    if not enabled("view_inplace_grad") and not plain_write:
        use = target
    return _case(
        "view_inplace",
        shape=shape,
        base=base,
        views=tuple(views),
        target=target,
        method=method,
        operand=operand,
        use=use,
        seed=draw(st.integers(0, 2**16)),
    )


def _write(t, method: str, value):
    if method == "exp_":
        t.exp_()
    elif method == "clamp_":
        t.clamp_(min=-0.5, max=0.8)
    elif method == "fill_":
        t.fill_(0.25)
    elif method == "zero_":
        t.zero_()
    elif method == "setitem":
        if t.dim() == 0:
            t[()] = value
        else:
            t[0] = value
    elif method == "iadd":
        t += value
    else:
        getattr(t, method)(value)


def _run_view_inplace(lib, case: Case, trace: Trace) -> None:
    seed, shape = case["seed"], case["shape"]
    x = lib.tensor(_data(seed, shape), requires_grad=True)
    leaves = [("x", x)]
    if case["base"] == "leaf":
        base = x
    elif case["base"] == "plain":
        base = lib.tensor(_data(seed + 1, shape))
    else:
        base = x * 1.5
    chain = [base]
    for op in case["views"]:
        chain.append(_apply_view(chain[-1], op))
    view = chain[-1]
    value = None
    if case["operand"] is not None:
        kind, spec = case["operand"]
        if kind == "scalar":
            value = spec
        else:
            low = 0.5 if case["method"] == "div_" else -2.0
            value = lib.tensor(_data(seed + 2, spec, low=low), requires_grad=kind == "tensor")
            if kind == "tensor":
                leaves.append(("y", value))
    _write(base if case["target"] == "base" else view, case["method"], value)
    trace.value("base", base)
    trace.value("view", view)
    loss = None
    for k, t in enumerate([base, view]):
        if case["use"] in ("both", ("base", "view")[k]):
            w = lib.tensor(np.random.default_rng(seed + 3 + k).normal(size=tuple(t.shape)))
            term = (t * w).sum()
            loss = term if loss is None else loss + term
    trace.append(("loss requires grad", str(loss.requires_grad)))
    if not loss.requires_grad:  # a plain base with plain values written in
        return
    loss.backward()
    for name, leaf in leaves:
        trace.grad(name, leaf)


# -- class 2: repeated backward, retain_grad, autograd.grad, zeroing --------------------
BACKWARD_ACTIONS = (
    "backward",
    "backward",
    "grad_x",
    "grad_h",
    "zero_x",
    "none_x",
    "zero_h",
    "multi",
)


@st.composite
def repeated_backward_cases(draw) -> Case:
    """A chain x -> h1 -> h2 -> loss with retain_grad on some intermediates and a list of
    actions (backward with retain_graph, autograd.grad, zeroing); .grad read after each."""
    shape = tuple(draw(st.lists(st.integers(1, 3), max_size=2)))
    retain = (draw(st.booleans()), draw(st.booleans()))
    if not enabled("retain_grad_accumulate"):
        retain = (False, False)
    choices = BACKWARD_ACTIONS + (("set_data",) if enabled("data_reassign") else ())
    actions = ["backward"] + draw(st.lists(st.sampled_from(choices), min_size=1, max_size=4))
    if "backward" not in actions[1:]:
        actions.append("backward")
    last_frees = draw(st.booleans()) and draw(st.booleans())
    return _case(
        "repeated_backward",
        shape=shape,
        retain=retain,
        actions=tuple(actions),
        last_frees=last_frees,
        seed=draw(st.integers(0, 2**16)),
    )


def _run_repeated_backward(lib, case: Case, trace: Trace) -> None:
    M, seed = lib.M, case["seed"]
    x = lib.tensor(_data(seed, case["shape"]), requires_grad=True)
    h1 = (x * 0.5).tanh()
    h2 = h1 * h1 + x.sin()
    hs = [h for h, keep in zip((h1, h2), case["retain"]) if keep]
    for h in hs:
        h.retain_grad()
    w = lib.tensor(np.random.default_rng(seed + 1).normal(size=case["shape"]))
    loss = (h2 * w).sum() + h1.sum()
    actions = case["actions"]
    for step, action in enumerate(actions):
        retain = not (case["last_frees"] and step == len(actions) - 1)
        if action == "backward":
            loss.backward(retain_graph=retain)
        elif action == "grad_x":
            trace.value(f"{step}: grad(loss, x)", M.autograd.grad(loss, [x], retain_graph=True)[0])
        elif action == "grad_h":
            trace.value(
                f"{step}: grad(loss, h1)", M.autograd.grad(loss, [h1], retain_graph=True)[0]
            )
        elif action == "zero_x":
            if x.grad is not None:
                x.grad.zero_()
        elif action == "none_x":
            x.grad = None
        elif action == "zero_h":
            for h in hs:
                if h.grad is not None:
                    h.grad.zero_()
        elif action == "set_data":  # backward must see the new data, as torch's does
            x.data = lib.tensor(_data(seed + 4, case["shape"]))
        elif action == "multi":
            g1 = lib.tensor(np.random.default_rng(seed + 2).normal(size=case["shape"]))
            g2 = lib.tensor(np.random.default_rng(seed + 3).normal(size=case["shape"]))
            M.autograd.backward([h1 * 2.0, h2 * 3.0], [g1, g2], retain_graph=retain)
        trace.grad(f"{step}: {action}: x", x)
        for k, h in enumerate(hs):
            trace.grad(f"{step}: {action}: h{k}", h)


# -- class 3: NaN, inf and signed zeros ----------------------------------------------------
SPECIALS = (math.nan, math.inf, -math.inf, 0.0, -0.0)
SPECIAL_UNARY = (
    "exp",
    "log",
    "sqrt",
    "sin",
    "cos",
    "tanh",
    "sigmoid",
    "relu",
    "abs",
    "neg",
    "clamp",
)
SPECIAL_BINARY = ("add", "sub", "mul", "div", "pow", "maximum", "minimum", "where")
SPECIAL_SCALAR = ("add", "sub", "mul", "rsub")


@st.composite
def _special_array(draw, shape: tuple):
    """(seed, {flat position: special}): random finite values with a few specials.  At
    most one zero per tensor, so max/min never tie between 0.0 and -0.0."""
    n = int(np.prod(shape))
    picks = draw(
        st.lists(
            st.tuples(st.integers(0, max(n - 1, 0)), st.sampled_from(SPECIALS)),
            max_size=min(n, 3),
            unique_by=lambda p: p[0],
        )
    )
    zeros = [p for p in picks if p[1] == 0.0]
    picks = [p for p in picks if p[1] != 0.0] + zeros[:1]
    return tuple(sorted(picks))


def _special_values(seed: int, shape: tuple, picks, low=-2.0) -> np.ndarray:
    a = _data(seed, shape, low=low).reshape(-1)
    for pos, v in picks:
        a[pos] = v
    return a.reshape(shape)


@st.composite
def special_value_cases(draw, static: bool = False) -> Case:
    """One op (reduction, unary, binary, or x <op> signed-zero scalar) on inputs holding
    NaN, +-inf and +-0.0; the loss is sum(out * w) with finite w.  ``static``: cases for
    a static graph, whose optimiser is known to fold ``x + 0.0`` (flag below)."""
    shape = tuple(draw(st.lists(st.integers(1, 3), min_size=1, max_size=2)))
    family = draw(st.sampled_from(["reduce", "unary", "binary", "scalar"]))
    picks = draw(_special_array(shape))
    picks2 = draw(_special_array(shape))
    if draw(st.booleans()):  # specials at the same positions: NaN vs inf, 0.0 vs -0.0 ties
        picks2 = tuple((pos, draw(st.sampled_from(SPECIALS))) for pos, _ in picks)
    if family == "scalar" and draw(st.booleans()):  # x + 0.0 with x = -0.0
        picks = ((0, draw(st.sampled_from([0.0, -0.0]))),) + tuple(p for p in picks if p[0])
    nan_free = not any(math.isnan(v) for _, v in picks + picks2)
    # maximum(0.0, -0.0): torch returns the first operand on a tie, but only in its
    # scalar loop: its SIMD kernel (full chunks of 8 float64 on this CPU, 16 float32)
    # returns the second.  Which zero comes out then depends on the CPU, so a tie is
    # only drawn where torch takes the scalar loop: fewer than 8 elements.
    simd_zero_tie = (
        bool({p for p, v in picks if v == 0} & {p for p, v in picks2 if v == 0})
        and math.prod(shape) >= 8
    )
    # relu/abs are known wrong at NaN and at -0.0 (relu(-0.0) is -0.0 in torch)
    plain = nan_free and not any(v == 0 and math.copysign(1, v) < 0 for _, v in picks)
    op, attrs = None, {}
    if family == "reduce":
        ops = ["sum", "mean"] + (["max", "min"] if enabled("nan_max_min") or nan_free else [])
        op = draw(st.sampled_from(ops))
        attrs = {
            "dim": draw(st.sampled_from([None] + list(range(len(shape))))),
            "keepdim": draw(st.booleans()),
        }
    elif family == "unary":
        ops = [
            u for u in SPECIAL_UNARY if enabled("nan_relu_abs") or plain or u not in ("relu", "abs")
        ]
        op = draw(st.sampled_from(ops))
    elif family == "binary":
        ops = [
            b
            for b in SPECIAL_BINARY
            if (enabled("nan_max_min") or nan_free or b not in ("maximum", "minimum"))
            and (not simd_zero_tie or b not in ("maximum", "minimum"))
            and (enabled("pow_at_zero") or b != "pow")
        ]
        op = draw(st.sampled_from(ops))
    else:
        op = draw(st.sampled_from(SPECIAL_SCALAR))
        zeros = [0.0, -0.0]
        attrs = {"c": draw(st.sampled_from(zeros + [1.0, 2.5]))}
    return _case(
        "special",
        shape=shape,
        family=family,
        op=op,
        attrs=tuple(attrs.items()),
        picks=picks,
        picks2=picks2,
        seed=draw(st.integers(0, 2**16)),
    )


def _special_op(M, case: Case, x, y):
    op, attrs = case["op"], dict(case["attrs"])
    family = case["family"]
    if family == "reduce":
        if op in ("sum", "mean") or attrs["dim"] is None:
            return (
                getattr(x, op)()
                if attrs["dim"] is None
                else getattr(x, op)(dim=attrs["dim"], keepdim=attrs["keepdim"])
            )
        return getattr(x, op)(dim=attrs["dim"], keepdim=attrs["keepdim"])[0]
    if family == "unary":
        return x.clamp(min=-0.5, max=0.8) if op == "clamp" else getattr(x, op)()
    if family == "binary":
        if op in ("maximum", "minimum"):
            return getattr(M, op)(x, y)
        if op == "where":
            return M.where(x > 0, x, y)
        return {
            "add": lambda: x + y,
            "sub": lambda: x - y,
            "mul": lambda: x * y,
            "div": lambda: x / y,
            "pow": lambda: x**y,
        }[op]()
    c = attrs["c"]
    return {"add": x + c, "sub": x - c, "mul": x * c, "rsub": c - x}[op]


def _run_special(lib, case: Case, trace: Trace) -> None:
    seed, shape = case["seed"], case["shape"]
    low = 0.0 if case["op"] == "pow" else -2.0  # pow: a real base, as in the lessons
    x = lib.tensor(_special_values(seed, shape, case["picks"], low), requires_grad=True)
    y = lib.tensor(_special_values(seed + 1, shape, case["picks2"]), requires_grad=True)
    out = _special_op(lib.M, case, x, y)
    trace.value("out", out)
    w = lib.tensor(np.random.default_rng(seed + 2).normal(size=tuple(out.shape)))
    (out * w).sum().backward()
    trace.grad("x", x)
    if case["family"] == "binary":
        trace.grad("y", y)


@float64_default()
def run_special_static(case: Case) -> Trace:
    """The special-values case as a static graph, compiled with optimisation: values and
    symbolic gradients, observed under the same labels as dynamic mode."""
    import naivegraph.static as ns

    class StaticLib(NgLib):
        name = "static"

    lib = StaticLib()
    trace = Trace(lib)
    seed, shape = case["seed"], case["shape"]
    low = 0.0 if case["op"] == "pow" else -2.0
    xv = _special_values(seed, shape, case["picks"], low)
    yv = _special_values(seed + 1, shape, case["picks2"])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            g = ns.Graph()
            with g:
                x = ns.placeholder("x", shape=shape)
                y = ns.placeholder("y", shape=shape)
                out = _special_op(ns, case, x, y)
                w = np.random.default_rng(seed + 2).normal(size=tuple(out.shape))
                gx, gy = ns.gradients((out * w).sum(), [x, y])
            fetch = [out, gx] + ([gy] if case["family"] == "binary" else [])
            fetch = [f if f is not None else ns.zeros_like(x) for f in fetch]
            vals = g.compile([x, y], fetch, optimize=True)(xv, yv)
            names = ["out", "x.grad", "y.grad"]
            for name, v in zip(names, vals):
                trace.append((name, np.asarray(v)))
        except Exception as exc:
            trace.append(("raised", type(exc).__name__))
    return trace


# -- class 4: mixed dtypes ---------------------------------------------------------------
DTYPES = ("bool", "int32", "int64", "float32", "float64")
MIXED_OPS = ("add", "sub", "mul", "div", "maximum", "minimum", "lt", "eq", "where")


@st.composite
def mixed_dtype_cases(draw) -> Case:
    """A 1-d or 2-d tensor of one dtype with a 0-d tensor or a Python scalar of another,
    either order; the result's dtype and values, and the gradient of float operands."""
    shape = tuple(draw(st.lists(st.integers(1, 3), min_size=1, max_size=2)))
    da = draw(st.sampled_from(DTYPES))
    other = draw(st.sampled_from(["tensor0d", "python"]))
    db = draw(st.sampled_from(DTYPES if other == "tensor0d" else ("bool", "int", "float")))
    op = draw(st.sampled_from(MIXED_OPS))
    if op == "sub" and "bool" in (da, db) and not enabled("bool_subtraction"):
        op = "add"
    if op in ("maximum", "minimum"):
        other = "tensor0d"
        db = db if db in DTYPES else "float64"
    if not enabled("zero_dim_promotion") and other == "tensor0d" and da != db:
        other, db = "tensor_same_dtype", da
    if op == "where" and not enabled("where_nonbool"):
        cond = "bool"
    else:
        cond = draw(st.sampled_from(DTYPES)) if op == "where" else "bool"
    return _case(
        "mixed_dtype",
        shape=shape,
        da=da,
        other=other,
        db=db,
        op=op,
        cond=cond,
        reflected=draw(st.booleans()),
        seed=draw(st.integers(0, 2**16)),
    )


def _typed_values(seed: int, shape, dtype: str) -> np.ndarray:
    rng = np.random.default_rng(seed)
    if dtype == "bool":
        return rng.integers(0, 2, size=shape).astype(bool)
    if dtype.startswith("int"):
        return rng.integers(-3, 4, size=shape)
    return rng.uniform(-2, 2, size=shape)


def _run_mixed_dtype(lib, case: Case, trace: Trace) -> None:
    M, seed, shape, op = lib.M, case["seed"], case["shape"], case["op"]
    da, db = case["da"], case["db"]
    a = lib.tensor(_typed_values(seed, shape, da), da, requires_grad=da.startswith("float"))
    if case["other"] == "python":
        raw = _typed_values(seed + 1, (), {"int": "int64", "float": "float64"}.get(db, db))
        b = {"bool": bool, "int": int, "float": float}[db](raw)
    else:
        b = lib.tensor(_typed_values(seed + 1, (), db), db, requires_grad=db.startswith("float"))
    p, q = (b, a) if case["reflected"] else (a, b)
    if op in ("maximum", "minimum"):
        out = getattr(M, op)(p, q)
    elif op == "where":
        cond = lib.tensor(_typed_values(seed + 2, shape, case["cond"]), case["cond"])
        out = M.where(cond, p, q)
    else:
        out = {
            "add": lambda: p + q,
            "sub": lambda: p - q,
            "mul": lambda: p * q,
            "div": lambda: p / q,
            "lt": lambda: p < q,
            "eq": lambda: p == q,
        }[op]()
    trace.append(("dtype", lib.dtype_name(out)))
    trace.value("out", out)
    if out.requires_grad:
        w = lib.tensor(
            np.random.default_rng(seed + 3).normal(size=tuple(out.shape)), lib.dtype_name(out)
        )
        (out * w).sum().backward()
        trace.append(("a.grad dtype", None if a.grad is None else lib.dtype_name(a.grad)))
        trace.grad("a", a)


# -- class 5: hooks ------------------------------------------------------------------------
HOOK_PLACES = ("x", "h", "h_post", "h_pre", "out_pre")
HOOK_KINDS = ("scale", "replace", "observe")


@st.composite
def hook_cases(draw) -> Case:
    """Hooks on a leaf, an intermediate and on grad_fn nodes (pre and post) that scale,
    replace or only observe gradients; sometimes retain_grad on the intermediate."""
    shape = tuple(draw(st.lists(st.integers(1, 3), max_size=2)))
    hooks = draw(
        st.lists(
            st.tuples(st.sampled_from(HOOK_PLACES), st.sampled_from(HOOK_KINDS)),
            min_size=1,
            max_size=3,
        )
    )
    bad = None
    if enabled("hook_changes_type") and draw(st.integers(0, 3)) == 0:
        bad = draw(st.sampled_from(["shape", "dtype"]))
    return _case(
        "hooks",
        shape=shape,
        hooks=tuple(hooks),
        retain=draw(st.booleans()),
        bad=bad,
        seed=draw(st.integers(0, 2**16)),
    )


def _run_hooks(lib, case: Case, trace: Trace) -> None:
    seed, shape = case["seed"], case["shape"]
    x = lib.tensor(_data(seed, shape), requires_grad=True)
    h = x.exp() * 0.5
    if case["retain"]:
        h.retain_grad()
    out = h * h + x
    seen = []

    def tensor_hook(k, kind):
        def hook(g):
            seen.append((f"hook{k} saw", lib.array(g)))
            if kind == "scale":
                return g * 3.0
            if kind == "replace":
                return g * 0.0 + lib.tensor(_data(seed + 10 + k, tuple(g.shape)), lib.dtype_name(g))
            return None

        return hook

    for k, (place, kind) in enumerate(case["hooks"]):
        hook = tensor_hook(k, kind)
        if place == "x":
            x.register_hook(hook)
        elif place == "h":
            h.register_hook(hook)
        elif place == "h_post":  # (grad_inputs, grad_outputs) -> new grad_inputs
            h.grad_fn.register_hook(lambda gi, go, hook=hook: _map_grads(hook, gi))
        else:  # (grad_outputs) -> new grad_outputs
            node = h.grad_fn if place == "h_pre" else out.grad_fn
            node.register_prehook(lambda go, hook=hook: _map_grads(hook, go))
    if case["bad"] is not None:
        bad = case["bad"]
        h.register_hook(lambda g: g.sum() if bad == "shape" else g.float())
    w = lib.tensor(np.random.default_rng(seed + 1).normal(size=shape))
    (out * w).sum().backward()
    trace.extend(seen)
    trace.grad("x", x)
    if case["retain"]:
        trace.grad("h", h)


def _map_grads(hook, grads):
    """A tensor hook applied to each gradient of a node hook's tuple (None stays None)."""
    out = []
    for g in grads:
        r = None if g is None else hook(g)
        out.append(g if r is None else r)
    return tuple(out)


# -- class 6: function transforms closing over tensors that require grad ----------------
# ``ng.func`` against ``torch.func``: the transformed function reads a tensor ``c`` that
# requires grad (a closure), and is evaluated at another tensor or at ``c`` itself; each
# transform must differentiate its own argument only (JAX's and torch.func's levels), and
# its result must still carry the closure's gradient, which ``backward`` then reads.
FUNC_TRANSFORMS = ("grad", "vjp", "jvp", "jacrev", "jacfwd", "hessian", "nested_grad")
FUNC_BODIES = {  # vector-valued; the scalar transforms sum them
    "mul": lambda c, y: c * y,
    "sin_mul": lambda c, y: (c * y).sin(),
    "square_add": lambda c, y: (c + y) ** 2,
    "exp_c": lambda c, y: c.exp() * y,
    "cubic": lambda c, y: y * y * c,
    "tanh_mix": lambda c, y: (c * y).tanh() + c * c,
}


@st.composite
def func_closure_cases(draw) -> Case:
    """A transform, a body mixing the closed-over ``c`` with the argument ``y``, where it
    is evaluated (another tensor, or ``c`` itself: the perturbation-confusion case)."""
    return _case(
        "func_closure",
        transform=draw(st.sampled_from(FUNC_TRANSFORMS)),
        body=draw(st.sampled_from(sorted(FUNC_BODIES))),
        at=draw(st.sampled_from(("other", "closure"))),
        size=draw(st.integers(1, 3)),
        seed=draw(st.integers(0, 2**16)),
    )


def _run_func_closure(lib, case: Case, trace: Trace) -> None:
    func, seed, n = lib.M.func, case["seed"], case["size"]
    body = FUNC_BODIES[case["body"]]
    c = lib.tensor(_data(seed, (n,), -1.0, 1.0), requires_grad=True)
    y = c if case["at"] == "closure" else lib.tensor(_data(seed + 1, (n,), -1.0, 1.0))
    v = lib.tensor(_data(seed + 2, (n,), -1.0, 1.0))

    def vector(y_):
        return body(c, y_)

    def scalar(y_):
        return body(c, y_).sum()

    transform = case["transform"]
    if transform == "grad":
        results = [func.grad(scalar)(y)]
    elif transform == "vjp":
        out, pullback = func.vjp(vector, y)
        results = [out, *pullback(v)]
    elif transform == "jvp":
        results = list(func.jvp(vector, (y,), (v,)))
    elif transform == "jacrev":
        results = [func.jacrev(vector)(y)]
    elif transform == "jacfwd":
        results = [func.jacfwd(vector)(y)]
    elif transform == "hessian":
        results = [func.hessian(scalar)(y)]
    else:  # the outer argument is closed over by the inner transform

        def outer(x):
            return func.grad(lambda y_: body(x, y_).sum())(x).sum()

        results = [func.grad(outer)(y)]
    for i, r in enumerate(results):  # derivatives: "grad(" compares zeros without sign
        primal = transform in ("vjp", "jvp") and i == 0
        trace.value(f"{transform}: value" if primal else f"{transform}: grad({i})", r)
    # the closure's gradient flows through the transform's result, as in torch.func
    loss = sum(
        (r * lib.tensor(_data(seed + 3 + i, tuple(r.shape)))).sum()
        for i, r in enumerate(results)
        if r.requires_grad
    )
    if isinstance(loss, int):
        trace.append(("nothing requires grad", None))
        return
    loss.backward()
    trace.grad("c", c)


CASE_RUNNERS = {
    "view_inplace": _run_view_inplace,
    "repeated_backward": _run_repeated_backward,
    "special": _run_special,
    "mixed_dtype": _run_mixed_dtype,
    "hooks": _run_hooks,
    "func_closure": _run_func_closure,
}


def torch_may_raise(case: Case) -> bool:
    """Whether ``case`` is meant to probe an error.  The other cases must run cleanly in
    torch: a program torch rejects would compare nothing but exception types."""
    c = dict(case.data)
    if case.kind == "view_inplace":
        # leaf writes, expanded writes and version-counter errors depend on which op
        # saved which tensor: torch decides, naivegraph must match the type
        return True
    if case.kind == "repeated_backward":
        return c["last_frees"]
    if case.kind == "hooks":
        return c["bad"] is not None
    if case.kind == "mixed_dtype":
        return c["cond"] != "bool" or c["op"] == "sub" and "bool" in (c["da"], c["db"])
    return False


ROUND2_STRATEGIES = {
    "view_inplace": view_inplace_cases,
    "repeated_backward": repeated_backward_cases,
    "special": special_value_cases,
    "mixed_dtype": mixed_dtype_cases,
    "hooks": hook_cases,
}
