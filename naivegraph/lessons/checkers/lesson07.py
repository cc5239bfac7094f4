"""Checkers of lesson 07: static vs dynamic."""

from __future__ import annotations

import ast

import numpy as np

import naivegraph as ng
import naivegraph.static as ns

from ..checking import (
    Result,
    answer,
    as_array,
    blank_function,
    calls_a_check,
    cell_computes,
    checker,
    close,
    correct,
    crash_message,
    failed,
    is_blank,
    keeps_learner_state,
    not_done,
    not_yet,
    returned_blank,
    show,
    typed_as_text,
)
from ..earlier_cells import dependencies, related_part, sources_of, unrelated


@checker(
    "07-1",
    answer="return ng.where(x > 0, x * 2, x * -1): ng.where chooses per element. On "
    "tensors it computes at once; while tracing it records a `where` node, so the "
    "choice is made inside the graph on every run instead of once by Python.",
)
@keeps_learner_state
def check_where_fix(f) -> Result:
    """``f(x)``: x * 2 where x > 0, else x * -1, written so that ``ns.trace`` can record it."""
    ex = "07-1"
    bad = blank_function(ex, f)
    if bad is not None:
        return bad
    left = _notebook_state_left()
    if left is not None:
        return not_yet(ex, [left[0]], gave=left[1])
    given = ng.tensor([1.0, -2.0])
    try:
        eager = f(given)
    except TypeError as exc:
        if "cond needs a boolean node" in str(exc):
            return not_yet(
                ex,
                [
                    "ns.cond picks one branch for the whole tensor, once per run, and it "
                    "is an op of static mode: called on a tensor (dynamic mode) it "
                    "refuses. The rule chooses per element, each entry by its own sign, "
                    "in code that runs in both modes.",
                ],
                gave="ns.cond, which chooses one branch for the whole tensor",
            )
        if "static graph nodes do not mix" not in str(exc):
            return failed(ex, crash_message(exc))
        return not_yet(
            ex,
            [
                crash_message(exc).partition(": ")[0] + ": a static-graph op (ns.*) was "
                "given tensors. ns.* ops build nodes of a static graph you construct "
                "yourself; your function is dynamic code that must run on tensors too, "
                "and ns.trace records its ng.* ops. Choose per element with ng.where.",
            ],
            gave="a static-graph op called on tensors",
        )
    except Exception as exc:  # any error: reported to the learner, never raised
        return failed(ex, crash_message(exc))
    blank = returned_blank(ex, eager)
    if blank is not None:
        return blank
    if isinstance(eager, (tuple, list)):
        kind = type(eager).__name__
        return not_yet(
            ex,
            [
                f"your function returns a {kind} of {len(eager)} "
                f"value{'s' if len(eager) != 1 else ''}, not the result itself: return "
                "the tensor alone (a comma after `return result` makes a tuple, and "
                "brackets around it a list).",
            ],
            gave=f"a {kind} holding the result",
        )
    try:
        traced = ns.trace(f, np.ones(2))
    except Exception as exc:  # any error: reported to the learner, with the library's text
        if "do not mix" in str(exc):
            return not_yet(
                ex,
                [
                    "tracing failed: your function makes a tensor while it runs (a factory "
                    "such as ng.zeros_like or ng.tensor computes its values at once), and "
                    "while tracing x is a graph node with no value yet: a tensor and a node "
                    "do not mix. Compare x with a plain Python number, which both modes "
                    "take as it is.",
                    "choose per element with a function that takes (condition, value where "
                    "true, value where false); use the ng.* one, which works in both modes.",
                ],
                gave="a function that makes a tensor while it is traced",
            )
        if isinstance(exc, AttributeError) and getattr(exc, "name", None) in ("any", "all"):
            return not_yet(
                ex,
                [
                    f"tracing failed: your function decides with a Python `if` on "
                    f".{exc.name}() of x, as branchy's `if x.sum() > 0` did: a test of "
                    "the whole tensor picks one branch for every entry, once, and while "
                    "tracing there is no value to decide on. The rule chooses per "
                    "element, each entry by its own sign.",
                    "choose per element with a function that takes (condition, value where "
                    "true, value where false); use the ng.* one, which works in both modes.",
                ],
                gave=f"a Python `if` on x.{exc.name}()",
            )
        error = f"{type(exc).__name__}: {_as_sentence(str(exc))}"
        says = (
            f"The error says what to use instead:\n{error}"
            if _names_a_remedy(str(exc))
            else f"The error:\n{error}"
        )
        hints = [f"tracing failed: {_why_untraceable(exc)} {says}"]
        if not (isinstance(exc, AttributeError) and _uses_where(f)):
            # a function that already chooses with where is not told to: the method
            # the node lacks is its one fault
            hints.append(
                "choose per element with a function that takes (condition, value where "
                "true, value where false); use the ng.* one, which works in both modes."
            )
        return not_yet(ex, hints, gave="a function that cannot be traced")
    if given.tolist() != [1.0, -2.0]:
        return not_yet(
            ex,
            [
                "your function writes its result into the x it is given (an in-place op: "
                "mul_, *= and the like), so the caller's tensor is changed by the call. "
                "And while ns.trace runs it, x is a graph node, which has no values to "
                "overwrite: the traced graph records no op for that line. Compute a new "
                "tensor from x and return it, leaving x as it came.",
                "choose per element with a function that takes (condition, value where "
                "true, value where false), and return what it gives.",
            ],
            gave="a function that changes its x in place",
        )
    # entries near the threshold 0 tell a wrong threshold (x > 0.5, x >= 1, x > -0.5),
    # down to the smallest float64 numbers (x > 1e-9, x > -1e-300) and both zeros
    cases = (
        [1.0, 2.0],
        [-1.0, -2.0],
        [3.0, -1.0],
        [0.3, -0.3],
        [0.01, -0.01],
        [1e-6, -1e-6],
        [1e-300, -1e-300],
        [5e-324, -5e-324],
        [0.0, -0.0],
    )
    gots, dtypes = [], set()
    for feed in cases:
        stop, got = answer(ex, traced, np.array(feed))
        if stop is not None:
            return stop
        dtypes.add(np.asarray(got).dtype)
        gots.append(as_array(got))
    want = [np.where(np.array(c) > 0, np.array(c) * 2, np.array(c) * -1) for c in cases]
    reshaped = next((g for g in gots if g.shape != (2,)), None)
    if reshaped is not None:
        return not_yet(
            ex,
            [
                f"your function returns values of shape {reshaped.shape} for an x of shape "
                "(2,): the rule gives one entry per element of x, so the result has x's "
                "shape. A reduction (a sum, a mean) at the end, or on the way, loses that."
            ],
            gave=f"a result of shape {reshaped.shape}",
        )
    other_dtype = next((d for d in dtypes if d.kind == "f" and d != np.float64), None)
    if other_dtype is not None:
        return not_yet(
            ex,
            [_dtype_hint(other_dtype, np.float64)],
            gave=f"{other_dtype} results for a float64 x",
        )
    if all(_same(g, w) for g, w in zip(gots, want)):
        if not close(eager, [2.0, 2.0], shape_free=False):
            return not_yet(
                ex,
                [
                    "traced it is right; called on a tensor (dynamic mode) it "
                    "gives something else: use ops that work in both modes."
                ],
                gave=show(eager),
            )
        elsewhere = _elsewhere(ex, f)
        if elsewhere is None:  # a Result is falsy when it is a failure: no `or`
            elsewhere = _infinite_entries(ex, f, traced)
        if elsewhere is not None:
            return elsewhere
        dtype = _dtype_of(eager)
        if dtype is not None and dtype.kind == "f" and dtype != np.float32:
            return not_yet(
                ex, [_dtype_hint(dtype, np.float32)], gave=f"{dtype} results for a float32 x"
            )
        return correct(
            ex,
            "the choice now lives in the graph: one traced graph serves every input, and "
            "the same function still runs eagerly.",
        )
    if all(
        g.shape == w.shape and np.allclose(g, w, rtol=1e-9, atol=0.0) for g, w in zip(gots, want)
    ):
        return not_yet(
            ex,
            [
                "your results are a tiny amount away from the rule's, more than rounding "
                "explains: a factor or a term however small makes it another function. The "
                "rule only doubles or negates each entry."
            ],
            gave="results a tiny amount away from the rule's",
        )
    wrong = next(k for k, (g, w) in enumerate(zip(gots, want)) if not _same(g, w))
    whole = [_same(g, np.array(c) * 2) or _same(g, np.array(c) * -1) for g, c in zip(gots, cases)]
    if all(close(g, np.array(c) * 2) for g, c in zip(gots, cases)):
        hint = "negative entries must be treated differently from positive ones."
    elif all(whole) and not all(_same(g, np.array(c) * -1) for g, c in zip(gots, cases)):
        hint = (
            "your function chooses one branch for the whole input: a condition on a "
            "reduction of x (its sum, its mean) decides once for every entry, as "
            "branchy's `if` did. The rule chooses per element, each entry by its own "
            "sign."
        )
    elif all(_same(g, np.array(c)) for g, c in zip(gots, cases)):
        hint = (
            "traced, your function returns x as it came, every entry unchanged: the "
            "traced graph records no op between x and the result, so the rule is not in "
            "it. Every step of the rule must be an op on x whose result is returned."
        )
    elif close(gots[1], cases[1]):
        hint = "where x <= 0 the entry must be multiplied by -1, not kept."
    elif wrong >= 3:
        hint = (
            "right for entries far from 0, wrong for entries close to it: the condition "
            "must split the entries exactly where the rule does, at x > 0."
        )
    else:
        hint = "check both branches: x * 2 where x > 0, x * -1 elsewhere, per element."
    case = ", ".join(f"{v:g}" for v in cases[wrong])
    got = ", ".join(f"{v:g}" for v in gots[wrong].ravel())
    return not_yet(ex, [hint], gave=f"[{got}] for x = [{case}]")


def _notebook_state_left() -> tuple[str, str] | None:
    """``(hint, gave)`` when the notebook's global state is not the lesson's as the check
    starts: grad mode off, or a default dtype other than float32.  A line of the answer
    cell outside f (``ng.set_grad_enabled(False)`` before ``def f_fixed``) runs once,
    when the cell runs, before the check: the check of f cannot see it happen, yet it
    stays for every cell after."""
    if not ng.is_grad_enabled():
        return (
            "grad mode is off in this notebook: a line of your cell outside f switched it "
            "off when the cell ran, and it stays off for every cell after, so no "
            "dynamic-mode step records a graph or gets a gradient. Take that line out, "
            "put grad mode back on with ng.set_grad_enabled(True), and run the cell "
            "again; the rule itself needs no change of grad mode.",
            "a cell that left grad mode off",
        )
    dtype = ng.get_default_dtype()
    if dtype != np.float32:
        return (
            f"the default dtype of this notebook is now {np.dtype(dtype).name}, not the "
            "lesson's float32: a line of your cell outside f changed it when the cell "
            "ran, and it stays for every tensor made after. Take that line out, put it "
            "back with ng.set_default_dtype(ng.float32), and run the cell again; the "
            "rule itself needs no change of dtype.",
            "a cell that left the default dtype changed",
        )
    return None


def _same(got: np.ndarray, want: np.ndarray) -> bool:
    """Equal to rounding, whatever the size of the entries: at most two units in the last
    place of the rule's value, at every entry.  A formula of the rule written another way
    (``0.5 * x + 1.5 * abs(x)``) rounds within that, down to the subnormal numbers, where
    a unit is 5e-324; a threshold of 1e-9 is off at x = 1e-300, and one of 5e-324 at
    x = 5e-324 by three units, which no absolute tolerance would tell; a factor of
    (1 + 1e-13) is hundreds of units off."""
    if got.shape != want.shape:
        return False
    with np.errstate(invalid="ignore"):
        near = np.abs(got - want) <= 2 * np.spacing(np.abs(want))
        return bool(np.all(near | (got == want) | (np.isnan(got) & np.isnan(want))))


def _dtype_hint(got, want) -> str:
    """One hint for a result converted either way: down to float32, or up to float64."""
    got, want = np.dtype(got), np.dtype(want)
    if got == np.float32 and want == np.float64:
        why = (
            "float32 keeps about 7 digits and rounds numbers below about 1e-45 to 0, so "
            "entries close to 0 come out wrong."
        )
    else:
        why = (
            f"every op after it would then run in {got.name}, not in the dtype of the "
            "data the caller chose."
        )
    return (
        f"your function computes in {got.name} where x is {want.name}: {why} Keep x's "
        "dtype, the result has the dtype of x: the rule needs no conversion."
    )


def _dtype_of(value):
    """The dtype of a tensor or array result (None for anything else)."""
    dtype = getattr(value, "dtype", None)
    try:
        return None if dtype is None else np.dtype(dtype)
    except TypeError:
        return None


# x = +inf, -inf and nan: the rule gives inf, inf and nan.  A mask multiplied in
# (m * x * 2 + (1 - m) * x * -1) or branches added together give nan at infinity,
# where 0 * inf and inf - inf are nan.
_INFINITE = (np.array([np.inf, -np.inf]), np.array([np.nan, 1.0]))


def _infinite_entries(ex: str, f, traced) -> Result | None:
    """A rejection when ``f``, traced or eager, is not the rule at x = +-inf or nan."""
    for x in _INFINITE:
        for mode in ("traced", "eager"):
            try:
                with np.errstate(all="ignore"):
                    out = traced(x) if mode == "traced" else f(ng.tensor(x, dtype=ng.float64))
                got = as_array(out)
            except Exception as exc:  # any error: reported to the learner, never raised
                return failed(ex, crash_message(exc))
            if _same(got, _rule(x)):
                continue
            gave = ", ".join(f"{v:g}" for v in got.ravel())
            case = ", ".join(f"{v:g}" for v in x)
            if got.shape == x.shape and np.any(np.isnan(got) & np.isinf(_rule(x))):
                why = (
                    "0 * inf and inf - inf are nan, so a mask multiplied in, or two "
                    "branches added together, does not keep the other branch out. Choose "
                    "per element instead, so that each entry gets exactly one branch."
                )
            else:
                why = "the rule doubles or negates every entry, infinite ones and nan too."
            return not_yet(
                ex,
                [
                    f"right for finite entries, but {mode} at x = [{case}] your function "
                    f"gives [{gave}]: {why}",
                ],
                gave=f"[{gave}] for x = [{case}]",
            )
    return None


# Calls after the two the checks above make (once eagerly, once to trace): other shapes,
# float64 entries that are not whole numbers, and a tensor that requires grad.  A
# function that changes with the number of calls, or that fits an x of two entries
# only, gives itself away here.
_RNG = np.random.default_rng(7)
_OTHER_X = (_RNG.normal(0.0, 3.0, 5), _RNG.normal(0.0, 3.0, (2, 3)), np.array([-0.75, 1.25]))


def _first_line(exc: Exception) -> str:
    text = str(exc).splitlines()[0].rstrip(" .") if str(exc) else ""
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


def _rule(x: np.ndarray) -> np.ndarray:
    return np.where(x > 0, x * 2, x * -1)


def _elsewhere(ex: str, f) -> Result | None:
    """A rejection when ``f``, right on the traced cases, is not the rule elsewhere: on
    other shapes, eagerly or traced again, or without the gradient of the rule in
    dynamic mode (2 where x > 0, -1 elsewhere); None when it is the rule."""
    for x in _OTHER_X:
        for mode in ("eager", "traced"):
            try:
                if mode == "eager":
                    out = f(ng.tensor(x, dtype=ng.float64))
                else:
                    out = ns.trace(f, np.ones(x.shape))(x)
                dtype = np.asarray(out.detach().numpy() if hasattr(out, "detach") else out).dtype
                got = as_array(out)
            except Exception as exc:  # any error: reported to the learner, never raised
                return not_yet(
                    ex,
                    [
                        f"right for an x of two entries, but {mode} on an x of shape "
                        f"{x.shape} your function raised {_first_line(exc)}. The rule "
                        "holds per element whatever the shape of x: nothing in it may "
                        "depend on x having two entries.",
                    ],
                    gave=f"a function that fails for an x of shape {x.shape}",
                )
            if dtype.kind == "f" and dtype != np.float64:
                return not_yet(
                    ex, [_dtype_hint(dtype, np.float64)], gave=f"{dtype} results for a float64 x"
                )
            if not _same(got, _rule(x)):
                return not_yet(
                    ex,
                    [
                        f"right on the first calls, wrong {mode} on an x of shape {x.shape} "
                        "with other entries: the result must depend on the entries of x "
                        "only, not on its length, nor on how many times the function ran.",
                    ],
                    gave=f"a wrong result for an x of shape {x.shape}",
                )
    x = ng.tensor(_OTHER_X[0], dtype=ng.float64, requires_grad=True)
    try:
        with ng.enable_grad():
            out = f(x)
            if not getattr(out, "requires_grad", False):
                return not_yet(
                    ex,
                    [
                        "right values, but called on a tensor that requires grad your "
                        "function returns one that does not: it ran its ops with grad "
                        "mode off (ng.no_grad, or grad mode switched off), so in dynamic "
                        "mode no gradient reaches x and nothing upstream of it trains.",
                        "compute the result with the ops recorded, as every other "
                        "dynamic-mode step is.",
                    ],
                    gave="a result that does not require grad",
                )
            out.sum().backward()
    except Exception as exc:  # any error: reported to the learner, never raised
        return failed(ex, crash_message(exc))
    slope = np.where(_OTHER_X[0] > 0, 2.0, -1.0)
    if x.grad is None or not _same(as_array(x.grad), slope):
        return not_yet(
            ex,
            [
                "right values, but the gradient that reaches x in dynamic mode is not the "
                "rule's: part of the result is cut off from the graph (detached, or "
                "built from x's values as numbers), so training would follow another "
                "slope.",
            ],
            gave="a result whose gradient with respect to x is wrong",
        )
    return None


def _as_sentence(text: str) -> str:
    """``text`` ending in a full stop, so the hint that follows starts a new sentence."""
    text = text.rstrip()
    return text if text.endswith((".", "!", "?")) else text + "."


def _names_a_remedy(text: str) -> bool:
    """Whether an error's text says what to do (``use ...``), not only what failed."""
    return any(word in text for word in ("use ", "Use ", "instead", "choose ", "with ng."))


def _uses_where(f) -> bool:
    """Whether the code of ``f`` looks up ``where``: its own code, the code defined
    inside it, or a function of its module it calls by name (a rule written apart)."""
    fn = getattr(f, "__func__", f)
    stack = [(fn, getattr(fn, "__code__", None))]
    seen: set[int] = set()
    while stack:
        owner, code = stack.pop()
        if code is None or id(code) in seen or len(seen) > 50:
            continue
        seen.add(id(code))
        if "where" in code.co_names:
            return True
        stack.extend((owner, c) for c in code.co_consts if hasattr(c, "co_names"))
        space = getattr(owner, "__globals__", {})
        for name in code.co_names:
            called = space.get(name)
            if callable(called) and getattr(called, "__module__", "") == space.get(
                "__name__"
            ):
                stack.append((called, getattr(called, "__code__", None)))
    return False


def _why_untraceable(exc: Exception) -> str:
    """What the learner's function asked of a traced node that it cannot give."""
    if "numpy array" in str(exc) or "cannot build a graph node" in str(exc):
        return (
            "a numpy function (np.*) computes on values at once, and a traced node has "
            "no value yet: numpy cannot record it in the graph."
        )
    if "indexing with a node" in str(exc):
        return (
            "indexing or assigning with a mask computed from x does not trace: while "
            "tracing, the mask is a node with no value yet, so Python cannot pick the "
            "elements. Choose per element with ng.where, which records the choice in "
            "the graph and also runs on tensors."
        )
    if isinstance(exc, AttributeError):
        name = getattr(exc, "name", None)
        method = callable(getattr(ng.Tensor, name, None)) if name else True
        kind = "a method" if method else "an attribute"
        if method and name and name.endswith("_") and not name.startswith("_"):
            kind = "an in-place method"
        used = f"uses .{name}, {kind}" if name else f"uses {kind}"
        return (
            f"your function {used} of tensors that a traced graph node does not "
            "have: while tracing, every step must be an op both modes know."
        )
    return "a Python `if` needs a value a traced node does not have yet."


@checker(
    "07-2",
    answer="traced: [2, 4]; eager: [10, 20]. Tracing ran scaled once, while SCALE was 2: "
    "the graph holds the number 2 as a constant, not the name SCALE. Eager mode "
    "reads SCALE on every call and sees 10.",
    predicts=True,
)
def check_trace_pitfall(traced_result, eager_result) -> Result:
    """f(x) = x * SCALE traced while SCALE = 2; then SCALE = 10: the predicted traced
    f([1, 2]) and eager f([1, 2])."""
    ex = "07-2"
    if is_blank((traced_result, eager_result)):
        return not_done(ex)
    missing = [
        name
        for name, v in (("traced_result", traced_result), ("eager_result", eager_result))
        if v is None
    ]
    if missing:
        return not_yet(
            ex,
            [
                f"{' and '.join(missing)} {'is' if len(missing) == 1 else 'are'} None: "
                "type each prediction in as a list of two numbers, one per element of x.",
            ],
            gave=f"{' and '.join(missing)} None",
        )
    calls, used, other = _cell_calls(("traced", "scaled"))
    if calls or used or other:
        said = (
            f"calls {' and '.join(calls)}"
            if calls
            else f"uses {' and '.join(used)} (or its graph)"
            if used
            else other
        )
        return not_yet(
            ex,
            [
                f"your answer cell {said}: the exercise asks you to "
                "predict, before running anything, what each call gives. Type your "
                "prediction in as a list of numbers.",
                "work out what the traced graph holds and what eager mode reads at each call.",
            ],
            gave="results computed by running, not predicted",
        )
    ran = cell_computes(calls=("traced", "scaled"), reads=("graph", "nodes"))
    if ran:
        return not_yet(
            ex,
            [
                f"your answer was computed, not predicted: it was worked out with {ran}. The "
                "exercise asks you to predict, before running anything, what each call "
                "gives. Type your prediction in as a list of numbers.",
                "work out what the traced graph holds and what eager mode reads at each call.",
            ],
            gave=f"a cell that uses {ran}",
        )
    if typed_as_text([traced_result, eager_result]) and _numbers_as_text(
        traced_result, eager_result
    ):
        return not_yet(
            ex,
            [
                "type the numbers, not text: no quotes around them. Each result is a list "
                "of numbers, like the x it was given."
            ],
            gave="text, not numbers",
        )
    typed = [
        name
        for name, v in (("traced_result", traced_result), ("eager_result", eager_result))
        if _computed(v)
    ]
    if typed:
        tensor = any(
            _holds_a_tensor(v)
            for name, v in (("traced_result", traced_result), ("eager_result", eager_result))
            if name in typed
        )
        if tensor:
            return not_yet(
                ex,
                [
                    f"give {' and '.join(typed)} as numbers you type in: a list of two "
                    "numbers (a plain list, or a one-dimensional numpy array of them), not "
                    "a tensor. The exercise asks you to predict each result and type it "
                    "in; a tensor is what running the code gives.",
                    "work out what the traced graph holds and what eager mode reads at "
                    "each call.",
                ],
                gave="a tensor, not a list of numbers",
            )
        shapes = " and ".join(
            _shape_words(v)
            for name, v in (("traced_result", traced_result), ("eager_result", eager_result))
            if name in typed
        )
        return not_yet(
            ex,
            [
                f"give {' and '.join(typed)} as one flat list of two numbers, one per "
                f"element of x = [1, 2]; you gave {shapes}. Each result has the shape of "
                "the x it was given: one dimension, two entries, no brackets nested inside.",
                "work out what the traced graph holds and what eager mode reads at each call.",
            ],
            gave=f"{shapes}, not a list of two numbers",
        )
    try:
        traced, eager = as_array(traced_result), as_array(eager_result)
    except Exception:  # not numbers: reported, never raised
        return failed(ex, "give each result as a list of two numbers, like [0.0, 0.0].")
    for name, got in (("traced", traced), ("eager", eager)):
        if got.shape != (2,):
            return not_yet(
                ex,
                [
                    f"the {name} result should have one entry per element of x = [1, 2]: a "
                    f"list of two numbers, not something of shape {got.shape}."
                ],
                gave=f"{name} {show(got)}",
            )
    # each result is a whole number times an entry of x: exact, in any way of writing it
    right_traced = close(traced, [2.0, 4.0], shape_free=False, atol=0.0, rtol=1e-12)
    right_eager = close(eager, [10.0, 20.0], shape_free=False, atol=0.0, rtol=1e-12)
    if right_traced and right_eager:
        return correct(
            ex, "the trace froze SCALE = 2 into a constant; eager mode reads it every call."
        )
    off = [
        name
        for name, got, right, want in (
            ("traced_result", traced, right_traced, [2.0, 4.0]),
            ("eager_result", eager, right_eager, [10.0, 20.0]),
        )
        if not right and close(got, want, shape_free=False)
    ]
    if off:
        return not_yet(
            ex,
            [
                f"{' and '.join(off)} {'is' if len(off) == 1 else 'are'} a tiny amount away "
                "from what the call gives: both calls multiply the entries of x by one "
                "number, so each result is exact. Type the numbers without the extra digits."
            ],
            gave=f"{' and '.join(off)} a tiny amount off",
        )
    if close(traced, [10.0, 20.0], shape_free=False) and close(eager, [2.0, 4.0], shape_free=False):
        return not_yet(
            ex,
            [
                "your two predictions are swapped: traced_result is what the traced graph "
                "gives, eager_result what calling scaled gives. Which of them reads SCALE "
                "again at every call?"
            ],
            gave="the two results swapped",
        )
    if not right_eager:
        return not_yet(
            ex,
            [
                "eager mode runs the Python line `x * SCALE` on every call: what does SCALE "
                "hold now?"
            ],
            gave=f"eager {show(eager)}",
        )
    if close(traced, [10.0, 20.0]):
        hint = [
            "tracing ran scaled once, before SCALE changed: did it record the name SCALE "
            "or the number it held?",
            "look at the drawing of traced.graph above.",
        ]
    else:
        hint = [
            "the traced graph multiplies x by one fixed number: which one was SCALE when "
            "ns.trace ran?"
        ]
    return not_yet(ex, hint, gave=f"traced {show(traced)}")


def _numbers_as_text(*values) -> bool:
    """Whether text typed in reads as numbers (``["2", "4"]``, not ``"two"``)."""
    try:
        for value in values:
            as_array(value)
    except Exception:  # words, not numbers: the shape check reports them
        return False
    return True


def _shape_words(value) -> str:
    """What an answer that is not a flat list of numbers is, as words ("an array of
    shape (1, 2)")."""
    try:
        array = np.asarray(value)
    except Exception:  # ragged or odd: said without its shape
        return "something other than a flat list of numbers"
    if array.dtype.kind not in "iuf":
        return f"an array of {array.dtype} entries"
    return f"an array of shape {array.shape}"


def _holds_a_tensor(value) -> bool:
    """Whether ``value`` is a tensor, or a list or tuple holding one."""
    if isinstance(value, ng.Tensor):
        return True
    return isinstance(value, (list, tuple)) and any(_holds_a_tensor(v) for v in value)


def _computed(value) -> bool:
    """Whether ``value`` (or an entry of a list of them) is an array or a tensor: what
    running the code gives, where a typed-in prediction is a list of numbers (Python's,
    numpy's ``np.float64(2)`` or fractions, all typed in as easily).  A 1-D numpy array
    of numbers is typed in as easily (``np.array([2., 4.])``, as 04-1 takes it): running
    the code would give a tensor, and a cell that runs it is caught by its trace."""
    if isinstance(value, np.ndarray):
        return value.ndim != 1 or value.dtype.kind not in "iuf"
    if isinstance(value, ng.Tensor):
        return True
    return isinstance(value, (list, tuple)) and any(_computed(v) for v in value)


# Names that reach the notebook's functions without naming them (``__main__.__dict__``,
# ``vars()["tra" + "ced"]``): a prediction needs none of them, called or not.
_REACHING = {
    "__main__",
    "__dict__",
    "__builtins__",
    "builtins",
    "__import__",
    "globals",
    "vars",
    "locals",
    "getattr",
    "eval",
    "exec",
    "compile",
}
# Functions of numpy that call a function they are given, on values they choose.
_RUNS_A_FUNCTION = {
    "apply_along_axis",
    "apply_over_axes",
    "vectorize",
    "frompyfunc",
    "fromfunction",
    "piecewise",
}


def _cell_calls(names: tuple[str, ...]) -> tuple[list[str], list[str], str]:
    """What of ``names`` the notebook cell now running calls, what of them it otherwise
    reads (``t = traced``, ``traced.graph.run(...)``, ``map(scaled, ...)``), and, as
    words, the first other thing a prediction does not need: a call (``eval(...)``,
    ``globals()[...]``), a name that reaches the notebook's functions without naming
    them (``__main__.__dict__[...]``), or a function handed to a call that runs it
    (``np.apply_along_axis(f, ...)``, ``np.vectorize``).

    A prediction typed in and one computed with ``.tolist()`` are the same numbers; the
    cell's source tells them apart: a prediction needs neither function, nor a name
    that reaches them, nor a call that runs a function it is handed.  Arithmetic of the
    learner's own (``(np.array([1.0, 2.0]) * 2).tolist()``, ``list(range(2, 5, 2))``)
    runs neither function and is a prediction.  Outside IPython, or when the source
    does not parse, there is no cell to read and nothing is found.

    This reads the answer cell only; values it names that an earlier cell of the
    learner's computed are followed back by ``cell_computes``.  Numbers read off the
    output of the cell after the exercise and typed in look exactly like a
    prediction; no check of the answer can tell them apart.
    """
    try:
        from IPython import get_ipython

        shell = get_ipython()
        source = shell.user_ns["_ih"][-1] if shell is not None else ""
        tree = ast.parse(source)
    except Exception:  # no IPython, no history, or a cell that is not Python: no calls known
        return [], [], ""
    namespace = getattr(shell, "user_ns", {})
    # the lesson's functions count where they make the answer: a look beside it (a
    # print of scaled(...)) is no source of it; the other ways in count anywhere
    depends, checked = dependencies(tree)
    answer_part, _ = related_part(tree, sources_of(checked, depends), unrelated(namespace),
                                  keep=calls_a_check)
    in_answer = {id(node) for node in ast.walk(answer_part)}
    lesson = [namespace.get(name, _UNKNOWN) for name in names]
    called, read, other = set(), set(), []
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            func = node.func.value if isinstance(node.func, ast.Attribute) else node.func
            if isinstance(func, ast.Name) and id(node) in in_answer:
                called.add(func.id)
            direct = isinstance(node.func, ast.Name) and node.func.id in names  # `called`'s
            if not direct and _reaches(node.func) or not direct and any(
                _resolved(node.func, namespace) is fn for fn in lesson if fn is not _UNKNOWN
            ):
                other.append(node)
        elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load) and id(node) in in_answer:
            read.add(node.id)
        elif isinstance(node, ast.Attribute) and id(node) in in_answer:
            read.add(node.attr)
    calls = [name for name in names if name in called]
    # a call by a plain name first (`eval` in `eval("...")(x).tolist()`), then the earliest
    first = min(
        other,
        key=lambda n: (not isinstance(n.func, ast.Name), n.lineno, n.col_offset),
        default=None,
    )
    said = ""
    if first is not None:
        said = ast.unparse(first.func)
        said = f"`{said}`" if len(said) <= 40 else "a function"
        said = f"calls {said}, which a prediction does not need"
    else:
        said = _reaching(tree) or _runs_a_function(tree, namespace)
    return calls, [name for name in names if name in read and name not in called], said


def _reaching(tree: ast.AST) -> str:
    """The first name of ``tree`` that reaches the notebook's functions without naming
    them, read, imported or called, as words; empty when there is none."""
    for node in ast.walk(tree):
        found = (
            [node.id]
            if isinstance(node, ast.Name)
            else [node.attr]
            if isinstance(node, ast.Attribute)
            else [a.name for a in node.names]
            if isinstance(node, (ast.Import, ast.ImportFrom))
            else []
        )
        if isinstance(node, ast.ImportFrom) and node.module:
            found.append(node.module)
        for name in found:
            if name.split(".")[0] in _REACHING:
                return f"uses `{name}`, which a prediction does not need"
    return ""


def _runs_a_function(tree: ast.AST, namespace: dict) -> str:
    """The first call of ``tree`` that is handed a function to run (a lambda, or a name
    of a function: a class, as in ``dtype=np.float64``, is not one), or that runs one of
    its own choosing (np.vectorize), as words; empty when there is none."""
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        name = ast.unparse(node.func)
        if name in _ONLY_LOOK:  # print(traced): shows the function, never runs it
            continue
        name = f"`{name}`" if len(name) <= 40 else "a function"
        if isinstance(node.func, ast.Attribute) and node.func.attr in _RUNS_A_FUNCTION:
            return f"calls {name}, which runs a function, and a prediction runs none"
        for arg in [*node.args, *(k.value for k in node.keywords)]:
            value = _resolved(arg, namespace)
            if isinstance(arg, ast.Lambda) or (
                callable(value) and not isinstance(value, type)
            ):
                return f"hands a function to {name}, and a prediction runs none"
    return ""


# The builtins that take a function only to show or inspect it, never to run it.
_ONLY_LOOK = frozenset({"print", "display", "type", "repr", "str", "id", "callable", "help",
                        "dir", "isinstance", "hasattr", "len"})

_UNKNOWN = object()


def _resolved(expr: ast.expr, namespace: dict):
    """What a plain name, or a dotted name through modules (``np.sin``), stands for in
    ``namespace`` or among the builtins; ``_UNKNOWN`` for anything else."""
    import builtins
    import types

    attrs = []
    while isinstance(expr, ast.Attribute):
        attrs.append(expr.attr)
        expr = expr.value
    if not isinstance(expr, ast.Name):
        return _UNKNOWN
    value = namespace.get(expr.id, getattr(builtins, expr.id, _UNKNOWN))
    for attr in reversed(attrs):
        if not isinstance(value, types.ModuleType):
            return _UNKNOWN
        value = getattr(value, attr, _UNKNOWN)
    return value


def _reaches(func: ast.expr) -> bool:
    """A call of a name that reaches the notebook's functions without naming them
    (``eval(...)``, ``globals()[...]``, ``__main__.__dict__.get(...)``)."""
    while isinstance(func, (ast.Attribute, ast.Subscript, ast.Call)):
        func = func.func if isinstance(func, ast.Call) else func.value
    return isinstance(func, ast.Name) and func.id in _REACHING
