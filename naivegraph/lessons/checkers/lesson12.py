"""Checkers of lesson 12: write your own op."""

from __future__ import annotations

import ast
import functools
import inspect
import os
import re
import sys
import textwrap

import numpy as np

import naivegraph as ng
import naivegraph.static as ns
from naivegraph.ops import shapes, table

from ...dynamic import grad_mode
from ..checking import (
    AutogradCalls,
    DualLevels,
    Result,
    answer,
    blank_function,
    call_answer,
    PRINTED_FORM,
    cell_computes,
    checker,
    correct,
    failed,
    forgot_return,
    is_blank,
    keeps_learner_state,
    not_callable,
    not_done,
    not_yet,
    returned_blank,
)
from ..library_calls import LibraryCalls, package_directory


def _grad_mode_on(check):
    """Run ``check`` (wrapped in :func:`keeps_learner_state`, which then watches the
    answer from grad mode on) with grad mode on, as autograd runs a Function: a learner
    whose notebook has grad mode off (a `with ng.no_grad():` around the call, or an
    earlier cell) gets the same verdict.  Grad mode is put back afterwards."""

    @functools.wraps(check)
    def checked(*args, **kwargs):
        with ng.enable_grad():
            return check(*args, **kwargs)

    checked._keeps_learner_state = check._keeps_learner_state  # type: ignore[attr-defined]
    return checked


CUBE_ANSWER = """backward returns 3 * x ** 2 * grad_output: the local derivative times the
gradient that arrives from the output (the chain rule, one op at a time)."""


@checker("12-1", answer=CUBE_ANSWER)
@_grad_mode_on
@keeps_learner_state
def check_cube_function(cube) -> Result:
    """``cube`` is a Function subclass computing ``x ** 3`` with a correct backward."""
    ex = "12-1"
    if is_blank(cube):
        return not_done(ex)
    if not (isinstance(cube, type) and issubclass(cube, ng.autograd.Function)):
        return failed(ex, "pass the class itself (Cube), a subclass of ng.autograd.Function.")
    for case, (xs, upstream) in enumerate(_CUBE_CASES):
        x = ng.tensor(xs, dtype=ng.float64, requires_grad=True)
        with _ready_made() as library:
            ok, got = call_answer(
                ex, _gradient_through, cube, x, ng.tensor(upstream, dtype=ng.float64)
            )
        if library.called and got is not _ASKS_AUTOGRAD:
            return _ready_made_hint(
                ex,
                library.called[0],
                "write the local derivative of x^3 with tensor ops on the saved x, and "
                "combine it with grad_output by the chain rule.",
            )
        if not ok:
            return got
        if got is Ellipsis:
            return not_done(ex)
        if got is _LIST:
            return not_yet(ex, [_LIST_HINT], gave="a backward that returns a list")
        if got is _ASKS_AUTOGRAD:
            return not_yet(
                ex,
                [
                    "your backward asks autograd for the derivative: backward IS the rule "
                    "autograd runs for this op, so it has to know the derivative itself.",
                    "write the local derivative of x^3 with tensor ops on the saved x, and "
                    "combine it with grad_output by the chain rule.",
                ],
                gave="a backward that runs a backward pass",
            )
        if got is _WROTE_GRAD:
            return not_yet(
                ex,
                [
                    "your backward writes x.grad itself: backward only RETURNS the "
                    "gradient, and autograd adds what it returns into the leaf's .grad, "
                    "so a backward that writes .grad too counts the gradient twice.",
                    "compute the gradient into a new tensor and return it; leave .grad "
                    "to autograd.",
                ],
                gave="a backward that writes x.grad",
            )
        if got is _BAD_SHAPE:
            return not_yet(
                ex,
                [
                    f"for an x of shape {_shape_of(xs)} your backward's gradient has another "
                    "shape, and autograd refuses it: the gradient must have exactly x's "
                    "shape, whatever its number of dimensions (no flattening, summing "
                    "or reshaping).",
                    "compute it elementwise from the saved x and grad_output: "
                    "elementwise ops keep the shape by themselves.",
                ],
                gave=f"a gradient of the wrong shape for x of shape {_shape_of(xs)}",
            )
        if got is _X_IN_PLACE:
            return not_yet(
                ex,
                [
                    "your backward changed the saved x IN PLACE: the saved tensor is the "
                    "input itself, which the caller still holds; backward only reads it.",
                    "read the saved x and compute a NEW tensor from it and grad_output.",
                ],
                gave="a backward that modifies the saved x in place",
            )
        if got is _IN_PLACE:
            return not_yet(
                ex,
                [
                    "your backward changed grad_output IN PLACE: that tensor is autograd's "
                    "(the caller's, here), and autograd may hand the same one to other "
                    "nodes or hooks, which would then read your product.",
                    "leave grad_output as it is and return a NEW tensor computed from it.",
                ],
                gave="a backward that modifies grad_output in place",
            )
        wrong = _cube_mistake(ex, got, np.array(xs), np.array(upstream), case, cube)
        if wrong is not None:
            return wrong
    if not _each_application_its_own(cube):
        return not_yet(
            ex,
            [
                "right for one application at a time, wrong for two alive together: with "
                "a = Cube.apply(x1) and b = Cube.apply(x2) made before one backward, the "
                "gradient of a is not 3 * x1^2. Your backward reads something kept outside "
                "ctx (a global, an attribute of the class), which the second application "
                "overwrote.",
                "ctx belongs to one application: keep what backward needs there "
                "(ctx.save_for_backward) and read it back from ctx.",
            ],
            gave="a backward that reads state kept outside ctx",
        )
    if not _cube_twice_differentiable(cube):
        x = ng.tensor(_CUBE_CASES[0][0], dtype=ng.float64, requires_grad=True)
        upstream = ng.tensor(_CUBE_CASES[0][1], dtype=ng.float64, requires_grad=True)
        if _switches_grad_off(cube, (x,), (True,), upstream):
            return not_yet(
                ex,
                _grad_off_hints("the numbers are right, but ", "the second derivative of x^3"),
                gave="a backward that switches grad mode off",
            )
        return not_yet(
            ex,
            [
                "the numbers are right, but your gradient left the graph (through .detach(), "
                "numpy or a new tensor): with create_graph=True autograd cannot differentiate "
                "it again, and the second derivative of x^3 is lost.",
                "compute it with tensor ops on grad_output and the saved x, as they are.",
            ],
        )
    return correct(ex, "backward is the local derivative 3x^2 times grad_output.")


def _each_application_its_own(cube) -> bool:
    """Whether two applications of ``cube`` alive together each get their own gradient
    (True when the check cannot run: the other checks report that)."""
    x1 = ng.tensor([0.5, 1.0], dtype=ng.float64, requires_grad=True)
    x2 = ng.tensor([2.0, -3.0], dtype=ng.float64, requires_grad=True)
    try:
        first, second = cube.apply(x1), cube.apply(x2)
        (g1,) = ng.autograd.grad(first.sum(), x1)
        (g2,) = ng.autograd.grad(second.sum(), x2)
    except Exception:  # reported by the other checks, with their own hints
        return True
    return bool(np.allclose(g1.numpy(), [0.75, 3.0]) and np.allclose(g2.numpy(), [12.0, 27.0]))


def _cube_twice_differentiable(cube) -> bool:
    """Whether a second derivative through ``cube`` gives 6x (create_graph=True)."""
    xs = np.array([0.5, -1.0, 2.0])
    x = ng.tensor(xs, dtype=ng.float64, requires_grad=True)
    try:
        (first,) = ng.autograd.grad(cube.apply(x).sum(), x, create_graph=True)
        if not first.requires_grad:
            return False
        (second,) = ng.autograd.grad(first.sum(), x, allow_unused=True)
    except RuntimeError:  # .numpy() of a tensor that requires grad, and the like
        return False
    return second is not None and np.allclose(second.numpy(), 6 * xs)


class _GradSwitchedOff:
    """Whether code run inside a ``with`` block switched grad mode off while it was on,
    by a ``set_grad_enabled(False)`` call or a ``no_grad()`` block of its own (the
    library's switches, such as the engine's or ``once_differentiable``'s, do not count)."""

    _LIBRARY = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

    def __enter__(self) -> _GradSwitchedOff:
        self.seen = False
        self._init = grad_mode.set_grad_enabled.__init__
        self._own_enter = vars(grad_mode.no_grad).get("__enter__")
        inherited = grad_mode.no_grad.__enter__

        def init(switch, mode) -> None:
            self._note(not mode)
            self._init(switch, mode)

        def enter(switch) -> None:
            self._note(True)
            inherited(switch)

        grad_mode.set_grad_enabled.__init__ = init  # type: ignore[method-assign]
        grad_mode.no_grad.__enter__ = enter  # type: ignore[method-assign]
        return self

    def _note(self, off: bool) -> None:
        caller = os.path.abspath(sys._getframe(2).f_code.co_filename)
        if off and grad_mode.is_grad_enabled() and not caller.startswith(self._LIBRARY + os.sep):
            self.seen = True

    def __exit__(self, *exc_info: object) -> None:
        grad_mode.set_grad_enabled.__init__ = self._init  # type: ignore[method-assign]
        if self._own_enter is None:
            del grad_mode.no_grad.__enter__
        else:
            grad_mode.no_grad.__enter__ = self._own_enter  # type: ignore[method-assign]


def _switches_grad_off(function, saved, needs, upstream) -> bool:
    """Whether ``function``'s backward, called as the engine calls it for
    ``create_graph=True`` (grad mode on), switches grad mode off; grad mode is put back."""
    with ng.enable_grad(), _GradSwitchedOff() as switched:
        try:
            function.backward(_Context(saved, needs), upstream)
        except Exception:  # reported by the other checks, with their own hints
            pass
    return switched.seen


def _grad_off_hints(lead: str, lost: str) -> list[str]:
    return [
        f"{lead}your backward switches grad mode off. Autograd runs backward with grad "
        "mode as it sets it: on for create_graph=True, so that what backward computes is "
        "recorded and can be differentiated again. Switched off, nothing is recorded, "
        f"and {lost} is lost.",
        "leave grad mode to autograd: compute the gradient with tensor ops, without "
        "switching anything.",
    ]


# (x, grad_output): a second x catches a backward that returns numbers typed by hand, a
# third with x = 0 one that divides by x (0 / 0 there, though the derivative is 0); a
# matrix and a single number one that flattens or sums x's dimensions away, and a large
# |x| one that bounds x.
_CUBE_CASES = [
    ([0.5, -1.0, 2.0], [1.0, -2.0, 0.5]),
    ([1.5, -0.25, 0.75], [-0.5, 3.0, 2.0]),
    ([0.0, -2.0, 1.25], [0.75, 1.5, -1.0]),
    ([[0.5, -1.0, 2.0], [1.5, -0.25, 0.75]], [[1.0, -2.0, 0.5], [-0.5, 3.0, 2.0]]),
    (1.5, -2.0),
    ([1.0e6, -1.0e7, 0.5], [1.0, 0.5, -2.0]),  # beyond any clamp a rule might hide
    ([1.0e4, -2.5e4, 0.5], [1.0, 0.5, -2.0]),
]
_LARGE_CASES = (len(_CUBE_CASES) - 2, len(_CUBE_CASES) - 1)


def _through_float32(got, xs, upstream) -> bool:
    """Whether ``got`` is 3 x^2 grad_output with x, x^2 or the product rounded to a
    narrower float on the way (a .float() cast): equal to such a rounding, and not to the
    float64 rule."""
    xs, upstream = np.asarray(xs, dtype=np.float64), np.asarray(upstream, dtype=np.float64)
    narrowed = []
    with np.errstate(all="ignore"):  # float16 overflows at 1e6: inf, never equal
        for narrow in (np.float32, np.float16):
            x_n = xs.astype(narrow)
            local = (3 * x_n**2).astype(np.float64)
            narrowed += [local * upstream, (local.astype(narrow) * upstream.astype(narrow)),
                         3 * x_n.astype(np.float64) ** 2 * upstream,
                         (3 * xs**2 * upstream).astype(narrow)]
        return any(
            np.array_equal(got, np.asarray(n, dtype=np.float64))
            or bool(np.allclose(got, np.asarray(n, dtype=np.float64), rtol=1e-14, atol=0))
            for n in narrowed
        )


def _shape_of(xs) -> tuple:
    return tuple(np.shape(xs))


def _exact(got, want, scaled: bool = False) -> bool:
    """Equal up to rounding: the exact rule gives these; finite differences do not.
    ``scaled``: an entry may be off by rounding of the largest one (sums of products,
    where an entry near 0 is a cancellation)."""
    atol = 1e-12 * float(np.max(np.abs(want), initial=0.0)) if scaled else 0.0
    return bool(np.allclose(got, want, rtol=1e-12, atol=atol))


class _TorchAutogradCalls:
    """Counts torch's backward passes inside a ``with`` block (when torch is loaded: an
    answer that uses it imports it first).  Tensor.backward and torch.func's transforms
    go through torch.autograd.backward or torch.autograd.grad."""

    def __init__(self) -> None:
        self.count = 0
        self._saved: dict[str, object] = {}

    def __enter__(self) -> _TorchAutogradCalls:
        torch = sys.modules.get("torch")
        self.watching = getattr(torch, "autograd", None) is not None
        for module, name in _TORCH_AUTOGRAD_ENTRIES if self.watching else ():
            owner = sys.modules.get(module)
            if owner is not None and hasattr(owner, name):
                original = self._saved[(module, name)] = getattr(owner, name)
                setattr(owner, name, self._counted(original))
        return self

    def _counted(self, original):
        def counted(*args, **kwargs):
            self.count += 1
            return original(*args, **kwargs)

        return counted

    def __exit__(self, *exc_info: object) -> None:
        for (module, name), original in self._saved.items():
            setattr(sys.modules[module], name, original)


# Where torch's autograd starts a pass: reverse mode (backward, grad), forward mode
# (a dual level) and torch.func's jvp and jacfwd (a jvp level).
_TORCH_AUTOGRAD_ENTRIES = (
    ("torch.autograd", "backward"),
    ("torch.autograd", "grad"),
    ("torch.autograd.forward_ad", "enter_dual_level"),
    ("torch._functorch.eager_transforms", "enter_jvp_nesting"),
)


def _cube_mistake(ex: str, got, xs, upstream, case: int, cube=None) -> Result | None:
    if got is None:
        return not_yet(
            ex,
            ["autograd got None from your backward, no gradient for x: does backward "
             "`return` what it computes? Without a return, Python returns None.",
             "backward returns one gradient, shaped like the input x."],
            gave="a backward that returns None",
        )
    if got.shape != xs.shape:
        return not_yet(ex, ["backward returns one gradient, shaped like the input x."])
    if got.dtype != xs.dtype:
        return not_yet(
            ex,
            [
                f"your gradient is {got.dtype} while x is {xs.dtype}: keep the input's "
                "dtype. A gradient converted to lower precision loses digits, and "
                "autograd hands it on as it is.",
                "compute the gradient from the saved x and grad_output without "
                "converting it.",
            ],
            gave=f"a {got.dtype} gradient for a {xs.dtype} x",
        )
    want = 3 * xs**2 * upstream
    if _exact(got, want):
        return None
    if _through_float32(got, xs, upstream):
        return not_yet(
            ex,
            [
                "your gradient is float64, but a part of it went through a narrower float "
                "(a cast such as .float() or .astype(np.float32)): it lost its last digits "
                "there, which no later float64 product brings back. x and grad_output are "
                "float64: keep every step in their dtype.",
                "compute the local derivative from the saved x as it is, without "
                "converting anything.",
            ],
            gave="a gradient rounded to a narrower float on its way",
        )
    if case in _LARGE_CASES:
        return not_yet(
            ex,
            [
                "right for moderate x, wrong at |x| = 1e4 and beyond: x^3 has a "
                "derivative everywhere, and nothing in it bounds or clips x.",
                "compute the local derivative from the saved x as it is, at any size.",
            ],
            gave="a gradient that is wrong for large |x|",
        )
    if not np.all(np.isfinite(got)):
        return _not_finite(ex, got, xs)
    if np.allclose(got, want, rtol=1e-5, atol=1e-7):
        return not_yet(
            ex,
            [
                "your gradient is close but not exact: an approximation such as a finite "
                "difference is off in the last digits (and costs extra forward passes). "
                "backward is the exact rule: the local derivative by its formula.",
                "differentiate x^3 on paper, and combine that with grad_output.",
            ],
            gave="an approximate gradient",
        )
    if xs.size > 1 and np.allclose(got, want / xs.size) and _divides_by_count(cube):
        return not_yet(
            ex,
            [
                f"your gradient is the right one divided by the number of elements of x "
                f"({xs.size} here), as if the loss were a mean: backward is told nothing "
                "about the loss. Whatever mean the loss takes after the op reaches backward "
                "inside grad_output already; the op's own local derivative has no count of "
                "elements in it.",
                "each x[i] gets grad_output[i] times the local derivative at x[i], and "
                "nothing else.",
            ],
            gave="a gradient divided by the number of elements",
        )
    if _mixes_upstream_wrongly(got, 3 * xs**2, upstream):
        return not_yet(
            ex,
            [
                "your local derivative is right; the mistake is how grad_output enters. "
                "Each x[i] receives grad_output[i] times its own local derivative: the "
                "chain rule multiplies, element by element (no sum, mean, division or "
                "addition).",
            ],
        )
    if np.allclose(got, 3 * xs**2):
        return not_yet(
            ex,
            [
                "right when the loss is y itself; what if y feeds further ops? backward "
                "receives the gradient of the loss with respect to the output.",
                "the chain rule: what arrives from the output combines with the local "
                "derivative; grad_output is not there only to be ignored.",
            ],
        )
    slips = [2 * xs, 3 * xs, 3 * xs**3, xs**2]
    if case > 0:
        hint = (
            "right for the first x the checker tried, wrong for another: compute the "
            "gradient from the saved x, not from numbers typed in."
        )
    elif any(np.allclose(got, slip * upstream) for slip in slips):
        hint = "check the power rule: d/dx x^n = n x^(n-1)."
    else:
        hint = (
            "your gradient is off: work out the derivative of x^3 on paper and compare "
            "it, at the saved x, with what your backward computes."
        )
    return not_yet(
        ex,
        [
            hint,
            "what backward returns is d loss / d x: the chain rule combines what arrives "
            "(grad_output) with the op's own local derivative at the saved x.",
        ],
    )


def _not_finite(ex: str, got, xs) -> Result:
    """A hint for a backward that gives nan or inf: at the x where it does, and blaming a
    division by x only when that x is 0."""
    bad = ~np.isfinite(got)
    first = np.flatnonzero(bad)[0]
    at, what = float(np.ravel(xs)[first]), "nan" if np.isnan(np.ravel(got)[first]) else "inf"
    if np.all(np.ravel(xs)[np.flatnonzero(bad)] == 0):
        return not_yet(
            ex,
            [
                f"at x = 0 your backward gives {what}, though x^3 has a plain derivative 0 "
                "there: one of your steps divides by x (0 / 0), the very failure this "
                "lesson's NaN section is about.",
                "write the local derivative so that no step divides by x.",
            ],
            gave=f"{what} at x = 0",
        )
    if at < 0:
        cause = ("a step of yours is undefined for a negative number, such as a log, a "
                 "square root or a fractional power of x")
    else:
        cause = "a step of yours is undefined or overflows for that x"
    return not_yet(
        ex,
        [
            f"at x = {at:g} your backward gives {what}, though x^3 has a plain derivative "
            f"there: {cause}, the kind of failure this lesson's NaN section is about.",
            "write the local derivative with steps that are defined for every x: "
            "x^3 needs nothing but products.",
        ],
        gave=f"{what} at x = {at:g}",
    )


def _divides_by_count(cube) -> bool:
    """Whether ``cube``'s backward gives the right gradient divided by x's number of
    elements, for an x of 3 elements and one of 6: on 3 alone, x^2 (a slip of the power
    rule) is 3x^2 / 3 too."""
    if cube is None:
        return False
    for xs, upstream in (_CUBE_CASES[0], _CUBE_CASES[3]):
        x = ng.tensor(xs, dtype=ng.float64, requires_grad=True)
        try:
            got = _gradient_through(cube, x, ng.tensor(upstream, dtype=ng.float64))
        except Exception:  # a backward that fails on one of them divides by nothing known
            return False
        want = 3 * np.array(xs) ** 2 * np.array(upstream) / np.size(xs)
        if not (isinstance(got, np.ndarray) and got.shape == want.shape
                and np.allclose(got, want)):
            return False
    return True


def _mixes_upstream_wrongly(got, local, upstream) -> bool:
    """Whether ``got`` is the right local derivative combined with grad_output in some
    other way than an elementwise product."""
    mixes = [
        local * upstream.sum(),
        local * upstream.mean(),
        local / upstream,
        local + upstream,
        local - upstream,
        local * upstream**2,
    ]
    return any(np.allclose(got, mix) for mix in mixes)


#: What :func:`_gradient_through` returns for a backward that wrote into grad_output.
_IN_PLACE = object()

#: What :func:`_gradient_through` returns for a backward that changed the saved x.
_X_IN_PLACE = object()

#: What :func:`_gradient_through` returns for a backward that wrote an input's .grad.
_WROTE_GRAD = object()

#: What :func:`_gradient_through` returns for a gradient autograd refused for its shape.
_BAD_SHAPE = object()

#: What :func:`_gradient_through` returns for a backward that ran autograd itself.
_ASKS_AUTOGRAD = object()

#: What the checkers' calls of backward return for a backward that returned a list.
_LIST = object()

# torch refuses a list from backward as naivegraph does, with the same RuntimeError: it
# takes the list for one value that is not a tensor ("expected Variable or None (got list)").
_LIST_HINT = (
    "backward returned a list: autograd takes the gradient itself for a Function of one "
    "input, or a tuple with one gradient per input; a list counts as one value that is "
    "not a tensor, and torch refuses it too."
)


def _gradient_through(cube, x, upstream):
    """x's gradient through ``cube``; Ellipsis while backward still returns ``...``;
    None when backward returns None; ``_IN_PLACE`` when it changed grad_output (the
    engine hands ``upstream`` itself to backward, as torch does)."""
    y = cube.apply(x)
    if not np.allclose(y.detach().numpy(), x.detach().numpy() ** 3):
        raise ValueError("forward should return x ** 3 (only backward was to be written)")
    sent = upstream.numpy().copy()
    x_before, x_version = x.detach().numpy().copy(), x._version
    with AutogradCalls() as calls:
        try:
            (grad,) = ng.autograd.grad(y, x, upstream, allow_unused=True)
        except RuntimeError as error:  # autograd's "expected Variable or None (got ...)"
            if "ellipsis" in str(error):
                return Ellipsis
            if "got list" in str(error):
                return _LIST
            if "invalid gradient" in str(error):
                return _BAD_SHAPE
            raise
    if x.grad is not None:  # autograd.grad writes no .grad: backward did
        return _WROTE_GRAD
    if len(calls.flags) > 1:  # the checker's own pass, and one more inside backward
        return _ASKS_AUTOGRAD
    if not np.array_equal(upstream.numpy(), sent):
        return _IN_PLACE
    if x._version != x_version or not np.array_equal(x.detach().numpy(), x_before):
        return _X_IN_PLACE
    return None if grad is None else grad.numpy()


SUM_TO_SHAPE_ANSWER = """Sum over the leading dimensions broadcasting added
(grad.sum(axis=tuple(range(grad.ndim - len(shape))))), then over every dimension where
shape has a 1 but grad does not, with keepdims=True so the 1 stays."""

# (grad shape, target shape): added dimensions, stretched ones, both, and none; the square
# ones tell a dimension by its position from one told by its size.
_SUM_CASES = [
    ((4, 3), (3,)),
    ((4, 3), (4, 1)),
    ((2, 4, 3), (1, 3)),
    ((2, 3), (2, 3)),
    ((5,), ()),
    ((4, 4), (4, 1)),
    ((3, 3), (1, 3)),
    ((2, 5, 3), (3,)),
    ((3, 4), (1, 1)),
    ((2, 3, 4), (1, 3, 1)),
    ((2, 2, 4, 3), (1, 3)),
    ((2, 3, 2, 4, 3), (1, 3)),  # three leading dimensions added
    ((3, 2, 2, 2, 5), (5,)),  # four
]


@checker("12-2", answer=SUM_TO_SHAPE_ANSWER)
def check_sum_to_shape(sum_to_shape) -> Result:
    """``sum_to_shape(grad, shape)`` undoes broadcasting by summing."""
    ex = "12-2"
    bad = not_callable(ex, sum_to_shape)
    if bad is not None:
        return bad
    rng = np.random.default_rng(12)
    for grad_shape, shape in _SUM_CASES:
        grad = rng.standard_normal(grad_shape)
        given = grad.copy()
        if _by_size(grad_shape) and _raises(sum_to_shape, grad.copy(), shape):
            return not_yet(  # the shapes before worked: this one differs by its equal sizes
                ex,
                [
                    f"for grad of shape {grad_shape} and shape {shape} your code raised, "
                    "though it worked for the shapes before: two dimensions have the same "
                    "size there, so a dimension must be told by its POSITION, not by its size.",
                    "line the shapes up from the right and compare them position by position.",
                ],
            )
        with AutogradCalls() as calls, _ready_made() as library, _sum_to_entries() as entries:
            ok, got = call_answer(ex, sum_to_shape, given, shape)
        if not ok:
            return got
        if (library.called or entries.called) and not calls.flags:
            return _ready_made_hint(
                ex,
                (library.called or entries.called)[0],
                "sum the numpy array grad with numpy, over the dimensions broadcasting "
                "added or stretched.",
            )
        stop = _none_returned(ex, sum_to_shape, got)
        if stop is not None:
            return stop
        if calls.flags:
            return not_yet(
                ex,
                [
                    "your sum_to_shape runs autograd (a backward or autograd.grad) to do the "
                    "sum: this function is part of an op's backward, which the engine itself "
                    "calls while it runs a backward pass, so it must not re-enter autograd.",
                    "sum the numpy array grad with numpy, over the dimensions broadcasting "
                    "added or stretched.",
                ],
                gave="a sum_to_shape that calls the autograd engine",
            )
        if not np.array_equal(given, grad):
            return not_yet(
                ex,
                [
                    "your sum_to_shape changed the grad it was given IN PLACE: that array "
                    "is the caller's (autograd's), which may hand it to other nodes too "
                    "(12-1 met the same trap).",
                    "leave grad as it is: sums make new arrays of their own.",
                ],
                gave="a sum_to_shape that writes into grad",
            )
        if not isinstance(got, (np.ndarray, np.generic)):
            return not_yet(
                ex,
                [
                    f"sum_to_shape returned a {type(got).__name__}: return the numpy array "
                    "that grad.sum(...) gives, which carries its shape; a gradient in the "
                    "op table is an array shaped like its input.",
                ],
                gave=f"a {type(got).__name__} for grad of shape {grad_shape}",
            )
        got = np.asarray(got)
        if got.dtype != grad.dtype:
            return not_yet(
                ex,
                [
                    f"sum_to_shape returned {got.dtype} for a {grad.dtype} grad: keep the "
                    "input's dtype. A gradient converted to lower precision loses digits.",
                    "sum grad as it is, without converting it.",
                ],
                gave=f"a {got.dtype} result for a {grad.dtype} grad",
            )
        want = _sum_to(grad, shape)
        if got.shape != want.shape:
            return not_yet(ex, _shape_hints(grad_shape, shape, got.shape))
        if not _sums_equal(got, want) and _by_size(grad_shape):
            return not_yet(
                ex,
                [
                    f"for grad of shape {grad_shape} and shape {shape} the shape is right "
                    "but the values are not: two dimensions have the same size there, so "
                    "a dimension must be told by its POSITION, not by its size.",
                    "line the shapes up from the right and compare them position by position.",
                ],
            )
        if not _sums_equal(got, want):
            if np.allclose(got, want):
                return not_yet(
                    ex,
                    [
                        f"for grad of shape {grad_shape} and shape {shape} your sums are "
                        "close but not equal: beyond float64's rounding, something scales "
                        "or adds to them.",
                        "return the sums themselves, with nothing multiplied or added.",
                    ],
                    gave="sums off by a hair",
                )
            return not_yet(
                ex,
                [
                    f"for grad of shape {grad_shape} and shape {shape} the shape is right but "
                    "the values are not: sum (every use contributes), do not average or pick.",
                ],
            )
    return correct(ex, "the gradient of a broadcast input is the sum over its copies.")


def _ready_made(torch: bool = True) -> LibraryCalls:
    """A watch of the library's own rules, which the exercises of this lesson write
    themselves: every partial of every op-table entry, sum_to and the static
    ``gradients``, however the answer reached them (imported under any name, through
    the table, copied); and torch, whose ready-made ops and backward nodes would do the
    same work."""
    rules: dict = {"rule for a matrix product": table._matmul_partial}
    for name, entry in table.OPS.items():
        for i, partial in enumerate(getattr(entry, "partials", ()) or ()):
            if callable(partial):
                what = "a matrix product" if name in ("matmul", "addmm") else repr(name)
                rules.setdefault(f"rule for {what} (OPS[{name!r}].partials[{i}])", partial)
    rules["sum_to"] = shapes.sum_to
    rules["ns.gradients"] = ns.gradients
    packages = {"torch": package_directory("torch")} if torch else {}
    return LibraryCalls(rules, packages)


def _sum_to_entries() -> LibraryCalls:
    """The op table's entries that wrap sum_to (``sum_to``, ``sum_to_like``), counted
    whoever calls them: a learner reaches them through ``F.sum_to``, ``op_function``
    or a static graph's run, whose frames are the library's, or through the table
    itself.  Used only around a call of the learner's sum_to_shape on numpy arrays, where
    the engine runs no backward that would call them (a backward is refused apart)."""
    return LibraryCalls({f"sum_to (the op table's {name!r} entry)": table.OPS[name].forward
                         for name in ("sum_to", "sum_to_like")}, any_caller=True)


def _ready_made_hint(ex: str, called: str, instead: str) -> Result:
    """The answer took the rule ready-made: the library's own (``called`` names it) or
    torch's."""
    if called == "torch":
        first = ("your answer calls torch: its ops and backward nodes compute the rule "
                 "this exercise writes, so they prove nothing about yours.")
    else:
        first = (f"your answer calls the library's own {called}: that is the rule this "
                 "exercise writes (or one like it), so it proves nothing about yours.")
    return not_yet(ex, [first, instead], gave=f"an answer that calls {called}")


def _sum_to(grad: np.ndarray, shape: tuple) -> np.ndarray:
    grad = grad.sum(axis=tuple(range(grad.ndim - len(shape))))
    stretched = tuple(i for i, n in enumerate(shape) if n == 1 and grad.shape[i] != 1)
    return grad.sum(axis=stretched, keepdims=True)


def _sums_equal(got: np.ndarray, want: np.ndarray) -> bool:
    """Equal up to float64's rounding of sums taken in another order (a few ulps)."""
    scale = float(np.max(np.abs(want))) if want.size else 0.0
    return bool(np.allclose(got, want, rtol=1e-12, atol=1e-12 * scale))


def _raises(fn, *args) -> bool:
    try:
        fn(*args)
    except Exception:  # reported to the learner by the caller, as a hint
        return True
    return False


def _by_size(grad_shape: tuple) -> bool:
    """Whether two dimensions of ``grad_shape`` have one size (only their position tells)."""
    return len(set(grad_shape)) < len(grad_shape)


def _shape_hints(grad_shape: tuple, shape: tuple, got_shape: tuple) -> list[str]:
    kept = tuple(n for n in shape if n != 1)  # the target with its size-1 dims dropped
    if got_shape == () and shape != ():
        first = (
            f"for grad of shape {grad_shape} and shape {shape} you gave one number: a "
            "sum without axis adds up every element. Sum only over the dimensions "
            "broadcasting added or stretched."
        )
    elif len(got_shape) < len(shape) and got_shape == kept:
        first = (
            f"for grad of shape {grad_shape} and shape {shape} you gave shape {got_shape}: "
            "a size-1 dimension must stay (keepdims=True)."
        )
    elif len(got_shape) > len(shape) and len(grad_shape) - len(shape) > 1:
        first = (
            f"for grad of shape {grad_shape} and shape {shape} you gave shape {got_shape}: "
            "broadcasting may add MORE than one leading dimension; sum until none of "
            "them is left."
        )
    elif len(got_shape) == len(shape) and sum(n == 1 for n in shape) > 1:
        first = (
            f"for grad of shape {grad_shape} and shape {shape} you gave shape {got_shape}: "
            "MORE than one dimension may be stretched from 1; sum over every one of them."
        )
    elif _by_size(grad_shape):
        first = (
            f"for grad of shape {grad_shape} and shape {shape} you gave shape {got_shape}: "
            "two dimensions have the same size there, so a dimension must be told by its "
            "POSITION, not by its size."
        )
    else:
        first = (
            f"for grad of shape {grad_shape} and shape {shape} you gave shape {got_shape}: "
            "which dimensions did broadcasting add on the left, and which did it stretch "
            "from 1?"
        )
    return [
        first,
        "two steps: sum the extra leading axes away, then the stretched ones with keepdims=True.",
    ]


MATMUL_ANSWER = """dX = dY @ W.T and dW = X.T @ dY: the only products of dY with W or X
that have the shapes of X (n, d) and W (d, k)."""


@checker("12-3", answer=MATMUL_ANSWER)
def check_matmul_backward(matmul_backward) -> Result:
    """``matmul_backward(X, W, dY)`` returns ``(dX, dW)`` for ``Y = X @ W``."""
    ex = "12-3"
    bad = not_callable(ex, matmul_backward)
    if bad is not None:
        return bad
    rng = np.random.default_rng(3)
    X, W, dY = rng.standard_normal((5, 3)), rng.standard_normal((3, 2)), rng.standard_normal((5, 2))
    hints = [
        "write the shapes down: dX must be (5, 3) like X, dW (3, 2) like W, dY is (5, 2).",
        "a product (a, b) @ (b, c) needs the inner sizes to agree: which of W and its "
        "transpose fits after dY's (5, 2), which of X and its transpose fits before it?",
    ]
    given_in = (X.copy(), W.copy(), dY.copy())
    with AutogradCalls() as calls, DualLevels() as levels, _TorchAutogradCalls() as torch_calls, \
            _ready_made() as library:
        try:
            got, raised = matmul_backward(*given_in), None
        except Exception as error:  # reported below, after the autograd question
            got, raised = None, error
    if not torch_calls.watching and "torch" in sys.modules:  # the answer imported torch
        with _TorchAutogradCalls() as torch_calls:
            try:
                matmul_backward(X.copy(), W.copy(), dY.copy())
            except Exception:  # the first call's outcome is the one reported
                pass
    if calls.flags or levels.entered or torch_calls.count:  # asking is the mistake
        library = "naivegraph's" if calls.flags or levels.entered else "torch's"
        return not_yet(
            ex,
            [
                f"your matmul_backward asks {library} autograd for the gradients: this "
                "exercise writes the rule autograd itself runs for a matrix product, on "
                "numpy arrays, below the engine.",
                hints[0],
            ],
            gave="a matmul_backward that runs autograd (reverse or forward mode)",
        )
    if library.called:
        return _ready_made_hint(ex, library.called[0], hints[0])
    if raised is not None:
        if _shape_mismatch(raised):  # this exercise's usual mistake: a hint, not numpy's words
            return not_yet(ex, [_products_not_fitting(matmul_backward) + hints[0], hints[1]])
        stop, _ = answer(ex, matmul_backward, X.copy(), W.copy(), dY.copy())  # says where
        return stop if stop is not None else failed(ex, "your function raised once; run again.")
    changed = [n for n, a, b in zip(("X", "W", "dY"), given_in, (X, W, dY)) if not _same(a, b)]
    if changed:
        return not_yet(
            ex,
            [
                f"your matmul_backward changed {changed[0]} IN PLACE: the arrays it is given "
                "are the caller's (the engine's), which reads them again after backward "
                "(12-2 met the same trap).",
                "leave X, W and dY as they are: products make new arrays of their own.",
            ],
            gave=f"a matmul_backward that writes into {changed[0]}",
        )
    blank = _none_returned(ex, matmul_backward, got)
    if blank is not None:
        return blank
    try:
        given = tuple(got)
        dX, dW = (np.asarray(g, dtype=np.float64) for g in given)
    except (TypeError, ValueError):
        return failed(ex, "return two arrays, (dX, dW), in that order.")
    lowered = [
        (name, g.dtype)
        for name, g in zip(("dX", "dW"), given)
        if isinstance(g, np.ndarray) and g.dtype != np.float64
    ]
    if lowered:
        name, dtype = lowered[0]
        if np.dtype(dtype).kind == "f" and np.dtype(dtype).itemsize > 8:
            why = (
                f"{name} is {dtype} (numpy's longdouble) while X, W and dY are float64: a "
                "gradient has its input's dtype, float64 here, neither lower nor higher; a "
                "longer float adds no digits that were not computed."
            )
        else:
            why = (
                f"{name} is {dtype} while X, W and dY are float64: keep float64. A "
                "gradient converted to lower precision loses digits."
            )
        return not_yet(
            ex,
            [
                why,
                "compute with the arrays as they are, without converting.",
            ],
            gave=f"{name} in {dtype}",
        )
    kinds = sorted({type(g).__name__ for g in given if not isinstance(g, np.ndarray)})
    if kinds:
        tensors = any(isinstance(g, ng.Tensor) for g in given)
        return not_yet(
            ex,
            [
                ("you return naivegraph tensors; " if tensors else f"you return {kinds}; ")
                + "the exercise asks for numpy arrays: X, W and dY are numpy arrays, and "
                "a backward rule in the op table works on arrays, below the engine. "
                "Compute with numpy on what you are given, without converting.",
            ],
            gave=f"a pair holding {', '.join(kinds)}",
        )
    if dX.shape == W.shape and dW.shape == X.shape:
        return not_yet(ex, ["the two are swapped: return dX first (the shape of X), then dW."])
    if dX.shape == X.shape and dW.shape == W.T.shape and np.allclose(dW.T, X.T @ dY):
        return not_yet(
            ex,
            [
                "dX is right; dW has the shape of W transposed, and a gradient "
                "always has the shape of what it is the gradient of."
            ],
        )
    if dX.shape != X.shape or dW.shape != W.shape:
        return not_yet(ex, hints, gave=f"shapes {dX.shape} and {dW.shape}")
    ones = np.ones_like(dY)
    if np.allclose(dX, ones @ W.T) or np.allclose(dW, X.T @ ones):
        return not_yet(
            ex,
            [
                "the upstream gradient dY must enter: it carries how the loss changes "
                "with each entry of Y, and a product with ones assumes it is 1 everywhere.",
                "your shapes are right and so is the form of each product: what is "
                "missing is the gradient that arrives from above, in the place where "
                "your products assume it is 1.",
            ],
            gave="a product with ones in place of dY",
        )
    if np.allclose(dX, dY @ W.T) and np.allclose(dW, X.T @ dY):
        if not (_exact(dX, dY @ W.T, scaled=True) and _exact(dW, X.T @ dY, scaled=True)):
            return not_yet(
                ex,
                [
                    "your gradients are close but not exact: an approximation such as a "
                    "finite difference is off in the last digits (and costs a forward pass "
                    "per entry). The rule is two matrix products, exact up to rounding.",
                    "your shapes are right: compute each gradient as one matrix product of "
                    "the arrays you are given, nothing approximated.",
                ],
                gave="approximate gradients",
            )
    for name, grad, want in (("dX", dX, dY @ W.T), ("dW", dW, X.T @ dY)):
        factor = _constant_factor(grad, want)
        if factor is not None and np.isclose(factor, -1.0):
            return not_yet(
                ex,
                [
                    f"{name} has the right shape and size but the wrong sign: a gradient "
                    "points where the loss grows; the minus belongs to the update step, "
                    "not to backward.",
                ],
                gave=f"{name} with its sign flipped",
            )
        if factor is not None and not np.isclose(factor, 1.0):
            return not_yet(
                ex,
                [
                    f"{name} is right up to a constant factor (as if divided by a size, "
                    "or averaged): backward passes dY on as it is. If the loss is a mean, "
                    "its own backward has already put that factor into dY.",
                ],
                gave=f"{name} off by a constant factor",
            )
    wrong = [
        name
        for name, grad, want in (("dX", dX, dY @ W.T), ("dW", dW, X.T @ dY))
        if not np.allclose(grad, want)
    ]
    if wrong:
        which = "dX and dW both have" if len(wrong) == 2 else f"{wrong[0]} has"
        return not_yet(
            ex,
            [
                f"{which} the right shape but not the right values: the shapes are "
                "fine, the mistake is in what you compute.",
                "by the chain rule dX comes from dY and W alone, and dW from X and dY "
                "alone: one matrix product each, with no other term, factor or function.",
            ],
            gave=f"wrong values in {' and '.join(wrong)}",
        )
    stop = _other_sizes(ex, matmul_backward)
    if stop is not None:
        return stop
    return correct(ex, "dX = dY Wᵀ and dW = Xᵀ dY: the shapes leave no other choice.")


def _other_sizes(ex: str, matmul_backward) -> Result | None:
    """A second call, with sizes that differ from the first call's and from each other
    (X (4, 7), W (7, 6)): a rule with the first call's sizes written into it (a reshape
    to (5, 3), a slice [:, :2]) crashes or goes wrong here."""
    rng = np.random.default_rng(13)
    X, W, dY = rng.standard_normal((4, 7)), rng.standard_normal((7, 6)), rng.standard_normal((4, 6))
    try:
        dX, dW = (np.asarray(g, dtype=np.float64) for g in matmul_backward(X, W, dY))
        right = (dX.shape == X.shape and dW.shape == W.shape
                 and np.allclose(dX, dY @ W.T) and np.allclose(dW, X.T @ dY))
        what = "" if right else f"gives shapes {dX.shape} and {dW.shape}" + (
            " with wrong values" if dX.shape == X.shape and dW.shape == W.shape else "")
    except Exception as error:  # sizes written in: numpy's complaint, told as that
        right, what = False, f"raises {type(error).__name__}"
    if right:
        return None
    return not_yet(
        ex,
        [
            "your matmul_backward is right for X (5, 3) and W (3, 2), but for X (4, 7), "
            f"W (7, 6) and dY (4, 6) it {what}: sizes written into the code (a reshape "
            "to a fixed shape, a slice of a fixed length) fit one set of shapes only. A "
            "backward rule runs on every shape the forward pass meets.",
            "let the products give the shapes: take nothing from the first call's sizes.",
        ],
        gave="a matmul_backward right for one set of sizes only",
    )


def _products_not_fitting(matmul_backward) -> str:
    """Which of the learner's products raised for their sizes, told from a run on square
    arrays (where every product fits): the one whose result is wrong there, or both."""
    rng = np.random.default_rng(33)
    X, W, dY = (rng.standard_normal((4, 4)) for _ in range(3))
    try:
        with AutogradCalls(), DualLevels():
            dX, dW = (np.asarray(g, dtype=np.float64) for g in matmul_backward(X, W, dY))
        wrong = [
            name
            for name, got, want in (("dX", dX, dY @ W.T), ("dW", dW, X.T @ dY))
            if got.shape != want.shape or not np.allclose(got, want)
        ]
    except Exception:  # the run on square arrays failed too: no telling which product
        wrong = []
    if len(wrong) == 2:
        return "both of your products need fixing, the one for dX and the one for dW: "
    if len(wrong) == 1:
        return f"your product for {wrong[0]} does not fit: "
    return "one of your products does not fit: "


def _none_returned(ex: str, fn, value) -> Result | None:
    """None from a function written in full but with no ``return`` statement is a
    forgotten return; any other blank (``...``, a body that says ``return None``, a
    lambda) is a blank still to fill in."""
    if value is None and not _has_return(fn):
        return forgot_return(ex, fn, value)
    return returned_blank(ex, value)


def _has_return(fn) -> bool:
    """Whether the source of ``fn`` returns anything (a lambda always does); True when
    the source cannot be read."""
    try:
        tree = ast.parse(textwrap.dedent(inspect.getsource(fn)))
    except (OSError, TypeError, SyntaxError):
        return True
    return any(isinstance(node, (ast.Return, ast.Lambda)) for node in ast.walk(tree))


def _same(before: np.ndarray, after: np.ndarray) -> bool:
    return before.shape == after.shape and bool(np.array_equal(before, after))


def _constant_factor(got: np.ndarray, want: np.ndarray) -> float | None:
    """The c with got = c * want, when there is one (least squares, then checked)."""
    norm = float(np.sum(want * want))
    if norm == 0.0 or got.shape != want.shape:
        return None
    factor = float(np.sum(got * want)) / norm
    return factor if np.allclose(got, factor * want) else None


def _shape_mismatch(error: Exception) -> bool:
    """numpy's (and naivegraph's) complaint about a matrix product whose sizes differ."""
    text = str(error)
    return any(word in text for word in ("mismatch", "cannot be multiplied", "not aligned"))


FIRST_NAN_ANSWER = """"SqrtBackward0": the derivative of sqrt at 0 is infinite; its backward
computes grad / (2 sqrt(x)) = 0 / 0 there, NaN. SumBackward0 and MulBackward0 ran first but
returned finite numbers (ones, and ones times the other factor)."""

_FOLLOW = (
    "write down what each of the three backward steps computes at x = [0, 4], in the "
    "order they run, and stop at the first result that is not a finite number."
)


# A word naming one of the example's three ops (its backward's name, or the op's own).
_OP_WORD = re.compile(r"(sum|mul|sqrt)\w*$", re.IGNORECASE)


@checker("12-6", answer=FIRST_NAN_ANSWER, predicts=True)
def check_first_nan(name) -> Result:
    """The name of the first backward op that returned NaN in the lesson's example."""
    ex = "12-6"
    if name is None:  # written, not the blank: None is no name
        return not_yet(
            ex,
            [
                "None is no op's name: the gradient the example prints holds a NaN, so "
                "one backward op of the pass returns it first. Answer with that op's "
                "backward name, a string, as grad_fn.name() spells it.",
                _FOLLOW,
            ],
            gave="None",
        )
    if is_blank(name):
        return not_done(ex)
    if not isinstance(name, str):
        return failed(
            ex, "answer with a string: the op's backward name, as grad_fn.name() spells it."
        )
    given = name.strip().strip("'\"<>")
    named = {t[:3].lower() for t in re.split(r"[\s,;/|+]+", given) if _OP_WORD.match(t)}
    if len(named) > 1:
        return not_yet(
            ex,
            [
                "give ONE name: the first backward op whose result is not a finite "
                "number, not a list of candidates.",
                _FOLLOW,
            ],
            gave=repr(name),
        )
    ran = cell_computes(reads=("grad_fn", "next_functions"), calls=("detect_anomaly", *PRINTED_FORM))
    if ran:
        return not_yet(
            ex,
            [
                f"your cell asks the library instead of working it out: it uses {ran}. "
                "The exercise asks you to follow the backward pass by hand and to type "
                "the name; the cell after the check asks the library for you.",
                _FOLLOW,
            ],
            gave=f"a cell that uses {ran}",
        )
    if given == "SqrtBackward0":
        return correct(ex, "sqrt's derivative is infinite at 0; times a zero gradient: NaN.")
    if given.lower().replace(" ", "") in {
        "sqrt",
        "sqrtbackward",
        "sqrtbackward0",
        "sqrtbackward0()",
        "x.sqrt()",
        "sqrt()",
    } or re.fullmatch(r"sqrt_?backward_?\d*(\(\))?", given.lower().replace(" ", "")):
        return not_yet(
            ex,
            [
                "right op; give its backward's name exactly as grad_fn.name() "
                "spells it (like the names the lesson lists)."
            ],
            gave=repr(name),
        )
    if given.lower().startswith(("sum", "mul")):
        hint = (
            "that op's backward returns finite numbers here, so the NaN starts in "
            "another op: check every one of the three, not only its neighbour."
        )
    else:
        hint = "the backward pass runs only the three ops the lesson lists: which one?"
    return not_yet(ex, [hint, _FOLLOW], gave=repr(name))


LINEAR_ANSWER = """x, w = ctx.saved_tensors; grad_x = grad_w = None; if ctx.needs_input_grad[0]:
grad_x = grad_output @ w.T; if ctx.needs_input_grad[1]: grad_w = x.T @ grad_output;
return grad_x, grad_w: 12-3's formulas, each computed only when its input needs it."""

# (x requires grad, w requires grad): every case backward can meet.
_LINEAR_NEEDS = [(True, True), (False, True), (True, False)]


@checker("12-4", answer=LINEAR_ANSWER)
@_grad_mode_on
@keeps_learner_state
def check_linear_function(linear) -> Result:
    """``linear`` is a Function computing ``x @ w`` whose backward returns one gradient
    per input, each computed only when ``ctx.needs_input_grad`` asks for it."""
    ex = "12-4"
    if is_blank(linear):
        return not_done(ex)
    if not (isinstance(linear, type) and issubclass(linear, ng.autograd.Function)):
        return failed(ex, "pass the class itself (Linear), a subclass of ng.autograd.Function.")
    blank = blank_function(ex, linear.backward)
    if blank is not None:
        return blank
    rng = np.random.default_rng(4)
    xs, ws, gs = (
        rng.standard_normal((4, 3)),
        rng.standard_normal((3, 2)),
        rng.standard_normal((4, 2)),
    )
    if _asks_autograd(linear, xs, ws, gs):
        return not_yet(
            ex,
            [
                "your backward asks autograd for the gradients: backward IS the rule "
                "autograd runs for this op, so it has to compute them itself (and autograd "
                "called inside an op's backward starts a whole new pass for each call).",
                "write the two gradients with tensor ops on grad_output and the saved x "
                "and w: exercise 12-3's formulas.",
            ],
            gave="a backward that runs a backward pass",
        )
    if _switches_grad_off(linear, _saved_linear(xs, ws), (True, True), _upstream(gs)):
        return not_yet(
            ex,
            _grad_off_hints("", "a second derivative through Linear")
            + [
                "a set_grad_enabled(False) call inside backward also stays in force after "
                "backward returns, for every cell after it."
            ],
            gave="a backward that switches grad mode off",
        )
    if _gates_on_flags(linear, xs, ws, gs):
        return not_yet(
            ex,
            [
                "your backward decides from the saved tensors' requires_grad flags; read "
                "ctx.needs_input_grad instead: it is autograd's record of which inputs "
                "need a gradient. A saved tensor need not carry its input's flag (a "
                "Function may save a detached copy, or a tensor computed in forward), and "
                "the checker calls backward with saved tensors that do not.",
            ],
            gave="a backward that reads requires_grad",
        )
    for needs in _LINEAR_NEEDS:  # backward called directly: its own answer, not the engine's
        with _ready_made() as library:
            ok, got = call_answer(ex, _direct_grads, linear, xs, ws, gs, needs)
        if library.called:
            return _ready_made_hint(
                ex,
                library.called[0],
                "write the two gradients with tensor ops on grad_output and the saved x "
                "and w: exercise 12-3's formulas.",
            )
        if not ok:
            return got
        if got is _LIST:
            return not_yet(ex, [_LIST_HINT], gave="a backward that returns a list")
        if got is None:
            return not_yet(
                ex,
                [
                    "backward returns a pair, (grad_x, grad_w): one gradient per "
                    "input of forward, in their order."
                ],
            )
        if got is _IN_PLACE:
            return not_yet(
                ex,
                [
                    "your backward changed grad_output IN PLACE: that tensor is autograd's, "
                    "and it may hand the same one to other nodes or hooks, which would "
                    "then read your product (exercise 12-1 met the same trap).",
                    "leave grad_output as it is and compute NEW tensors from it.",
                ],
                gave="a backward that modifies grad_output in place",
            )
        if isinstance(got, _Mutated):
            return not_yet(
                ex,
                [
                    f"your backward changed the saved {got.name} IN PLACE: saved tensors "
                    "are the inputs themselves, which the caller still holds; backward "
                    "only reads them (an update step belongs to the optimizer, after the "
                    "backward pass).",
                    "read the saved tensors and compute NEW tensors from them.",
                ],
                gave=f"a backward that modifies {got.name} in place",
            )
        if isinstance(got, _Lowered):
            return not_yet(
                ex,
                [
                    f"the gradient of {got.name} is {got.dtype} while the inputs are "
                    "float64: keep the input's dtype. A gradient converted to lower "
                    "precision loses digits.",
                    "compute the gradients from the saved tensors without converting.",
                ],
                gave=f"a {got.dtype} gradient of {got.name}",
            )
        wrong = _linear_mistake(ex, got, xs, ws, gs, needs)
        if wrong is not None:
            return wrong
    if _zeros_for_unneeded(linear, xs, ws, gs):
        return not_yet(
            ex,
            [
                "for an input that needs no gradient, return None, not zeros: None tells "
                "autograd there is nothing to pass on, while a tensor of zeros is memory "
                "filled, handed on and added for nothing.",
            ],
            gave="zeros for an input that needs no gradient",
        )
    if not _skips_unneeded(linear, xs, ws, gs):
        return not_yet(
            ex,
            [
                "the gradients are right, but backward computes one that nobody asked for: "
                "when only w requires grad (x is the data), x's gradient is a whole matrix "
                "product thrown away.",
                "ctx.needs_input_grad holds one bool per input: compute a gradient only "
                "where it is True and return None for the other.",
            ],
        )
    wasted = _computes_unneeded(linear, xs, ws, gs)
    if wasted is not None:
        return not_yet(
            ex,
            [
                f"backward returns None for {wasted} when {wasted} needs no gradient, but "
                f"it computes {wasted}'s gradient all the same (a whole matrix product) "
                "and only then throws it away.",
                "read ctx.needs_input_grad BEFORE computing a gradient, so that an "
                "unneeded one is never computed, not just never returned.",
            ],
            gave=f"a backward that computes {wasted}'s gradient although it is not needed",
        )
    ok, got = call_answer(ex, _linear_grads, linear, xs, ws, gs, (True, True))
    if not ok:
        return got
    if not _stays_differentiable(linear, xs, ws, gs):
        return not_yet(
            ex,
            [
                "the numbers are right, but your gradients left the graph (through numpy, "
                ".detach() or a new tensor): with create_graph=True autograd could not "
                "differentiate them again, so a second derivative through Linear is lost.",
                "compute the gradients with tensor ops on grad_output and the saved "
                "tensors (@, .T), as a built-in op's rule does.",
            ],
        )
    return correct(
        ex, "one gradient per input, each computed only when needs_input_grad asks for it."
    )


def _saved_linear(xs, ws):
    """x and w as the engine saves them for a double backward: requiring grad."""
    return tuple(ng.tensor(v, dtype=ng.float64, requires_grad=True) for v in (xs, ws))


def _upstream(gs):
    return ng.tensor(gs, dtype=ng.float64, requires_grad=True)


def _asks_autograd(linear, xs, ws, gs) -> bool:
    """Whether backward, called directly, runs a backward pass (reverse or forward mode)
    of its own."""
    with ng.enable_grad(), AutogradCalls() as calls, DualLevels() as levels:
        try:
            linear.backward(_Context(_saved_linear(xs, ws), (True, True)), _upstream(gs))
        except Exception:  # reported by the other checks, with their own hints
            pass
    return bool(calls.flags) or levels.entered > 0


def _direct_grads(linear, xs, ws, gs, needs):
    """What backward returns for ``needs``, as numpy arrays (None: not a pair;
    ``_IN_PLACE`` when it changed grad_output)."""
    x, w = ng.tensor(xs, dtype=ng.float64), ng.tensor(ws, dtype=ng.float64)
    upstream = ng.tensor(gs, dtype=ng.float64)
    got = linear.backward(_Context((x, w), needs), upstream)
    if got is Ellipsis:
        raise ValueError("backward still returns ...")
    if upstream._version != 0 or not np.array_equal(upstream.numpy(), gs):  # written to
        return _IN_PLACE
    for name, saved, value in (("x", x, xs), ("w", w, ws)):
        if saved._version != 0 or not np.array_equal(saved.detach().numpy(), value):
            return _Mutated(name)
    if isinstance(got, list):
        return _LIST
    if not isinstance(got, tuple) or len(got) != 2:
        return None
    for name, g in zip(("x", "w"), got):
        dtype = getattr(g, "dtype", None)
        if dtype is not None and str(dtype).rsplit(".", 1)[-1] != "float64":
            return _Lowered(name, str(dtype).rsplit(".", 1)[-1])
    return [None if g is None else np.asarray(_numpy(g), dtype=np.float64) for g in got]


class _Mutated:
    """What :func:`_direct_grads` returns for a backward that changed a saved tensor."""

    def __init__(self, name: str) -> None:
        self.name = name


class _Lowered:
    """What :func:`_direct_grads` returns for a gradient in another dtype than float64."""

    def __init__(self, name: str, dtype: str) -> None:
        self.name, self.dtype = name, dtype


def _stays_differentiable(linear, xs, ws, gs) -> bool:
    """Whether backward's gradients are tensors that autograd can differentiate again
    (``create_graph=True``): computed with tensor ops, not through numpy."""
    x = ng.tensor(xs, dtype=ng.float64, requires_grad=True)
    w = ng.tensor(ws, dtype=ng.float64, requires_grad=True)
    upstream = ng.tensor(gs, dtype=ng.float64, requires_grad=True)
    try:
        got = linear.backward(_Context((x, w), (True, True)), upstream)
    except RuntimeError:  # .numpy() of a tensor that requires grad, and the like
        return False
    return all(isinstance(g, ng.Tensor) and g.requires_grad for g in got)


def _linear_grads(linear, xs, ws, gs, needs):
    x = ng.tensor(xs, dtype=ng.float64, requires_grad=needs[0])
    w = ng.tensor(ws, dtype=ng.float64, requires_grad=needs[1])
    y = linear.apply(x, w)
    if not np.allclose(y.detach().numpy(), xs @ ws):
        raise ValueError("forward should return x @ w (only backward was to be written)")
    wanted = [t for t, need in zip((x, w), needs) if need]
    grads = ng.autograd.grad(y, wanted, ng.tensor(gs, dtype=ng.float64), allow_unused=True)
    out = iter(grads)
    return [None if not need else _numpy(next(out)) for need in needs]


def _numpy(grad):
    if grad is None or isinstance(grad, np.ndarray):
        return grad
    return grad.detach().numpy() if isinstance(grad, ng.Tensor) else np.asarray(grad)


class _Context:
    """What backward reads of a ctx: the saved tensors and needs_input_grad."""

    def __init__(self, saved, needs):
        self.saved_tensors = saved
        self.needs_input_grad = needs


def _skips_unneeded(linear, xs, ws, gs) -> bool:
    """Whether backward, asked for w's gradient alone, leaves x's as None (torch ignores
    a gradient returned for an input that needs none, so only a direct call tells)."""
    x, w = ng.tensor(xs, dtype=ng.float64), ng.tensor(ws, dtype=ng.float64)
    got = linear.backward(_Context((x, w), (False, True)), ng.tensor(gs, dtype=ng.float64))
    return isinstance(got, (tuple, list)) and len(got) == 2 and got[0] is None


def _gates_on_flags(linear, xs, ws, gs) -> bool:
    """Whether backward's answer follows the saved tensors' requires_grad, not
    ctx.needs_input_grad: both asked for, it gives None while the tensors do not require
    grad and gradients once they do."""

    def answer_with(requires_grad: bool):
        saved = tuple(
            ng.tensor(v, dtype=ng.float64, requires_grad=requires_grad) for v in (xs, ws)
        )
        got = linear.backward(_Context(saved, (True, True)), ng.tensor(gs, dtype=ng.float64))
        return got if isinstance(got, (tuple, list)) and len(got) == 2 else None

    try:
        plain, flagged = answer_with(False), answer_with(True)
    except Exception:  # reported by the checks that follow, with their own hints
        return False
    if plain is None or flagged is None:
        return False
    return all(p is None and f is not None for p, f in zip(plain, flagged))


def _zeros_for_unneeded(linear, xs, ws, gs) -> bool:
    """Whether backward, asked for w's gradient alone, gives zeros for x's."""
    x, w = ng.tensor(xs, dtype=ng.float64), ng.tensor(ws, dtype=ng.float64)
    try:
        got = linear.backward(_Context((x, w), (False, True)), ng.tensor(gs, dtype=ng.float64))
        first = got[0]
        return first is not None and not np.any(_numpy(first))
    except Exception:  # reported by the checks that follow, with their own hints
        return False


def _computes_unneeded(linear, xs, ws, gs) -> str | None:
    """The input whose unneeded gradient backward computes anyway (then returns None for
    it), or None.  x's gradient is grad_output @ w.T and w's is x.T @ grad_output: an
    input's own value enters only the OTHER input's gradient, so a backward asked for
    x's gradient alone never computes with x (nor, asked for w's, with w).  That input is
    handed over watched: views of it (.T, .t()) are free, any arithmetic on it is not."""
    for needs, who in (((True, False), "w"), ((False, True), "x")):
        saved = [ng.tensor(xs, dtype=ng.float64), ng.tensor(ws, dtype=ng.float64)]
        watched = _Watched(saved[needs.index(True)])
        saved[needs.index(True)] = watched
        try:
            linear.backward(_Context(tuple(saved), needs), ng.tensor(gs, dtype=ng.float64))
        except Exception:  # a function refused the watched input: backward computed with it
            watched.used[0] = True
        if watched.used[0]:
            return who
    return None


# Reading these of a tensor costs no arithmetic: a backward may take them freely.
_FREE_READS = set(
    "T mT t transpose permute view reshape contiguous detach shape dtype size dim ndim "
    "numel device requires_grad".split()
)


class _Watched:
    """A saved tensor that notes whether backward computes with it: views of it stay
    watched, arithmetic on it (or any other method) is noted, then done on the tensor."""

    def __init__(self, tensor, used=None):
        self._tensor = tensor
        self.used = [False] if used is None else used

    def _wrap(self, value):
        return _Watched(value, self.used) if isinstance(value, ng.Tensor) else value

    def __getattr__(self, name):
        value = getattr(self._tensor, name)
        if name not in _FREE_READS:
            self.used[0] = True
            return value
        if callable(value):
            return lambda *args, **kwargs: self._wrap(value(*args, **kwargs))
        return self._wrap(value)

    def __len__(self) -> int:  # a size, read freely like shape
        return len(self._tensor)


def _noted(name):
    def op(self, *args):
        self.used[0] = True
        args = tuple(a._tensor if isinstance(a, _Watched) else a for a in args)
        return getattr(self._tensor, name)(*args)

    return op


for _name in (
    "matmul rmatmul mul rmul add radd sub rsub truediv rtruediv pow rpow neg getitem array "
    "iter float"
).split():
    setattr(_Watched, f"__{_name}__", _noted(f"__{_name}__"))


def _linear_mistake(ex, got, xs, ws, gs, needs) -> Result | None:
    want = [gs @ ws.T, xs.T @ gs]
    names = ["x", "w"]
    for i, need in enumerate(needs):
        if not need:
            continue
        grad = got[i]
        who = names[i]
        if grad is None:
            return not_yet(
                ex,
                [
                    f"{who} requires grad but got no gradient: backward returns "
                    "one gradient per input of forward, in their order, "
                    "(grad_x, grad_w).",
                    f"check that the gradient of {who} is computed when "
                    f"ctx.needs_input_grad says {who} needs it.",
                ],
            )
        if grad.shape != want[i].shape:
            other = want[1 - i]
            if grad.shape == other.shape:
                hint = (
                    "the two gradients are swapped or mixed up: return (grad_x, grad_w), "
                    "each shaped like its input."
                )
            else:
                hint = (
                    f"the gradient of {who} has shape {grad.shape}, but a gradient has "
                    f"the shape of its input, {want[i].shape}: exercise 12-3's shapes."
                )
            return not_yet(ex, [hint, "12-3 wrote the same two products on numpy arrays."])
        factor = _constant_factor(grad, want[i])
        if factor is not None and not np.isclose(factor, 1.0):
            return not_yet(
                ex,
                [
                    f"the gradient of {who} is right up to a constant factor (a sign "
                    "flipped, a division by a size, an average): backward passes "
                    "grad_output on as it is. If the loss is a mean, its own backward has "
                    "already put that factor into grad_output; a minus belongs to the "
                    "update step.",
                ],
                gave=f"the gradient of {who} off by a constant factor",
            )
        if np.allclose(grad, want[i]) and not _sums_equal(np.asarray(grad), want[i]):
            return not_yet(
                ex,
                [
                    f"the gradient of {who} is close but not equal to the product: beyond "
                    "float64's rounding, something scales it or adds to it.",
                    "return the product itself, with nothing multiplied or added.",
                ],
                gave=f"the gradient of {who} off by a hair",
            )
        if not np.allclose(grad, want[i]):
            return not_yet(
                ex,
                [
                    f"the gradient of {who} has the right shape but not the right "
                    "values: does it use grad_output and the saved tensors?",
                    "12-3 wrote the same two products on numpy arrays.",
                ],
            )
    return None


SOFTPLUS_ANSWER = """g * F.sigmoid(x) (or g * (1 - F.exp(-out))): softplus' derivative
is the sigmoid, times the gradient g that arrives, written with F.<op> so the rule
works on arrays, tensors and static nodes alike."""


@checker("12-5", answer=SOFTPLUS_ANSWER)
@_grad_mode_on
@keeps_learner_state
def check_softplus_partial(partial) -> Result:
    """``partial(g, x, out)`` is softplus' VJP rule, written with the library's ops."""
    ex = "12-5"
    bad = blank_function(ex, partial)
    if bad is not None:
        return bad
    rng = np.random.default_rng(5)
    xs, gs = rng.standard_normal(4) * 2, rng.standard_normal(4)
    outs = np.logaddexp(0.0, xs)
    try:
        partial(gs.copy(), xs.copy(), outs.copy())
    except AttributeError as error:  # a tensor's method (.detach(), .sigmoid()) on an array
        cast = ""
        lowered = {"float": "float32", "half": "float16", "bfloat16": "bfloat16"}
        if getattr(error, "name", None) in lowered:
            cast = (
                f" (and .{error.name}() would give a {lowered[error.name]} gradient while "
                "g and x are float64: keep the input's dtype)"
            )
        return not_yet(
            ex,
            [
                f"on numpy arrays your rule raised AttributeError ({error}): a plain "
                "backward runs the table's rules on arrays, not tensors, so a rule may use "
                f"only what every kind of value has: operators and F.<op>{cast}.",
                "no tensor methods, no np.*: operators and F.<op> only.",
            ],
        )
    except Exception:  # any other crash is reported with its line, below
        pass
    given = (gs.copy(), xs.copy(), outs.copy())
    with _ready_made(torch=False) as library:
        stop, got = answer(ex, partial, *given)
    if library.called:
        return _ready_made_hint(
            ex, library.called[0], "write it with operators and F.<op>: softplus' derivative."
        )
    if stop is not None:
        return stop
    changed = [
        name
        for name, before, after in zip(("g", "x", "out"), (gs, xs, outs), given)
        if not np.array_equal(before, after)
    ]
    if changed:
        return not_yet(
            ex,
            [
                f"your rule changed {changed[0]} IN PLACE (an augmented assignment such as "
                "+= or *=, or an in-place method): "
                + (
                    "g is the gradient autograd hands in, and it may hand the same one to "
                    "other nodes or hooks, which would then read your product; on a "
                    "tensor that requires grad, autograd refuses the change outright."
                    if changed[0] == "g"
                    else f"{changed[0]} is the op's own value, which the caller still "
                    "holds; a rule only reads it."
                ),
                "leave g, x and out as they are and return a NEW value computed from them.",
            ],
            gave=f"a rule that modifies {changed[0]} in place",
        )
    wrong = _softplus_mistake(ex, got, xs, gs)
    if wrong is not None:
        return wrong
    wrong = _softplus_far_out(ex, partial)
    if wrong is not None:
        return wrong
    for where, result in _off_arrays(partial, xs, gs, outs):
        if result == "run":
            return not_yet(
                ex,
                [
                    f"right on numpy arrays, but {where}: a rule in the op table also runs "
                    "on static nodes (ns.gradients), and there yours does not compute "
                    "what it computes on arrays. A rule that asks what kind of value it "
                    "was given and takes another path for nodes gives the engine two "
                    "different derivatives: one formula must serve every kind of value.",
                    "write it with operators and F.<op> (F.exp, F.log, ...), which "
                    "dispatch on whatever they are given.",
                ],
            )
        if result is not None:
            return not_yet(
                ex,
                [
                    f"right on numpy arrays, but {where}: a rule in the op table also runs "
                    "on dynamic tensors (create_graph=True) and on static nodes "
                    "(ns.gradients), where np.* cannot build a graph.",
                    "write it with operators and F.<op> (F.exp, F.log, ...), which "
                    "dispatch on whatever they are given.",
                ],
            )
    if not _softplus_twice_differentiable(partial, xs, gs):
        return not_yet(
            ex,
            [
                "the numbers are right, but on tensors your gradient left the graph "
                "(through .detach(), numpy or a new tensor): with create_graph=True "
                "autograd cannot differentiate it again, and softplus' second derivative "
                "is lost.",
                "use x, g and out as they are given, with operators and F.<op> only, "
                "whatever kind of value they are.",
            ],
            gave="a rule whose gradient leaves the graph",
        )
    return correct(ex, "softplus' derivative is the sigmoid, times g, in the library's ops.")


def _softplus_mistake(ex, got, xs, gs) -> Result | None:
    try:
        values = np.asarray(got, dtype=np.float64)
    except (TypeError, ValueError):
        return failed(ex, "return the gradient of x: an array shaped like x.")
    sig = _sigmoid(xs)
    if values.shape != xs.shape:
        return not_yet(ex, ["return one gradient shaped like x: g times the local derivative."])
    dtype = np.dtype(getattr(got, "dtype", np.float64))
    if dtype.kind == "f" and dtype != np.float64:
        lower = dtype.itemsize < 8
        return not_yet(
            ex,
            [
                f"your gradient is {dtype} while g and x are float64: keep the input's "
                "dtype. "
                + (
                    "A gradient converted to lower precision loses digits, and the op "
                    "table hands it on as it is."
                    if lower
                    else "A longer float adds no digits that were not computed."
                ),
                "compute the gradient from g and x without converting it.",
            ],
            gave=f"a {dtype} gradient for a float64 x",
        )
    if _close_to_rounding(values, gs * sig):
        return None
    narrowed = [gs * sig.astype(np.float32), (gs * sig).astype(np.float32),
                gs.astype(np.float32) * sig, gs * sig.astype(np.float16)]
    if any(_close_to_rounding(values, n.astype(np.float64)) for n in narrowed):
        return not_yet(
            ex,
            [
                "your gradient is float64, but a part of it went through a narrower float "
                "(a cast such as .astype(np.float32)): it lost its last digits there, "
                "which no later float64 product brings back. g and x are float64: keep "
                "every step in their dtype.",
                "compute the gradient from g and x without converting anything.",
            ],
            gave="a gradient rounded to a narrower float on its way",
        )
    if np.allclose(values, gs * sig, rtol=1e-5, atol=1e-8):
        return not_yet(
            ex,
            [
                "your gradient is close but not exact: an approximation such as a finite "
                "difference is off in the last digits (and runs the forward again). A "
                "rule in the table is the exact derivative, by its formula.",
                "differentiate log(1 + e^x) on paper, then simplify the result as far as "
                "it goes.",
            ],
            gave="an approximate gradient",
        )
    if np.allclose(values, sig):
        hint = (
            "that is the local derivative alone; the rule receives g, the gradient of the "
            "output, and returns the gradient of the input (12-1's lesson)."
        )
    elif np.allclose(values, gs * np.logaddexp(0.0, xs)) or np.allclose(values, gs * np.exp(xs)):
        hint = (
            "differentiate log(1 + e^x) with the chain rule: the derivative of the outer "
            "log, at 1 + e^x, times the derivative of the inner 1 + e^x."
        )
    elif _mixes_upstream_wrongly(values, sig, gs):
        hint = (
            "your local derivative is right; the mistake is how g is combined with it. "
            "The chain rule multiplies, element by element (no sum, mean, division or "
            "addition), as in 12-1."
        )
    elif np.allclose(values, gs / (1 + np.exp(xs))):
        hint = (
            "check the sign in the exponent: softplus grows with x, so its derivative "
            "must tend to 1 for large x, not to 0."
        )
    else:
        hint = "differentiate log(1 + e^x) with the chain rule, then multiply by g."
    return not_yet(
        ex,
        [
            hint,
            "simplify the derivative you get as far as it goes, then look through F's "
            "ops (dir(F) lists them) for one that computes it.",
        ],
        gave=show_small(values),
    )


def _sigmoid(xs):
    """The sigmoid without overflow for any x (1 / (1 + e^-x) overflows at x = -800)."""
    return np.exp(-np.logaddexp(0.0, -xs))


def _close_to_rounding(got, want) -> bool:
    """Equal but for rounding: the exact rule, in any of its forms, is; a finite
    difference, off by about 1e-10, is not, nor is a constant of 1e-14 added.  The
    sigmoid lies in [0, 1], and g is of order 1: the tolerance is absolute, a few ulps of
    the largest g (1 - e^-out, a cancellation, is off by about one)."""
    scale = float(np.max(np.abs(want), initial=0.0))
    eps = float(np.finfo(np.float64).eps)
    return bool(np.allclose(got, want, rtol=8 * eps, atol=16 * eps * max(scale, 1.0)))


# Where softplus' forward needs logaddexp: e^800 overflows, e^-800 underflows.
_FAR_XS = np.array([800.0, -800.0, 40.0, -40.0])


def _softplus_far_out(ex, partial) -> Result | None:
    """The rule at large |x|, where a formula with e^x alone overflows to inf / inf."""
    gs = np.array([1.5, -0.5, 2.0, 1.0])
    outs = np.logaddexp(0.0, _FAR_XS)
    with np.errstate(all="ignore"):  # the overflow is the mistake, reported below
        ok, got = call_answer(ex, partial, gs.copy(), _FAR_XS.copy(), outs.copy())
    if not ok:
        return got
    try:
        values = np.asarray(got, dtype=np.float64)
    except (TypeError, ValueError):
        return failed(ex, "return the gradient of x: an array shaped like x.")
    if values.shape == _FAR_XS.shape and _close_to_rounding(values, gs * _sigmoid(_FAR_XS)):
        return None
    if values.shape == _FAR_XS.shape and np.all(np.isfinite(values)):
        shown = np.array2string(values, precision=6, separator=", ")
        return not_yet(
            ex,
            [
                f"right for moderate x, but at x = 800, -800, 40 and -40 your rule gives "
                f"{shown}: finite, and still not the derivative there. Nothing overflows "
                "to fix: a rule that treats a large |x| as a smaller one (a clamp, a "
                "cut-off) gives the derivative at the cut, not at x.",
                "the rule must hold for every x as it is: write it with ops that stay "
                "finite for any x, and leave x itself unchanged.",
            ],
            gave="a rule that is off at large |x|",
        )
    return not_yet(
        ex,
        [
            "right for moderate x, but at x = 800 or -800 your rule gives "
            f"{show_small(values)}: e^800 overflows to inf, and inf / inf is nan. The "
            "forward uses logaddexp for this very reason.",
            "simplify the derivative until no e^x of a large x is left to overflow, "
            "and look through F's ops (dir(F) lists them) for one that computes it.",
        ],
        gave="a rule that breaks at large |x|",
    )


def _softplus_twice_differentiable(partial, xs, gs) -> bool:
    """Whether the rule's gradient, on tensors, differentiates again to softplus' second
    derivative, g * sigmoid(x) * (1 - sigmoid(x)): ``out`` is computed from ``x``, as the
    op's forward gives it, so a rule that reads ``out`` stays on the graph too."""
    x = ng.tensor(xs, dtype=ng.float64, requires_grad=True)
    g = ng.tensor(gs, dtype=ng.float64, requires_grad=True)
    out = ng.log(1.0 + ng.exp(x))
    sig = _sigmoid(xs)
    try:
        got = partial(g, x, out)
        (second,) = ng.autograd.grad(got.sum(), x, allow_unused=True)
    except Exception:  # .numpy() of a tensor that requires grad, a detached result, ...
        return False
    return second is not None and bool(np.allclose(second.numpy(), gs * sig * (1 - sig)))


def show_small(values) -> str:
    return np.array2string(np.asarray(values), precision=3, separator=", ")


def _off_arrays(partial, xs, gs, outs):
    """(where, None) when ``partial`` builds a tensor and a node; else (where, what)."""
    x = ng.tensor(xs, dtype=ng.float64, requires_grad=True)
    g = ng.tensor(gs, dtype=ng.float64, requires_grad=True)
    out = ng.tensor(outs, dtype=ng.float64, requires_grad=True)
    try:
        got = partial(g, x, out)
        ok = isinstance(got, ng.Tensor) and got.grad_fn is not None
    except Exception:
        ok = False
    yield "on tensors that require grad it builds no graph", None if ok else "tensor"
    graph = ns.Graph("rule")
    with graph:
        xn = ns.placeholder("x", shape=xs.shape, dtype=np.float64)
        gn = ns.placeholder("g", shape=gs.shape, dtype=np.float64)
        on = ns.placeholder("out", shape=outs.shape, dtype=np.float64)
        try:
            got = partial(gn, xn, on)
            ok = isinstance(got, ns.Node)
        except Exception:
            ok = False
    yield "on static nodes it builds no node", None if ok else "node"
    try:  # the node, run, gives the rule's values
        values = np.asarray(graph.run(got, {xn: xs, gn: gs, on: outs}), dtype=np.float64)
        ok = values.shape == xs.shape and _close_to_rounding(values, gs * _sigmoid(xs))
    except Exception:
        ok = False
    yield "on static nodes the node it builds, run, gives other values", None if ok else "run"
