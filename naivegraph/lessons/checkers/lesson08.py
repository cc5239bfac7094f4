"""Checkers of lesson 08: build your own.

The engine checkers build small graphs of their own, from node objects shaped like the
notebook's (``SNode`` for the static engine, ``Node`` for the dynamic one), and call the
learner's function on them: a right answer must work on graphs it has never seen.  The
learner's functions read the derivative table ``OPS`` of their notebook; the graphs
here use only its standard rows (add, sub, mul, div, pow, sin, exp).
"""

from __future__ import annotations

import _thread
import contextlib
import functools
import importlib.util
import io
import math
import random
import sys
import threading
import traceback
import types
from pathlib import Path
from typing import Any, Callable

import numpy as np

from ..checking import (
    TRIES,
    AutogradCalls,
    Result,
    _is_library,
    answer,
    as_array,
    blank_function,
    call_answer,
    checker,
    close,
    correct,
    crash_message,
    failed,
    forgot_return,
    has_placeholder,
    is_blank,
    learner_namespace,
    not_done,
    not_yet,
    returned_blank,
    show,
    solved,
    state_kept_between_calls,
)
from ..training import derivative_table

_VALUE = {
    "add": lambda a, b: a + b,
    "sub": lambda a, b: a - b,
    "mul": lambda a, b: a * b,
    "div": lambda a, b: a / b,
    "pow": lambda a, b: a**b,
    "sin": math.sin,
    "exp": math.exp,
}

# Points of 08-1 far from the first ones, and at 0, for each row (b is ignored by the
# unary rows; exp stops short of overflowing, div of dividing by 0).
_FAR_POINTS = {
    "mul": [(3517.25, -2048.5), (-1875.5, 0.0), (0.0, 4096.75)],
    "div": [(3517.25, -2048.5), (0.0, 1250.5), (-2750.5, 0.125)],
    "sin": [(3517.25, 0.0), (-2048.5, 0.0)],
    "exp": [(-650.25, 0.0), (700.5, 0.0)],
}

# The exact partial derivatives of the rows 08-1 fills in, by argument.
_EXACT = {
    "mul": lambda a, b, i: b if i == 0 else a,
    "div": lambda a, b, i: 1 / b if i == 0 else -a / b**2,
    "sin": lambda a, i: math.cos(a),
    "exp": lambda a, i: math.exp(a),
}


# ------------------------------------------------------------------ the lab's own code
class LabCalls:
    """Which of the lab's own functions ran inside a ``with`` block, in any thread: the
    versions that stand in for the notebook's demonstrations until an exercise passes
    (:func:`yours_or_labs`, :func:`reference`) and the rows of the lab's derivative table;
    and whether the answer switched the watch off or called a library in ``forbid``.

    A function is known by its code's content (its bytecode and constants), so a wrapper
    around it, a copy of its code object under another name, a copy of the table or the
    function fetched again from its module are all seen.  ``codes`` maps that content to
    the function's name and, for the functions whose code is also what a learner writes
    (a table row, ``free_graph``, ``accuracy``), the file it must come from: the same
    bytes written in a notebook cell are the learner's own.

    Lab code may run when its name is in ``allowed`` (the lab's ``run_backward`` behind
    ``Node.backward`` while 08-3 is unsolved); a table row may run when the notebook's
    ``OPS``, wrapped by this check (:class:`_OpsOfTheNotebook`, with this watch's private
    token), or an allowed lab function called it.  The checker's own runs of the lab's
    code (to compare) are those reached from the check through library frames alone; a
    run with the learner's code anywhere on its stack, or in a thread of its own, is the
    learner's.
    """

    def __init__(self, codes: dict, allowed: tuple = (), forbid: tuple = (),
                 given: Any = None) -> None:
        self.codes, self.allowed, self.forbid = codes, set(allowed), tuple(forbid)
        self._given = _answer_codes(given)
        self.ran: list[str] = []
        # the lab's code an answer may run, that ran in its stead: the lab's
        # run_backward behind Node.backward, the lab's table behind the notebook's OPS
        self.stood_in: list[str] = []
        self.library = ""  # the first library of ``forbid`` the answer called
        self.switched = False  # the answer switched the watch off or slipped past it
        self.token = object()
        self._memo: dict = {}
        self._closing = False

    def _known(self, code) -> tuple:
        """(the lab's name for ``code`` or None, the forbidden library it lies in or "")."""
        got = self._memo.get(id(code))
        if got is None or got[0] is not code:
            hit = self.codes.get((code.co_code, code.co_consts))
            name = None
            if hit is not None and (hit[1] is None or hit[1] == code.co_filename):
                name = hit[0]
            got = self._memo[id(code)] = (code, name, _library_of(code.co_filename,
                                                                  self.forbid))
        return got[1], got[2]

    def _checkers_own(self, frame, strict: bool = True) -> bool:
        """Whether ``frame`` was reached from the check through naivegraph's own frames
        alone, none of them one an answer calls to reach the lab's code (a wrapper from
        the standard library, :func:`yours_or_labs`, the table's wrapper).  Not
        ``strict``: through any library's frames (``inspect`` reading the answer's
        source touches the modules loaded, torch's among them)."""
        while frame is not None:
            code = frame.f_code
            if code is _CHECKED:
                return True
            if code in _ENTRY_POINTS:
                return False
            name = code.co_filename
            if not (name.startswith(_PACKAGE) if strict else
                    not name.startswith("<") and _is_library(name)):
                return False
            frame = frame.f_back
        return False  # a thread of its own: not the check's

    def _enters(self, caller) -> bool:
        """Whether a call of a library of ``forbid`` made from ``caller`` enters it from
        the answer: not from inside one of them, not from the checker's own frames."""
        if caller is None:
            return True
        if self._known(caller.f_code)[1]:  # already inside: judged where it entered
            return False
        return not self._checkers_own(caller, strict=False)

    def _exempt(self, frame, name: str) -> bool:
        if id(frame.f_code) in self._given:  # the lab's function handed in as the answer
            return False
        caller = frame.f_back
        if name == "table" and caller is not None:
            by = caller.f_code
            if by is _THROUGH_OPS:  # the notebook's OPS, wrapped by this check alone
                return caller.f_locals.get("token") is self.token
            if self._known(by)[0] in self.allowed:
                return True
        return self._checkers_own(caller)

    def _stands_in(self, frame, name: str) -> bool:
        """Whether the lab's ``name`` ran for the answer as a stand-in it may use: an
        allowed function called from outside the check's own frames, or a row of the
        lab's table called through the notebook's ``OPS``."""
        caller = frame.f_back
        if name == "table":
            return (caller is not None and caller.f_code is _THROUGH_OPS
                    and caller.f_locals.get("token") is self.token)
        return name in self.allowed and not self._checkers_own(caller)

    def _seen(self, frame, event: str, arg) -> None:
        if event == "call":
            if frame.f_code is _THREADING_SETPROFILE and not self._closing:
                self.switched = not self._checkers_own(frame.f_back) or self.switched
            name, library = self._known(frame.f_code)
            if name is not None and name not in self.allowed and not self._exempt(frame, name):
                self.ran.append(name)
            elif name is not None and name not in self.stood_in and self._stands_in(frame, name):
                self.stood_in.append(name)
            if library and not self.library and self._enters(frame.f_back):
                self.library = library
        elif event == "c_call":
            self._c_call(frame, arg)
        if self._before is not None:
            self._before(frame, event, arg)

    def _c_call(self, frame, fn) -> None:
        if fn is _SETPROFILE and not self._closing and not self._checkers_own(frame):
            self.switched = True  # (a watch of the checker's own, nested, chains to this)
        elif fn is _START_THREAD and (frame.f_code is not _THREAD_START
                                      or threading.getprofile() is not self._hook):
            self.switched = True  # a thread the watch does not follow
        elif self.forbid and not self.library:
            module = getattr(fn, "__module__", None)
            if not isinstance(module, str):
                owner = getattr(fn, "__self__", None)
                module = (owner.__name__ if isinstance(owner, types.ModuleType)
                          else type(owner).__module__)
            top = module.split(".")[0].lstrip("_") if isinstance(module, str) else ""
            if top in self.forbid and self._enters(frame):
                self.library = top

    def __enter__(self) -> LabCalls:
        self._hook = self._seen
        self._before = sys.getprofile()
        self._thread_before = threading.getprofile()
        threading.setprofile(self._hook)
        sys.setprofile(self._hook)
        return self

    def __exit__(self, *exc_info: object) -> None:
        self._closing = True
        if sys.getprofile() is not self._hook or threading.getprofile() is not self._hook:
            self.switched = True
        sys.setprofile(self._before)
        threading.setprofile(self._thread_before)


def _answer_codes(given: Any) -> set:
    """The ids of the code objects an answer is made of: the function given, what a
    partial, a method, a wrapper or a callable object wraps, and for a table (08-1) the
    functions of its rows."""
    found: set = set()
    todo = [given]
    if isinstance(given, dict):
        todo += [e for row in given.values() if isinstance(row, (tuple, list)) for e in row]
    seen: set = set()
    while todo:
        fn = todo.pop()
        if fn is None or id(fn) in seen or len(seen) > 100:
            continue
        seen.add(id(fn))
        code = getattr(fn, "__code__", None)
        if isinstance(code, types.CodeType):
            found.add(id(code))
        for attr in ("func", "__func__", "__wrapped__"):
            inner = getattr(fn, attr, None)
            if inner is not None:
                todo.append(inner)
        call = type(fn).__call__ if callable(fn) else None
        if isinstance(call, types.FunctionType):
            todo.append(call)
    return found


# naivegraph's own folder: the checker's frames, and the lab's code, live there
_PACKAGE = tuple({str(Path(__file__).parents[2]) + "/",
                  str(Path(__file__).resolve().parents[2]) + "/"})
_SETPROFILE = sys.setprofile
_THREADING_SETPROFILE = threading.setprofile.__code__
_START_THREAD = _thread.start_new_thread
_THREAD_START = threading.Thread.start.__code__


@functools.lru_cache(maxsize=None)
def _library_dirs(names: tuple) -> tuple:
    """Where the packages ``names`` live (their folders, or their one file), with each
    one's name: ``decimal`` counts its pure-Python twin ``_pydecimal`` too."""
    places = []
    for name in names:
        for module in (name, f"_py{name}"):
            try:
                spec = importlib.util.find_spec(module)
            except (ImportError, ValueError):
                spec = None
            if spec is None:
                continue
            found = list(spec.submodule_search_locations or ())
            found = [p + "/" for p in found] or ([spec.origin] if spec.origin else [])
            for place in found:
                places += [(place, name), (str(Path(place).resolve()) +
                                           ("/" if place.endswith("/") else ""), name)]
    return tuple(places)


def _library_of(filename: str, names: tuple) -> str:
    """The package of ``names`` whose code ``filename`` is ("" for none)."""
    if not names or filename.startswith("<"):
        return ""
    for place, name in _library_dirs(names):
        if filename == place or (place.endswith("/") and filename.startswith(place)):
            return name
    return ""


def _through_ops(fn: Any, token: object) -> Any:
    if not callable(fn):
        return fn

    def through_ops(*args, **kwargs):
        _ = token  # kept in the frame: the watch reads it there
        return fn(*args, **kwargs)

    return through_ops


_THROUGH_OPS = _through_ops(len, None).__code__


class _OpsOfTheNotebook:
    """While a check runs, the rows of the notebook's table ``OPS`` (a global of the
    learner's function) are called through it: the lab's rows stand in there until
    08-1 passes, and an engine reading ``OPS`` uses them rightly."""

    def __init__(self, fn: Any, token: object) -> None:
        self._token = token
        names = getattr(fn, "__globals__", None)
        table = names.get("OPS") if isinstance(names, dict) else None
        self._names = names if isinstance(table, dict) else None
        self._table = table

    def __enter__(self) -> _OpsOfTheNotebook:
        if self._names is not None:
            rows = {}
            for op, row in self._table.items():
                try:
                    rows[op] = tuple(_through_ops(e, self._token) for e in row)
                except TypeError:  # not a row: kept as it is
                    rows[op] = row
            self._names["OPS"] = rows
        return self

    def __exit__(self, *exc_info: object) -> None:
        if self._names is not None:
            self._names["OPS"] = self._table


def lab_code_table(named: list, plain: tuple = ()) -> dict:
    """``(name, function)`` pairs as :class:`LabCalls` reads them: by the content of each
    function's code, with the file it must come from for the names in ``plain`` (code a
    learner writes the same way: the lab's copy is known by where it lives)."""
    return {(fn.__code__.co_code, fn.__code__.co_consts):
            (name, fn.__code__.co_filename if name in plain else None) for name, fn in named}


def _lab_codes() -> dict:
    """The code of each of the lab's lesson-8 functions, with its name (built anew for
    each check: nothing kept between checks that an answer could edit)."""
    rows = [("table", fn) for row in derivative_table().values() for fn in row]
    return lab_code_table(
        [*rows, ("static_backward", _static_backward), ("run_backward", _run_backward),
         ("free_graph", _free_graph), ("jacobian", _jacobian(object)),
         ("gradient_descent", _gradient_descent(object))],
        plain=("table", "free_graph"))


# Lesson 8 builds its own engine: no other library's differentiation or arithmetic has
# a place in an answer (torch's autograd, sympy's or mpmath's diff, a Decimal or
# complex-step estimate).
_OTHER_ENGINES = ("torch", "sympy", "mpmath", "decimal", "cmath")


def _labs_own(ex: str, name: str) -> Result:
    what = ("rows of the lab's derivative table" if name == "table" else
            f"{name}, the version that stands in for the notebook's demonstrations")
    return not_yet(ex, [f"your answer calls the lab's own version: it runs the lab's {what}. "
                        "That is the lab's version, not yours: the exercise asks you to "
                        "write your own."],
                   gave="an answer that runs the lab's own code")


def _watch_off(ex: str) -> Result:
    return not_yet(ex, ["your answer switched off the lab's watch (it changed or removed "
                        "the profiler, or ran code in a thread the watch cannot follow): "
                        "the check sees which code an answer runs, so it refuses one that "
                        "hides it. Write the function plainly, in this thread."],
                   gave="an answer that switched off the lab's watch")


def _other_library(ex: str, library: str) -> Result:
    return not_yet(ex, [f"your answer calls into {library}: lesson 8 builds its own "
                        "engine, so no other library's differentiation or arithmetic does "
                        "the work. Plain Python and math, with the derivatives of the "
                        "notebook's table OPS."],
                   gave=f"an answer that runs {library}'s code")


def _own_work(ex: str, codes: Callable[[], dict], allowed: tuple = (),
              library: str = "", forbid: tuple = ()) -> Callable:
    """A checker that refuses an answer during whose check the lab's own code ran
    (:class:`LabCalls`), the watch was switched off, or, when ``library`` names what the
    answer builds, naivegraph's or torch's autograd ran; a passing answer that called a
    library of ``forbid`` is refused too.  What the check printed is shown only when
    none of these happened."""

    def wrap(check: Callable) -> Callable:
        @functools.wraps(check)
        def checked(given, *args, **kwargs):
            printed = io.StringIO()
            tries = TRIES.get(ex)
            lab = LabCalls(codes(), allowed, forbid, given)
            with contextlib.ExitStack() as stack:
                stack.enter_context(_OpsOfTheNotebook(given, lab.token))
                stack.enter_context(lab)
                autograd = stack.enter_context(_Autograd()) if library else None
                stack.enter_context(contextlib.redirect_stdout(printed))
                result = check(given, *args, **kwargs)
            ran = autograd is not None and autograd.ran
            refused = None
            if lab.switched:
                refused = _watch_off(ex)
            elif lab.ran:
                refused = _labs_own(ex, lab.ran[0])
            elif ran:
                refused = not_yet(
                    ex,
                    [f"your {library} runs {ran}'s autograd: the exercise builds "
                     "an autograd engine, so it cannot lean on one. No naivegraph or torch "
                     "inside: hand the gradients on yourself, with the derivatives of the "
                     "notebook's table OPS."],
                    gave=f"gradients computed by {ran}'s autograd",
                )
            elif lab.library and result:
                refused = _other_library(ex, lab.library)
            if refused is not None:
                if tries is None:
                    TRIES.pop(ex, None)
                else:
                    TRIES[ex] = tries
                return refused
            shown = printed.getvalue()
            if result and lab.stood_in:
                before = result.message
                result.detail += " " + _stand_in_note(ex, lab.stood_in)
                shown = shown.replace(before, result.message)
            sys.stdout.write(shown)
            return result

        return checked

    return wrap


def _stand_in_note(ex: str, stood_in: list[str]) -> str:
    """What a passing answer ran on of the lab's stand-ins, said plainly: right as it is
    written, but not yet seen on the learner's own engine."""
    said = []
    engine = [n for n in ("run_backward", "free_graph") if n in stood_in]
    if engine:
        said.append(f"the gradients it used came from the lab's {' and '.join(engine)}, "
                    "which Node.backward calls while 08-3 and 08-4 are not solved (or "
                    "while use_reference is True)")
    stale = False  # OPS set before 08-1 passed, and its cell not run since
    if "table" in stood_in:
        stale = solved("08-1") and learner_namespace().get("use_reference") is not True
        if stale:
            said.append("the derivatives came from the lab's table: 08-1 is solved, but "
                        "OPS still holds the lab's table, because the cell that sets OPS "
                        "ran before 08-1 passed")
        else:
            said.append("the derivatives came from the lab's table, which OPS holds while "
                        "08-1 is not solved (or while use_reference is True)")
    what = _ASKS_FOR.get(ex, "function")
    if stale and not engine:
        return (f"Note: {' and '.join(said)}. Your {what} is right as written; re-run the "
                "cell that sets OPS (it picks your table now), then this check, to see it "
                "run on your own table.")
    rerun = " Re-run the cell that sets OPS first: it picks your table now." if stale else ""
    return (f"Note: {' and '.join(said)}. Your {what} is right as written; run this check "
            "again once those exercises pass, with use_reference False, to see it run on "
            f"your own engine.{rerun}")


# The frame of every check wrapped by _own_work: the lab's code run beneath it through
# library frames alone is the checker's own.
_CHECKED = _own_work("", dict)(len).__code__


# ----------------------------------------------------------------------------- 08-1
@checker(
    "08-1",
    answer="f_mul = lambda a, b: a * b; d_mul = lambda a, b, i: b if i == 0 else a; "
    "f_div = lambda a, b: a / b; d_div = lambda a, b, i: 1 / b if i == 0 else -a / b ** 2; "
    "f_sin = lambda a: math.sin(a); d_sin = lambda a, i: math.cos(a); "
    "f_exp = lambda a: math.exp(a); d_exp = lambda a, i: math.exp(a). "
    "Each derivative is the partial derivative with respect to argument i.",
)
@_own_work("08-1", _lab_codes, forbid=_OTHER_ENGINES)
def check_derivative_table(table) -> Result:
    """Rows of the scalar engine's table: name -> (function, derivative)."""
    ex = "08-1"
    if is_blank(table) or not isinstance(table, dict):
        return not_done(ex) if is_blank(table) else failed(ex, "TABLE should be a dict.")
    # (96.3, -41.7): far from 0, where a shifted argument a + h rounds, so a stencil
    # computed on plain floats is off in the last digits.
    # (0.0, 1.9): a derivative that divides the value by an argument has no value at 0.
    points = [(0.7, 1.9), (-1.3, 0.4), (2.1, -0.6), (96.3, -41.7), (0.0, 1.9)]
    for name in ("mul", "div", "sin", "exp"):
        # and far out, and at 0, where each op is defined: a rule right only near the
        # points above (``if abs(a) < 100``) is wrong here
        far = _FAR_POINTS[name]
        row = table.get(name)
        if is_blank(row) or row is None or is_blank(row[0]) or is_blank(row[1]):
            return not_done(ex, f"(the row {name!r} is still blank.)")
        fn, dfn = row
        binary = name in ("mul", "div")
        for a, b in points + far:
            args = (a, b) if binary else (a,)
            ok, value = call_answer(ex, fn, *args)
            if not ok:
                return value
            if value is None:
                return not_done(ex, f"(the function of {name!r} returned None.)")
            if not close(value, _VALUE[name](*args)):
                return not_yet(ex, [f"the first entry of the {name!r} row computes the "
                                    f"op's value from its arguments."],
                               gave=f"{name}{args} = {show(value)}")
            for i in range(len(args)):
                probes = tuple(_Probe(v) for v in args)
                with _Autograd() as autograd, _Evaluations(name, fn) as evaluations:
                    ok, d = call_answer(ex, dfn, *probes, i)
                if not ok:
                    return d
                if autograd.ran:
                    return not_yet(
                        ex,
                        [f"the derivative of {name!r} runs {autograd.ran}'s autograd: the "
                         "table is what an autograd engine is built from, so it cannot "
                         "lean on one. No naivegraph or torch inside the table.",
                         f"differentiate {name} by hand, with respect to argument i, and "
                         "write that formula in the row."],
                        gave=f"d {name}/d arg{i} computed by {autograd.ran}",
                    )
                if any(p.shifted for p in probes) or evaluations.estimated:
                    return not_yet(
                        ex,
                        [f"the derivative of {name!r} evaluates the op at points shifted a "
                         "little from its arguments (a finite-difference stencil or a "
                         "complex step): that estimates the derivative numerically. A "
                         "row's derivative is the VJP rule the engine multiplies gradients "
                         "by, the formula you get by differentiating the op.",
                         f"differentiate {name} by hand, with respect to argument i, and "
                         "write that formula in the row."],
                        gave=f"d {name}/d arg{i} estimated from nearby points",
                    )
                if d is None:
                    if not has_placeholder(dfn) and getattr(dfn, "__name__", "") != "<lambda>":
                        stop = forgot_return(ex, dfn, d)
                        if stop is not None:
                            return stop
                    return not_done(ex, f"(the derivative of {name!r} returned None.)")
                if callable(d):
                    return not_yet(ex, [f"the derivative of {name!r} returned a function, not "
                                        "a number: call it on the argument, as the value "
                                        "column does."],
                                   gave=f"d {name}/d arg{i} = {show(d)}")
                if np.ndim(d) == 1 and np.size(d) > 1:
                    return not_yet(
                        ex,
                        [f"the derivative of {name!r} returned {np.size(d)} numbers at "
                         f"once, the partials for every argument: the engine calls "
                         f"derivative(*args, i) once per input and wants ONE number back, "
                         "the partial derivative with respect to argument i. Let i choose "
                         "which one the row returns.",
                         "the last argument of the derivative, i, says which input the "
                         "engine is handing the gradient to."],
                        gave=f"d {name}/d arg{i} = {np.size(d)} numbers",
                    )
                if not close(d, _EXACT[name](*args, i), atol=1e-5, rtol=1e-4):
                    which = "first" if i == 0 else "second"
                    return not_yet(
                        ex,
                        [f"the derivative of {name!r} with respect to its {which} argument "
                         f"is off: derivative(*args, i) is d {name} / d arg_i, the other "
                         "arguments held fixed.",
                         f"check the sign and which argument appears in the {name!r} row's "
                         "derivative; the checker compares it with the exact derivative."],
                        gave=f"d {name}/d arg{i} at {args} = {show(d)}",
                    )
                if not _to_rounding(d, _EXACT[name](*args, i), args) and _in_float32(d):
                    return not_yet(
                        ex,
                        [f"the derivative of {name!r} is rounded to float32: it is off in "
                         "the 8th digit, as a float32 holds it, and each backward multiplies "
                         "that rounding on. The engine works in Python floats throughout: "
                         "return the formula's value as it is, unrounded."],
                        gave=f"d {name}/d arg{i} at {args} = {d!r}",
                    )
                if not _to_rounding(d, _EXACT[name](*args, i), args):
                    return not_yet(
                        ex,
                        [f"the derivative of {name!r} is close but not exact, off in the "
                         "last digits, as a finite difference is or a formula with a small "
                         "term added: a row's derivative is the VJP rule the engine "
                         "multiplies gradients by, exactly the formula you get by "
                         "differentiating the op, nothing added and not an estimate.",
                         f"differentiate {name} by hand, with respect to argument i, and "
                         "write that formula in the row."],
                        gave=f"d {name}/d arg{i} at {args} = {d!r}",
                    )
    return correct(ex, "every row's derivative is the exact one, the rule the engine "
                       "multiplies gradients by.")


def _in_float32(got) -> bool:
    """Whether ``got`` holds float32 numbers only (a value rounded to float32 and back)."""
    try:
        values = np.asarray(got, dtype=np.float64)
    except (TypeError, ValueError):
        return False
    return bool(np.all(np.isfinite(values)) and np.all(values.astype(np.float32) == values))


def _to_rounding(got, exact: float, args: tuple) -> bool:
    """Whether ``got`` is ``exact`` but for the rounding of a formula written another way
    (``-a / b ** 2`` or ``-(a / b) / b``, ``math.e ** a``, ``sin(a + pi / 2)``): a few
    units in the last place, plus what rounding an argument of that size moves it by.
    A term of 1e-12 is thousands of units in the last place at the points checked first.
    """
    try:
        got = float(got)
    except Exception:  # not a number: the looser check has told it already
        return False
    size = sum(abs(float(a)) for a in args)
    slack = np.finfo(float).eps * (16.0 + 4.0 * size) * max(abs(exact), 1.0)
    return abs(got - exact) <= slack


class _Probe(float):
    """An argument for a row's derivative that notices being moved a little: a + h, a - h
    (h tiny next to a) or a + h*1j, the points a finite difference or a complex step
    evaluates the op at.  An exact rule never shifts its arguments."""

    shifted = False

    def _note(self, other) -> None:
        if isinstance(other, complex) and other.imag != 0:
            self.shifted = True
        elif isinstance(other, (int, float)) and other != 0:
            # a step small next to the argument, though never one as large as pi / 2
            # (sin(a + pi / 2) is the exact rule written another way)
            small = 1e-2 * min(max(1.0, abs(float(self))), 100.0)
            self.shifted = self.shifted or abs(other) <= small

    def __add__(self, other):
        self._note(other)
        return float(self) + other

    def __radd__(self, other):
        self._note(other)
        return other + float(self)

    def __sub__(self, other):
        self._note(other)
        return float(self) - other

    def __rsub__(self, other):
        self._note(other)
        return other - float(self)

    def __complex__(self):  # complex(a, h): the start of a complex step
        self.shifted = True
        return complex(float.__float__(self), 0.0)

    def __mul__(self, other):  # a * (1 + h): a relative step
        if isinstance(other, (int, float)) and other != 1:
            self.shifted = self.shifted or abs(other - 1) <= 1e-2
        return float(self) * other

    __rmul__ = __mul__


class _Evaluations:
    """Whether a row's derivative evaluated the op itself at several points, or called
    cmath, inside a ``with`` block: a stencil or a complex step on an argument stripped
    of its probe (``float(a)``, ``np.add(a, h)``) that the probe cannot see.

    The profiler sees the calls of Python functions (the row's own value function) and
    of ``math``/``cmath`` functions; an exact rule evaluates the op once at most
    (d exp = exp) and never needs complex numbers.
    """

    def __init__(self, name: str, value_fn: Callable) -> None:
        self._own = getattr(math, name, None)
        self._value_fn = value_fn
        self._value_code = getattr(value_fn, "__code__", None)
        self.value_calls = self.math_calls = 0
        self.complex_step = False

    @property
    def estimated(self) -> bool:
        # counted apart: a value function written with math.exp makes one call of each
        return self.complex_step or self.value_calls >= 2 or self.math_calls >= 2

    def _seen(self, frame, event: str, arg) -> None:
        if event == "call" and frame.f_code is self._value_code:
            self.value_calls += 1
        elif event == "c_call":
            if arg is self._own or arg is self._value_fn:
                self.math_calls += 1
            elif getattr(arg, "__module__", None) == "cmath":
                self.complex_step = True
        if self._before is not None:  # a watch around this one sees the calls too
            self._before(frame, event, arg)

    def _watched(self, fn: Callable) -> Callable:
        """numpy's ``fn``, noting a complex argument: a complex step written with numpy
        (``np.sin(float(a) + 1e-30j).imag``), whose arithmetic the profiler cannot see."""

        def watched(*args, **kwargs):
            if any(np.iscomplexobj(a) for a in args):
                self.complex_step = True
            return fn(*args, **kwargs)

        return watched

    def __enter__(self) -> _Evaluations:
        self._numpy = {name: fn for name, fn in vars(np).items()
                       if isinstance(fn, np.ufunc) or name in ("imag", "real", "angle")}
        for name, fn in self._numpy.items():
            setattr(np, name, self._watched(fn))
        self._before = sys.getprofile()
        sys.setprofile(self._seen)
        return self

    def __exit__(self, *exc_info: object) -> None:
        sys.setprofile(self._before)
        for name, fn in self._numpy.items():
            setattr(np, name, fn)


class _Autograd:
    """Whether naivegraph's or torch's autograd ran inside a ``with`` block (its name)."""

    def __enter__(self) -> "_Autograd":
        import sys

        self.ran = ""
        self._ng = AutogradCalls().__enter__()
        self._torch = sys.modules.get("torch")
        if self._torch is not None:
            self._backward, self._grad = self._torch.autograd.backward, self._torch.autograd.grad
            self._torch.autograd.backward = self._counted(self._backward)
            self._torch.autograd.grad = self._counted(self._grad)
        return self

    def _counted(self, fn: Callable) -> Callable:
        def counted(*args, **kwargs):
            self.ran = "torch"
            return fn(*args, **kwargs)

        return counted

    def __exit__(self, *exc_info: object) -> None:
        self._ng.__exit__()
        if self._torch is not None:
            self._torch.autograd.backward, self._torch.autograd.grad = self._backward, self._grad
        if self._ng.flags:
            self.ran = "naivegraph"


# ------------------------------------------------------------------ shared graph builders
class _SNode:
    """A node like the notebook's SNode: value, op, inputs, grad, needs_grad."""

    def __init__(self, nodes: list, value=None, op=None, inputs=(), needs_grad=True):
        self.value, self.op, self.inputs = value, op, tuple(inputs)
        self.grad: Any = None
        self.needs_grad = needs_grad
        nodes.append(self)


def _s(nodes: list, op: str, *inputs) -> _SNode:
    inputs = tuple(i if isinstance(i, _SNode) else _SNode(nodes, float(i), needs_grad=False)
                   for i in inputs)
    value = _VALUE[op](*(i.value for i in inputs))
    return _SNode(nodes, value, op, inputs, needs_grad=any(i.needs_grad for i in inputs))


class _Node:
    """A node like the notebook's Node: value, requires_grad, grad, grad_fn, inputs, saved."""

    def __init__(self, value: float, requires_grad: bool = False):
        self.value = float(value)
        self.requires_grad = requires_grad
        self.grad: Any = 0.0 if requires_grad else None
        self.grad_fn: str | None = None
        self.inputs: tuple = ()
        self.saved: tuple | None = None

    @property
    def is_leaf(self) -> bool:
        return self.grad_fn is None


def _d(op: str, *inputs) -> _Node:
    inputs = tuple(i if isinstance(i, _Node) else _Node(i) for i in inputs)
    values = tuple(i.value for i in inputs)
    out = _Node(_VALUE[op](*values), requires_grad=any(i.requires_grad for i in inputs))
    if out.requires_grad:
        out.grad_fn, out.inputs, out.saved = op, inputs, values
    return out


def _topological(root: _Node) -> list:
    order, seen = [], set()

    def visit(node):
        if id(node) in seen:
            return
        seen.add(id(node))
        for inp in node.inputs:
            if inp.requires_grad:
                visit(inp)
        order.append(node)

    visit(root)
    return order


def _constants_refused(ex: str, fn: Callable, *args) -> Result | None:
    """Run a backward on (x - 3) ** 2: a math domain error means it differentiated 2."""
    try:
        fn(*args)
    except (ValueError, ZeroDivisionError) as exc:
        if "math domain error" in str(exc) or isinstance(exc, ZeroDivisionError):
            return not_yet(ex, [_CONSTANT_HINT], gave="a math domain error for (x - 3) ** 2")
        return failed(ex, crash_message(exc))
    except Exception as exc:  # any other error: reported to the learner
        return failed(ex, crash_message(exc))
    return None


_CONSTANT_HINT = (
    "your backward differentiated with respect to a constant: in (x - 3) ** 2 the "
    "exponent 2 needs no gradient, and d(a ** b)/db = a ** b * log(a) has no value for "
    "a = -2. Only hand a gradient to inputs that need one."
)


# ----------------------------------------------------------------------------- 08-2
@checker(
    "08-2",
    answer="for n in nodes: n.grad = 0.0; loss.grad = 1.0; then for n in reversed(nodes) "
    "(skip leaves, n.op is None): args = [i.value for i in n.inputs]; for k, inp in "
    "enumerate(n.inputs): if inp.needs_grad: inp.grad += n.grad * OPS[n.op][1](*args, k). "
    "Reversed creation order visits a node after every node that uses it; += adds up the "
    "paths; constants are skipped.",
)
@_own_work("08-2", _lab_codes, library="static_backward", forbid=_OTHER_ENGINES)
def check_static_backward(static_backward) -> Result:
    """``static_backward(nodes, loss)``: reverse sweep of a static graph's node list."""
    ex = "08-2"
    bad = blank_function(ex, static_backward)
    if bad is None:
        bad = _labs_version(ex, static_backward)
    if bad is None:
        bad = _keeps_the_list_and_starts_from_zero(ex, static_backward)
    if bad is None:
        bad = _sweeps_backward_once(ex, static_backward)
    if bad is not None:
        return bad

    def run(build) -> tuple[Result | None, list]:
        nodes: list = []
        leaves, loss = build(nodes)
        stop, _ = _call_none_ok(ex, static_backward, nodes, loss)
        seeds.append(loss.grad)
        run_nodes.append(nodes)
        return stop, leaves

    seeds: list = []  # loss.grad after each run: 1 when the sweep was seeded
    run_nodes: list = []  # the node list of each run

    # 1. f = x * y + sin(x) * exp(y) at (1, 2)
    def product(nodes):
        x, y = _SNode(nodes, 1.0), _SNode(nodes, 2.0)
        return (x, y), _s(nodes, "add", _s(nodes, "mul", x, y),
                          _s(nodes, "mul", _s(nodes, "sin", x), _s(nodes, "exp", y)))

    stop, (x, y) = run(product)
    if stop is not None:
        return stop
    want = [2.0 + math.cos(1.0) * math.exp(2.0), 1.0 + math.sin(1.0) * math.exp(2.0)]
    got = [x.grad, y.grad]
    if is_blank(got) or any(g is None for g in got):
        if _does_nothing(static_backward):
            return not_yet(ex, ["your static_backward does nothing yet: its body (`pass`) "
                                "sets no grad at all. Write the sweep: zero every node's grad, "
                                "seed the loss's, then hand gradients back through the list."],
                           gave="a static_backward whose body does nothing")
        if sum(n.grad is not None for n in run_nodes[-1]) <= 1:  # the loss's seed at most
            return not_yet(ex, ["your backward changed no node of the list it was given: "
                                "sweep the `nodes` argument (the graph's nodes in creation "
                                "order), not a list of the notebook's own graph."],
                           gave="no grad set on the nodes passed in")
        return not_yet(ex, ["after your backward x.grad is still None: every node's grad "
                            "starts at 0.0 and the loss's at 1.0."], gave="x.grad = None")
    if not close(got, want, atol=1e-9):
        if close(got, [0.0, 0.0]) and not _seeded(seeds[-1]):
            hint = ["the leaves got no gradient because nothing was there to pass on: "
                    "after your sweep loss.grad is "
                    f"{show(seeds[-1])}. The sweep starts from d loss / d loss, which "
                    "must be in the loss's grad before any node hands gradients on.",
                    "zeroing every grad also zeroes the loss's: seed the loss after "
                    "zeroing, before the backward loop."]
        elif close(got, [0.0, 0.0]) and not _visits_the_loss(static_backward):
            hint = ["the leaves got no gradient: your sweep never visited the loss itself, "
                    "so the loss's gradient was never handed to its inputs. The sweep "
                    "starts at the loss: it is the first node whose inputs receive a share."]
        elif close(got, [0.0, 0.0]) and all(
            _zero_or_none(i.grad) for i in run_nodes[-1][-1].inputs
        ):
            hint = ["the leaves got no gradient, not even the loss's own inputs: the share "
                    "an input receives is the gradient of the node that uses it times the "
                    "op's derivative. Your sweep multiplied by the input's own grad, which "
                    "is still zero then.",
                    "in `inp.grad += ... * derivative`, the factor in front is the grad of "
                    "the node being visited."]
        elif _first_inputs_skipped(run_nodes[-1]):
            hint = ["your sweep never hands a share to the first input of a node: after "
                    "it, x * y (the first input of the loss) holds grad 0 while "
                    "sin(x) * exp(y), the second, got its share, and sin(x) and exp(y), "
                    "whose only input is their first, hand nothing on at all. The order "
                    "of the visits is not the problem: every input that needs a gradient "
                    "receives its own share, the node's grad times the derivative with "
                    "respect to THAT input, the first one included.",
                    "loop over all of a node's inputs, from the first, with k its "
                    "position among them."]
        elif close(got, [0.0, 0.0]):
            hint = ["the leaves got no gradient: in which order must the nodes be visited "
                    "so that a node's grad is complete before it is passed on?"]
        elif _later_inputs_skipped(run_nodes[-1]):
            hint = ["after your sweep y.grad is 0: y is the second input of x * y and "
                    "exp(y) the second input of sin(x) * exp(y), and your sweep hands a "
                    "share to the first input of each node only. Every input that needs a "
                    "gradient receives its own share, the node's grad times the derivative "
                    "with respect to THAT input.",
                    "loop over all of a node's inputs, however many it has, with k its "
                    "position among them."]
        elif any(close(got[0], part) for part in (2.0, math.cos(1.0) * math.exp(2.0))):
            hint = ["x is used twice (in x * y and in sin(x)): x.grad must collect both "
                    "contributions, not keep only the last."]
        else:
            hint = ["compare with the chain rule: each input receives the node's grad times "
                    "the op's derivative with respect to that input.",
                    "visit the nodes from the loss back to the leaves, and pass each input "
                    "n.grad * derivative(*input values, k)."]
        return not_yet(ex, hint, gave=f"x.grad = {show(got[0])} for x*y + sin(x)*exp(y)")

    off = _node_grads_off(run_nodes[-1], run_nodes[-1][-1], {id(x): "x", id(y): "y"})
    if off is not None:
        label, grad = off
        return not_yet(
            ex,
            [f"the leaves' gradients are right, but after your sweep the node {label} of "
             f"x*y + sin(x)*exp(y) holds grad {show(grad)}, which is not d loss / d "
             f"({label}): the exercise asks every node's grad to hold d loss / d node, "
             "the computed nodes' as much as the leaves'. A computed node's grad is what "
             "the sweep hands on to its inputs, and it stays there once the sweep ends.",
             "keep each gradient in the node's own grad as the sweep computes it, and "
             "leave it there."],
            gave=f"{label}.grad = {show(grad)}",
        )

    # 1b. a node built after the loss (a metric of it): the loss is not the last node
    def metric_after(nodes):
        leaves, loss = product(nodes)
        _s(nodes, "mul", loss, 2.0)
        return leaves, loss

    nodes_after: list = []
    (x, y), loss = metric_after(nodes_after)
    stop, _ = _call_none_ok(ex, static_backward, nodes_after, loss)
    if stop is not None:
        return stop
    if not close([x.grad, y.grad], want, atol=1e-9):
        if _seeded(nodes_after[-1].grad) and not _seeded(loss.grad):
            hint = ["your sweep seeded the last node of the list, not the loss: the loss "
                    "need not be last. Here a node was built after it (loss * 2, as a "
                    "metric would be), and the sweep must start from the loss it is given."]
        else:
            hint = ["with a node built after the loss (loss * 2, as a metric would be) the "
                    "gradients change: the sweep must start from the loss it is given, "
                    "whatever was built after it."]
        return not_yet(ex, hint, gave=f"x.grad = {show(x.grad)} with a node built after "
                                      "the loss")

    # 2. the same leaf used twice: f = x * x at x = 3
    def square(nodes):
        x = _SNode(nodes, 3.0)
        return (x,), _s(nodes, "mul", x, x)

    stop, (x,) = run(square)
    if stop is not None:
        return stop
    if not close(x.grad, 6.0):
        return not_yet(ex, ["x * x uses x twice: each use hands x a gradient, and x.grad "
                            "must collect both, not keep only the last."],
                       gave=f"x.grad = {show(x.grad)} for x * x at x = 3")

    # 3. a second run on the same graph must not add to the first one's grads
    nodes: list = []
    (x, _), loss = product(nodes)
    for _ in range(2):
        stop, _ = _call_none_ok(ex, static_backward, nodes, loss)
        if stop is not None:
            return stop
    if not close(x.grad, want[0], atol=1e-9):
        return not_yet(ex, ["a static graph runs again and again: each backward must "
                            "start every grad from zero, or it adds to the last run's."],
                       gave="grads that grow on every run of the same graph")

    # 4. constants need no gradient: (x - 3) ** 2 at x = 1
    nodes = []
    x = _SNode(nodes, 1.0)
    loss = _s(nodes, "pow", _s(nodes, "sub", x, 3.0), 2.0)
    stop = _constants_refused(ex, static_backward, nodes, loss)
    if stop is not None:
        return stop
    if not close(x.grad, -4.0):
        return not_yet(ex, ["check (x - 3) ** 2 at x = 1 by hand."],
                       gave=f"x.grad = {show(x.grad)}")
    given = [n for n in nodes if not n.needs_grad and not _zero_or_none(n.grad)]
    if given:
        return not_yet(
            ex,
            ["a constant of (x - 3) ** 2 received a gradient: your sweep hands one to "
             "every input and only skips those whose derivative fails. Test whether an "
             "input needs a gradient before handing it one; a constant's grad stays as "
             "the zeroing left it.",
             "every _SNode knows whether it needs a gradient: ask it, not the derivative."],
            gave=f"a constant with grad {show(given[0].grad)}",
        )
    stop = _sweeps_static_diamonds(ex, static_backward)
    if stop is None:
        stop = _sweeps_a_long_chain(ex, static_backward)
    if stop is not None:
        return stop
    return correct(ex, "your reverse sweep gives every gradient, adds up shared uses, "
                       "starts from zero on each run and skips constants.")


def _later_inputs_skipped(nodes: list) -> bool:
    """Whether a sweep gave the first input of every node its share and no later input
    anything: a loop over ``inputs[:1]`` (or ``k == 0`` only)."""
    later = [inp for n in nodes if n.op is not None for inp in n.inputs[1:] if inp.needs_grad]
    first = [n.inputs[0] for n in nodes if n.op is not None and n.inputs[0].needs_grad]
    return bool(later) and all(_zero_or_none(i.grad) for i in later if i not in first) and any(
        not _zero_or_none(i.grad) for i in first
    )


def _order_shown(order, labels: dict) -> str:
    """An order run_backward returned, its nodes written as the checker's graph names
    them (x, y, c = x * y, sin(c), c * sin(c), f); another node by its op, or as a leaf
    with its value; anything that is not a list or tuple of nodes, as it is."""
    if not isinstance(order, (list, tuple)) or not order or not all(
        isinstance(n, _Node) for n in order
    ):
        return show(order)

    def label(node: _Node) -> str:
        if id(node) in labels:
            return labels[id(node)]
        return node.grad_fn if node.grad_fn is not None else f"a leaf {node.value:g}"

    bracket = "[]" if isinstance(order, list) else "()"
    return f"the order {bracket[0]}{', '.join(label(n) for n in order)}{bracket[1]} " + (
        "for f = c * sin(c) + c, c = x * y"
    )


def _first_inputs_skipped(nodes: list) -> bool:
    """Whether a sweep gave no first input of a node anything while a later input got
    its share: a loop over ``inputs[1:]`` (or that skips ``k == 0``)."""
    later = [inp for n in nodes if n.op is not None for inp in n.inputs[1:] if inp.needs_grad]
    first = [n.inputs[0] for n in nodes if n.op is not None and n.inputs[0].needs_grad]
    return bool(first) and all(_zero_or_none(i.grad) for i in first if i not in later) and any(
        not _zero_or_none(i.grad) for i in later
    )


def _keeps_the_list_and_starts_from_zero(ex: str, static_backward: Callable) -> Result | None:
    """One sweep of x * y + sin(x) (then a node built after it) on fresh nodes, whose
    grads are None as the notebook's are before any backward: a sweep that reverses the
    graph's own list in place (``nodes.reverse()``, which returns None), or adds into
    grads never set to zero."""
    nodes: list = []
    x, y = _SNode(nodes, 1.0), _SNode(nodes, 2.0)
    loss = _s(nodes, "add", _s(nodes, "mul", x, y), _s(nodes, "sin", x))
    _s(nodes, "mul", loss, 2.0)  # built after the loss, as a metric: no gradient reaches it
    before = list(nodes)
    try:
        static_backward(nodes, loss)
        crashed: Exception | None = None
    except Exception as exc:  # the crash is reported below, or by the checks after this
        crashed = exc
    reversed_in_place = len(nodes) == len(before) and all(
        a is b for a, b in zip(nodes, reversed(before))
    )
    if reversed_in_place or (
        len(nodes) == len(before) and any(a is not b for a, b in zip(nodes, before))
    ):
        returned_none = isinstance(crashed, TypeError) and "NoneType" in str(crashed)
        said = ("nodes.reverse() reverses the list in place and returns None, so there was "
                "nothing to loop over in what it returned; and " if returned_none else "")
        return not_yet(
            ex,
            [f"your sweep reordered the list it was given, in place: {said}the list is the "
             "graph's own node list, which every later forward and backward walks, so it "
             "must stay in creation order. Walk it backwards without changing it.",
             "a reversed view of a list, or a loop over its indices from the end, leaves "
             "the list as it is."],
            gave="a sweep that reorders the graph's node list",
        )
    if isinstance(crashed, TypeError) and "NoneType" in str(crashed):
        return not_yet(
            ex,
            [f"{crash_message(crashed).split(';')[0]}: a grad was still None when your "
             "sweep computed with it. Nodes start with grad None (the graph has never run "
             "backward), and the sweep adds into every input's grad and multiplies by every "
             "node's, so it must first set every node's grad to zero, then the loss's to "
             "its seed.",
             "zeroing comes first, for every node in the list, before the loop that hands "
             "gradients on."],
            gave="a sweep that adds into grads still None",
        )
    return None


_DERIVATIVE = {**_EXACT, "add": lambda a, b, i: 1.0}
_SHOWN = {"mul": "{} * {}", "add": "{} + {}", "sin": "sin({})", "exp": "exp({})"}


def _node_grads_off(nodes: list, loss, names: dict) -> tuple[str, Any] | None:
    """The first computed node up to ``loss`` whose grad is not d loss / d node, as
    (the node written out from the leaves ``names``, its grad); None when all are right."""
    want = {id(n): 0.0 for n in nodes}
    want[id(loss)] = 1.0
    upto = nodes[: nodes.index(loss) + 1]
    for n in reversed(upto):
        if n.op is None:
            continue
        args = [i.value for i in n.inputs]
        for k, inp in enumerate(n.inputs):
            want[id(inp)] += want[id(n)] * _DERIVATIVE[n.op](*args, k)

    def shown(node) -> str:
        if id(node) in names:
            return names[id(node)]
        if node.op is None:
            return f"{node.value:g}"
        return _SHOWN[node.op].format(*(shown(i) for i in node.inputs))

    for n in upto:
        if n.op is None or not n.needs_grad:
            continue
        try:
            right = close(n.grad, want[id(n)], atol=1e-9)
        except Exception:  # not a number: not the gradient
            right = False
        if not right:
            return ("loss" if n is loss else shown(n)), n.grad
    return None


class _ShiftProbe(_Probe):
    """A leaf's value that notices being moved a little (a + h, a - h, a complex step),
    as a finite difference moves it; products are plain, as a backward makes them."""

    __mul__ = __rmul__ = float.__mul__


class _StillSNode(_SNode):
    """An _SNode that notes each write of its value once the graph is built, and
    counts (for all of them) how often a sweep reads node inputs."""

    reads = 0

    def __init__(self, *args, **kwargs) -> None:
        self.writes = 0
        self.ready = False
        super().__init__(*args, **kwargs)

    @property  # type: ignore[override]
    def value(self):
        return self._value

    @value.setter
    def value(self, new) -> None:
        if self.ready:
            self.writes += 1
        self._value = new

    @property  # type: ignore[override]
    def inputs(self) -> tuple:
        _StillSNode.reads += 1
        return self._inputs

    @inputs.setter
    def inputs(self, new: tuple) -> None:
        self._inputs = new


_LEAVES = 20


def _sweeps_backward_once(ex: str, static_backward: Callable) -> Result | None:
    """A product of 20 leaves (plus sin of the first): a reverse sweep reads each node's
    inputs a few times and writes no value.  A finite difference moves the leaves' values
    a little (or re-runs the forward pass once or twice per leaf); forward mode carries a
    tangent from each leaf, one pass through the list per leaf; an optimizer step inside
    backward leaves the values moved."""
    nodes: list = []
    starts = [(-1.0) ** k * (0.5 + 0.125 * k) for k in range(_LEAVES)]
    probes = [_ShiftProbe(v) for v in starts]
    leaves = [_StillSNode(nodes, p) for p in probes]

    def node(op: str, *inputs) -> _StillSNode:
        value = _VALUE[op](*(i.value for i in inputs))
        return _StillSNode(nodes, value, op, inputs)

    h = leaves[0]
    for leaf in leaves[1:]:
        h = node("mul", h, leaf)
    loss = node("add", h, node("sin", leaves[0]))
    for n in nodes:
        n.ready = True
    for p in probes:
        p.shifted = False
    _StillSNode.reads = 0
    try:
        static_backward(nodes, loss)
    except Exception:  # a crash is reported by the checks that follow
        return None
    moved = [(leaf, v) for leaf, v in zip(leaves, starts) if leaf.value != v]
    tiny = all(_near(leaf.value, v) for leaf, v in moved)
    if any(p.shifted for p in probes) or (
        any(leaf.writes for leaf in leaves) and (not moved or tiny)
    ):
        return not_yet(
            ex,
            ["your backward evaluates the graph at values shifted a little from the "
             "leaves' (a finite difference): an estimate, made by running the forward "
             "pass again for each leaf. The exercise asks for the reverse sweep: each "
             "node hands its grad times its op's derivative, from the table, to its "
             "inputs, from the loss back to the leaves, and no value changes.",
             "the derivatives are in the second entry of each row of OPS."],
            gave="gradients estimated from nearby points",
        )
    if moved:
        return not_yet(
            ex,
            ["your backward changed the values of the leaves: a backward computes "
             "gradients and leaves every value as the forward pass made it. A training "
             "step that moves the weights by their gradients comes after backward, in the "
             "loop that calls it, not inside it (and here the graph's next forward pass "
             "would no longer be the one the gradients belong to).",
             "set the grads, and nothing else: no node's value changes in a backward."],
            gave="a backward that changes the leaves' values",
        )
    if _StillSNode.reads > 6 * len(nodes):
        return not_yet(
            ex,
            [f"on a product of {_LEAVES} leaves ({len(nodes)} nodes) your backward read "
             f"node inputs {_StillSNode.reads} times: it goes through the graph once per "
             "leaf, as forward mode does (a tangent carried forward from each leaf in "
             "turn) or a finite difference re-running the forward pass. The exercise asks "
             "for reverse mode: ONE sweep back from the loss gives every node its "
             "gradient, however many leaves there are.",
             "visit the nodes from the loss back to the leaves, once each, handing each "
             "input its share."],
            gave=f"{_StillSNode.reads} reads of node inputs for {len(nodes)} nodes",
        )
    return None


def _near(a, b) -> bool:
    """Whether the number ``a`` is within rounding of a small step from ``b``."""
    try:
        return abs(float(a) - float(b)) <= 1e-6 * max(1.0, abs(float(b)))
    except Exception:  # not a number: not near
        return False


def _does_nothing(fn: Callable) -> bool:
    """Whether ``fn``'s body does nothing: ``pass`` (or a docstring, or a constant
    returned), no name read and no call made."""
    import dis

    try:
        ops = {i.opname for i in dis.get_instructions(fn)}
    except TypeError:  # not a Python function
        return False
    return ops <= {"RESUME", "NOP", "CACHE", "LOAD_CONST", "RETURN_VALUE", "RETURN_CONST"}


def _sweeps_a_long_chain(ex: str, static_backward: Callable) -> Result | None:
    """x * 0.99 * 0.99 * ..., a number of times chosen at random (100 to 400): a graph
    longer than any fixed part of the list, whose leaf gets 0.99 ** n."""
    n = random.randint(100, 400)
    nodes: list = []
    x = h = _SNode(nodes, 1.5)
    for _ in range(n):
        h = _s(nodes, "mul", h, 0.99)
    stop, _ = _call_none_ok(ex, static_backward, nodes, h)
    if stop is not None:
        return stop
    if not close(x.grad, 0.99**n, rtol=1e-9, atol=0.0):
        if _in_float32(x.grad) and close(x.grad, 0.99**n, rtol=1e-4, atol=0.0):
            return not_yet(ex, [f"on a long graph ({len(nodes)} nodes: x times 0.99, {n} "
                                "times over) the leaf's gradient is off in the 8th digit, as "
                                "a float32 holds it: your sweep rounds the gradients to "
                                "float32, and every node adds its rounding on. The engine "
                                "works in Python floats throughout: hand on the gradients "
                                "as they are, unrounded."],
                           gave=f"x.grad = {x.grad!r} for a chain of {n} products")
        return not_yet(ex, [f"on a long graph ({len(nodes)} nodes: x times 0.99, {n} times "
                            "over) the leaf's gradient is wrong: the sweep must hand on the "
                            "gradient of every node of the list, however many there are, "
                            "not of a fixed number of them."],
                       gave=f"x.grad = {show(x.grad)} for a chain of {n} products")
    return None


def _zero_or_none(grad) -> bool:
    try:
        return grad is None or float(grad) == 0.0
    except Exception:  # not a number: a constant was given something
        return False


class _CountedSNode(_SNode):
    """An _SNode that counts how often a sweep reads its inputs."""

    reads = 0

    @property  # type: ignore[override]
    def inputs(self) -> tuple:
        _CountedSNode.reads += 1
        return self._inputs

    @inputs.setter
    def inputs(self, value: tuple) -> None:
        self._inputs = value


def _sweeps_static_diamonds(ex: str, static_backward: Callable) -> Result | None:
    """On stacked diamonds a sweep of the node list reads each node's inputs a few times;
    following every path from the loss reads them once per path, 2 ** 12 at the top."""
    nodes: list = []
    x = h = _CountedSNode(nodes, 0.3)
    for _ in range(_DIAMONDS):
        halves = [
            _CountedSNode(nodes, h.value * 0.5, "mul", (h, _SNode(nodes, 0.5, needs_grad=False)))
            for _ in range(2)
        ]
        h = _CountedSNode(nodes, halves[0].value + halves[1].value, "add", halves)
    _CountedSNode.reads = 0
    stop, _ = _call_none_ok(ex, static_backward, nodes, h)
    if stop is not None:
        return stop
    if _CountedSNode.reads > 10 * len(nodes):
        return not_yet(
            ex,
            [f"on {_DIAMONDS} stacked diamonds (each node used by two others) your sweep "
             f"read node inputs {_CountedSNode.reads} times for {len(nodes)} nodes: it "
             "follows every path from the loss, and the paths double with every diamond. "
             "The list `nodes` already orders the graph: one pass over it visits each node "
             "once."],
            gave=f"{_CountedSNode.reads} reads for {len(nodes)} nodes",
        )
    if not close(x.grad, 1.0):
        return not_yet(ex, ["on stacked diamonds (each node used by two others) the leaf's "
                            "gradient is wrong: every path must add its share."],
                       gave=f"x.grad = {show(x.grad)} for {_DIAMONDS} stacked diamonds")
    return None


class _WatchedSNode(_SNode):
    """An _SNode that notes whether a sweep read its inputs."""

    read = False

    @property  # type: ignore[override]
    def inputs(self) -> tuple:
        self.read = True
        return self._inputs

    @inputs.setter
    def inputs(self, value: tuple) -> None:
        self._inputs = value


def _visits_the_loss(static_backward: Callable) -> bool:
    """Whether a sweep of x * y reads the loss's inputs (True when the sweep crashes:
    then the visit is not what went wrong)."""
    nodes: list = []
    x, y = _SNode(nodes, 1.0), _SNode(nodes, 2.0)
    loss = _WatchedSNode(nodes, 2.0, "mul", (x, y))
    try:
        static_backward(nodes, loss)
    except Exception:  # reported by the checks that call the sweep
        return True
    return loss.read


def _seeded(grad) -> bool:
    try:
        return close(grad, 1.0)
    except Exception:  # not a number: not seeded
        return False


def _call_none_ok(ex: str, fn: Callable, *args) -> tuple[Result | None, Any]:
    """Call a function that works by side effect (returning None is fine)."""
    ok, value = call_answer(ex, fn, *args)
    return (None, value) if ok else (value, None)


# ----------------------------------------------------------------------------- 08-3
@checker(
    "08-3",
    answer="order: a depth-first post-order from root, following node.inputs that "
    "require grad and skipping nodes already seen (each node lands after its inputs). "
    "Then grads = {id(root): 1.0}; for node in reversed(order): g = grads.pop(id(node), "
    "0.0); a leaf does node.grad += g; otherwise raise RuntimeError if node.saved is None, "
    "and for k, inp in enumerate(node.inputs) that require grad add g * "
    "OPS[node.grad_fn][1](*node.saved, k) to grads[id(inp)]. Return order.",
)
@_own_work("08-3", _lab_codes, library="run_backward", forbid=_OTHER_ENGINES)
def check_run_backward(run_backward) -> Result:
    """``run_backward(root)``: topological order + accumulation in the dynamic engine."""
    ex = "08-3"
    bad = blank_function(ex, run_backward)
    if bad is None:
        bad = _labs_version(ex, run_backward)
    if bad is not None:
        return bad
    # f = c * c.sin() + c with c = x * y shared, at (0.5, 2): c is reached along three paths
    x, y = _Node(0.5, True), _Node(2.0, True)
    c = _d("mul", x, y)
    sin_c = _d("sin", c)
    c_sin_c = _d("mul", c, sin_c)
    f = _d("add", c_sin_c, c)
    labels = {id(x): "x", id(y): "y", id(c): "c", id(sin_c): "sin(c)",
              id(c_sin_c): "c * sin(c)", id(f): "f"}
    if _takes_leaves_for_freed(run_backward):  # asked first: its crash would echo its error
        return not_yet(ex, ["your run_backward raised RuntimeError on a fresh graph "
                            "that no backward has freed: a leaf's saved is None too (a "
                            "leaf computed nothing, so it saved nothing). None means "
                            "'freed' only on a computed node: the test for a freed node "
                            "must not catch the leaves."],
                       gave="a RuntimeError on a graph nothing had freed")
    bad = _reads_the_table(ex, run_backward)
    if bad is None:
        bad = _follows_constants(ex, run_backward)
    if bad is not None:
        return bad
    computed = [n for n in _topological(f) if not n.is_leaf]
    stop, order = answer(ex, run_backward, f)
    if stop is not None:
        return stop
    if any(getattr(n, "saved", None) is None for n in computed):
        return not_yet(ex, ["your run_backward frees the graph itself: after it ran, the "
                            "computed nodes' saved is None. Freeing is free_graph's work "
                            "(08-4), which Node.backward calls after run_backward, and only "
                            "when retain_graph is False: with retain_graph=True the same "
                            "graph must take a second backward, which finds nothing saved "
                            "if run_backward already let go of it.",
                            "run_backward reads node.saved and leaves it as it found it."],
                       gave="a run_backward that frees what the nodes saved")
    df_dc = math.sin(1.0) + math.cos(1.0) + 1.0
    want = [df_dc * 2.0, df_dc * 0.5]
    got = [x.grad, y.grad]
    if not close(got, want, atol=1e-9):
        if close(got, [g * f.value for g in want], atol=1e-9):
            hint = ["your sweep starts from the root's value: what reaches the root first is "
                    "d root / d root, the derivative of the root with respect to itself, "
                    "which is the same for every root whatever value it holds.",
                    "the root's entry in grads, before the loop, is that derivative."]
        elif close(got, [0.0, 0.0]) and not _seeds_its_root(run_backward):
            hint = ["the leaves got nothing because the sweep starts from nothing: even "
                    "run_backward(x) on a leaf x leaves x.grad at 0. The root's own gradient, "
                    "d root / d root, must be in grads before the loop hands anything on."]
        elif close(got, [0.0, 0.0]):
            hint = ["the leaves got nothing: is each node visited after every node that "
                    "uses it, and does a leaf add what reached it to its .grad?"]
        elif _merged_by_value(order, f, run_backward):
            hint = ["your order leaves out a node of the graph that holds the same number "
                    "as another node in it (here sin(c) and c * sin(c) are equal): your "
                    "walk took two different nodes with equal values for one and the "
                    "same, so the one met second was never visited and its gradient "
                    "never handed on. Nodes that hold equal numbers are still different "
                    "nodes.",
                    "remember the nodes you have visited by the node itself (or its id), "
                    "not by what it holds."]
        elif _listed_twice(order):
            times = _listed_twice(order)
            hint = ["c = x * y reaches f along several paths, and the order your "
                    f"run_backward returned lists a node {times} times: a walk that does "
                    "not remember where it has been appends a shared node once for every "
                    "path that reaches it, and the sweep then visits it more than once, "
                    "before all of its users have handed it their gradients.",
                    "remember the nodes you have visited and skip them when you meet them "
                    "again: each node enters the order once, after all of its inputs."]
        elif not _topological_order(order):
            hint = ["c = x * y reaches f along several paths: a node may pass its gradient "
                    "on only once all of its users have given theirs. The order your "
                    "run_backward returned lists a node before one of its inputs: each "
                    "node must come after all of its inputs (append it once they are done).",
                    "build the order by depth-first search, appending a node after its "
                    "inputs; then walk that list backwards."]
        elif _local_only(run_backward):
            hint = ["on exp(x * 2) x gets 2, the local derivative of x * 2 alone: what "
                    "reaches a node must be multiplied by each local derivative it passes "
                    "on (the chain rule), not dropped.",
                    "an input gets the node's own gradient times the op's derivative with "
                    "respect to that input."]
        elif any(close(got, [2.0 * p, 0.5 * p]) for p in (math.sin(1.0), math.cos(1.0), 1.0)):
            hint = ["c = x * y is used three times; its gradient is the sum over all its "
                    "uses. Add into grads[...] instead of replacing."]
        else:
            hint = ["c = x * y reaches f along several paths: a node may pass its gradient "
                    "on only once all of its users have given theirs. Which order "
                    "guarantees that?",
                    "build the order by depth-first search, appending a node after its "
                    "inputs; then walk that list backwards."]
        return not_yet(ex, hint, gave=f"x.grad = {show(got[0])}, y.grad = {show(got[1])}")
    if not close(got, want, atol=0.0, rtol=1e-12):  # a sum in another order: a few ulps
        return not_yet(ex, ["your gradients are close but not exact, off near the 7th "
                            "digit, as float32 arithmetic or a rounding leaves them: the "
                            "engine works in Python floats throughout, so every gradient "
                            "handed on and added stays a float, unrounded."],
                       gave=f"x.grad = {got[0]!r}, y.grad = {got[1]!r}")
    if not isinstance(order, (list, tuple)) or not order or order[-1] is not f:
        return not_yet(ex, ["run_backward should return the order it used (a list ending "
                            "with root): Node.backward frees exactly those nodes."],
                       gave=_order_shown(order, labels))
    stop = _visits_each_node_once(ex, run_backward)
    if stop is not None:
        return stop
    # a backward called on a leaf gives that leaf d leaf / d leaf = 1, as torch does
    leaf = _Node(2.0, True)
    stop, _ = answer(ex, run_backward, leaf)
    if stop is not None:
        return stop
    if not close(leaf.grad, 1.0, atol=0.0):
        return not_yet(ex, ["run_backward(x) on a leaf x must leave x.grad at 1, d x / d x: "
                            "the root may itself be a leaf, and a leaf adds what reached it "
                            "to its .grad, the root's own gradient included."],
                       gave=f"x.grad = {show(leaf.grad)} after a backward called on the "
                            "leaf x itself")
    # backward reads the values saved at forward time, not the inputs' current values
    a = _Node(2.0, True)
    b = _d("mul", a, a)
    a.value = 5.0  # a leaf moved after the forward pass, as an optimizer step does
    stop, _ = answer(ex, run_backward, b)
    if stop is not None:
        return stop
    if not close(a.grad, 4.0, atol=1e-9):
        return not_yet(ex, ["after b = a * a with a = 2, a.value was set to 5, and your "
                            "backward gave a a gradient computed from 5: backward must use "
                            "the values the op saw when it ran, the ones kept in node.saved, "
                            "not what the inputs hold now."],
                       gave=f"a.grad = {show(a.grad)} after a leaf changed")
    # two backwards through one retained graph: only the leaf accumulates
    a = _Node(3.0, True)
    b = _d("pow", _d("mul", a, 2.0), 2.0)
    for _ in range(2):
        stop, _ = answer(ex, run_backward, b)
        if stop is not None:
            return stop
    if close(a.grad, 24.0, atol=1e-9):
        return not_yet(ex, ["a second backward must add to a leaf's .grad (like "
                            "AccumulateGrad), not replace it."],
                       gave=f"a.grad = {show(a.grad)} after two backwards through one graph")
    if not close(a.grad, 48.0, atol=1e-9):
        return not_yet(
            ex,
            ["two backwards through the same graph b = (a * 2) ** 2 (a retained graph) "
             "gave a a wrong total: the second backward must hand on exactly what the "
             "first did. A gradient kept in a computed node (its .grad) stays there from "
             "the last backward and is added again; keep the gradients in flight in a "
             "dict local to this call, and add only into the leaves' .grad."],
            gave=f"a.grad = {show(a.grad)} after two backwards through (a * 2) ** 2 at a = 3",
        )
    # leaves accumulate across backward calls
    stop, _ = answer(ex, run_backward, _d("mul", x, 2.0))
    if stop is not None:
        return stop
    if not close(x.grad, want[0] + 2.0, atol=1e-9):
        return not_yet(ex, ["a second backward must add to a leaf's .grad (like "
                            "AccumulateGrad), not replace it."],
                       gave=f"x.grad = {show(x.grad)} after a second backward")
    # constants need no gradient
    x = _Node(1.0, True)
    stop = _constants_refused(ex, run_backward, _d("pow", _d("sub", x, 3.0), 2.0))
    if stop is not None:
        return stop
    if not close(x.grad, -4.0):
        return not_yet(ex, ["check (x - 3) ** 2 at x = 1 by hand."],
                       gave=f"x.grad = {show(x.grad)}")
    stop = _keeps_no_state(ex, run_backward, want)
    if stop is not None:
        return stop
    lists_constants = _lists_constants(run_backward)
    # a freed node must be refused, wherever it is and whatever gradient reaches it
    for freed, silent, where in _FREED_GRAPHS:
        stop = _refuses_freed(ex, run_backward, freed(), silent, where)
        if stop is not None:
            return stop
    said = ("topological order, accumulation over paths and into leaves, no gradient for "
            "constants, and a freed graph is refused.")
    if lists_constants:  # right all the same: a constant gets nothing and is never freed
        said += (" Your order also lists the constants: harmless, since they receive no "
                 "gradient and free_graph leaves leaves alone, but the backward graph has "
                 "no place for them (PyTorch records no node for an input that needs no "
                 "gradient).")
    return correct(ex, said)


class _TableCalls(dict):
    """The notebook's table, each row's entries counting their calls: (entry, op, number
    of arguments) per call, entry 0 being the op's function and 1 its derivative."""

    def __init__(self, table: dict) -> None:
        super().__init__()
        self.calls: list[tuple[int, str, int]] = []
        self.derivative_args: list[tuple[str, tuple]] = []  # (op, arguments but k)
        for op, row in table.items():
            try:
                entries = tuple(row)
            except TypeError:  # not a row: keep it as it is
                self[op] = row
                continue
            self[op] = tuple(self._counted(k, op, e) for k, e in enumerate(entries))

    def _counted(self, entry: int, op: str, fn: Any) -> Any:
        if not callable(fn):
            return fn

        def counted(*args, **kwargs):
            self.calls.append((entry, op, len(args) + len(kwargs)))
            if entry == 1:
                self.derivative_args.append((op, args[:-1]))
            return fn(*args, **kwargs)

        return counted


_ARITY = {"add": 2, "sub": 2, "mul": 2, "div": 2, "pow": 2, "sin": 1, "cos": 1, "exp": 1,
          "log": 1}


def _reads_the_table(ex: str, run_backward: Callable) -> Result | None:
    """A backward of sin(x * y) with the notebook's table watched: which entries of which
    rows the sweep calls.  Each node must call its own op's derivative (the second entry
    of its row) with its saved values and k; only when the gradients are wrong."""
    names = getattr(run_backward, "__globals__", None)
    table = names.get("OPS") if isinstance(names, dict) else None
    if not isinstance(table, dict) or not all(op in table for op in ("mul", "sin")):
        return None
    watched = _TableCalls(table)
    x, y = _Node(0.5, True), _Node(2.0, True)
    names["OPS"] = watched
    try:
        run_backward(_d("sin", _d("mul", x, y)))
        crashed: Exception | None = None
    except Exception as exc:  # told below when the table was misread, else by the checks after
        crashed = exc
    finally:
        names["OPS"] = table
    if crashed is None and close([x.grad, y.grad], [2.0 * math.cos(1.0), 0.5 * math.cos(1.0)]):
        return None
    given = [a for _, args in watched.derivative_args for a in args]
    if any(isinstance(a, _Node) or hasattr(a, "grad_fn") for a in given):
        return not_yet(
            ex,
            ["your sweep calls the node's own derivative, but hands it the input nodes "
             "themselves: a row's derivative computes with numbers, the values the op "
             "saw when it ran. Those numbers were kept on the node when it was made.",
             "look at what the Node keeps for backward, besides its inputs."],
            gave="the derivative called with nodes, not numbers",
        )
    sin_args = [args for op, args in watched.derivative_args if op == "sin"]
    if any(len(args) == 1 and _near_number(args[0], math.sin(1.0)) for args in sin_args):
        return not_yet(
            ex,
            ["on sin(x * y) your sweep calls sin's derivative with the sin node's own "
             "output, sin(x * y), where the derivative takes the op's input, x * y: "
             "derivative(*args, k) is evaluated at the arguments the op was called with, "
             "and for a unary op too its argument is its input, not its result.",
             "every computed node saved its input values when it ran, however many "
             "inputs it has."],
            gave="sin's derivative called with sin's output",
        )
    if any(entry == 0 for entry, _, _ in watched.calls):
        return not_yet(
            ex,
            ["your sweep calls the first entry of a row, the op's function, where it needs "
             "the op's derivative: each row is (function, derivative), and backward "
             "multiplies by the derivative, called with the saved input values and k.",
             "the function computes a value; the gradient needs the other entry."],
            gave="the op's function called in backward",
        )
    ops = {op for _, op, _ in watched.calls}
    wrong_arity = any(n != _ARITY.get(op, n - 1) + 1 for _, op, n in watched.calls)
    missed = isinstance(crashed, KeyError) and crashed.args[:1] == (None,)
    if crashed is None and not missed and not wrong_arity and ops == {"mul"}:
        return not_yet(
            ex,
            ["on sin(x * y) your sweep hands nothing on at the sin node: sin's derivative "
             "is never called, so the product below it, and x and y, receive nothing. A "
             "node with one input hands its gradient on as a node with two does: its "
             "grad times its op's derivative, for each input that requires grad.",
             "loop over all of a node's inputs, however many it has, and look the "
             "derivative up by the node's own op."],
            gave="no gradient handed on by sin(x * y)'s sin node",
        )
    if missed or wrong_arity or (watched.calls and ops != {"mul", "sin"}):
        return not_yet(
            ex,
            ["your sweep hands on the derivative of another op than the node's own: on "
             "sin(x * y) the sin node must multiply by sin's derivative and the product by "
             "mul's, each node by its own op's row (its grad_fn), called with its own saved "
             "values, not the row of an input's op or of the root's.",
             "a leaf has no op (grad_fn is None): there is no row to look up for it."],
            gave="the derivative of another op",
        )
    return None


def _near_number(value: Any, want: float) -> bool:
    """Whether ``value`` is a number within rounding of ``want``."""
    try:
        return abs(float(value) - want) <= 1e-12 * max(1.0, abs(want))
    except (TypeError, ValueError):
        return False


def _follows_constants(ex: str, run_backward: Callable) -> Result | None:
    """x * 2: a sweep that lists the constant 2 among the nodes to visit reaches a leaf
    whose grad is None (a constant keeps none), and crashes adding into it."""
    x = _Node(0.5, True)
    try:
        run_backward(_d("mul", x, 2.0))
    except TypeError as exc:
        if "NoneType" not in str(exc):
            return None
        return not_yet(
            ex,
            [f"{crash_message(exc).split(';')[0]}: on x * 2 your sweep reached the "
             "constant 2 and added into its grad, which is None: a constant needs no "
             "gradient, so it keeps none. The order must follow only the inputs that "
             "require grad; a constant never enters it.",
             "test each input before the depth-first search visits it."],
            gave="a sweep that visits the constants",
        )
    except Exception:  # another crash: the checks after this tell it
        return None
    return None


def _keeps_no_state(ex: str, run_backward: Callable, want: list) -> Result | None:
    """The first graph, built afresh, a number of times chosen at random (30 to 120):
    each backward must give the same gradients, and put them in the leaves alone (as
    PyTorch does: a computed tensor's .grad stays None)."""
    for _ in range(random.randint(30, 120)):
        x, y = _Node(0.5, True), _Node(2.0, True)
        c = _d("mul", x, y)
        f = _d("add", _d("mul", c, _d("sin", c)), c)
        stop, _ = answer(ex, run_backward, f)
        if stop is not None:
            return stop
        if not close([x.grad, y.grad], want, atol=1e-9):
            return not_yet(ex, ["your run_backward gives other gradients when it is called "
                                "again on the same graph built afresh: a backward keeps no "
                                "state of its own from one call to the next (no counter, no "
                                "cache), so every call must give the same gradients."],
                           gave=f"x.grad = {show(x.grad)} on a later call")
        written = [n for n in _topological(f) if not n.is_leaf and n.grad != 0.0]
        if written:
            return not_yet(ex, ["your run_backward wrote gradients into computed nodes' "
                                ".grad: only the leaves keep a gradient (in PyTorch a computed "
                                "tensor's .grad stays None). Keep the gradients in flight in "
                                "the dict grads, and add into .grad on the leaves alone."],
                           gave=f"a computed node's grad set to {show(written[0].grad)}")
    return None


def _merged_by_value(order, root, run_backward: Callable) -> bool:
    """Whether ``order`` leaves out a node of the graph under ``root`` while it lists
    another, different node that holds the same value, and lists every node of the same
    graph built where no two nodes hold equal values: a walk that remembers the nodes it
    has seen by their values takes two equal numbers for one node."""
    if not isinstance(order, (list, tuple)):
        return False
    listed = {id(n) for n in order}
    values = [getattr(n, "value", None) for n in order]
    if not any(
        id(n) not in listed and any(v is not None and v == n.value for v in values)
        for n in _topological(root)
    ):
        return False
    # the same f = c * c.sin() + c, at a point where its nodes' values all differ
    x, y = _Node(0.3, True), _Node(1.7, True)
    c = _d("mul", x, y)
    apart = _d("add", _d("mul", c, _d("sin", c)), c)
    ok, walked = call_answer("08-3", run_backward, apart)
    if not ok or not isinstance(walked, (list, tuple)):
        return False
    return {id(n) for n in _topological(apart)} <= {id(n) for n in walked}


def _listed_twice(order) -> int:
    """How many times ``order`` lists its most listed node, when that is more than
    once (0 otherwise, and when it is no list)."""
    if not isinstance(order, (list, tuple)):
        return 0
    counts: dict[int, int] = {}
    for node in order:
        counts[id(node)] = counts.get(id(node), 0) + 1
    most = max(counts.values(), default=0)
    return most if most > 1 else 0


def _topological_order(order) -> bool:
    """Whether each node of ``order`` comes after its listed inputs (True when it is no
    list: then the order is not what went wrong)."""
    if not isinstance(order, (list, tuple)):
        return True
    where = {id(n): k for k, n in enumerate(order)}
    return all(where.get(id(i), -1) < k for k, n in enumerate(order)
               for i in getattr(n, "inputs", ()) if id(i) in where)


def _local_only(run_backward: Callable) -> bool:
    """Whether exp(x * 2) at x = 0.5 gives x only the 2 of x * 2: the gradient that
    reached the product was not multiplied in."""
    x = _Node(0.5, True)
    ok, _ = call_answer("08-3", run_backward, _d("exp", _d("mul", x, 2.0)))
    return ok and close(x.grad, 2.0) and not close(x.grad, 2.0 * math.e)


def _lists_constants(run_backward: Callable) -> bool:
    """Whether the order of (x - 3) ** 2 also lists the constants 3 and 2."""
    ok, order = call_answer("08-3", run_backward, _d("pow", _d("sub", _Node(1.0, True), 3.0), 2.0))
    return ok and isinstance(order, (list, tuple)) and any(
        not getattr(n, "requires_grad", True) for n in order
    )


def _freed_root() -> _Node:
    out = _d("exp", _d("mul", _Node(1.0, True), _Node(1.0, True)))
    out.saved = None
    return out


def _freed_inside() -> _Node:
    """exp(x * x) with the product freed and the root not."""
    x = _Node(1.0, True)
    inner = _d("mul", x, x)
    out = _d("exp", inner)
    inner.saved = None
    return out


def _freed_under_a_zero() -> _Node:
    """(x * x) * 0 with the product freed: the gradient reaching it is 0."""
    x = _Node(1.0, True)
    inner = _d("mul", x, x)
    out = _d("mul", inner, 0.0)
    inner.saved = None
    return out


_FREED_SILENT = ("backward through a node whose saved values were freed (saved is None) "
                 "should raise RuntimeError, not go on silently.")

# A graph with a freed node, and what to say to a backward that goes through it silently.
_FREED_GRAPHS = [
    (_freed_root, [_FREED_SILENT], "at the root"),
    (_freed_inside, ["a freed node inside the graph, below a root that still has its "
                     "saved values, went through silently: every computed node the sweep "
                     "reaches needs its saved values, not only the root.", _FREED_SILENT],
     "inside the graph"),
    (_freed_under_a_zero, ["a freed node went through silently because the gradient "
                           "reaching it was zero: its saved values are gone whatever "
                           "gradient arrives, and PyTorch refuses it all the same.",
                           _FREED_SILENT], "that a zero gradient reaches"),
]


def _refuses_freed(
    ex: str, run_backward: Callable, root: _Node, silent: list, where: str
) -> Result | None:
    try:
        run_backward(root)
    except RuntimeError:
        return None
    except Exception as exc:  # any other error: reported to the learner
        return not_yet(ex, ["a node whose saved values are gone (saved is None) should "
                            "raise RuntimeError, saying the graph was already freed."],
                       gave=f"{type(exc).__name__}: {exc}")
    return not_yet(ex, silent, gave=f"no error for a freed node {where}")


def _takes_leaves_for_freed(run_backward: Callable) -> bool:
    """Whether run_backward refuses a fresh x * 2 with RuntimeError, yet runs once the
    leaf's saved is not None: its test for a freed node catches the leaves."""
    leaf = _Node(1.0, True)
    try:
        run_backward(_d("mul", leaf, 2.0))
    except RuntimeError:
        pass
    except Exception:  # another crash: not this mistake
        return False
    else:
        return False
    leaf = _Node(1.0, True)
    leaf.saved = ()
    try:
        run_backward(_d("mul", leaf, 2.0))
    except Exception:  # still refused: something else is wrong
        return False
    return True


def _seeds_its_root(run_backward: Callable) -> bool:
    """Whether a backward from a leaf gives it gradient 1: no order is involved, so a
    leaf left at 0 means the sweep was never seeded."""
    x = _Node(0.5, True)
    try:
        run_backward(x)
    except Exception:  # a crash here is not about the seed
        return True
    return not close(x.grad, 0.0)


class _CountedNode(_Node):
    """A _Node that counts how often a walk reads its inputs."""

    reads = 0

    @property  # type: ignore[override]
    def inputs(self) -> tuple:
        _CountedNode.reads += 1
        return self._inputs

    @inputs.setter
    def inputs(self, value: tuple) -> None:
        self._inputs = value


_DIAMONDS = 12


def _stacked_diamonds() -> tuple[_Node, _Node, int]:
    """x, then 12 diamonds h -> (h * 0.5, h * 0.5) -> their sum: 37 nodes, but 2 ** 12
    paths from the top to x.  d top / dx = 1."""
    x = _CountedNode(0.3, requires_grad=True)
    h, count = x, 1
    for _ in range(_DIAMONDS):
        parts = []
        for _ in range(2):
            part = _CountedNode(h.value * 0.5, requires_grad=True)
            part.grad_fn, part.inputs, part.saved = "mul", (h, _Node(0.5)), (h.value, 0.5)
            parts.append(part)
        top = _CountedNode(parts[0].value + parts[1].value, requires_grad=True)
        top.grad_fn, top.inputs = "add", tuple(parts)
        top.saved = (parts[0].value, parts[1].value)
        h, count = top, count + 3
    return x, h, count


def _visits_each_node_once(ex: str, run_backward: Callable) -> Result | None:
    """A walk without a visited set goes down every path: exponential in the diamonds."""
    x, top, count = _stacked_diamonds()
    _CountedNode.reads = 0
    stop, order = answer(ex, run_backward, top)
    if stop is not None:
        return stop
    listed = len(order) if isinstance(order, (list, tuple)) else 0
    distinct = len({id(n) for n in order}) if listed else 0
    # Visiting each node once reads its inputs a few times per node; walking every
    # path reads them once per path: 2 ** 12 times the top's, thousands in all.
    if listed > distinct or _CountedNode.reads > 10 * count:
        what = (f"your order lists {listed} entries for its {distinct} nodes"
                if listed > distinct else
                f"your walk read node inputs {_CountedNode.reads} times for {count} nodes")
        return not_yet(
            ex,
            [f"on {_DIAMONDS} stacked diamonds (each node used by two others) {what}: a "
             "walk that does not remember where it has been goes down every path, and "
             "the paths double with every diamond.",
             "remember the nodes you have already visited and skip them when you meet "
             "them again: each node enters the order once."],
            gave=(f"{listed} entries for {_DIAMONDS} stacked diamonds" if listed > distinct
                  else f"{_CountedNode.reads} reads of node inputs for {count} nodes"),
        )
    if not close(x.grad, 1.0):
        return not_yet(ex, ["on stacked diamonds (each node used by two others) the leaf's "
                            "gradient is wrong: every path must add its share."],
                       gave=f"x.grad = {show(x.grad)} for {_DIAMONDS} stacked diamonds")
    return None


# ----------------------------------------------------------------------------- 08-4
@checker(
    "08-4",
    answer="for node in order: if not node.is_leaf: node.saved = None. Only the saved "
    "values go: grad_fn stays, so c.is_leaf stays False and a second backward reaches c "
    "and raises instead of stopping there as if c were a leaf.",
)
@_own_work("08-4", _lab_codes, library="free_graph", forbid=_OTHER_ENGINES)
def check_free_graph(free_graph) -> Result:
    """``free_graph(order)``: drop what backward saved, keep the structure and the leaves."""
    ex = "08-4"
    bad = blank_function(ex, free_graph)
    if bad is None:
        bad = _labs_version(ex, free_graph)
    if bad is not None:
        return bad
    x, y = _Node(1.5, True), _Node(-0.5, True)
    c = _d("mul", x, y)
    f = _d("sub", _d("add", c, x), 1.0)  # 1.0: a constant input, kept too
    order = _topological(f)
    links = [(n, n.inputs) for n in order]
    # taken before the call: a free_graph that empties the list must not hide the nodes
    computed = [n for n in order if n.grad_fn is not None]
    x.grad, y.grad = 0.25, 0.75
    kept = [(n, _kept(n)) for n in order]
    kept_computed = [(n, n.saved) for n in computed]
    stop, _ = _call_none_ok(ex, free_graph, order)
    if stop is not None:
        return stop
    if any(not hasattr(n, "saved") for n in (x, y, c, f)):
        return not_yet(ex, ["your free_graph deleted the attribute saved itself: a second "
                            "backward would then fail with an AttributeError instead of "
                            "the RuntimeError that says the graph was freed. Keep the "
                            "attribute and give the saved values back by setting it to "
                            "the value that means 'freed'.",
                            "look at what run_backward tests to recognise a freed node."],
                       gave="nodes without a saved attribute")
    if any(n.grad_fn is None for n in (c, f)):
        return not_yet(ex, ["after freeing, c.is_leaf says True: backward would now stop at "
                            "c as if it were a leaf. Free what backward saved, not the "
                            "link that says how c was made."],
                       gave="grad_fn = None on computed nodes")
    stop = _inputs_kept(ex, links)
    if stop is not None:
        return stop
    if any(n.saved is not None for n in computed):
        marked = [n.saved for n, (_, before) in zip(computed, kept_computed)
                  if n.saved is not None and not _unchanged(before, n.saved)]
        if marked:
            return not_yet(ex, [f"your free_graph set saved to {repr(marked[0])[:40]}, but "
                                "run_backward recognises a freed node by its saved being "
                                "None: any other value looks like saved values, and a second "
                                "backward would compute with it instead of refusing. Use "
                                "None as the marker, the value run_backward tests."],
                           gave=f"saved = {repr(marked[0])[:40]} on the freed nodes")
        emptied = " (emptying the list frees nothing: the nodes live on)" if not order else ""
        return not_yet(ex, ["the computed nodes still hold their saved values: those are "
                            f"what freeing gives back{emptied}."],
                       gave="saved values still there")
    changed = _changed([(n, before) for n, before in kept if n.is_leaf])
    if changed:
        return not_yet(ex, [f"freeing changed the leaves' {changed}: the leaves belong to "
                            "you, not to the graph: their value, grad and requires_grad "
                            "must survive freeing."],
                       gave=f"a free_graph that changed the leaves' {changed}")
    stop = _wiped_more_than_saved(ex, [(n, before) for n, before in kept if not n.is_leaf])
    if stop is None:
        stop = _frees_any_graph(ex, free_graph)
    if stop is not None:
        return stop
    return correct(ex, "the saved values are gone, the structure and the leaves remain: a "
                       "second backward will find c and refuse, not stop early.")


def _inputs_kept(ex: str, links: list) -> Result | None:
    """Name a free_graph that changed a node's inputs: every node must keep the same
    input objects, in the same order (a constant input included)."""
    for node, before in links:
        now = getattr(node, "inputs", None)
        now = tuple(now) if isinstance(now, (tuple, list)) else now
        if isinstance(now, tuple) and len(now) == len(before) and all(
            a is b for a, b in zip(now, before)
        ):
            continue
        keep = ("leave every attribute of the nodes as it is except the one holding the "
                "saved values.")
        if not now:
            return not_yet(ex, ["freeing also cut the links from each node to its inputs: "
                                "those are the graph's structure, which stays after backward "
                                "(in PyTorch grad_fn.next_functions still answer). Only what "
                                "backward saved is given back.", keep],
                           gave="computed nodes without their inputs")
        op = getattr(node, "grad_fn", None) or "a computed node"
        if isinstance(now, tuple) and len(now) < len(before):
            dropped = [i for i in before if all(i is not j for j in now)]
            plural = "s" if len(dropped) > 1 else ""
            needs = "need" if plural else "needs"
            which = (f"the {op} node's constant input{plural}, which {needs} no gradient"
                     if dropped and all(not getattr(i, "requires_grad", True) for i in dropped)
                     else f"some of the {op} node's inputs")
            return not_yet(ex, [f"freeing dropped {which}: it had {len(before)} inputs and "
                                f"keeps {len(now)}. A node's "
                                "inputs are the graph's structure, one per argument of its "
                                "op, constants included: they stay after backward, as torch's "
                                "grad_fn.next_functions do. Only what backward saved is given "
                                "back.", keep],
                           gave=f"a {op} node with {len(now)} of its {len(before)} inputs")
        return not_yet(ex, [f"freeing changed the inputs of the {op} node (other objects, "
                            "another number or another order): a node's inputs are the "
                            "graph's structure, one per argument of its op, and they stay "
                            "after backward as they were. Only what backward saved is given "
                            "back.", keep],
                       gave=f"a {op} node whose inputs changed")
    return None


def _frees_any_graph(ex: str, free_graph: Callable) -> Result | None:
    """x * 2 (a computed node second in the order), then sin and * 1.1 in turn, a number
    of times chosen at random (6 to 40), and a second leaf added last: every computed
    node must be freed and both leaves kept, wherever they stand in the order."""
    x, y = _Node(0.5, True), _Node(2.0, True)
    h = _d("mul", x, 2.0)
    for k in range(random.randint(6, 40)):
        h = _d("mul", h, 1.1) if k % 2 else _d("sin", h)
    order = _topological(_d("add", h, y))
    leaves = [(n, _kept(n)) for n in order if n.is_leaf]
    links = [(n, n.inputs) for n in order]
    stop, _ = _call_none_ok(ex, free_graph, order)
    if stop is None:
        stop = _inputs_kept(ex, links)
    if stop is not None:
        return stop
    kept = [n for n in order if n.grad_fn is not None and getattr(n, "saved", None) is not None]
    if kept:
        return not_yet(ex, [f"on a graph of {len(order)} nodes, {len(kept)} computed nodes "
                            "kept their saved values: free every computed node of the "
                            "order, wherever it stands and however long the order is, not a "
                            "fixed part of the list."],
                       gave=f"{len(kept)} computed nodes not freed of {len(order) - 2}")
    changed = _changed(leaves)
    if changed or any(n.grad_fn is not None for n, _ in leaves):
        return not_yet(ex, [f"on a graph of {len(order)} nodes, freeing changed a leaf: the "
                            "leaves belong to you, not to the graph, wherever they stand in "
                            "the order."],
                       gave="a free_graph that changed a leaf of a longer graph")
    return None


# What freeing must leave as it found it: everything but ``saved``.
_KEPT = ("value", "requires_grad", "grad", "grad_fn")

# Why each of them stays, for the hint of a free_graph that changed it.
_WHY_KEPT = {
    "value": "A node's value is the result it computed, which the program still reads "
    "after backward (the loss it prints); a tensor keeps its data after backward",
    "requires_grad": "Its requires_grad says the node belongs to the graph: a second backward "
    "must still reach it and refuse, as PyTorch does",
    "grad": "A gradient already accumulated belongs to the one who asked for it",
    "grad_fn": "Its grad_fn says how the node was made",
}


def _kept(node) -> tuple:
    return tuple(getattr(node, name, None) for name in _KEPT)


def _changed(kept: list) -> str:
    """The attributes other than ``saved`` changed on any of the nodes, as words."""
    return " and ".join(
        name
        for i, name in enumerate(_KEPT)
        if any(not _unchanged(before[i], _kept(n)[i]) for n, before in kept)
    )


def _wiped_more_than_saved(ex: str, kept: list) -> Result | None:
    """Name what free_graph changed on the computed nodes besides ``saved``."""
    changed = _changed(kept)
    if not changed:
        return None
    why = "; ".join(_WHY_KEPT[name] for name in changed.split(" and "))
    return not_yet(
        ex,
        [f"freeing also changed the computed nodes' {changed}: only what backward saved "
         f"is given back. {why}.",
         "leave every attribute of the nodes as it is except the one holding the saved "
         "values."],
        gave=f"a free_graph that changed the computed nodes' {changed}",
    )


def _unchanged(before, after) -> bool:
    return after is before or (type(after) is type(before) and after == before)


# ----------------------------------------------------------------------------- 08-5
def _rows(name: str, x: float, y: float) -> np.ndarray:
    if name == "shared":
        return np.array([[math.cos(x * y) * y, math.cos(x * y) * x],
                         [math.exp(x * y) * y, math.exp(x * y) * x]])
    if name == "lesson":
        return np.array([[y, x], [1.0, math.cos(y)], [math.exp(x) * y, math.exp(x)]])
    return np.array([[math.cos(x) * y, math.sin(x)], [1 / y, -x / y**2]])


def _functions() -> dict[str, Callable]:
    return {
        "lesson": lambda x, y: [x * y, x + y.sin(), x.exp() * y],
        "other": lambda x, y: [x.sin() * y, x / y],
        "shared": _shared,
    }


def _shared(x, y) -> list:
    """Two outputs computed from one shared node: a backward of the first frees it."""
    c = x * y
    return [c.sin(), c.exp()]


_ABSENT = object()  # a class without a backward of its own


class _Watched:
    """A function of two nodes that records how it is used: the points it is called at
    and the backward calls made on its result (the engine's backward, which a finite
    difference never runs)."""

    def __init__(self, fn: Callable) -> None:
        self.fn, self.points, self.backwards = fn, [], 0
        self.leaves: list[tuple[bool, bool]] = []  # requires_grad of x and y, per call
        self.raised: list[RuntimeError] = []  # what a backward raised (caught or not)
        self._patched: dict[type, object] = {}
        self._inside = 0  # backward calls running now: a run_backward inside is theirs
        self._engine: tuple[dict, Callable] | None = None

    def __call__(self, x, y):
        self.points.append((getattr(x, "value", x), getattr(y, "value", y)))
        self.leaves.append((bool(getattr(x, "requires_grad", True)),
                            bool(getattr(y, "requires_grad", True))))
        out = self.fn(x, y)
        for node in out if isinstance(out, list) else [out]:
            self._count_backward(node)
        return out

    def _count_backward(self, node) -> None:
        """Count every backward of the outputs' class while the jacobian runs: a backward
        on a node made from an output (``(o * 1.0).backward()``) is the engine's too."""
        cls = type(node)
        backward = getattr(cls, "backward", None)
        if not callable(backward) or cls in self._patched:
            return

        def counted(*args, **kwargs):
            self.backwards += 1
            self._inside += 1
            try:
                return backward(*args, **kwargs)
            except RuntimeError as exc:  # noted, then raised on as it was
                self.raised.append(exc)
                raise
            finally:
                self._inside -= 1

        try:
            own = cls.__dict__.get("backward", _ABSENT)
            cls.backward = counted
            self._patched[cls] = own
        except Exception:  # a node class that takes no attributes: nothing counted
            self.backwards += 1

    def watch_engine(self, answer: Callable) -> None:
        """Count the calls of the notebook's own ``run_backward`` too, while ``answer``
        runs: calling it on an output (``run_backward(F(x, y)[k])``) is the engine's
        backward as much as ``.backward()``, which calls it in turn (counted once)."""
        names = getattr(answer, "__globals__", None)
        run = names.get("run_backward") if isinstance(names, dict) else None
        if not callable(run) or self._engine is not None:
            return

        def counted(*args, **kwargs):
            if not self._inside:
                self.backwards += 1
            return run(*args, **kwargs)

        names["run_backward"] = counted
        self._engine = (names, run)

    def restore(self) -> None:
        """Give each class its own backward back, and the notebook its run_backward."""
        if self._engine is not None:
            names, run = self._engine
            names["run_backward"] = run
            self._engine = None
        for cls, own in self._patched.items():
            try:
                if own is _ABSENT:
                    del cls.backward
                else:
                    cls.backward = own
            except Exception:  # nothing to restore on a class that refused the patch
                pass
        self._patched.clear()

    def shifted(self, x0: float, y0: float) -> bool:
        """Whether it was called a little away from (x0, y0): a finite difference."""
        def near(v, v0) -> bool:
            try:
                return 0 < abs(float(v) - v0) <= 1e-2 * max(1.0, abs(v0))
            except Exception:  # not a number: not a shifted point
                return False

        return any(near(px, x0) or near(py, y0) for px, py in self.points)


def _leaves_without_grad(watched: _Watched) -> str:
    """The arguments of F that were nodes without requires_grad the last time F was
    called (the call whose outputs went backward), as words: "x", "y" or "x and y"."""
    if not watched.leaves:
        return ""
    return " and ".join(n for n, needs in zip(("x", "y"), watched.leaves[-1]) if not needs)


def _no_grad_leaves(names: str) -> str:
    """The hint for leaves of F made without requires_grad, naming them."""
    both = " and " in names
    grads = " and ".join(f"{n}.grad" for n in names.split(" and "))
    return (
        f"the {'leaves' if both else 'leaf'} {names} you passed F "
        f"{'were' if both else 'was'} made without requires_grad=True: the engine records "
        "no graph for a node that needs no gradient, so backward has nothing to go through "
        f"to {'them' if both else 'it'} (it refuses an output that does not require grad, "
        f"and leaves {grads} at None). Both leaves of every row need a gradient."
    )


def _rounded_to(got: np.ndarray, want: np.ndarray) -> str | None:
    """How the Jacobian ``got`` was rounded ("6 decimal places", "10 significant
    digits"), when each of its entries is the right one or the right one rounded that
    way, and one at least differs; None otherwise."""
    if got.shape != want.shape or np.array_equal(got, want):
        return None
    exact = [float(w) for w in want.ravel()]
    entries = [float(g) for g in got.ravel()]
    ways = [(f"{d} decimal places", lambda v, d=d: round(v, d)) for d in range(16)]
    ways += [(f"{d} significant digits", lambda v, d=d: float(f"{v:.{d}g}"))
             for d in range(1, 17)]
    for said, rounding in ways:
        if all(g == w or g == rounding(w) for g, w in zip(entries, exact)):
            return said
    return None


def _swapped_jacobian(got: np.ndarray, want: np.ndarray, at: str) -> Result | None:
    """The hint for a Jacobian of the right shape whose columns are swapped (the
    derivatives by y where those by x belong) or whose rows are in another order than
    F's outputs; None when it is neither."""
    ex = "08-5"
    if want.shape[1] == 2 and np.allclose(got, want[:, ::-1], atol=1e-9) and not np.allclose(
        want, want[:, ::-1], atol=1e-9
    ):
        return not_yet(ex, ["the columns are swapped: your rows hold the right derivatives, "
                            "but each one in the column of the other input. The column "
                            "index is the input: column j holds the derivatives with "
                            "respect to input j, in the order F takes its inputs (x, then "
                            "y); the row index is the output."],
                       gave=f"a Jacobian with its columns swapped {at}")
    rows = list(range(len(want)))
    taken: list[int] = []
    for row in got:
        match = next((k for k in rows if k not in taken and np.allclose(row, want[k],
                                                                        atol=1e-9)), None)
        if match is None:
            return None
        taken.append(match)
    if taken == rows:
        return None
    return not_yet(ex, ["your rows are the right ones, in another order: row i holds the "
                        "gradient of output i, in the order F returns its outputs (the "
                        "first output's row first); the column index is the input."],
                   gave=f"a Jacobian with its rows in another order {at}")


_ESTIMATED = [
    "your answer evaluates F (or f) at points shifted a little from the given one: a "
    "finite difference, an estimate. The exercise asks for the gradients the Node engine "
    "computes: build the outputs from leaves that require grad and run backward on them.",
    "the leaves' .grad holds the gradient once backward has run.",
]


def _engine_switch(ex: str) -> Callable[[Any], Result | None]:
    """The first look of 08-5 and 08-6: a function that sets the notebook's
    use_reference is told it switched the engine, not only that it keeps state."""

    def switched(fn: Any) -> Result | None:
        if state_kept_between_calls(fn) != "use_reference":
            return None
        return not_yet(ex, ["your function sets use_reference, the notebook's switch that "
                            "makes Node.backward run the lab's run_backward and free_graph "
                            "in place of yours: the exercise is computed with the engine "
                            "the notebook has, and the switch is the notebook's choice, "
                            "made in the cell near the top that sets it (if a call of your "
                            "function has already set it, run that cell again).",
                            "leave use_reference alone inside the function: a function "
                            "that computes with the engine computes with whichever one "
                            "the notebook chose."],
                       gave="a function that switches the engine (use_reference)")

    return switched


@checker(
    "08-5",
    first_look=_engine_switch("08-5"),
    answer="J = []; for k in range(len(F(Node(x0), Node(y0)))): x, y = Node(x0, "
    "requires_grad=True), Node(y0, requires_grad=True); F(x, y)[k].backward(); "
    "J.append([x.grad, y.grad]). One fresh graph and fresh leaves per output: row k is "
    "the gradient of output k.",
)
@_own_work("08-5", _lab_codes, allowed=("run_backward", "free_graph"), forbid=_OTHER_ENGINES)
def check_jacobian(jacobian) -> Result:
    """``jacobian(F, x0, y0)``: one backward per output of F, with the Node engine."""
    ex = "08-5"
    bad = blank_function(ex, jacobian)
    if bad is None:
        bad = _labs_version(ex, jacobian)
    if bad is not None:
        return bad
    short = None  # the first case with fewer backward calls than rows: (F, calls, rows)
    for name, (x0, y0) in (("lesson", (1.0, 2.0)), ("lesson", (0.5, -1.0)),
                           ("other", (0.3, 1.7)), ("shared", (0.4, 1.5))):
        want = _rows(name, x0, y0)
        watched = _Watched(_functions()[name])
        watched.watch_engine(jacobian)
        try:
            with _Autograd() as autograd:
                try:
                    J = jacobian(watched, x0, y0)
                finally:
                    watched.restore()
        except RuntimeError as exc:
            unrecorded = _leaves_without_grad(watched)
            if "require" in str(exc) and unrecorded:
                return not_yet(ex, [_no_grad_leaves(unrecorded)],
                               gave=f"RuntimeError: {str(exc).rstrip('.')}")
            if name != "shared" or "require" in str(exc):
                return failed(ex, crash_message(exc))
            return not_yet(ex, ["for an F whose outputs share a node (c = x * y; "
                                "[c.sin(), c.exp()]) your jacobian ran into a freed graph: "
                                "the first output's backward freed c's saved values, and "
                                "the second output's backward needs them.",
                                "give every output its own fresh graph (or keep the graph "
                                "alive for the backward calls still to come)."],
                           gave=f"RuntimeError: {str(exc).rstrip('.')}")
        except IndexError as exc:  # typically range(3): the lesson's F has 3 outputs
            return not_yet(ex, ["your jacobian counts on F having as many outputs as the "
                                "lesson's: the checker also calls it with an F of another "
                                "size. Take the number of rows from what F returns."],
                           gave=f"IndexError: {exc}" + ("" if name == "lesson" else
                                                        " for another F"))
        except Exception as exc:  # any other error: reported to the learner
            return failed(ex, crash_message(exc))
        if watched.raised:
            said = str(watched.raised[0]).rstrip(".")
            freed = (" The error says the graph was already used by a backward that freed "
                     "it: an output's backward needs a graph no backward has freed."
                     if "free" in said else "")
            return not_yet(ex, [f"a backward inside your jacobian raised RuntimeError "
                                f"({said}), and your code caught it and went on: that "
                                "backward computed nothing, so its row holds what an "
                                f"earlier backward left in the leaves.{freed}",
                                "let the error show rather than silence it, and see which "
                                "graph each output's backward runs through."],
                           gave=f"a caught RuntimeError: {said}")
        if autograd.ran:
            return not_yet(ex, [_library_autograd(autograd.ran)],
                           gave=f"a Jacobian computed by {autograd.ran}'s autograd")
        blank = returned_blank(ex, J)
        if blank is not None:
            return blank
        if watched.shifted(x0, y0):
            return not_yet(ex, _ESTIMATED, gave="a Jacobian estimated from nearby points")
        if isinstance(J, (list, tuple)) and any(
            isinstance(row, (list, tuple)) and any(_is_node(v) for v in row) for row in J
        ):
            return not_yet(ex, ["your rows hold Node objects, the leaves themselves: the "
                                "Jacobian's entries are numbers, the gradients backward "
                                "left in the leaves."],
                           gave="rows of Node objects")
        unrecorded = _leaves_without_grad(watched)
        if unrecorded and isinstance(J, (list, tuple)) and any(
            isinstance(row, (list, tuple)) and any(v is None for v in row) for row in J
        ):
            return not_yet(ex, [_no_grad_leaves(unrecorded)],
                           gave=f"None in the Jacobian's rows at ({x0}, {y0})")
        try:
            got = np.array([[float(as_array(v)) for v in row] for row in J])
        except Exception:  # not a list of rows of numbers: reported, never raised
            return failed(ex, f"jacobian should return a list of rows of numbers, got "
                              f"{show(J)}.")
        at = f"at ({x0}, {y0})" + ("" if name == "lesson" else " for another F")
        if got.shape == want.T.shape and got.shape != want.shape and np.allclose(got, want.T):
            return not_yet(ex, ["rows and columns are swapped: row i holds the gradient of "
                                "output i, column j the input j."], gave=f"the transpose {at}")
        if got.shape != want.shape:
            return not_yet(ex, ["one row per output of F, one column per input (x, y)."],
                           gave=f"shape {got.shape} {at}")
        # the engine's backward multiplies the table's exact derivatives: exact but for
        # rounding, where an estimate, however fine its stencil, is off in the last digits
        if np.allclose(got, want, rtol=1e-11, atol=1e-13):
            if short is None and watched.backwards < len(want):
                short = (name, watched.backwards, len(want))
            continue
        if got.shape == want.shape:
            swapped = _swapped_jacobian(got, want, at)
            if swapped is not None:
                return swapped
        rounded = _rounded_to(got, want)
        if rounded is not None:
            return not_yet(ex, [f"your Jacobian is rounded: its entries are the engine's "
                                f"gradients rounded to {rounded}. Nothing here is an "
                                "estimate: the engine's backward gives every entry to the "
                                "last digit of a float, and the checker compares them all. "
                                "Keep the gradients as the leaves' .grad holds them, "
                                "unrounded (round only what you print)."],
                           gave=f"a rounded Jacobian {at}")
        in_float32 = bool(np.all(got.astype(np.float32).astype(np.float64) == got))
        if in_float32 and np.allclose(got, want, rtol=1e-6, atol=1e-9):
            return not_yet(ex, ["your Jacobian holds float32 numbers: its entries are "
                                "rounded to about 7 digits. The engine's gradients are "
                                "Python floats (float64): keep them as they are, in lists "
                                "or an array of that dtype."],
                           gave=f"a Jacobian rounded to float32 {at}")
        if np.allclose(got, want, atol=1e-9):
            return not_yet(ex, ["your Jacobian is close to the engine's but not exact: off in "
                                "the last digits, as an estimate is (a finite difference, "
                                "however fine its stencil). The engine's backward multiplies "
                                "the table's exact derivatives, and gives the Jacobian to "
                                "rounding.", _ESTIMATED[1]],
                           gave=f"a Jacobian off in the last digits {at}")
        if np.allclose(got, np.cumsum(want, axis=0), atol=1e-9):
            return not_yet(ex, ["each row adds up the rows before it: the leaves' .grad "
                                "accumulates over backward calls. Start every row with "
                                "fresh leaves (or zero their grads)."],
                           gave=f"accumulated rows {at}")
        bad_entries = np.argwhere(~np.isclose(got, want, atol=1e-9))
        if name == "lesson" and (x0, y0) != (1.0, 2.0):
            return not_yet(ex, ["your Jacobian is right at (1, 2) but not elsewhere: the "
                                "checker calls jacobian(F, x0, y0) at other points, so "
                                "compute it with the engine from x0, y0, not typed numbers."],
                           gave=f"a wrong Jacobian {at}")
        i, j = bad_entries[0]
        return not_yet(ex, [f"entry [{i}][{j}] is off: it is d output{i} / d input{j}, "
                            f"the derivative of output {i} alone with respect to input "
                            f"{j}. Work it out by hand and compare; the engine gets it "
                            "from the table's derivatives."],
                       gave=f"a Jacobian with a wrong entry {at}")
    if short is None:
        return correct(ex, "one backward per output gives one row: right at every point "
                           "and for a function you had not seen.")
    name, backwards, rows = short
    if backwards == 0:
        return not_yet(ex, ["the numbers are right, but the Node engine's backward never "
                            "ran on F's outputs: the exercise asks for the Jacobian the "
                            "engine computes, one backward per output.",
                            _ESTIMATED[1]],
                       gave="a Jacobian without backward" + ("" if name == "lesson" else
                                                             " for another F"))
    return not_yet(ex, [f"the numbers are right, but for an F of {rows} outputs the "
                        f"engine's backward ran {backwards} times: each row is the "
                        "gradient of one output, which one backward of that output gives.",
                        _ESTIMATED[1]],
                   gave=f"{backwards} backward calls for {rows} rows")


# ----------------------------------------------------------------------------- 08-6


def _another_rate(ex, gradient_descent, f, start) -> Result | None:
    """A refusal for a descent right at one step size only (``lr = min(lr, 0.05)``):
    run again with a larger lr, it must still end where plain descent does."""
    lr, steps = 0.12, 10
    stop, _, _, point = _descend(ex, gradient_descent, f, start, lr, steps)
    if stop is not None:
        return stop
    try:
        got = np.array([float(as_array(v)) for v in point])
    except Exception:  # a second run that returns no pair: the first run's checks decide
        return None
    if got.shape == (2,) and np.allclose(got, _simulate(start, lr, steps), rtol=1e-7, atol=1e-9):
        return None
    return not_yet(ex, ["your descent is right for one step size and not for another: given "
                        "a larger lr, it ends elsewhere than plain gradient descent does. Use "
                        "the lr the function is given, as it is, in every step."],
                   gave="a descent that changes the lr it is given")
def _grad(x: float, y: float) -> np.ndarray:
    # f(x, y) = (x - 2) ** 2 + 3 * (y + 1) ** 2 + x * y / 4
    return np.array([2 * (x - 2) + y / 4, 6 * (y + 1) + x / 4])


def _simulate(start, lr: float, steps: int, mistake: str = "") -> np.ndarray:
    p = np.array(start, dtype=float)
    total = np.zeros(2)
    for _ in range(steps):
        g = _grad(*p)
        total = total + g
        if mistake == "no_zero":
            g = total
        elif mistake in ("no_zero_x", "no_zero_y"):  # one leaf's grad never reset
            g = np.array([total[0], g[1]]) if mistake == "no_zero_x" else np.array([g[0], total[1]])
        if mistake == "sequential":  # y moved by a gradient taken after x moved
            x = p[0] - lr * g[0]
            p = np.array([x, p[1] - lr * _grad(x, p[1])[1]])
            continue
        p = p + lr * g if mistake == "ascent" else p - lr * g
    return p


def _with_momentum(got, start, lr: float, steps: int) -> bool:
    """Whether ``got`` is where a descent with momentum ends: a velocity that carries
    past gradients on (v = beta v + g, or an average v = beta v + (1 - beta) g), each
    step moving by -lr v, for a usual beta."""
    for beta in (0.9, 0.5, 0.8, 0.95, 0.99, 0.7, 0.6, 0.75, 0.85, 0.98, 0.999):
        for share in (1.0, 1.0 - beta):
            p, v = np.array(start, dtype=float), np.zeros(2)
            for _ in range(steps):
                v = beta * v + share * _grad(*p)
                p = p - lr * v
            if np.allclose(got, p, rtol=1e-6):
                return True
    return False


def _is_node(value) -> bool:
    """An engine node (it has a value and a grad), not a number."""
    return hasattr(value, "value") and hasattr(value, "grad")


def _descend(ex: str, gradient_descent: Callable, f: Callable, start, lr: float, steps: int):
    """Run the learner's descent on ``f``, watched: (stop, watched f, autograd, point),
    ``stop`` being the result to return when it crashed."""
    watched = _Watched(f)
    watched.watch_engine(gradient_descent)
    try:
        with _Autograd() as autograd:
            point = gradient_descent(watched, start[0], start[1], lr, steps)
    except RuntimeError as exc:
        # the learner's run_backward words its own refusal of a freed graph
        if "require" in str(exc):
            return failed(ex, crash_message(exc)), watched, None, None
        return not_yet(ex, ["a backward ran into a graph that an earlier backward had "
                            "freed: each step must build f(x, y) afresh from the leaves, and "
                            "a step that rebuilds x out of x (x = x - ...) turns x into a "
                            "computed node of last step's freed graph.",
                            "build f inside the loop, and move each leaf by changing the "
                            "number it holds, x.value, so it stays the same leaf."],
                       gave=f"RuntimeError: {str(exc).rstrip('.')}"), watched, None, None
    except Exception as exc:  # any other error: reported to the learner
        said = _crash_in_function(exc)
        if isinstance(exc, TypeError) and "NoneType" in str(exc):
            return failed(ex, f"{said} A leaf's grad was None when backward added what "
                              "reached it: in this engine a leaf's grad is a number that "
                              "backward adds into, so zeroing the grads means setting them "
                              "to zero, not to None (torch's zero_grad may leave None "
                              "because its backward handles a missing grad; this engine's "
                              "run_backward does not)."), watched, None, None
        return failed(ex, said), watched, None, None
    finally:
        watched.restore()
    return None, watched, autograd, point


@checker(
    "08-6",
    first_look=_engine_switch("08-6"),
    answer="x, y = Node(x0, requires_grad=True), Node(y0, requires_grad=True); each step: "
    "x.grad = y.grad = 0.0; f(x, y).backward(); x.value -= lr * x.grad; y.value -= lr * "
    "y.grad. Return (x.value, y.value). Zeroing keeps one step's gradient; minus moves "
    "downhill.",
)
@_own_work("08-6", _lab_codes, allowed=("run_backward", "free_graph"), forbid=_OTHER_ENGINES)
def check_gradient_descent(gradient_descent) -> Result:
    """``gradient_descent(f, x0, y0, lr, steps)``: descent with the Node engine, on any f."""
    ex = "08-6"
    bad = blank_function(ex, gradient_descent)
    if bad is None:
        bad = _labs_version(ex, gradient_descent)
    if bad is not None:
        return bad

    def f(x, y):
        return (x - 2) ** 2 + 3 * (y + 1) ** 2 + x * y / 4

    start, lr, steps = (0.5, 1.0), 0.05, 60
    stop, watched, autograd, point = _descend(ex, gradient_descent, f, start, lr, steps)
    if stop is not None:
        return stop
    if autograd.ran:
        return not_yet(ex, [_library_autograd(autograd.ran)],
                       gave=f"gradients computed by {autograd.ran}'s autograd")
    blank = returned_blank(ex, point)
    if blank is not None:
        return blank
    if _is_node(point):
        return not_yet(ex, ["you returned one Node: return where the descent ends as a "
                            "pair (x, y) of the numbers the two leaves hold, not a node."],
                       gave=f"one {type(point).__name__} object")
    if isinstance(point, (list, tuple)) and any(_is_node(v) for v in point):
        return not_yet(ex, ["you returned the Node objects themselves: return the numbers "
                            "they hold, as the exercise asks (a Node keeps changing when "
                            "it is stepped again, and carries its gradient along)."],
                       gave=f"a pair of {type(point[0]).__name__} objects")
    try:
        got = np.array([float(as_array(v)) for v in point])
        if got.shape != (2,):
            raise ValueError
    except Exception:  # not a pair of numbers: reported, never raised
        return failed(ex, f"gradient_descent should return a pair (x, y) of numbers, got "
                          f"{show(point)}.")
    if not watched.points and not np.allclose(got, start):  # the f it was given never ran
        return not_yet(ex, [_f_not_called(gradient_descent),
                            "every step builds the function the descent is given from the "
                            "two leaves, then runs backward on it."],
                       gave="a descent that never calls the f it is given")
    if watched.backwards == 0 and watched.points:  # f ran, backward never: an estimate
        return not_yet(ex, [_ESTIMATED[0].replace("F (or f)", "f"), "each step: zero the "
                            "grads, build f(x, y) from the two leaves, run backward, move."],
                       gave="gradients estimated without backward")
    if np.allclose(got, _simulate(start, lr, steps), rtol=1e-7, atol=1e-9):
        other = _another_rate(ex, gradient_descent, f, start)
        if other is not None:
            return other
        return _every_step_asked(ex, gradient_descent, f, watched.backwards, steps)
    if np.allclose(got, start):
        hint = ["your function returned where it started: each step must move x.value "
                "and y.value."]
    elif np.allclose(got, _simulate(start, lr, steps, "no_zero"), rtol=1e-6):
        hint = ["the grads were never reset, so each step moved by the sum of all gradients "
                "so far: zero x.grad and y.grad before each backward."]
    elif any(np.allclose(got, _simulate(start, lr, steps, f"no_zero_{leaf}"), rtol=1e-6)
             for leaf in "xy"):
        leaf = next(leaf for leaf in "xy" if np.allclose(
            got, _simulate(start, lr, steps, f"no_zero_{leaf}"), rtol=1e-6))
        hint = [f"the grads were never reset before a backward: {leaf}.grad kept adding up, "
                f"so each step moved {leaf} by the sum of all its gradients so far. Zeroing "
                "after the move does not reach a grad you never zero: zero x.grad and "
                "y.grad before each backward."]
    elif np.allclose(got, _simulate(start, lr, steps, "ascent"), rtol=1e-6):
        hint = ["your steps climb: the gradient points uphill, so step against it."]
    elif _with_momentum(got, start, lr, steps):
        hint = ["your descent keeps a velocity (momentum): each step moves by a blend of "
                "the gradients of earlier steps too. Plain gradient descent, which the "
                "exercise asks for, moves each variable by -lr times its CURRENT gradient "
                "only, with nothing carried over from one step to the next."]
    elif any(np.allclose(got, _simulate(start, rate, steps), rtol=1e-6)
             for rate in (0.1, 0.01, 0.001)):
        hint = ["your steps use a learning rate of their own: use the lr the function is "
                "given (the checker passes another one than the lesson)."]
    elif np.allclose(got, _simulate(start, lr, steps - 1), rtol=1e-6) and (
        watched.backwards < steps
    ):
        hint = ["your descent takes one step fewer than asked: it ran one backward pass "
                "fewer than the steps it was given. Count the turns of your loop."]
    elif np.allclose(got, _simulate(start, lr, steps - 1), rtol=1e-6):
        hint = ["your descent ends one step short: count the moves that use a fresh "
                "gradient. A move made before the loop's backward uses what .grad held "
                "before it, nothing at all in the first loop.",
                "in each loop: zero, build f, backward, and only then move."]
    elif np.allclose(got[::-1], _simulate(start, lr, steps), rtol=1e-7, atol=1e-9):
        return not_yet(ex, ["the numbers are where the descent ends, but in the other "
                            "order: your pair gives y first. The exercise asks for the "
                            "point as (x, y), x first, as gradient_descent takes its start "
                            "(x0, y0)."],
                       gave="the end point as (y, x)")
    elif np.allclose(got, _simulate(start, lr, steps + 1), rtol=1e-6):
        hint = ["one step too many: take exactly `steps` steps."]
    elif np.allclose(got, _simulate(start, lr, steps, "sequential"), rtol=1e-6):
        hint = ["your y moves by a gradient taken after x has already moved, at a point "
                "the descent never stood on: a step of gradient descent moves every "
                "variable by the gradient of the SAME point. One backward per step, then "
                "both moves."]
    elif _in_float32(got) and np.allclose(got, _simulate(start, lr, steps), rtol=1e-4):
        hint = [_ROUNDED_TO_FLOAT32.format(where=f"after {steps} steps")]
    elif np.allclose(got, _grad(*_simulate(start, lr, steps - 1)), rtol=1e-6, atol=1e-9):
        hint = ["you returned the last gradients, x.grad and y.grad: return where the "
                "descent ends, the values the leaves hold."]
    elif not np.all(np.isfinite(got)) or np.abs(got).max() > 1e6:
        hint = ["the iterates blew up although the checker's lr is small: is the update "
                "using the lr and steps it was given, and the current gradient only?"]
    else:
        hint = ["the checker calls gradient_descent(f, 0.5, 1.0, 0.05, 60) with its own f: "
                "use the f, start, lr and steps you are given, and the engine's gradients.",
                "each step: zero the grads, build f(x, y), backward, move both values by "
                "-lr times their grad."]
    return not_yet(ex, hint, gave=f"({got[0]:.4g}, {got[1]:.4g})")


def _f_not_called(gradient_descent: Callable) -> str:
    """Why a descent never called the f it was given: it calls the notebook's f (a
    global of that name, the function's own parameter named otherwise), or computes
    the point some other way (a closed form, typed numbers)."""
    code = getattr(gradient_descent, "__code__", None)
    params = code.co_varnames[: code.co_argcount] if code is not None else ()
    first = params[0] if params else "f"
    if code is not None and first != "f" and "f" in code.co_names:
        return (f"your function calls the notebook's f, not the function it is given as "
                f"its first argument (`{first}` in your function): the checker calls it "
                "with its own f, which your descent never called. Build each step "
                "from the argument.")
    return ("your descent never called the function it is given: the checker calls it "
            "with its own f, and the point must be where descending THAT function ends. A "
            "minimum worked out another way (the notebook's f, a formula, numbers typed "
            "in) is not the descent the checker asks for.")


# A descent whose values are float32 numbers (a float32 start: numpy keeps a float32
# minus a Python float in float32) drifts by a rounding per step: some 1e-3 after the
# linear descent's thousands of steps, which no other mistake leaves float32-exact.
_ROUNDED_TO_FLOAT32 = (
    "{where}, your descent is off in the 8th digit: its values are float32 numbers "
    "(numpy's float32, or a tensor's default dtype), as a float32 holds them, and every "
    "step adds its rounding on. The engine works in Python floats throughout: keep "
    "x.value and y.value Python floats, moved by -lr times their gradient, unrounded."
)


# A second, longer descent with another lr from another start: a loop that stops early
# (after a fixed number of steps, or once the gradient is small) ends where the full
# descent does on the first run when it never reaches its stop there.  Its number of
# steps is chosen at random on each check, from a range no fixed stop can cover.
_LONG_START, _LONG_LR, _LONG_STEPS = (-1.5, 2.5), 0.02, (300, 600)


def _every_step_asked(ex: str, gradient_descent: Callable, f: Callable, backwards: int,
                      steps: int) -> Result:
    """Accept a descent right on the first run once it also takes every one of the many
    steps of a longer run, each on a fresh gradient, and ends where they lead."""
    long_steps = random.randint(*_LONG_STEPS)
    stop, watched, autograd, point = _descend(ex, gradient_descent, f, _LONG_START, _LONG_LR,
                                              long_steps)
    if stop is not None:
        return stop
    try:
        got = np.array([float(as_array(v)) for v in point])
    except Exception:  # it returned a pair on the first run: anything else is a crash
        got = np.full(2, np.nan)
    passes = watched.backwards
    ended = got.shape == (2,) and np.allclose(
        got, _simulate(_LONG_START, _LONG_LR, long_steps), rtol=1e-9, atol=1e-12
    )
    if passes < long_steps and backwards == steps:
        return _stops_early(ex, long_steps, passes)
    if not ended and _in_float32(got) and np.allclose(
        got, _simulate(_LONG_START, _LONG_LR, long_steps), rtol=1e-5, atol=1e-6
    ):
        return not_yet(ex, [_ROUNDED_TO_FLOAT32.format(
                           where=f"right for {steps} steps, but after {long_steps}")],
                       gave=f"({got[0]!r}, {got[1]!r}) after {long_steps} steps")
    if not ended:
        return not_yet(ex, [f"right for {steps} steps, wrong for {long_steps} with another "
                            "lr from another start: every step must move both values by "
                            "-lr times their fresh gradient, whatever the number of steps."],
                       gave=f"({got[0]:.4g}, {got[1]:.4g}) after {long_steps} steps")
    stop = _exact_steps(ex, gradient_descent)
    if stop is not None:
        return stop
    return correct(ex, "step for step the descent the checker expects, on a function you "
                       "had not seen, for as many steps as it is given.")


def _linear(x, y):
    """A function whose gradient never changes: its descent never settles, so where it
    ends tells exactly how many steps of which size were taken."""
    return x * 0.5 - y * 0.25


def _settles(x, y):
    """A function whose descent with lr 0.5 lands on its minimum (1, -2) in one step,
    exactly, where the gradient is exactly 0: a loop that stops once the gradient is
    small, or once the point stops moving, stops there, whatever its threshold."""
    return (x - 1) * (x - 1) + (y + 2) * (y + 2)


# The linear descent's number of steps, chosen at random on each check: a loop capped
# below the range always ends short of it; one capped inside it does on some checks.
# (A cap beyond every number of steps checked cannot be seen: the range is as wide as
# the check's time allows.)
_EXACT_STEPS = (2200, 3600)


def _linear_descent(start, lr: float, steps: int) -> tuple[float, float]:
    """Where descent on :func:`_linear` from ``start`` ends, in Python floats."""
    x, y = start
    for _ in range(steps):
        x -= lr * 0.5
        y -= lr * -0.25
    return x, y


def _stops_early(ex: str, steps: int, passes: int) -> Result:
    return not_yet(ex, [f"your descent stops early: asked for {steps} steps, it ran "
                        f"{passes} backward passes. A loop that stops after a number of "
                        "steps of its own, or once the gradient is small, is not the "
                        "descent asked for: take exactly `steps` steps, each on a fresh "
                        "gradient, however close to the minimum they already are.",
                        "let the loop run over the steps it is given, with no break."],
                   gave=f"{passes} steps of {steps}")


def _exact_steps(ex: str, gradient_descent: Callable) -> Result | None:
    """A descent on :func:`_settles` that reaches its minimum in one step, then one on
    :func:`_linear` of a random number of steps (:data:`_EXACT_STEPS`): each step moves
    by exactly lr times the gradient, so the end is known to the last digit."""
    steps = 40
    stop, watched, autograd, point = _descend(ex, gradient_descent, _settles, (3.0, 1.5),
                                              0.5, steps)
    if stop is not None:
        return stop
    if watched.backwards < steps:
        return _stops_early(ex, steps, watched.backwards)
    steps, lr, start = random.randint(*_EXACT_STEPS), 0.0123, (0.3, -0.2)
    stop, watched, autograd, point = _descend(ex, gradient_descent, _linear, start, lr, steps)
    if stop is not None:
        return stop
    if watched.backwards < steps:
        return _stops_early(ex, steps, watched.backwards)
    try:
        got = np.array([float(as_array(v)) for v in point])
    except Exception:  # it returned a pair before: anything else is a crash
        got = np.full(2, np.nan)
    x, y = _linear_descent(start, lr, steps)
    if got.shape == (2,) and np.allclose(got, [x, y], rtol=1e-13, atol=1e-15):
        return None
    rounded_start = tuple(float(np.float32(v)) for v in start)
    if got.shape == (2,) and np.allclose(got, _linear_descent(rounded_start, lr, steps),
                                         rtol=1e-13, atol=1e-15):
        return not_yet(ex, [f"your descent starts from x0 and y0 rounded to float32 (the "
                            f"checker's start {start[0]} is not a float32 number): the "
                            "steps are right, the start is off in the 8th digit. Keep the "
                            "start Python floats, as the engine's values are."],
                       gave=f"({got[0]:.10g}, {got[1]:.10g}) after {steps} steps")
    if got.shape == (2,) and _in_float32(got) and np.allclose(got, [x, y], rtol=1e-2):
        return not_yet(ex, [_ROUNDED_TO_FLOAT32.format(where=f"after {steps} steps")],
                       gave=f"({got[0]!r}, {got[1]!r}) after {steps} steps")
    return not_yet(ex, [f"on f(x, y) = x * 0.5 - y * 0.25, whose gradient never changes, "
                        f"your descent of {steps} steps ends a little away from where steps "
                        "of lr times the gradient lead: each step moves each value by "
                        "exactly lr times its fresh gradient, with no factor of its own "
                        "however close to 1, for every one of the steps it is given."],
                   gave=f"({got[0]:.10g}, {got[1]:.10g}) after {steps} steps")


def _crash_in_function(exc: BaseException) -> str:
    """What the learner's code raised, naming the function it raised in: a crash in
    run_backward, called through Node.backward, is not at a line of gradient_descent."""
    said = crash_message(exc)
    frames = traceback.extract_tb(exc.__traceback__)[1:]  # skip the checker's own frame
    yours = [f for f in frames if not _is_library(f.filename)]
    if yours and yours[-1].name not in ("<module>", "<lambda>"):
        line = yours[-1].lineno
        said = said.replace(f" at line {line} of your code",
                            f" in {yours[-1].name}, at line {line} of its cell", 1)
    return said


# ------------------------------------------------------------------ reference engine
# The notebook's demonstrations run on the learner's functions once their checks pass;
# until then (or when the learner asks, to compare) they run on these.  They live here,
# never in a cell, so a student's notebook shows no answer.
def _table() -> dict:
    return derivative_table()


def _static_backward(nodes: list, loss) -> None:
    derivative = {name: row[1] for name, row in _table().items()}
    for n in nodes:
        n.grad = 0.0
    loss.grad = 1.0
    for n in reversed(nodes):
        if n.op is None:
            continue
        args = [i.value for i in n.inputs]
        for k, inp in enumerate(n.inputs):
            if inp.needs_grad:
                inp.grad += n.grad * derivative[n.op](*args, k)


def _run_backward(root) -> list:
    derivative = {name: row[1] for name, row in _table().items()}
    order = _topological(root)
    grads = {id(root): 1.0}
    for node in reversed(order):
        g = grads.pop(id(node), 0.0)
        if node.is_leaf:
            node.grad += g
            continue
        if node.saved is None:
            raise RuntimeError("Trying to backward through the graph a second time; "
                               "pass retain_graph=True to the first backward.")
        for k, inp in enumerate(node.inputs):
            if inp.requires_grad:
                grads[id(inp)] = grads.get(id(inp), 0.0) + g * derivative[node.grad_fn](
                    *node.saved, k)
    return order


def _free_graph(order: list) -> None:
    for node in order:
        if not node.is_leaf:
            node.saved = None


def _jacobian(node_class: type) -> Callable:
    def jacobian(F, x0, y0):
        rows = []
        for k in range(len(F(node_class(x0), node_class(y0)))):
            x, y = node_class(x0, requires_grad=True), node_class(y0, requires_grad=True)
            F(x, y)[k].backward()
            rows.append([x.grad, y.grad])
        return rows

    return jacobian


def _gradient_descent(node_class: type) -> Callable:
    def gradient_descent(f, x0, y0, lr=0.1, steps=200):
        x, y = node_class(x0, requires_grad=True), node_class(y0, requires_grad=True)
        for _ in range(steps):
            x.grad = y.grad = 0.0
            f(x, y).backward()
            x.value -= lr * x.grad
            y.value -= lr * y.grad
        return x.value, y.value

    return gradient_descent


def _library_autograd(name: str) -> str:
    return (f"your function runs {name}'s autograd on tensors: the exercise asks for the "
            "Node engine you built in this lesson. Make the leaves Nodes of the notebook "
            "(requires_grad=True) and call backward on what F (or f) builds from them.")


def _labs_version(ex: str, fn: Any) -> Result | None:
    """Refuse the lab's own function (or one :func:`reference` made, or a copy of its
    code) handed in as the answer."""
    code = getattr(fn, "__code__", None)
    lab = _lab_codes().get((code.co_code, code.co_consts)) if code is not None else None
    if lab is not None and lab[0] != "table" and lab[1] in (None, code.co_filename):
        return not_yet(ex, ["that is the lab's version, the one that stands in for the "
                            "notebook's demonstrations: the exercise asks you to write "
                            "your own."],
                       gave="the lab's reference function")
    return None


def reference(name: str, node_class: type | None = None) -> Callable:
    """The lab's version of lesson 8's function ``name`` (``static_backward``,
    ``run_backward``, ``free_graph``, ``jacobian``, ``gradient_descent``); the last two
    build leaves of the notebook's ``node_class``.

    >>> class N:
    ...     def __init__(self, value, requires_grad=False):
    ...         self.value, self.requires_grad, self.grad = value, requires_grad, 0.0
    ...         self.grad_fn, self.inputs, self.saved = None, (), None
    ...     is_leaf = property(lambda self: self.grad_fn is None)
    >>> x = N(3.0, requires_grad=True)
    >>> y = N(6.0, requires_grad=True)
    >>> y.grad_fn, y.inputs, y.saved = "mul", (x, N(2.0)), (3.0, 2.0)
    >>> order = reference("run_backward")(y)
    >>> x.grad, len(order)
    (2.0, 2)
    """
    fixed = {"static_backward": _static_backward, "run_backward": _run_backward,
             "free_graph": _free_graph}
    if name in fixed:
        return fixed[name]
    makers = {"jacobian": _jacobian, "gradient_descent": _gradient_descent}
    if name not in makers:
        raise KeyError(f"lesson 8 has no function {name!r}; it has "
                       f"{', '.join([*fixed, *makers])}")
    if node_class is None:
        raise TypeError(f"reference({name!r}) builds nodes: pass the notebook's Node class")
    return makers[name](node_class)


# Which function of the notebook each exercise of lessons 8 and 9 asks for.
_ASKS_FOR = {"08-2": "static_backward", "08-3": "run_backward", "08-4": "free_graph",
             "08-5": "jacobian", "08-6": "gradient_descent", "09-1": "accuracy",
             "09-2": "train_step", "09-3": "build_static"}


def yours_or_labs(exercise: str, name: str, *args: Any, lab: bool = False,
                  **kwargs: Any) -> Any:
    """Call the notebook's function ``name`` with ``args`` once ``exercise`` has passed
    its check; until then (or when ``lab`` is true, to compare) call the lab's version of
    it, here: the lab's function is never handed to the notebook.  Lesson 8's Jacobian
    and gradient descent build leaves of the notebook's ``Node`` class."""
    if _ASKS_FOR.get(exercise) != name:
        raise KeyError(f"exercise {exercise} does not ask for a function {name!r}")
    names = sys._getframe(1).f_globals
    if solved(exercise) and not lab:
        return names[name](*args, **kwargs)
    if exercise.startswith("09"):
        # lesson 9's module imports this one, so it is looked up, loaded by then
        lesson9 = sys.modules[f"{__package__}.lesson09"].reference
        return lesson9(name)(*args, **kwargs)
    node_class = names.get("Node") if name in ("jacobian", "gradient_descent") else None
    return reference(name, node_class)(*args, **kwargs)


def engine_table(table: dict, lab: bool = False) -> dict:
    """The table lesson 8's engines read as ``OPS``: the notebook's ``table`` once 08-1
    has passed its check (and ``lab`` is false), the lab's complete one until then."""
    return table if solved("08-1") and not lab else derivative_table()


# The lab's functions an answer may call to reach the lab's code: never the checker's own.
_ENTRY_POINTS = {yours_or_labs.__code__, reference.__code__, _THROUGH_OPS}
