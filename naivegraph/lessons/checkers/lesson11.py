"""Checkers of lesson 11: forward and reverse mode."""

from __future__ import annotations

import numpy as np

import naivegraph as ng
import naivegraph.autograd.functional as _functional
from naivegraph.dynamic import forward as _forward

from ...dynamic import defaults, grad_mode
from ..checking import (
    AutogradCalls,
    DualLevels,
    Result,
    blank_function,
    call_answer,
    checker,
    correct,
    crash_message,
    failed,
    is_blank,
    keeps_learner_state,
    not_done,
    not_yet,
    returned_blank,
)
from ..library_calls import LibraryCalls, package_directory

DUAL_ANSWER = """mul: tangent u.tangent * v.value + u.value * v.tangent (the product rule);
div: tangent (u.tangent * v.value - u.value * v.tangent) / v.value ** 2 (the quotient rule)."""

# (u, u', v, v'): the first tells each rule from its usual slips (all give different
# numbers there); the next two are the lesson's seeds; the last two have terms of
# opposite signs (an abs() in a rule shows) and values that float32 or rounding would
# change (0.1 is no binary fraction).
_DUAL_CASES = [
    (3.0, -0.5, -1.5, 2.0),
    (1.0, 1.0, 2.0, 0.0),
    (1.0, 0.0, 2.0, 1.0),
    (2.0, 1.0, 3.0, -1.0),
    (0.1, 0.3, 0.7, -0.2),
    (0.5, 1.0, 0.01, 0.3),  # small divisors: a rule that bounds v.value ** 2 shows
    (2.0, -1.0, -1e-3, 0.5),
    # a negative first factor, last: every case above has u > 0, so a rule right only
    # there (abs(u.value), a branch on its sign) passed them all and is told so here
    (-2.0, 0.5, 1.5, -1.0),
    (-0.5, -1.0, -2.0, 0.25),
]


@checker("11-1", answer=DUAL_ANSWER)
def check_dual_rules(dual) -> Result:
    """``Dual.__mul__`` and ``Dual.__truediv__`` carry the product and quotient rules."""
    ex = "11-1"
    if is_blank(dual):
        return not_done(ex)
    if not isinstance(dual, type):
        return failed(ex, "pass the class itself: ex.check_dual_rules(Dual).")
    constant = _constant_tangent(dual)
    if constant is not None:
        return not_yet(
            ex,
            [f"Dual(2.5) has tangent {constant:g}: your cell gave __init__ another default "
             "tangent. A plain number wrapped as a Dual is a constant, whose derivative "
             "is 0, and __add__, __sub__ and the wrappers of mul and div rely on that.",
             "run the cell that defines Dual again, and leave its __init__ as it is."],
            gave=f"a Dual whose default tangent is {constant:g}",
        )
    broken = _other_methods_broken(dual)
    if broken is not None:
        return not_yet(
            ex,
            [f"Dual's {broken} no longer gives its rule (value and tangent): your cell "
             "changed a method of the class besides mul and div, and every program using "
             "Dual after it computes wrong derivatives.",
             "this exercise fills in mul and div only: run the cell that defines Dual "
             "again, and leave its other methods as they are."],
            gave=f"a Dual whose {broken} was changed",
        )
    for u, du, v, dv in _DUAL_CASES:
        with _DerivativesOfALibrary() as library:
            ok, got = call_answer(ex, _products, dual, u, du, v, dv)
        if library.used:
            return not_yet(
                ex,
                [f"your rules take the derivative from {library.used}: the exercise "
                 "writes the product and quotient rules themselves, the very rules "
                 "such an engine carries, so asking one proves nothing about yours.",
                 "compute each tangent with plain arithmetic on u.value, u.tangent, "
                 "v.value and v.tangent, as the exercise text spells the rules."],
                gave=f"tangents computed by {library.used}",
            )
        if not ok:
            return got
        if got is Ellipsis:
            return not_done(ex)
        if isinstance(got, _NotANumber):
            return not_yet(
                ex,
                [f"your {got.op} returns a Dual whose {got.part} is itself a Dual (or "
                 "another object), not a number: the tangent must be a number, not a "
                 "Dual. Inside the rule, compute with the plain numbers u.value, "
                 "u.tangent, v.value and v.tangent.",
                 "build ONE Dual at the end, from a value and a tangent that are both "
                 "numbers."],
                gave=f"a {got.op} whose {got.part} is a {got.kind}",
            )
        if isinstance(got, _NotADual):
            if got.result is None:
                first = (f"your {got.op} returned None: it builds its result but has no "
                         "`return` of it (without one, Python returns None).")
            else:
                first = (f"your {got.op} returned a {type(got.result).__name__}, not a "
                         "Dual: the next op reads .value and .tangent of what it gets.")
            return not_yet(
                ex,
                [first, f"end {got.op} by returning ONE Dual, built from its value and "
                        "its tangent."],
                gave=f"a {got.op} that returns {type(got.result).__name__}",
            )
        if isinstance(got, str):  # the op that changed an operand in place
            return not_yet(
                ex,
                [f"your {got} changes its operand u in place (its value or tangent): the "
                 "numbers it returns may be right, but u is left altered, and a program "
                 "that reads u again (u * v + u) gets wrong results.",
                 f"leave u and v as they are: {got} builds and returns a NEW Dual."],
                gave=f"a {got} that modifies its operand",
            )
        (mul_value, mul_tangent), (div_value, div_tangent) = got
        if not np.isclose(mul_value, u * v) or not np.isclose(div_value, u / v):
            return not_yet(ex, ["the values are plain u * v and u / v; only tangents change."])
        exact_here = (np.isclose(mul_tangent, du * v + u * dv)
                      and np.isclose(div_tangent, (du * v - u * dv) / v**2))
        cut = None if exact_here else _cut_to_whole(dual)
        if cut is not None:
            op, how = cut
            return not_yet(
                ex,
                [f"your {op}'s tangent is a whole number: the rule's tangent cut to an "
                 f"integer ({how}). A tangent is a derivative, a real number like the "
                 "value beside it: with its fraction cut off, it is another slope.",
                 f"keep {op}'s tangent as the arithmetic gives it, with all its digits, "
                 "without any conversion."],
                gave=f"{op}'s tangent cut to a whole number",
            )
        if not np.isclose(mul_tangent, du * v + u * dv):
            if u < 0:
                return not_yet(ex, _negative_u_hints("mul", u), gave=f"mul wrong at u = {u:g}")
            return not_yet(ex, _mul_hints(mul_tangent, u, du, v, dv))
        if not np.isclose(div_tangent, (du * v - u * dv) / v**2):
            if u < 0:
                return not_yet(ex, _negative_u_hints("div", u), gave=f"div wrong at u = {u:g}")
            return not_yet(ex, _div_hints(div_tangent, u, du, v, dv, dual))
        rounded = _rounded_to_narrow_float(
            [("mul's value", mul_value, u * v), ("div's value", div_value, u / v),
             ("mul's tangent", mul_tangent, du * v + u * dv),
             ("div's tangent", div_tangent, (du * v - u * dv) / v**2)])
        if rounded is not None:
            what, dtype = rounded
            return not_yet(
                ex,
                [f"{what} is rounded to {dtype}: the numbers here are float64 (Python "
                 f"floats), so keep the result float64; converted to {dtype} it loses its "
                 "last digits. That is not a finite difference: the rule is right, the "
                 "precision is not.",
                 f"compute with the numbers as they are and keep the result float64, "
                 f"without any conversion to {dtype}."],
                gave=f"{what} in {dtype}",
            )
        exact = [("mul", mul_tangent, du * v + u * dv),
                 ("div", div_tangent, (du * v - u * dv) / v**2)]
        off = [op for op, have, want in exact
               if not np.isclose(have, want, rtol=1e-12, atol=0.0)]
        if off:
            return not_yet(
                ex,
                [f"your {off[0]}'s tangent is close but not exact: a small change somewhere "
                 "(an epsilon added to the denominator, a factor near 1) or an "
                 "approximation such as a finite difference is off in the last digits. "
                 "Dual numbers carry the exact derivative: each rule is plain arithmetic "
                 "on the values and tangents you have, nothing added.",
                 "write the tangent with the product and quotient rules of the exercise "
                 "text, from u.value, u.tangent, v.value and v.tangent."],
                gave=f"an approximate tangent in {off[0]}",
            )
    wrong = _constants_refused(dual)
    if wrong is not None:
        return not_yet(
            ex,
            [f"{wrong} does not give its rule: the cell's wrappers (Dual.__mul__ = ..., "
             "Dual.__truediv__ = ...) turn a plain number into a Dual (a constant, "
             "tangent 0) before calling mul or div, and yours no longer do; the lesson's "
             "next cells multiply a Dual by a number (x * 2.0).",
             "run the cell with the wrapper lines as the template has them."],
            gave=f"{wrong} refused or wrong",
        )
    return correct(ex, "each op carries value and derivative forward together.")


class _DerivativesOfALibrary:
    """Whether code run inside a ``with`` block took a derivative from a library:
    naivegraph's reverse mode (a backward, autograd.grad), its forward mode (a dual
    level: ng.func.jvp, forward_ad) or torch.  ``used`` names the first, or is ""."""

    def __enter__(self) -> _DerivativesOfALibrary:
        self.used = ""
        self._reverse = AutogradCalls().__enter__()
        self._forward = DualLevels().__enter__()
        torch = package_directory("torch")
        self._torch = LibraryCalls((), {"torch": torch} if torch else {}).__enter__()
        return self

    def __exit__(self, *exc_info: object) -> None:
        self._torch.__exit__(*exc_info)
        self._forward.__exit__(*exc_info)
        self._reverse.__exit__(*exc_info)
        if self._reverse.flags:
            self.used = "naivegraph's autograd (a backward pass)"
        elif self._forward.entered:
            self.used = "naivegraph's forward mode (a dual level, as ng.func.jvp enters)"
        elif self._torch.called:
            self.used = "torch"


def _constant_tangent(dual) -> float | None:
    """The tangent Dual(2.5) gets when it is not 0 (a changed default), else None."""
    try:
        tangent = float(dual(2.5).tangent)
    except Exception:  # a Dual that needs its tangent: the template's has a default
        return None
    return None if tangent == 0.0 else tangent


def _constants_refused(dual) -> str | None:
    """The first of Dual * 2.5 and Dual / 2.5 (and 2.5 * Dual, 2.5 / Dual where the class
    has __rmul__, __rtruediv__) that raises or gives a wrong value or tangent.  Asked of
    the template's Dual, whose __add__ takes plain numbers (a Dual without __add__
    promises nothing about them)."""
    if getattr(dual, "__add__", None) is None:
        return None
    cases = [("Dual * 2.5", lambda d: d * 2.5, (7.5, 1.25)),
             ("Dual / 2.5", lambda d: d / 2.5, (1.2, 0.2))]
    if "__rmul__" in vars(dual):
        cases.append(("2.5 * Dual", lambda d: 2.5 * d, (7.5, 1.25)))
    if "__rtruediv__" in vars(dual):
        cases.append(("2.5 / Dual", lambda d: 2.5 / d, (2.5 / 3.0, -2.5 * 0.5 / 9.0)))
    for name, op, (value, tangent) in cases:
        try:
            got = op(dual(3.0, 0.5))
            ok = np.isclose(float(got.value), value) and np.isclose(float(got.tangent), tangent)
        except Exception:  # raising is refusing
            ok = False
        if not ok:
            return name
    return None


def _products(dual, u, du, v, dv):
    """(value, tangent) of u*v and u/v as the learner's Dual computes them; the op's
    name when it changed an operand in place."""
    a, b = dual(u, du), dual(v, dv)
    results = []
    for name, op in (("mul", lambda: a * b), ("div", lambda: a / b)):
        result = op()
        if not (hasattr(result, "value") and hasattr(result, "tangent")):
            return _NotADual(name, result)
        if result.tangent is Ellipsis:
            return Ellipsis
        if (a.value, a.tangent, b.value, b.tangent) != (u, du, v, dv):
            return name  # changed an operand in place
        for part in ("value", "tangent"):
            if not _is_number(getattr(result, part, None), dual):
                return _NotANumber(name, part, type(getattr(result, part, None)).__name__)
        results.append((_Number(result.value), _Number(result.tangent)))
    return results


class _Number(float):
    """A learner's number as a float that remembers its numpy dtype (float32 and
    float16 round, which the hint then names)."""

    dtype: np.dtype | None

    def __new__(cls, value):
        number = super().__new__(cls, float(value))
        number.dtype = getattr(value, "dtype", None)
        return number


def _rounded_to_narrow_float(parts) -> tuple[str, str] | None:
    """(which part, dtype name) of the first part that is not exact but is a float32 or
    float16 number, or equals its exact value rounded to one of them."""
    for what, have, want in parts:
        if np.isclose(have, want, rtol=1e-12, atol=0.0):
            continue
        dtype = getattr(have, "dtype", None)
        if dtype is not None and dtype.kind == "f" and dtype.itemsize < 8:
            return what, dtype.name
        for narrow in (np.float32, np.float16):
            if float(have) == float(narrow(want)):
                return what, np.dtype(narrow).name
    return None


def _is_number(value, dual) -> bool:
    """A plain number (a 0-d array too); a Dual is not, even one that float() takes."""
    if isinstance(value, dual):
        return False
    try:
        float(value)
    except (TypeError, ValueError):
        return False
    return True


class _NotADual:
    """What :func:`_products` returns for an op whose result is no Dual (None, a tuple)."""

    def __init__(self, op: str, result) -> None:
        self.op, self.result = op, result


class _NotANumber:
    """What :func:`_products` returns for a result whose value or tangent is no number."""

    def __init__(self, op: str, part: str, kind: str) -> None:
        self.op, self.part, self.kind = op, part, kind


def _negative_u_hints(op: str, u: float) -> list[str]:
    """The hint for a rule right on every case with u > 0 (the cases before) and wrong at
    a negative u: an absolute value or a branch on u's sign."""
    return [f"your {op} is right wherever u's value is positive and wrong at u = {u:g}: "
            "the rule must not depend on u's sign (an absolute value, or a branch on "
            "whether u.value > 0, makes it right on one side only).",
            "the product and quotient rules are one formula for every sign: use u.value "
            "as it is."]


def _cut_to_whole(dual) -> tuple[str, str] | None:
    """(op, how) when the learner's mul or div gives, on every case, the rule's tangent
    cut to a whole number (int(), floor, round), and that tangent is not whole on some
    case; else None.  Asked over all the cases: on one, a cut tangent can equal a slip
    (int(6.75) is u * v' at the first case)."""
    rules = (("mul", lambda a, b: a * b, lambda u, du, v, dv: du * v + u * dv),
             ("div", lambda a, b: a / b, lambda u, du, v, dv: (du * v - u * dv) / v**2))
    cuts = (("by int(), or a cast to an integer type", np.trunc),
            ("by a floor, such as //", np.floor), ("by round()", np.round))
    for op, apply, rule in rules:
        try:
            tangents = [float(apply(dual(u, du), dual(v, dv)).tangent)
                        for u, du, v, dv in _DUAL_CASES]
        except Exception:  # an op that fails somewhere: told by the cases one by one
            continue
        wants = [rule(*case) for case in _DUAL_CASES]
        if all(w == float(np.trunc(w)) for w in wants):
            continue
        for how, cut in cuts:
            if tangents == [float(cut(w)) for w in wants]:
                return op, how
    return None


def _mul_hints(got, u, du, v, dv) -> list[str]:
    if np.isclose(got, du * dv):
        first = "multiplying the tangents is not the product rule: each factor's change "
        first += "is scaled by the OTHER factor's value."
    elif np.isclose(got, du * v) or np.isclose(got, u * dv):
        first = "the product changes when either factor changes: two terms, one per factor."
    else:
        first = "mul's tangent is off: expand (u + u'ε)(v + v'ε) and drop the ε² term."
    return [first, "(uv)' = u'v + uv'."]


def _other_methods_broken(dual) -> str | None:
    """The name of the first of Dual's given methods (__add__, __sub__, where the class
    has them) that no longer computes its rule, on Duals and on a plain number, or None."""
    for name, op, rule in (("__add__", lambda a, b: a + b, lambda p, q: p + q),
                           ("__sub__", lambda a, b: a - b, lambda p, q: p - q)):
        if getattr(dual, name, None) is None:  # a Dual without it: nothing to keep
            continue
        for other in ((0.7, -0.2), 2.5):
            try:
                b = dual(*other) if isinstance(other, tuple) else other
                got = op(dual(3.0, 0.5), b)
                value, tangent = float(got.value), float(got.tangent)
            except Exception:  # a method that cannot run at all is broken too
                return name
            v, dv = other if isinstance(other, tuple) else (other, 0.0)
            if not (np.isclose(value, rule(3.0, v)) and np.isclose(tangent, rule(0.5, dv))):
                return name
    return None


def _div_hints(got, u, du, v, dv, dual=None) -> list[str]:
    if np.isclose(got, (u * dv - du * v) / v**2) and v < 0 and _div_right_at(dual, 3.0, 1.5):
        first = ("div's tangent has the wrong sign where v is negative, and is right where v "
                 "is positive: the numerator is right, the denominator is not. v squared "
                 "is positive whatever v's sign.")
    elif np.isclose(got, (u * dv - du * v) / v**2):
        first = "div's tangent has the wrong sign: the numerator's change counts positively."
    elif np.isclose(got, (du * v - u * dv) / v):
        first = "div's tangent: divide by v squared, not by v."
    else:
        first = "div's tangent is off: write u / v as u * (1 / v) and differentiate both parts."
    return [first, "(u/v)' = (u'v - uv') / v²."]


def _div_right_at(dual, u: float, v: float) -> bool:
    """Whether the learner's div gives the right tangent at u / v (v positive here)."""
    if dual is None:
        return False
    try:
        got = dual(u, -0.5) / dual(v, 2.0)
        return bool(np.isclose(float(got.tangent), (-0.5 * v - u * 2.0) / v**2))
    except Exception:  # a div that fails there: not the denominator mistake
        return False


def _sample_functions():
    """Functions R^n -> R^m the learner's Jacobian code has never seen, with their inputs."""
    rng = np.random.default_rng(11)
    W = ng.tensor(rng.standard_normal((4, 3)))
    yield (lambda x: (W @ x).tanh()), ng.tensor(rng.standard_normal(3))
    yield (lambda x: ng.stack([x[0] * x[1], x[0] / x[1] - x[0] ** 2 + 2 * x[1]])), ng.tensor(
        [1.0, 2.0], dtype=ng.float64
    )
    yield (lambda x: (x * x).sum().reshape(1)), ng.tensor(rng.standard_normal(5))


class _Counted:
    """``f`` that counts its calls: a JVP or VJP runs f once, so the count tells one pass
    per input (forward mode) from one pass for every output (reverse mode)."""

    def __init__(self, f):
        self.f, self.calls, self.recorded, self.dual = f, 0, 0, 0

    def __call__(self, x):
        self.calls += 1
        if _forward.is_dual_tensor(x):  # a forward-mode pass: x carries a tangent
            self.dual += 1
        out = self.f(x)
        if getattr(out, "grad_fn", None) is not None:  # a forward pass a backward can use
            self.recorded += 1
        return out


def _check_jacobian(ex: str, jacobian_fn, rows_or_columns: str) -> Result:
    bad = blank_function(ex, jacobian_fn)
    if bad is not None:
        return bad
    enabled, dtype = grad_mode.is_grad_enabled(), defaults.get_default_dtype()
    for f, x in _sample_functions():
        given = (x.detach().numpy().copy(), x._version, x.requires_grad)
        with DualLevels():  # a level the answer left open is closed, not leaked
            if _stacks_nothing(jacobian_fn, f, x):  # a blank loop body, no source at hand
                return not_done(
                    ex,
                    f"(nothing was appended to the list of {rows_or_columns}: fill in the "
                    "loop body so that each pass appends one.)",
                )
        counted = _Counted(f)
        was_open = _forward.dual.level is not None
        with DualLevels(), _Passes(counted) as passes:
            crash: Exception | None = None
            try:
                got = jacobian_fn(counted, x)
            except Exception as exc:  # any error is reported to the learner
                crash, got = exc, None
            left_open = not was_open and _forward.dual.level is not None
        if left_open and crash is None:
            return not_yet(
                ex,
                ["your function enters a dual level and leaves it open when it returns: "
                 "every tangent made in it stays alive, and forward mode stays on for the "
                 "caller's code after it (a second level cannot even be entered then). "
                 "A level is left where it was entered.",
                 "enter a level with a `with` block, which leaves it however the block "
                 "ends, or let ng.func.jvp handle the level."],
                gave="a dual level left open",
            )
        touched = _x_changed(x, given)
        x = ng.tensor(given[0])  # the point itself, whatever the answer did to the caller's x
        if touched is not None:
            return not_yet(
                ex,
                [f"your function {touched}: x is the caller's tensor, which the "
                 "caller still uses after your function returns.",
                 "leave x as it is: work on a copy (x.detach()) if a pass needs one "
                 "of its own, or let ng.func's passes handle x."],
                gave=f"a function that {touched}",
            )
        if crash is not None and "same dtype" in str(crash):
            return not_yet(
                ex,
                [f"{crash_message(crash).split(';')[0]}. That is a dtype mismatch: x here "
                 "is float64, and a seed made without a dtype (ng.eye, ng.zeros, "
                 "ng.tensor of floats) takes the default dtype, float32. The seed "
                 "pushed through f must match x.dtype (a seed pulled back through "
                 "vjp_fn is converted to the outputs' dtype, as torch does).",
                 "make each seed in the dtype of the tensor it stands beside."],
                gave="a seed whose dtype is not x's",
            )
        if crash is not None:
            return failed(ex, crash_message(crash))
        stop = returned_blank(ex, got)
        if stop is not None:
            return stop
        changed = [what for what, now in (("grad mode", grad_mode.is_grad_enabled() != enabled),
                                          ("the default dtype",
                                           defaults.get_default_dtype() != dtype)) if now]
        if changed:
            return not_yet(
                ex,
                [f"your function left {' and '.join(changed)} changed for every cell after "
                 "it: change such state inside a `with` block only (`with ng.no_grad():`), "
                 "or not at all."],
                gave=f"a function that left {' and '.join(changed)} changed",
            )
        want = ng.func.jacrev(f)(x).numpy()
        if isinstance(got, (list, tuple)):
            return failed(ex, f"you returned a {type(got).__name__}: return one tensor, the "
                              f"{rows_or_columns} stacked with ng.stack.")
        if isinstance(got, (np.ndarray, np.generic)):
            return not_yet(
                ex,
                [f"you returned a numpy array: return one tensor, the {rows_or_columns} "
                 "stacked as tensors, as ng.func's Jacobians give it. The caller goes on "
                 "computing with tensors, which a numpy array has left (no dtype of the "
                 "library's, no autograd)."],
                gave="a numpy array",
            )
        lowered = _lowered_dtype(got)
        try:
            got = np.asarray(got.detach().numpy() if hasattr(got, "detach") else got, float)
        except (TypeError, ValueError):
            return failed(ex, "return one tensor: the stacked " + rows_or_columns + ".")
        if lowered is not None and got.shape == want.shape and np.allclose(got, want, 1e-3):
            return not_yet(
                ex,
                [f"your matrix is {lowered} while x and f's outputs are float64: keep "
                 "float64. A value converted to lower precision (.float(), a list stacked "
                 "again as float32) loses digits.",
                 f"stack the {rows_or_columns} as the passes return them, without "
                 "converting."],
                gave=f"a {lowered} Jacobian",
            )
        if rows_or_columns == "columns" and _primals_swapped(got, f, x):
            return not_yet(
                ex,
                ["your jvp calls have primals and tangents swapped: the first tuple is "
                 "the point where f is differentiated, the second the direction to push "
                 "through it. Yours differentiates at the seed, in the direction x.",
                 "ng.func.jvp(f, primals, tangents): which of x and the seed is the point?"],
                gave="jvp with its two tuples swapped",
            )
        if rows_or_columns == "columns" and _primals_swapped(got, f, x, toward_x=False):
            return not_yet(
                ex,
                ["your jvp calls differentiate f at each seed, not at x: the seed is given "
                 "as the point as well as the direction. The first tuple is the point "
                 "where f is differentiated, the second the direction to push through it.",
                 "ng.func.jvp(f, primals, tangents): which of x and the seed is the point?"],
                gave="jvp taken at the seeds",
            )
        if not np.any(got) and np.any(want):
            return not_yet(
                ex,
                [f"every one of your {rows_or_columns} is zero: the function your passes "
                 "differentiate does not depend on its input. A value computed beforehand "
                 "(f(x) kept in a closure, a detached copy) is a constant to the pass, "
                 "whatever the seed.",
                 "the function a pass differentiates must compute its output from the "
                 "input the pass hands it."],
                gave=f"{rows_or_columns} that are all zero",
            )
        wrong = _jacobian_mistake(ex, got, want, f(x).numpy(), rows_or_columns)
        if wrong is not None:
            return wrong
        wrong = _not_built_as_asked(ex, passes, want.shape, counted.dual)
        if wrong is not None:
            return wrong
        wrong = _wrong_mode(ex, _calls_for_rows(ex, counted, passes, want.shape), *want.shape)
        if wrong is not None:
            return wrong
    return correct(
        ex,
        f"one pass per {rows_or_columns[:-1]}, each giving one {rows_or_columns[:-1]} "
        "of the matrix exactly.",
    )


def _calls_for_rows(ex: str, counted: _Counted, passes: _Passes, shape: tuple) -> int:
    """The calls of f that can have made the matrix.  In 11-3, the forward passes
    that recorded a graph (one a reverse pass can run through): a further call of f that
    records nothing (a debug print of f(x)) takes no part in the rows, and is not
    counted; one recorded pass per row is counted however its backward runs (vjp_fn or
    .backward())."""
    if ex == "11-3":
        return counted.recorded
    return counted.calls


def _x_changed(x, given) -> str | None:
    """What the answer did to the caller's x (its values, in place; its requires_grad
    flag; a gradient written into it), or None."""
    values, version, requires_grad = given
    if x._version != version or not np.array_equal(x.detach().numpy(), values):
        return "changed x in place"
    if x.requires_grad != requires_grad:
        return "set x to require grad (x.requires_grad_())"
    if x.grad is not None:
        return "left a gradient in x.grad"
    return None


def _lowered_dtype(got) -> str | None:
    """The name of ``got``'s float dtype when it holds fewer digits than float64."""
    name = str(getattr(got, "dtype", "")).rsplit(".", 1)[-1]
    return name if name in ("float32", "float16", "bfloat16") else None


def _primals_swapped(got, f, x, toward_x: bool = True) -> bool:
    """Whether ``got`` holds, as columns, the JVPs taken at each seed in the direction
    x: ``jvp(f, (seed,), (x,))`` in place of ``jvp(f, (x,), (seed,))`` (with
    ``toward_x=False``, in the direction of the seed itself: ``jvp(f, (seed,), (seed,))``)."""
    n = x.shape[0]
    try:
        seeds = [ng.eye(n, dtype=x.dtype)[i] for i in range(n)]
        columns = [ng.func.jvp(f, (seed,), (x if toward_x else seed,))[1] for seed in seeds]
        swapped = ng.stack(columns, dim=1).numpy()
    except Exception:  # f undefined at a seed (a division by 0): not this mistake
        return False
    want = ng.func.jacrev(f)(x).numpy()
    return (
        got.shape == swapped.shape
        and bool(np.allclose(got, swapped))
        and not bool(np.allclose(got, want))
    )


def _stacks_nothing(jacobian_fn, f, x) -> bool:
    """Whether ``jacobian_fn`` raised stack's complaint of an empty list: the loop that
    was to fill the list is still a blank ``...`` (which the compiled code drops, so
    a function run without its source shows it only this way)."""
    try:
        jacobian_fn(f, x)
    except RuntimeError as error:
        return "non-empty list" in str(error)
    except Exception:  # any other crash is reported by the checks that follow
        return False
    return False


def _jacobian_mistake(ex: str, got, want, output, rows_or_columns: str) -> Result | None:
    m, n = want.shape
    if got.ndim > want.ndim:  # tuples stacked whole: (f(x), Jv) pairs or (row,) tuples
        return not_yet(
            ex,
            [f"you gave shape {got.shape}, with one axis too many: what does each call "
             "return? ng.func.jvp returns a pair and vjp_fn a tuple; unpack the part you "
             "need before appending it."],
        )
    if got.shape == (n, m) and np.allclose(got, want.T):
        return not_yet(
            ex,
            [
                f"for a function with {n} inputs and {m} outputs your matrix is transposed: "
                f"each pass gives one of the {rows_or_columns}; check the stacking dim.",
            ],
        )
    if got.shape != want.shape:
        return not_yet(
            ex,
            [f"for {n} inputs and {m} outputs the Jacobian is {m} x {n} (outputs by "
             f"inputs); you gave shape {got.shape}."],
        )
    if rows_or_columns == "columns" and np.allclose(got, np.repeat(output[:, None], n, 1)):
        return not_yet(ex, ["every column you stacked is f(x) itself: ng.func.jvp returns "
                            "(f(x), J v); which of the two is the column?"])
    axis = 0 if rows_or_columns == "rows" else 1
    if min(m, n) > 1 and np.allclose(got, np.cumsum(want, axis=axis)) and not np.allclose(
        got, want
    ):
        return not_yet(
            ex,
            [f"each of your {rows_or_columns} holds the {rows_or_columns} before it added "
             "in: the seeds are right, but the gradients add up. A backward adds its "
             "gradient into x.grad, on top of what the earlier passes left there, unless "
             "it is cleared between them.",
             f"take each of the {rows_or_columns} fresh from its own pass (vjp_fn returns "
             "it without adding anything up), or clear the gradient before each pass."],
            gave=f"{rows_or_columns} that add up",
        )
    scaled = _scaled_after_the_pass(got, want, output, axis)
    if scaled is not None:
        one = rows_or_columns[:-1]
        return not_yet(
            ex,
            [f"each of your {rows_or_columns} is the right {one} times {scaled}: the {one} "
             "was scaled after the pass. What a pass returns is already the whole "
             f"{one}: the seed picks which one, and "
             + ("the chain rule puts no value of f's output into it."
                if scaled.startswith("f(x)") else "nothing more multiplies it."),
             f"append each {one} as its pass gives it, multiplied by nothing."],
            gave=f"{rows_or_columns} scaled after the pass",
        )
    if not np.allclose(got, want):
        return not_yet(ex, ["the shape is right but some entries are not: is each pass "
                            "seeded with a different row of the identity?"])
    scale = float(np.max(np.abs(want), initial=0.0))
    if not np.allclose(got, want, rtol=1e-12, atol=1e-12 * scale):
        return not_yet(
            ex,
            ["your matrix is close but not exact: an approximation such as a finite "
             "difference is off in the last digits. A JVP or VJP is exact (up to "
             "rounding) and costs about one pass of f.",
             "build each of the " + rows_or_columns + " with the pass the exercise names."],
            gave="an approximate Jacobian",
        )
    return None


def _scaled_after_the_pass(got, want, output, axis: int) -> str | None:
    """The words for what multiplied each row (``axis`` 0) or column (1) of the right
    matrix ``want`` into ``got`` when every one is the right one times a factor of its
    own, not all 1: f(x)'s output for that row, or "a number of its own"; else None."""
    along = want if axis == 0 else want.T
    mine = got if axis == 0 else got.T
    factors = []
    for right, have in zip(along, mine):
        big = np.abs(right) > 1e-9 * max(float(np.max(np.abs(along))), 1e-300)
        if not big.any():
            return None
        factors.append(float(np.median(have[big] / right[big])))
    factors_ = np.asarray(factors)
    if np.allclose(factors_, 1.0) or not np.allclose(mine, along * factors_[:, None]):
        return None
    if axis == 0 and np.allclose(factors_, np.ravel(output)):
        return "f(x)'s output for that row"
    return "a number of its own"


def _library_jacobians() -> dict:
    """The library's whole-Jacobian functions, which the exercises build themselves, and
    autograd.functional's products (its jvp is two VJPs): watched by their code, so a
    name imported before the check is seen too (ng.func is read when checking: it is the
    learner's way in, above the layers lessons import)."""
    transforms = ng.func.transforms
    watched = {f"ng.func.{name}": getattr(transforms, name, None)
               for name in ("jacfwd", "jacrev", "hessian")}
    watched.update({f"ng.autograd.functional.{name}": getattr(_functional, name, None)
                    for name in ("jacobian", "hessian", "jvp", "vjp", "hvp", "vhp")})
    return {name: fn for name, fn in watched.items() if fn is not None}


class _Passes:
    """What an answer ran inside a ``with`` block: forward-mode passes (each JVP enters one
    forward level), reverse passes (each VJP or backward runs the engine once), and the
    library Jacobian functions it called."""

    def __init__(self, counted: _Counted | None = None) -> None:
        self.forward = 0
        self.vjp_calls = 0  # calls of ng.func.vjp
        self.f_in_vjp = 0  # calls of f that ng.func.vjp made
        self._counted = counted
        self._saved: list[tuple] = []

    def __enter__(self) -> _Passes:
        self._reverse = AutogradCalls().__enter__()
        self._patch(_forward, "enter_level", self._count_forward)
        self._patch(ng.func, "vjp", self._count_vjp)
        self._library = LibraryCalls(_library_jacobians()).__enter__()
        return self

    @property
    def library(self) -> list[str]:
        return self._library.called

    @property
    def reverse(self) -> int:
        return len(self._reverse.flags)

    def _patch(self, module, name: str, wrap) -> None:
        original = getattr(module, name)
        self._saved.append((module, name, original))
        setattr(module, name, wrap(original))

    def _count_forward(self, original):
        def counted(*args, **kwargs):
            self.forward += 1
            return original(*args, **kwargs)

        return counted

    def _count_vjp(self, original):
        def counted(*args, **kwargs):
            self.vjp_calls += 1
            before = self._counted.calls if self._counted is not None else 0
            try:
                return original(*args, **kwargs)
            finally:
                if self._counted is not None:
                    self.f_in_vjp += self._counted.calls - before

        return counted

    def __exit__(self, *exc_info: object) -> None:
        self._library.__exit__(*exc_info)
        for module, name, original in reversed(self._saved):
            setattr(module, name, original)
        self._reverse.__exit__(*exc_info)


def _not_built_as_asked(ex: str, passes: _Passes, shape: tuple, dual_calls: int) -> Result | None:
    """A right matrix from a library Jacobian, or from the other mode's passes.  A
    forward-mode pass is a call of f on a dual x (``dual_calls``), however many dual
    levels the passes share: one ``with dual_level():`` around the loop is as right as
    one per column."""
    m, n = shape
    pass_name = "ng.func.jvp per input" if ex == "11-2" else "call of vjp_fn per output"
    products = [name for name in passes.library if name.endswith(("jvp", "vjp"))]
    jacobians = [name for name in passes.library if name not in products]
    if jacobians:
        return not_yet(
            ex,
            [f"the matrix is right, but {jacobians[0]} (or its like) built it: "
             "this exercise writes that loop itself, one " + pass_name + ".",
             "the template's loop is there to be filled in, not replaced."],
            gave=f"a Jacobian from {jacobians[0]}",
        )
    if ex == "11-2" and "ng.autograd.functional.jvp" in products:
        return not_yet(
            ex,
            ["the matrix is right, but ng.autograd.functional.jvp is built from two VJPs "
             "(reverse-mode passes), as torch.autograd.functional.jvp is: this exercise "
             "builds it from forward-mode passes.",
             "use ng.func.jvp, one call per input, each giving a column."],
            gave="columns from ng.autograd.functional.jvp",
        )
    if ex == "11-2" and passes.reverse:
        return not_yet(
            ex,
            ["the matrix is right, but your answer runs reverse-mode passes (a VJP, "
             "jacrev or backward): this exercise builds it from forward-mode passes, one "
             "ng.func.jvp per input, each giving a column."],
            gave="a Jacobian built in reverse mode",
        )
    if ex == "11-2" and dual_calls < n:
        return not_yet(
            ex,
            [f"the matrix is right, but it took {dual_calls} forward-mode "
             f"pass{'es' if dual_calls != 1 else ''} for {n} inputs: each column comes "
             "from one ng.func.jvp."],
        )
    if ex == "11-3" and passes.forward:
        return not_yet(
            ex,
            ["the matrix is right, but your rows come from forward-mode passes (JVPs): "
             "this exercise builds it in reverse mode, from the vjp_fn the template "
             "already got, one call per output.",
             "a row of the Jacobian is one vector-Jacobian product: the one-hot seed of "
             "an output, pulled back through the pass the template recorded."],
            gave="a Jacobian built in forward mode",
        )
    if ex == "11-3" and passes.reverse < m:
        return not_yet(
            ex,
            [f"the matrix is right, but it took {passes.reverse} backward passes for {m} "
             "outputs: each row comes from one call of vjp_fn."],
        )
    return None


def _wrong_mode(ex: str, calls: int, m: int, n: int) -> Result | None:
    """A right matrix built the other way: reverse mode (f run once, or once per output)
    for 11-2, forward mode (f run once per input) for 11-3.  Told apart only where the
    counts differ."""
    if ex == "11-2" and n > 1 and calls < n:
        return not_yet(ex, ["the matrix is right, but f ran only "
                            f"{calls} time{'s' if calls != 1 else ''} for {n} inputs: this "
                            "exercise builds it from JVPs, one forward-mode pass per input."])
    if ex == "11-3" and calls == n and n not in (1, m):
        return not_yet(ex, [f"the matrix is right, but f ran once per input ({n} times): "
                            "this exercise builds it from VJPs, one reverse-mode pass per "
                            "output."])
    if ex == "11-3" and calls > 1:
        return not_yet(ex, [f"the matrix is right, but f ran {calls} times for {m} outputs: "
                            "each row recorded the forward pass again. The exercise calls "
                            "ng.func.vjp once: its vjp_fn keeps the one recorded pass, and "
                            "each output's row is one more backward pass through it.",
                            "inside the loop, use the vjp_fn you already have; do not call "
                            "f, ng.func.vjp or backward again."])
    return None


FORWARD_ANSWER = """for each input i: _, column = ng.func.jvp(f, (x,), (seed,)) with seed the
i-th row of the identity; then ng.stack(columns, dim=1)."""


@checker("11-2", answer=FORWARD_ANSWER)
@keeps_learner_state
def check_jacobian_forward(jacobian_forward) -> Result:
    """``jacobian_forward(f, x)``: the Jacobian of ``f`` at ``x``, one JVP per input."""
    return _check_jacobian("11-2", jacobian_forward, "columns")


REVERSE_ANSWER = """for each output i: (row,) = vjp_fn(seed) with seed the i-th row of the
identity; then ng.stack(rows, dim=0)."""


@checker("11-3", answer=REVERSE_ANSWER)
@keeps_learner_state
def check_jacobian_reverse(jacobian_reverse) -> Result:
    """``jacobian_reverse(f, x)``: the Jacobian of ``f`` at ``x``, one VJP per output."""
    return _check_jacobian("11-3", jacobian_reverse, "rows")


MODE_ANSWER = """("jacrev", "jacfwd", "jacfwd"): reverse mode pays one pass per output, forward
mode one per input; pick the side with fewer."""


# The modes' own names say the same as the transforms'.
_MODE_NAMES = {"forward": "jacfwd", "forward mode": "jacfwd", "forward-mode": "jacfwd",
               "reverse": "jacrev", "reverse mode": "jacrev", "reverse-mode": "jacrev"}


@checker("11-4", answer=MODE_ANSWER)
def check_mode_choice(choices) -> Result:
    """Cheaper mode for R^10000 -> R, R -> R^500 and R^64 -> R^4096."""
    ex = "11-4"
    if is_blank(choices):
        return not_done(ex)
    try:  # the transforms themselves (ng.func.jacrev) name the mode as well as strings
        got = tuple(str(getattr(c, "__name__", c)).strip().lower() for c in choices)
    except TypeError:
        return failed(ex, 'answer with three strings, each "jacfwd" or "jacrev".')
    got = tuple(_MODE_NAMES.get(c, c) for c in got)
    if len(got) != 3 or not set(got) <= {"jacfwd", "jacrev"}:
        return failed(ex, 'answer with three strings, each "jacfwd" or "jacrev".')
    want = ("jacrev", "jacfwd", "jacfwd")
    if got == want:
        return correct(ex, "count the passes: one per output (jacrev) or one per input (jacfwd).")
    first = next(i for i in range(3) if got[i] != want[i])
    counts = ["10000 inputs, 1 output", "1 input, 500 outputs", "64 inputs, 4096 outputs"]
    return not_yet(
        ex,
        [f"look at case {first + 1} ({counts[first]}): how many passes does each mode need?",
         "jacfwd makes one pass per input, jacrev one per output."],
    )
