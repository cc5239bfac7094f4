"""PyTorch's OpInfo samples as an oracle for naivegraph: the name map, the sample
conversion, the checks and the comparison rules of ``test_opinfo.py``.

``torch.testing._internal.common_methods_invocations.op_db`` holds one ``OpInfo`` per
torch op, each with ``sample_inputs(device, dtype, requires_grad)``: the awkward cases
torch's own suite runs (broadcasting, negative and tuple dims, empty tensors, keepdim,
0-d tensors, non-contiguous inputs).  :data:`SPECS` names, for each op of naivegraph's
surface that op_db knows, how naivegraph spells it in each mode, how exactly its values
must agree, and which samples naivegraph refuses (each with what is unsupported).

A sample runs through five checks (:data:`CHECKS`):

- ``dynamic``: forward values and a VJP with a random cotangent (``ng.autograd.grad``);
- ``double``: the VJP's own VJP (``create_graph=True``), with respect to the inputs and
  to the cotangent (that second part is a JVP: it catches a VJP rule that is not linear);
- ``jvp``: forward mode (``ng.autograd.forward_ad``) with a random tangent per input;
- ``static``: each tensor a ``ns.placeholder`` of the sample's shape, values, a VJP and a
  second-order VJP by ``ns.gradients`` and a JVP by ``ns.jvp``, one compiled function;
- ``batch``: the same with the first dimension of the sample's input tensor unknown
  (``None``), values and the VJP.

A sample that a spec declares refused must raise a clear error (a ``TypeError``,
``ValueError``, ``RuntimeError``, ``NotImplementedError`` or ``IndexError`` raised by
naivegraph's own code, not numpy's, whose message names the op); a sample that is not
declared refused must agree with torch.  So a silent wrong answer, a leaked internal
error and an undeclared refusal all fail, and the coverage table of TESTING.md
(``coverage_table.py``) is read from this file.
"""

from __future__ import annotations

import math
import os
import re
import traceback
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

import numpy as np

import naivegraph as ng

# a refusal must come from the package itself, not numpy or this test code
PACKAGE = Path(ng.__file__).resolve().parent

# The default run compares a spread of samples per op; the full sweep all of them.
FULL = os.environ.get("NAIVEGRAPH_OPINFO_FULL", "") not in ("", "0")
DEFAULT_SAMPLES = {"dynamic": 8, "double": 8, "jvp": 8, "static": 8, "batch": 3}  # per op
SEED = 0

CHECKS = ("dynamic", "double", "jvp", "static", "batch")

# What a clean refusal may be (anything else, e.g. AttributeError or KeyError, is a crash).
REFUSAL_TYPES = (TypeError, ValueError, RuntimeError, NotImplementedError, IndexError)

Predicate = Callable[[Any], bool]

# Python's message for a call its signature does not accept.
SIGNATURE_ERROR = re.compile(r"\(\) (got an unexpected keyword argument|takes .* positional)")


@dataclass(frozen=True)
class Refusal:
    """Samples that naivegraph refuses on purpose: ``when(sample)`` says which; ``what`` is
    the unsupported feature (for the coverage table); ``checks`` the checks it affects."""

    what: str
    when: Predicate
    checks: tuple[str, ...] = CHECKS


@dataclass(frozen=True)
class Known:
    """A known wrong answer or crash: the affected samples are strict xfails with ``why``."""

    why: str
    when: Predicate
    checks: tuple[str, ...] = CHECKS


@dataclass(frozen=True)
class Spec:
    """One OpInfo and naivegraph's spelling of it.

    ``dynamic`` / ``static``: a dotted path looked up on ``ng`` / ``ns`` (``nn.functional.
    mse_loss``), else a method of the first operand (``.__radd__``), else ``@T`` for an
    attribute; ``static=None``: static mode has no such op.  ``values``: how the forward
    values must agree, ``"exact"`` (IEEE-exact: + - * / sqrt, comparisons, copies),
    ``"ulp"`` (transcendental: a few units in the last place) or ``"sum"`` (reductions,
    matmul: a tolerance growing with the number of terms), or a function of the sample
    giving one of these.  ``names``: words of which one must appear in a refusal's
    message (default: the op's own name).  ``loose``: ``(part, rtol)`` pairs where torch
    itself departs from the exact derivative by more than rounding (reason beside it).
    """

    opinfo: str
    dynamic: str
    static: str | None
    values: str | Callable[[Any], str] = "exact"
    variant: str = ""
    names: tuple[str, ...] = ()
    refusals: tuple[Refusal, ...] = ()
    known: tuple[Known, ...] = ()
    loose: tuple[tuple[str, float], ...] = ()
    arrange: Callable[[Any, list, dict], tuple[Any, list, dict]] | None = None
    known_indices: bool = False

    @property
    def key(self) -> str:
        return self.opinfo + (f".{self.variant}" if self.variant else "")

    @property
    def message_names(self) -> tuple[str, ...]:
        own = (self.dynamic.split(".")[-1].lstrip("@"), self.opinfo.split(".")[-1])
        return self.names + own


# -- small predicates over a torch SampleInput -------------------------------------------


def _kw(name: str) -> Predicate:
    return lambda s: name in s.kwargs


def _any(*predicates: Predicate) -> Predicate:
    return lambda s: any(p(s) for p in predicates)


def _tensor_bounds(s: Any) -> list:
    torch = torch_module()
    return [v for v in (*s.args, *s.kwargs.values()) if isinstance(v, torch.Tensor)]


def _fused_alpha(s: Any) -> str:
    """torch computes ``x + alpha * y`` with one rounding (a fused multiply-add)."""
    return "sum" if "alpha" in s.kwargs else "exact"


def _mixed_sign_dims(s: Any) -> bool:
    dims = s.args[0] if len(s.args) == 1 and isinstance(s.args[0], (tuple, list)) else s.args
    return any(d < 0 for d in dims) and any(d > 0 for d in dims)


def _legacy_empty(s: Any) -> bool:
    return any(t.shape == (0,) for t in s.input) and any(t.ndim > 1 for t in s.input)


def _along_first_dim(s: Any) -> bool:
    dim = s.kwargs.get("dim", s.args[0] if s.args else 0)
    return dim % s.input[0].ndim == 0


def _few_zeros(s: Any) -> bool:
    """A reduced slice of more than one element holds one or two zeros (where the
    second derivative of prod is not zero)."""
    x = s.input.detach()
    dim = s.args[0] if s.args else s.kwargs.get("dim")
    zeros = (x == 0).sum() if dim is None else (x == 0).sum(dim)
    length = x.numel() if dim is None else (x.shape[dim] if x.ndim else 1)
    return length > 1 and bool(((zeros >= 1) & (zeros <= 2)).any())


def _class_positions(s: Any) -> bool:
    """Class-index targets with extra dimensions: input (N, C, d1, ...), target (N, d1, ...)."""
    target = s.args[0]
    return s.input.ndim > 2 and not target.is_floating_point()


MEMORY_FORMAT = (Refusal("memory_format", _kw("memory_format")),)
LOSS_REFUSALS = (
    Refusal(
        "an unbatched input (C,) whose class count is unknown (None)",
        lambda s: s.input.ndim == 1,
        ("batch",),
    ),
)


def S(opinfo, dynamic=None, static="", **kw) -> Spec:  # a short name: the table below is long
    """A spec whose static spelling defaults to the dynamic one."""
    dynamic = dynamic or opinfo
    return Spec(opinfo, dynamic, dynamic if static == "" else static, **kw)


# -- the name map ----------------------------------------------------------------------

SPECS: tuple[Spec, ...] = (
    # elementwise, IEEE-exact
    S("add", values=_fused_alpha),
    S("sub", values=_fused_alpha),
    S("mul"),
    S("div", variant="no_rounding_mode"),
    S("div", variant="trunc_rounding"),
    S("div", variant="floor_rounding"),
    S("rsub", ".__rsub__", refusals=(Refusal("alpha", _kw("alpha")),)),
    S("__radd__", ".__radd__"),
    S("__rsub__", ".__rsub__"),
    S("__rmul__", ".__rmul__"),
    S("__rdiv__", ".__rtruediv__", values="ulp"),  # torch: reciprocal(x) * y, two roundings
    S("neg"),
    S("abs"),
    S("sign"),
    S("sqrt", values="ulp"),  # torch's vectorised float64 sqrt is 1 ulp off at times
    S("reciprocal"),
    S("square", ".square", static=None),
    S("maximum"),
    S("minimum"),
    S("max", variant="binary"),
    S("min", variant="binary"),
    S(
        "clamp",
        refusals=(
            Refusal(
                "a bound that requires grad or carries a tangent",
                lambda s: any(t.requires_grad for t in _tensor_bounds(s)),
                ("dynamic", "double", "jvp"),
            ),
            Refusal("a bound that is a graph node", _tensor_bounds, ("static", "batch")),
        ),
    ),
    S("where", arrange=lambda x, args, kw: (args[0], [x, *args[1:]], kw)),
    S("nn.functional.relu", "relu"),
    S("eq"),
    S("ne"),
    S("lt"),
    S("le"),
    S("gt"),
    S("ge"),
    S("logical_and"),
    S("logical_or"),
    S("logical_not"),
    S("clone", static=None),
    S("double", ".double", static=None, refusals=MEMORY_FORMAT),
    S("float", ".float", static=None, refusals=MEMORY_FORMAT),
    S("long", ".long", static=None, refusals=MEMORY_FORMAT),
    S("int", ".int", static=None, refusals=MEMORY_FORMAT),
    S("bool", ".bool", static=None, refusals=MEMORY_FORMAT),
    S("to", ".to", static=None, refusals=MEMORY_FORMAT),
    S("zeros_like", static=None),
    # in place on a copy, as torch's OpInfos run them: torch.fill(x, v) is x.clone().fill_(v)
    S("fill", ".fill_", static=None, arrange=lambda x, args, kw: (x.clone(), args, kw)),
    S("zero_", ".zero_", static=None, arrange=lambda x, args, kw: (x.clone(), args, kw)),
    S("all", ".all", static=None),
    S("any", ".any", static=None),
    S("contiguous", ".contiguous", static=None),
    # elementwise, transcendental
    S("exp", values="ulp"),
    S("log", values="ulp"),
    S("sin", values="ulp"),
    S("cos", values="ulp"),
    S("tanh", values="ulp"),
    S("sigmoid", values="ulp"),
    S("pow", values="ulp"),
    S("__rpow__", ".__rpow__", values="ulp"),
    # views and copies of the layout
    S("reshape"),
    S("view", ".view"),
    S("view_as", ".view_as"),
    S("flatten"),
    S("squeeze"),
    S("squeeze", variant="multiple"),
    S("unsqueeze"),
    S(
        "permute",
    ),
    S("transpose"),
    S("t"),
    S("T", "@T"),
    S("mT", "@mT"),
    S("expand", ".expand"),
    S("expand_as", ".expand_as"),
    S("__getitem__", ".__getitem__", known_indices=True),
    S("cat"),
    S("stack"),
    S("index_select", known_indices=True),
    S("index_add", known_indices=True),
    S("masked_fill"),
    S("tril"),
    S("triu"),
    S("gather", known_indices=True),
    S("scatter_add", known_indices=True),
    # reductions
    S("sum", values="sum"),
    S("mean", values="sum"),
    S(
        "prod",
        values="sum",
        refusals=(Refusal("dtype", _kw("dtype")),),
    ),
    S("std", values="sum"),
    S("std", variant="unbiased", values="sum"),
    S("var", values="sum"),
    S("var", variant="unbiased", values="sum"),
    S("norm", values="sum"),
    S("norm", variant="fro", values="sum"),
    S("norm", variant="inf", values="sum"),
    S("norm", variant="nuc", values="sum", refusals=(Refusal("p='nuc'", lambda s: True),)),
    S("max", variant="reduction_no_dim"),
    S("max", variant="reduction_with_dim"),
    S("min", variant="reduction_no_dim"),
    S("min", variant="reduction_with_dim"),
    S("argmax"),
    S("argmin"),
    S("sort"),
    S("argsort"),
    S("softmax", values="sum"),
    S("softmax", variant="with_dtype", values="sum", refusals=(Refusal("dtype", _kw("dtype")),)),
    S("log_softmax", values="sum"),
    S(
        "log_softmax",
        variant="with_dtype",
        values="sum",
        refusals=(Refusal("dtype", _kw("dtype")),),
    ),
    # products
    S("matmul", values="sum"),
    S("__rmatmul__", ".__rmatmul__", values="sum"),
    S("mm", values="sum"),
    S("dot", values="sum"),
    S("addmm", values="sum"),
    S("nn.functional.linear", "nn.functional.linear", static=None, values="sum"),
    # losses
    S("nn.functional.mse_loss", "nn.functional.mse_loss", "mse_loss", values="sum"),
    S(
        "nn.functional.nll_loss",
        "nn.functional.nll_loss",
        "nll_loss",
        values="sum",
        refusals=LOSS_REFUSALS,
    ),
    S(
        "nn.functional.cross_entropy",
        "nn.functional.cross_entropy",
        "cross_entropy",
        values="sum",
        names=("nll_loss",),  # the class-index path says which shapes it takes
        refusals=LOSS_REFUSALS,
    ),
    S(
        "nn.functional.binary_cross_entropy",
        "nn.functional.binary_cross_entropy",
        static=None,
        values="sum",
        # torch's second derivative divides by (x + 1e-12)^2 (1 - x + 1e-12)^2:
        # ~1e-10 from the exact one, which naivegraph computes
        loose=(("vjp2", 1e-9),),
    ),
    S(
        "nn.functional.binary_cross_entropy_with_logits",
        "nn.functional.binary_cross_entropy_with_logits",
        static=None,
        values="sum",
    ),
)


# -- torch's side ------------------------------------------------------------------------


def torch_module():
    import torch

    return torch


_OPINFOS: dict[str, Any] = {}
_SAMPLES: dict[str, list] = {}


def opinfo_of(spec: Spec):
    if not _OPINFOS:
        from torch.testing._internal.common_methods_invocations import op_db

        for info in op_db:
            _OPINFOS[
                info.name + (f".{info.variant_test_name}" if info.variant_test_name else "")
            ] = info
    return _OPINFOS[spec.key]


def samples_of(spec: Spec) -> list:
    """All of torch's float64 samples of the op, the same on every run (torch seeded)."""
    if spec.key not in _SAMPLES:
        torch = torch_module()
        torch.manual_seed(SEED)
        info = opinfo_of(spec)
        _SAMPLES[spec.key] = list(info.sample_inputs("cpu", torch.float64, requires_grad=True))
    return _SAMPLES[spec.key]


def spread(n: int, k: int | None) -> list[int]:
    """``k`` indices spread over ``range(n)`` (all of them when ``k`` is None)."""
    if k is None or n <= k:
        return list(range(n))
    return sorted({round(i * (n - 1) / (k - 1)) for i in range(k)})


def batched(sample) -> list:
    """The tensors that take an unknown (None) first dimension in the ``batch`` check: the
    input, or each tensor of an input list (cat, stack), if they have a first dimension."""
    torch = torch_module()
    first = sample.input if isinstance(sample.input, list) else [sample.input]
    if all(isinstance(t, torch.Tensor) and t.ndim >= 1 for t in first):
        return first
    return []


def applies(spec: Spec, check: str, sample) -> bool:
    """Whether ``check`` runs ``sample`` at all (a structural fact, not a skip)."""
    info = opinfo_of(spec)
    if check in ("static", "batch") and spec.static is None:
        return False
    if check == "batch" and not batched(sample):
        return False
    if check in ("double", "jvp") and not float_leaves(sample):
        return False
    if check == "double" and not info.supports_gradgrad:
        return False
    if check == "jvp" and not info.supports_forward_ad:
        return False
    return True


def selected(spec: Spec, check: str, full: bool = FULL) -> list[int]:
    """The sample indices ``check`` runs for ``spec``: a spread of them by default, all
    of them in the full sweep."""
    samples = samples_of(spec)
    indices = [i for i, s in enumerate(samples) if applies(spec, check, s)]
    return [indices[j] for j in spread(len(indices), None if full else DEFAULT_SAMPLES[check])]


def expectation(spec: Spec, check: str, sample) -> Refusal | Known | None:
    """What the spec declares for this sample and check: a refusal, a known bug or None."""
    for declared in (*spec.refusals, *spec.known):
        if check in declared.checks and declared.when(sample):
            return declared
    return None


# -- converting a sample ------------------------------------------------------------------


def _tensors(value: Any) -> list:
    torch = torch_module()
    if isinstance(value, torch.Tensor):
        return [value]
    if isinstance(value, (list, tuple)):
        return [t for v in value for t in _tensors(v)]
    if isinstance(value, dict):
        return [t for v in value.values() for t in _tensors(v)]
    return []


def sample_tensors(sample) -> list:
    return _tensors([sample.input, list(sample.args), sample.kwargs])


def float_leaves(sample) -> list:
    return [t for t in sample_tensors(sample) if t.requires_grad and t.is_floating_point()]


def convert(value: Any, leaf: Callable[[Any], Any], torch_side: bool = False) -> Any:
    """The sample's structure with every torch tensor replaced by ``leaf(tensor)``; for
    naivegraph also torch dtypes by naivegraph's and ``torch.Size`` by a tuple."""
    torch = torch_module()
    if isinstance(value, torch.Tensor):
        return leaf(value)
    if torch_side:
        pass
    elif isinstance(value, torch.dtype):
        return getattr(ng, str(value).removeprefix("torch."))
    elif isinstance(value, torch.Size):
        return tuple(value)
    if isinstance(value, tuple):
        return tuple(convert(v, leaf, torch_side) for v in value)
    if isinstance(value, list):
        return [convert(v, leaf, torch_side) for v in value]
    if isinstance(value, dict):
        return {k: convert(v, leaf, torch_side) for k, v in value.items()}
    return value


def numpy_of(t) -> np.ndarray:
    if t._is_zerotensor():  # torch's symbolic zero gradient (of abs at 0, say)
        return np.zeros(tuple(t.shape), numpy_of(torch_module().zeros((), dtype=t.dtype)).dtype)
    return t.detach().cpu().resolve_conj().resolve_neg().numpy().copy()


def resolve(root: Any, path: str, operand: Any) -> Callable[..., Any]:
    """``ng.nn.functional.mse_loss`` / ``operand.__radd__`` / ``lambda: operand.T``."""
    if path.startswith("@"):
        return lambda *a, **k: getattr(operand, path[1:])
    if path.startswith("."):
        return getattr(operand, path[1:])
    target = root
    for part in path.split("."):
        target = getattr(target, part)
    return target


def call(spec: Spec, root: Any, path: str, converted: list) -> Any:
    """Run naivegraph's op as torch's OpInfo runs its own: ``op(input, *args, **kwargs)``,
    ``converted`` being ``[input, args, kwargs]``."""
    sample_input, args, kwargs = converted
    if spec.arrange is not None:
        sample_input, args, kwargs = spec.arrange(sample_input, args, kwargs)
    function = resolve(root, path, sample_input)
    if path.startswith((".", "@")):
        return function(*args, **kwargs)
    return function(sample_input, *args, **kwargs)


def describe(sample) -> str:
    """A sample in one line: tensors by shape and dtype, everything else as it is."""
    torch = torch_module()

    def short(value: Any) -> str:
        if isinstance(value, torch.Tensor):
            return f"<{tuple(value.shape)} {str(value.dtype).removeprefix('torch.')}>"
        if isinstance(value, (list, tuple)):
            inner = ", ".join(short(v) for v in value)
            return f"[{inner}]" if isinstance(value, list) else f"({inner})"
        if isinstance(value, dict):
            return "{" + ", ".join(f"{k}={short(v)}" for k, v in value.items()) + "}"
        return repr(value)

    args, kwargs = short(tuple(sample.args)), short(sample.kwargs)
    return f"input {short(sample.input)} args {args} kwargs {kwargs}"


def outputs_of(result: Any) -> list:
    """An op's outputs as a list (``max(dim=)`` and ``sort`` give two)."""
    return list(result) if isinstance(result, (tuple, list)) else [result]


# -- comparing ------------------------------------------------------------------------------

EPS = float(np.finfo(np.float64).eps)
ULPS = 4


def terms_of(sample) -> int:
    """An upper bound on the number of terms any one result of the op sums."""
    return max([1] + [t.numel() for t in sample_tensors(sample)])


def scale_of(sample) -> float:
    """The magnitude a sum's rounding error is relative to: the square of the largest
    input (products of two inputs are summed), at least 1."""
    largest = [
        float(numpy_of(t).astype(np.float64).__abs__().max(initial=0.0))
        for t in sample_tensors(sample)
        if t.is_floating_point()
    ]
    finite = [m for m in largest if math.isfinite(m)]
    return max([1.0] + finite) ** 2


def assert_agrees(
    actual: Any,
    expected: np.ndarray,
    how: str,
    terms: int,
    scale: float,
    what: str,
    rtol: float | None = None,
) -> None:
    """``actual`` (a naivegraph result as numpy) against torch's ``expected``."""
    actual = np.asarray(actual)
    assert actual.shape == expected.shape, f"{what}: shape {actual.shape}, torch {expected.shape}"
    assert actual.dtype == expected.dtype, f"{what}: dtype {actual.dtype}, torch {expected.dtype}"
    if expected.dtype.kind not in "fc":
        np.testing.assert_array_equal(actual, expected, err_msg=what)
        return
    nan = np.isnan(expected)
    assert np.array_equal(np.isnan(actual), nan), (
        f"{what}: NaN at other places\n{actual}\n{expected}"
    )
    inf = np.isinf(expected)
    assert np.array_equal(actual[inf], expected[inf]) and not np.isinf(actual[~inf]).any(), (
        f"{what}: infinities differ\n{actual}\n{expected}"
    )
    finite = ~(nan | inf)
    a, e = actual[finite], expected[finite]
    if rtol is not None:
        bad = np.abs(a - e) > rtol * (np.abs(e) + math.sqrt(scale))
    elif how == "exact":
        bad = a != e
    elif how == "ulp":
        bad = np.abs(a - e) > ULPS * np.spacing(np.abs(e))
    else:
        bad = np.abs(a - e) > 8 * EPS * terms * (np.abs(e) + scale)
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        raise AssertionError(
            f"{what} ({how}): {int(bad.sum())} of {bad.size} values differ, first "
            f"{a[i]!r} against torch's {e[i]!r}\nnaivegraph: {actual}\ntorch: {expected}"
        )


def refusal_problem(error: BaseException, spec: Spec) -> str | None:
    """Why ``error`` is not a clean refusal (None if it is one).  Python's own
    ``TypeError`` for a keyword or argument the function does not take counts: it names
    the function and the argument."""
    message = str(error)
    if not isinstance(error, REFUSAL_TYPES):
        return f"{type(error).__name__} is a crash, not a refusal: {message}"
    frames = traceback.extract_tb(error.__traceback__)
    raiser = frames[-1].filename if frames else ""
    signature = isinstance(error, TypeError) and SIGNATURE_ERROR.search(message)
    if not signature and not Path(raiser).resolve().is_relative_to(PACKAGE):
        return f"raised outside naivegraph ({raiser}): {type(error).__name__}: {message}"
    if not any(name in message for name in spec.message_names):
        return f"the message does not name the op ({spec.message_names}): {message}"
    return None


@dataclass
class Randoms:
    """Cotangents, tangents and weights of a check, drawn from one seeded generator so
    that torch and naivegraph get the same ones."""

    seed: int
    rng: np.random.Generator = field(init=False)

    def __post_init__(self) -> None:
        self.rng = np.random.default_rng(self.seed)

    def like(self, shape: tuple) -> np.ndarray:
        return self.rng.uniform(-1.0, 1.0, shape)
