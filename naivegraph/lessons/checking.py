"""What every exercise checker returns, and the helpers the checkers share.

A checker takes the learner's answer and returns a :class:`Result`: truthy when the
answer is right, falsy otherwise, printing one line (``✓ correct [01-2]: ...``,
``✗ not yet [01-2]: you gave ...; hint: ...`` or ``○ not done yet [01-2]: ...``).  It
never raises: an answer still left as ``...`` reports "not done yet".

A rejection teaches rather than tells: it names what the learner gave and gives a hint
for the mistake made, never the expected answer.  Each further wrong try of the same
exercise gets the next, stronger hint (:func:`not_yet`); once the hints run out the
message says how to see the answer, which only :func:`reveal` prints.

The checkers of each lesson are in :mod:`naivegraph.lessons.checkers`.
"""

from __future__ import annotations

import ast
import builtins
import dis
import functools
import html
import inspect
import linecache
import re
import sysconfig
import textwrap
import traceback
from collections import Counter
from pathlib import Path
from types import BuiltinFunctionType, CodeType, FunctionType, MethodType, ModuleType
from typing import Any, Callable, Sequence

import numpy as np

from ..dynamic import anomaly_mode, defaults, engine, forward, grad_mode, saved
from . import cell_reads
from .earlier_cells import (
    computed_earlier,
    dependencies,
    free_names,
    related_part,
    sources_of,
    traced_back,
    unrelated,
)

PASS, FAIL, TODO = "pass", "fail", "todo"
SYMBOL = {PASS: "✓ correct", FAIL: "✗ not yet", TODO: "○ not done yet"}
LINE = re.compile(r"^(✓ correct|✗ not yet|○ not done yet) \[([\w.-]+)\]: ?(.*)$")
STATUS_OF = {v: k for k, v in SYMBOL.items()}
TODO_MESSAGE = "replace every `...` with your answer, then run the cell again."


# ----------------------------------------------------------------------------------
# Result
# ----------------------------------------------------------------------------------


def _execution_count() -> int | None:
    try:
        from IPython import get_ipython
    except Exception:  # pragma: no cover - IPython is optional
        return None
    shell = get_ipython()
    return getattr(shell, "execution_count", None) if shell is not None else None


class Result:
    """The outcome of one exercise check: truthy on pass, with a readable message."""

    def __init__(self, exercise: str, status: str, message: str) -> None:
        self.exercise = exercise
        self.status = status
        self.detail = message
        self._shown_in = _execution_count()

    @property
    def passed(self) -> bool:
        return self.status == PASS

    @property
    def done(self) -> bool:
        """False while the learner has not answered yet."""
        return self.status != TODO

    @property
    def message(self) -> str:
        return f"{SYMBOL[self.status]} [{self.exercise}]: {self.detail}"

    def __bool__(self) -> bool:
        return self.passed

    def __repr__(self) -> str:
        return self.message

    def _repr_html_(self) -> str:
        colour = {PASS: "#1a7f37", FAIL: "#b42318", TODO: "#6b7280"}[self.status]
        return (
            f'<div style="border-left:4px solid {colour};padding:2px 8px;'
            f'font-family:monospace;white-space:pre-wrap">{html.escape(self.message)}</div>'
        )

    def _ipython_display_(self) -> None:
        # The checker already printed the message in the cell that made this result;
        # show it again only when the result is displayed from a later cell.
        if self._shown_in is not None and self._shown_in == _execution_count():
            return
        from IPython.display import display

        display({"text/plain": self.message, "text/html": self._repr_html_()}, raw=True)


#: The exercises whose latest check passed (a demonstration that runs the learner's
#: code waits for them: :func:`solved`).
SOLVED: set[str] = set()


def report(exercise: str, status: str, message: str) -> Result:
    if status == FAIL and "your code raised" in message:
        # the crash is the mistake to fix; state it left behind (a dual level it
        # entered, grad mode it switched off) follows from it and is put back
        message += _state_left_by_crash()
    refused = _state_refusal(exercise, status)
    if refused is not None:
        return refused
    result = Result(exercise, status, message)
    if status == PASS:
        SOLVED.add(exercise)
    else:
        SOLVED.discard(exercise)
    print(result.message, flush=True)
    return result


def solved(exercise: str) -> bool:
    """Whether the latest check of ``exercise`` passed: a cell that runs the learner's
    answer after its check asks first, so a notebook with blanks still runs through."""
    return exercise in SOLVED


def not_done(exercise: str, extra: str = "") -> Result:
    return report(exercise, TODO, TODO_MESSAGE + (" " + extra if extra else ""))


def correct(exercise: str, message: str) -> Result:
    return report(exercise, PASS, message)


def wrong(exercise: str, expected: str, got: str, hint: str) -> Result:
    """Deprecated: states the expected answer.  Use :func:`not_yet`."""
    return report(exercise, FAIL, f"expected {expected}, got {got}; hint: {hint}")


#: Wrong tries per exercise in this process: how strong the next hint is.
TRIES: dict[str, int] = {}


def not_yet(exercise: str, hints: str | Sequence[str], gave: str | None = None) -> Result:
    """A wrong answer: what the learner gave and a hint, never the expected answer.

    ``hints`` runs from gentle to strong; the first names the mistake made.  The first
    wrong try of ``exercise`` gets it alone; each later try keeps it (a learner who
    fixed one mistake and made another hears about the new one first) and adds the
    next, stronger hint.  After the last one the message says how to see the answer.

    >>> TRIES.pop("00-0", None)
    >>> r = not_yet("00-0", ["look at the leaves.", "count the paths."], gave="7")
    ✗ not yet [00-0]: you gave 7; hint: look at the leaves.
    >>> r = not_yet("00-0", ["look at the leaves.", "count the paths."], gave="7")
    ... # doctest: +NORMALIZE_WHITESPACE
    ✗ not yet [00-0]: you gave 7; hint: look at the leaves. Count the paths.
      Still stuck? ex.reveal("00-0") shows the answer.
    """
    hints = [hints] if isinstance(hints, str) else list(hints)
    tries = TRIES[exercise] = TRIES.get(exercise, 0) + 1
    stronger = [sentence(h) for h in hints[1 : min(tries, len(hints))]]
    hint = " ".join([hints[0], *stronger])
    said = f"you gave {gave}; hint: {hint}" if gave is not None else f"hint: {hint}"
    if tries >= len(hints) and REVEAL["off"] is None:
        said += f' Still stuck? ex.reveal("{exercise}") shows the answer.'
    return report(exercise, FAIL, said)


# Words that are code although they hold letters only (the rest of code is told by its
# dots, underscores, brackets, digits or backticks).
_CODE_WORDS = {"jacfwd", "jacrev", "vmap", "vjp", "jvp", "ng", "ns", "np", "torch", "numpy"}
_CODE_MARK = re.compile(r"[`._()\[\]=*/0-9]")


def sentence(hint: str) -> str:
    """``hint`` as a sentence of its own: capitalised, unless it starts with code, which
    keeps its own spelling (``ng.autograd.grad``, ``requires_grad``, ``jacfwd``).

    >>> sentence("count the paths."), sentence("ng.autograd.grad returns it.")
    ('Count the paths.', 'ng.autograd.grad returns it.')
    >>> sentence("jacfwd makes one pass per input."), sentence("`x` is a leaf.")
    ('jacfwd makes one pass per input.', '`x` is a leaf.')
    >>> sentence("c is used twice."), sentence("a walk.")
    ('c is used twice.', 'A walk.')
    """
    first = hint.split(maxsplit=1)[0] if hint.strip() else ""
    word = first.rstrip(".,:;!?")
    if not word or _CODE_MARK.search(word) or word.lower() in _CODE_WORDS:
        return hint
    if len(word) == 1 and word not in "aAI":  # a variable: x, y, c
        return hint
    return hint[:1].upper() + hint[1:]


#: The answer of each exercise, shown only on request (:func:`reveal`).
ANSWERS: dict[str, str] = {}

#: Why :func:`reveal` shows no answers, or None when it shows them (see :func:`reveal_off`).
REVEAL: dict[str, str | None] = {"off": None}
TEACHER = "the teacher turned answers off for this course; ask your teacher"


def reveal_off(reason: str = TEACHER) -> None:
    """Make :func:`reveal` say ``reason`` instead of an answer: a student copy of the
    course (``naivegraph lessons --student``) calls it in its first cell.

    >>> import naivegraph.lessons.exercises  # registers the checkers
    >>> reveal_off()
    >>> reveal("01-2")
    answer [01-2]: the teacher turned answers off for this course; ask your teacher
    >>> REVEAL["off"] = None  # answers on again
    """
    REVEAL["off"] = reason


def reveal(exercise: str) -> None:
    """Print the answer of one exercise (``naivegraph check N --reveal`` prints a lesson's).

    >>> ANSWERS["00-0"] = "w1.grad = 28: w1 reaches the loss along two paths."
    >>> reveal("00-0")
    answer [00-0]: w1.grad = 28: w1 reaches the loss along two paths.
    >>> del ANSWERS["00-0"]
    """
    if exercise not in ANSWERS:
        known = ", ".join(sorted(ANSWERS)) or "none registered"
        raise KeyError(f"no exercise {exercise!r}; the exercises are: {known}")
    print(f"answer [{exercise}]: {REVEAL['off'] or ANSWERS[exercise]}")


def failed(exercise: str, message: str) -> Result:
    return report(exercise, FAIL, message)


# ----------------------------------------------------------------------------------
# Helpers shared by the checkers
# ----------------------------------------------------------------------------------


def is_blank(x: Any, none_is_blank: bool = True) -> bool:
    """The placeholder ``...`` anywhere in the answer (and ``None`` at the top)."""
    if x is Ellipsis or (none_is_blank and x is None):
        return True
    if isinstance(x, (tuple, list)):
        return any(is_blank(v, none_is_blank=False) for v in x)
    if isinstance(x, dict):
        return any(is_blank(v, none_is_blank=False) for v in x.values())
    return False


def as_array(x: Any) -> np.ndarray:
    """A float array from a number, list, numpy array or naivegraph tensor."""
    if hasattr(x, "detach") and hasattr(x, "numpy"):
        x = x.detach().numpy()
    elif hasattr(x, "value") and not isinstance(x, (int, float, np.ndarray)):
        x = x.value  # a static node that has run
    return np.asarray(x, dtype=np.float64)


def show(x: Any) -> str:
    try:
        a = as_array(x)
    except Exception:
        return repr(x) if len(repr(x)) < 80 else repr(x)[:77] + "..."
    if a.ndim == 0:
        v = float(a)
        return f"{v:g}"
    if a.size <= 8:
        return np.array2string(a, precision=4, separator=", ", suppress_small=True)
    return f"an array of shape {a.shape}"


def is_tensor(x: Any) -> bool:
    """A tensor of naivegraph or torch: what the forward pass, ``.grad`` and autograd
    hand out, never what a learner types in.

    >>> import naivegraph as ng
    >>> is_tensor(ng.tensor(2.0)), is_tensor(2.0), is_tensor(np.float64(2.0))
    (True, False, False)
    """
    return hasattr(x, "grad_fn") and hasattr(x, "detach")


def not_by_hand(answers: Sequence[Any], one_number: bool = True) -> tuple[str, str] | None:
    """``(what was given, hint)`` when answers to be worked out by hand were not, else None.

    A tensor among them was read off the model (``l4``, ``w1.grad``) instead of being
    computed on paper; with ``one_number`` an array or list of several numbers is a
    whole tensor where one element was asked.

    >>> import naivegraph as ng
    >>> not_by_hand([2.0, np.float64(5.0)]) is None
    True
    >>> not_by_hand([2.0, ng.ones(2, 2)])[0], not_by_hand([[[2.0, 2.0], [2.0, 2.0]]])[0]
    ('a tensor', 'several numbers')
    >>> not_by_hand([(7.0,)])[0], not_by_hand([np.array([7.0])])[0]
    ('one number inside a tuple', 'one number inside an array')
    """
    if any(is_tensor(a) for a in answers):
        return "a tensor", (
            "this exercise asks for the value you work out by hand, not one read off the "
            "model or its .grad: type it as a plain number."
        )
    if one_number:
        for a in answers:
            try:
                size, ndim = np.size(a), np.ndim(a)
            except Exception:  # not array-like: the value check reports it
                continue
            if size == 1 and ndim > 0:  # `w = 28,` is a tuple: a trailing comma made it
                kind = f"a {type(a).__name__}" if isinstance(a, (list, tuple)) else "an array"
                return f"one number inside {kind}", (
                    f"ONE plain number is asked, and yours is inside {kind} (a trailing "
                    "comma, as in `answer = 0.5,`, makes a tuple): type the number alone."
                )
            if size > 1:
                return "several numbers", (
                    "ONE number is asked: every element is the same, so give one element "
                    "as a plain number, not the whole tensor."
                )
    return None


def close(
    got: Any, expected: Any, atol: float = 1e-6, rtol: float = 1e-5, shape_free: bool = True
) -> bool:
    """True when ``got`` equals ``expected`` (numbers broadcast when ``shape_free``)."""
    try:
        g = as_array(got)
    except Exception:
        return False
    e = np.asarray(expected, dtype=np.float64)
    if g.size == 0 and e.size != 0:  # numpy calls an empty array equal to anything
        return False
    if not shape_free and g.shape != e.shape:
        return False
    try:
        return bool(np.allclose(g, e, atol=atol, rtol=rtol)) and np.broadcast(
            g, e
        ).shape == np.broadcast_shapes(g.shape, e.shape)
    except ValueError:
        return False


def hint_for(got: Any, mistakes: list[tuple[tuple, str]], otherwise: str) -> str:
    """The hint of the first known wrong answer that ``got`` equals, else ``otherwise``.

    ``mistakes`` lists ``(wrong values, hint)``: the values a common misconception gives.
    """
    for values, hint in mistakes:
        if any(close(got, v) for v in values):
            return hint
    return otherwise


# Frames in these folders are not the learner's: the standard library, installed
# packages (numpy, ...) and naivegraph itself.
_LIBRARY_DIRS = tuple(
    str(Path(p).resolve())
    for p in {sysconfig.get_paths()[k] for k in ("stdlib", "platstdlib", "purelib", "platlib")}
) + (str(Path(__file__).resolve().parents[1]),)


def _is_library(filename: str) -> bool:
    return str(Path(filename).resolve()).startswith(_LIBRARY_DIRS)


def learner_namespace() -> dict[str, Any]:
    """The globals of the code that called the checker: the notebook's namespace in a
    lesson (the first frame outside the standard library, installed packages and
    naivegraph), so that a checker can see the lesson's own tensors (``w1``, ``loss``).

    >>> learner_namespace() is globals()
    True
    """
    frame = inspect.currentframe()
    while frame is not None:
        name = frame.f_code.co_filename
        if name.startswith("<") or not _is_library(name):  # "<doctest>", "<string>"
            break
        frame = frame.f_back
    return frame.f_globals if frame is not None else {}


def crash_message(exc: BaseException) -> str:
    """What the learner's code raised, at the learner's last line outside any library
    (an op that refused its input, or numpy, is not "your code")."""
    frames = traceback.extract_tb(exc.__traceback__)[1:]  # skip the checker's own frame
    yours = [f for f in frames if not _is_library(f.filename)]
    where = f" at line {yours[-1].lineno} of your code" if yours else ""
    first = str(exc).splitlines()[0] if str(exc) else ""
    return (
        f"your code raised {type(exc).__name__}{where}: {first.rstrip('.')}; "
        "read the error, fix the cell and run it again."
    )


def call_answer(exercise: str, fn: Callable, *args, **kwargs):
    """Call the learner's function; a crash becomes a readable failure (not an exception)."""
    try:
        return True, fn(*args, **kwargs)
    except Exception as exc:  # any error is reported to the learner
        return False, failed(exercise, crash_message(exc))


def not_callable(exercise: str, fn: Any) -> Result | None:
    if is_blank(fn):
        return not_done(exercise)
    if not callable(fn):
        return failed(
            exercise,
            f"expected a function, got {type(fn).__name__}; hint: define it "
            "with `def name(...):` and pass the name without calling it.",
        )
    return None


def _empty() -> None: ...


def has_placeholder(fn: Any) -> bool:
    """Whether a function's body still holds the ``...`` of an exercise blank.

    A blank inside a loop makes the function fail in some unrelated way (an empty
    list to stack, ...), and a function that works by side effect returns None done
    or not; the checker asks this first to say "not done yet" instead.  The source is
    read (IPython keeps each cell's): a bare ``...`` statement leaves no trace in the
    compiled code.  An Ellipsis used as an index (``x[..., 0]``) is not a blank.
    """
    try:
        tree = ast.parse(textwrap.dedent(inspect.getsource(fn)))
    except (OSError, TypeError, SyntaxError):  # no source: a body that does nothing
        code = getattr(fn, "__code__", None)
        return code is not None and code.co_code == _empty.__code__.co_code
    indexes = {
        id(node)
        for sub in ast.walk(tree)
        if isinstance(sub, ast.Subscript)
        for node in ast.walk(sub.slice)
    }
    return any(
        isinstance(node, ast.Constant) and node.value is Ellipsis and id(node) not in indexes
        for node in ast.walk(tree)
    )


def blank_function(exercise: str, fn: Any) -> Result | None:
    """:func:`not_callable`, plus "not done yet" for a function with a blank left in it."""
    bad = not_callable(exercise, fn)
    if bad is None and has_placeholder(fn):
        return not_done(exercise)
    return bad


def returned_blank(exercise: str, value: Any) -> Result | None:
    if value is Ellipsis or value is None:
        return not_done(
            exercise,
            "(your function returned None: fill in its body and make it `return` the answer.)",
        )
    return None


def answer(exercise: str, fn: Callable, *args) -> tuple[Result | None, Any]:
    """Call the learner's function: ``(None, value)``, or ``(result, None)`` when it
    raised or returned nothing, ``result`` being what the checker should return."""
    ok, value = call_answer(exercise, fn, *args)
    if not ok:
        return value, None
    blank = returned_blank(exercise, value)
    return (blank, None) if blank is not None else (None, value)


# Instructions that write to the object on top of the stack, and the calls that do.
_WRITES_TO_OBJECT = {"STORE_ATTR", "DELETE_ATTR", "STORE_SUBSCR", "DELETE_SUBSCR"}
_WRITING_CALLS = {"setattr", "delattr", "next"}


def _outer_names(code: CodeType, outer: frozenset[str]) -> list[str]:
    """The state that ``code`` (and the code nested in it) writes between calls: the
    globals and the names of ``outer`` (closure cells of enclosing scopes) that it
    assigns, writes an attribute or item of, or hands to setattr/delattr/next."""
    found: list[str] = []
    instructions = list(dis.get_instructions(code))
    roots = {}  # where each name load starts: the root of a target that starts there
    for ins in instructions:
        pushes_null = ins.opname == "LOAD_GLOBAL" and ins.arg is not None and ins.arg & 1
        outside = ins.opname == "LOAD_GLOBAL" or (
            ins.opname in ("LOAD_DEREF", "LOAD_CLASSDEREF") and ins.argval in outer
        )
        if outside and not pushes_null and ins.positions and ins.positions.lineno:
            roots[(ins.positions.lineno, ins.positions.col_offset)] = ins.argval
    for ins, after in zip(instructions, [*instructions[1:], None]):
        if ins.opname in ("STORE_GLOBAL", "DELETE_GLOBAL"):
            found.append(ins.argval)
        elif ins.opname in ("STORE_DEREF", "DELETE_DEREF") and ins.argval in outer:
            found.append(ins.argval)
        elif ins.opname in _WRITES_TO_OBJECT and ins.positions and ins.positions.lineno:
            root = roots.get((ins.positions.lineno, ins.positions.col_offset))
            if root is not None:
                whole = ins.positions.end_col_offset - ins.positions.col_offset
                direct = ins.opname.endswith("ATTR") and whole == len(f"{root}.{ins.argval}")
                found.append(f"{root}.{ins.argval}" if direct else root)
        elif (
            ins.opname == "LOAD_GLOBAL"
            and str(ins.argval) in _WRITING_CALLS
            and after is not None
            and after.positions is not None
            and roots.get((after.positions.lineno, after.positions.col_offset)) == after.argval
        ):
            found.append(f"{ins.argval}({after.argval})")
    for inner in code.co_consts:
        if isinstance(inner, CodeType):
            found += _outer_names(inner, outer & frozenset(inner.co_freevars))
    return found


def state_kept_between_calls(fn: Any) -> str | None:
    """The state a function keeps between calls, named, or None: a global or a closure
    variable it assigns (``global N; N += 1``), an attribute or item it writes on a
    global object, a closure object or the function itself (``fn.n = ...``,
    ``CALLS[0] += 1``, ``ng._calls = ...``, ``setattr(fn, ...)``), or a global
    iterator it advances (``next(C)``).  Such a function can answer the checker's tenth
    call unlike its first.  Calling a method of a global (``LOG.append(grad)``) is not
    counted, nor is writing to the function's arguments or its own locals.  Read from
    the compiled code, with the functions nested in it.

    >>> CALLS = [0]
    >>> def counted(x):
    ...     CALLS[0] += 1
    ...     return x * 2 if CALLS[0] < 10 else x
    >>> def logged(x, log=[]):
    ...     LOG.append(x); x.seen = True
    ...     return x * 2
    >>> state_kept_between_calls(counted), state_kept_between_calls(logged)
    ('CALLS', None)
    >>> def with_attribute(x):
    ...     with_attribute.n = getattr(with_attribute, "n", 0) + 1
    ...     return x
    >>> state_kept_between_calls(with_attribute), state_kept_between_calls(len)
    ('with_attribute.n', None)
    """
    code = getattr(fn, "__code__", None)
    if not isinstance(code, CodeType):
        return None
    found = _outer_names(code, frozenset(code.co_freevars))
    return found[0] if found else None


def _learners_function(x: Any) -> bool:
    """Whether ``x`` is a function the learner wrote (in the notebook), not the lab's."""
    if not isinstance(x, FunctionType):
        return False
    name = x.__code__.co_filename
    return name.startswith("<") or not _is_library(name)


def _refusing_kept_state(
    exercise: str, check: Callable, first_look: Callable[[Any], Result | None] | None = None
) -> Callable:
    """``check``, refusing first a learner's function among its arguments that keeps
    state between calls (:func:`state_kept_between_calls`).  ``first_look``, when the
    checker has one, is asked before: it calls the function once and returns the
    refusal of a plainer mistake that the state written hides (a hook that sets a .grad
    instead of returning one), or None."""

    @functools.wraps(check)
    def checked(*args: Any, **kwargs: Any) -> Any:
        for fn in [*args, *kwargs.values()]:
            kept = state_kept_between_calls(fn) if _learners_function(fn) else None
            if kept is not None and first_look is not None:
                with LearnerState():  # whatever the one call leaves changed is put back
                    looked = first_look(fn)
                if looked is not None:
                    return looked
            if kept is not None:
                return not_yet(
                    exercise,
                    [
                        f"your function keeps state between calls ({kept}): the checker "
                        "calls it many times, and a function must give the same result "
                        "for the same input.",
                        "keep what it needs in local variables, made fresh on every call: "
                        "write no global, no closure variable and no attribute of a "
                        "module or of the function itself.",
                    ],
                    gave=f"a function that keeps state between calls ({kept})",
                )
        return check(*args, **kwargs)

    return checked


#: The lab's global state, as every lesson starts: what :func:`cell_state_refusal` asks
#: for before a check runs, with the line that puts each one back.
_LAB_STATE = {
    "grad mode": "ng.set_grad_enabled(True)",
    "the default dtype": "ng.set_default_dtype(ng.float32)",
    "anomaly detection": "ng.autograd.set_detect_anomaly(False)",
}
#: What a ``with`` block around the check may switch for its block only.
_BLOCK_SWITCHES = {
    "grad mode": {"no_grad", "set_grad_enabled", "inference_mode", "enable_grad"},
    "anomaly detection": {"detect_anomaly", "set_detect_anomaly"},
}


def _switched_by_block(what: str) -> bool:
    """Whether the code that called the checker (a notebook cell, or a function in it)
    calls it inside a ``with`` block that switches ``what`` for the block only
    (``with ng.no_grad(): ex.check(...)``): a choice for a while, not a leftover."""
    names = _BLOCK_SWITCHES.get(what, set())
    frame = learner_frame()
    while frame is not None and names:
        name = frame.f_code.co_filename
        if not (name.startswith("<") or not _is_library(name)):
            frame = frame.f_back
            continue
        try:
            tree = ast.parse("".join(linecache.getlines(name, frame.f_globals)))
        except (SyntaxError, ValueError):
            tree = None
        line = frame.f_lineno
        for node in ast.walk(tree) if tree is not None else ():
            if not isinstance(node, (ast.With, ast.AsyncWith)) or not node.body:
                continue
            inside = node.body[0].lineno <= line <= (node.end_lineno or node.lineno)
            called = {
                getattr(item.context_expr.func, "attr", getattr(item.context_expr.func, "id", ""))
                for item in node.items
                if isinstance(item.context_expr, ast.Call)
            }
            if inside and called & names:
                return True
        frame = frame.f_back
    return False


def cell_left_changed() -> list[str]:
    """The global state a cell left changed from the lab's before a check runs (grad
    mode off, a default dtype other than float32, anomaly detection on), leaving out
    what a ``with`` block around the check switches for the block only."""
    changed = []
    if not grad_mode.is_grad_enabled():
        changed.append("grad mode")
    if defaults.get_default_dtype() != np.dtype(np.float32):
        changed.append("the default dtype")
    if anomaly_mode.mode.enabled:
        changed.append("anomaly detection")
    return [what for what in changed if not _switched_by_block(what)]


def cell_state_refusal(exercise: str) -> Result | None:
    """The refusal of a check started while a cell has left global state changed from
    the lab's (:func:`cell_left_changed`), naming it and the line that puts it back;
    or None.  The learner's kernel is not changed: the learner puts it back.  Every
    registered checker asks this first (:func:`checker`); it is not a wrong try.

    >>> import naivegraph as ng
    >>> _ = ng.autograd.set_detect_anomaly(True)
    >>> r = cell_state_refusal("00-0")  # doctest: +ELLIPSIS
    ✗ not yet [00-0]: hint: anomaly detection is on...`ng.autograd.set_detect_anomaly(False)`...
    >>> ng.autograd.is_anomaly_enabled()
    True
    >>> _ = ng.autograd.set_detect_anomaly(False)
    >>> cell_state_refusal("00-0") is None
    True
    """
    changed = cell_left_changed()
    if not changed:
        return None
    shown = {
        "grad mode": "grad mode is off",
        "the default dtype": f"the default dtype is {defaults.get_default_dtype()} "
        "(the lab's is float32)",
        "anomaly detection": "anomaly detection is on",
    }
    lines = "; ".join(f"`{_LAB_STATE[what]}`" for what in changed)
    message = (
        f"hint: {' and '.join(shown[what] for what in changed)} in this notebook: a line "
        "run in a cell, outside any function and any `with` block, changed it for every "
        "cell after it, so this check would not run as the lab does (your answer was not "
        f"checked). Put it back in a cell of its own: {lines}; then run this check again."
    )
    SOLVED.discard(exercise)
    result = Result(exercise, FAIL, message)
    print(result.message, flush=True)
    return result


def _refusing_cell_state(exercise: str, check: Callable) -> Callable:
    """``check``, refusing first to run while a cell has left global state changed
    (:func:`cell_state_refusal`)."""

    @functools.wraps(check)
    def checked(*args: Any, **kwargs: Any) -> Any:
        refused = cell_state_refusal(exercise)
        return refused if refused is not None else check(*args, **kwargs)

    return checked


CHECKERS: dict[str, Callable] = {}


def _unwatched(check: Callable) -> Callable:
    """The check, with the watch over the learner's cells paused while it runs: what
    it reads off the lesson's objects is not the learner's doing."""

    @functools.wraps(check)
    def checked(*args: Any, **kwargs: Any) -> Any:
        with cell_reads.paused():
            return check(*args, **kwargs)

    return checked


#: The exercises that ask for a prediction, or for work by hand: their checks refuse an
#: answer the library computed (``cell_computes``).
PREDICTIONS: set[str] = set()


def _predictions_open(lessons: set[str]) -> bool:
    """Whether a prediction of the lessons whose cells ran is still to be checked (or a
    cell of no known lesson ran): while one is, the learner's cells are watched."""
    return "" in lessons or any(
        not solved(exercise) for exercise in PREDICTIONS if exercise[:2] in lessons)


cell_reads.needed[0] = _predictions_open


def checker(
    exercise: str,
    answer: str | None = None,
    first_look: Callable[[Any], Result | None] | None = None,
    predicts: bool = False,
):
    """Register a checker; ``answer`` is what :func:`reveal` shows (the solution, why);
    ``predicts`` marks an exercise done by hand or by prediction (:data:`PREDICTIONS`).
    The checker first refuses to run while a cell has left global state changed
    (:func:`cell_state_refusal`); then it refuses a function that keeps state between calls
    (:func:`state_kept_between_calls`), unless ``first_look`` names a plainer mistake
    of that function, and one that leaves global state changed
    (:func:`keeps_learner_state`)."""

    def register(fn: Callable) -> Callable:
        fn = _unwatched(_refusing_cell_state(
            exercise, _refusing_kept_state(exercise, keeps_learner_state(fn), first_look)
        ))
        fn.exercise = exercise
        CHECKERS[exercise] = fn
        if predicts:
            PREDICTIONS.add(exercise)
        if answer is not None:
            ANSWERS[exercise] = answer
        return fn

    return register


def as_bools(x) -> tuple | None:
    """``x`` as a tuple of Python bools, or None if it is not a sequence of booleans."""
    try:
        values = tuple(x)
    except TypeError:
        return None
    if not all(isinstance(v, (bool, np.bool_)) for v in values):
        return None
    return tuple(bool(v) for v in values)


class AutogradCalls:
    """The backward passes run inside a ``with`` block: one ``create_graph`` flag each.

    A checker asks it whether an answer called autograd (a gradient that was to be
    derived by hand) and whether a first derivative was recorded for a second one.

    >>> import naivegraph as ng
    >>> x = ng.tensor(2.0, requires_grad=True)
    >>> with AutogradCalls() as calls:
    ...     (g,) = ng.autograd.grad(x ** 3, x, create_graph=True)
    >>> calls.flags
    [True]
    """

    def __init__(self) -> None:
        self.flags: list[bool] = []

    def __enter__(self) -> AutogradCalls:
        self._execute = engine.execute

        def counted(outputs, gradients, keep_graph, create_graph, *args, **kwargs):
            self.flags.append(bool(create_graph))
            return self._execute(outputs, gradients, keep_graph, create_graph, *args, **kwargs)

        engine.execute = counted
        return self

    def __exit__(self, *exc_info: object) -> None:
        engine.execute = self._execute


class DualLevels:
    """The forward-mode dual levels entered inside a ``with`` block: how many.

    :class:`AutogradCalls` sees reverse mode; this sees forward mode
    (``fwAD.dual_level``, ``make_dual``, ``jvp``, ``jacfwd``).  A level the answer left
    open is closed on the way out, so the learner's mistake does not leak.

    >>> import naivegraph as ng
    >>> import naivegraph.autograd.forward_ad as fwAD
    >>> with DualLevels() as levels:
    ...     with fwAD.dual_level():
    ...         y = fwAD.make_dual(ng.tensor(2.0), ng.tensor(1.0)) ** 2
    >>> levels.entered
    1
    """

    def __init__(self) -> None:
        self.entered = 0

    def __enter__(self) -> DualLevels:
        self._enter = forward.enter_level
        self._was_open = forward.dual.level is not None

        def counted(*args, **kwargs):
            self.entered += 1
            return self._enter(*args, **kwargs)

        forward.enter_level = counted
        return self

    def __exit__(self, *exc_info: object) -> None:
        forward.enter_level = self._enter
        if not self._was_open and forward.dual.level is not None:
            forward.exit_level()


def typed_as_text(answers: Sequence[Any]) -> bool:
    """Whether a number was typed as text (``"40"``, ``["2", "0.4"]``): numpy reads
    such strings as numbers, so a value check alone would let them pass.

    >>> typed_as_text(["2", 5.0]), typed_as_text([[2.0, "0.4"]]), typed_as_text([2.0, None])
    (True, True, False)
    """
    for a in answers:
        if isinstance(a, (str, bytes, np.str_)):
            return True
        if isinstance(a, (list, tuple)) and typed_as_text(a):
            return True
        if isinstance(a, np.ndarray) and a.dtype.kind in "USO" and typed_as_text(a.tolist()):
            return True
    return False


TEXT_HINT = "type the number, not text: no quotes around it."


class LearnerState:
    """The global state a learner's code must leave as it found it, watched and put
    back: grad mode, the default dtype, anomaly detection, saved-tensor hooks and the
    forward-mode dual level.  A function that leaves grad mode off
    (``ng.set_grad_enabled(False)``) or changes the default dtype would otherwise change
    the checker's own work after it, and every later cell of the notebook.
    :attr:`changed` names what the code left changed (:meth:`now_changed` without
    putting it back), and :meth:`hint` says so to the learner, with the way to change
    it for a while only.  The random number generator is not watched: reseeding it is
    not wrong.

    >>> import naivegraph as ng
    >>> with LearnerState() as state:
    ...     _ = ng.set_grad_enabled(False)
    ...     _ = ng.autograd.set_detect_anomaly(True)
    >>> ng.is_grad_enabled(), ng.autograd.is_anomaly_enabled(), state.changed
    (True, False, ['grad mode', 'anomaly detection'])
    """

    def __enter__(self) -> LearnerState:
        self._enabled = grad_mode.is_grad_enabled()
        self._dtype = defaults.get_default_dtype()
        self._anomaly = (anomaly_mode.mode.enabled, anomaly_mode.mode.check_nan)
        self._saved_hooks = len(saved.hook_stack)
        self._dual = forward.dual.level
        self.changed: list[str] = []
        self.tries: dict[str, int] = {}
        return self

    def now_changed(self) -> list[str]:
        """What the code run so far has left changed, without putting it back."""
        changed = []
        if grad_mode.is_grad_enabled() != self._enabled:
            changed.append("grad mode")
        if defaults.get_default_dtype() != self._dtype:
            changed.append("the default dtype")
        if (anomaly_mode.mode.enabled, anomaly_mode.mode.check_nan) != self._anomaly:
            changed.append("anomaly detection")
        if len(saved.hook_stack) != self._saved_hooks:
            changed.append("saved-tensor hooks")
        if forward.dual.level != self._dual:
            changed.append("a dual level")
        return changed

    def __exit__(self, *exc_info: object) -> None:
        self.changed = self.now_changed()
        self.put_back()

    def put_back(self) -> None:
        """Put back what the code run so far has left changed."""
        changed = self.now_changed()
        if "grad mode" in changed:
            grad_mode.set_grad_enabled(self._enabled)
        if "the default dtype" in changed:
            defaults.set_default_dtype(self._dtype)
        if "anomaly detection" in changed:
            anomaly_mode.mode.enabled, anomaly_mode.mode.check_nan = self._anomaly
        if "saved-tensor hooks" in changed:
            del saved.hook_stack[self._saved_hooks :]
        if "a dual level" in changed and self._dual is None:
            forward.exit_level()

    def hint(self, changed: Sequence[str] | None = None) -> str:
        """What the learner's code left changed, and how to change it for a while only."""
        changed = self.changed if changed is None else changed
        said = []
        if "grad mode" in changed and self._enabled:
            said.append(
                "your function left grad mode off, for every cell after it too: use "
                "`with ng.no_grad():`, which switches recording off for its block only."
            )
        elif "grad mode" in changed:
            said.append(
                "your function left grad mode on where the caller had it off: switching "
                "it by hand (ng.set_grad_enabled(False), then True again) ends with "
                "recording on, whatever the caller had. Switch it for a `with` block "
                "instead (`with ng.no_grad():` to stop recording, `with ng.enable_grad():` "
                "to record), which puts the caller's mode back when the block ends; or "
                "leave grad mode as the caller had it."
            )
        if "the default dtype" in changed:
            said.append(
                "your function changed the default dtype for everything after it: give "
                "the dtype to the tensor you create instead (dtype=...), or put the old "
                "one back with ng.set_default_dtype in a try/finally."
            )
        if "anomaly detection" in changed:
            said.append(
                "your function left anomaly detection "
                + ("off where the caller had it on" if self._anomaly[0] else "on")
                + ", for every op after it: use `with ng.autograd.detect_anomaly():` "
                "(or set_detect_anomaly as a `with` block), which switches it for its block "
                "only, or leave it out."
            )
        if "saved-tensor hooks" in changed:
            said.append(
                "your function left saved-tensor hooks in force for every op after it: use "
                "saved_tensors_hooks as a `with` block, which removes them when it ends."
            )
        if "a dual level" in changed:
            said.append(
                "your function left a forward-mode dual level open: use "
                "`with fwAD.dual_level():`, which closes it when the block ends."
            )
        return " ".join(said)


#: The watches of the checkers running now, innermost last (see :func:`keeps_learner_state`).
_WATCHES: list[LearnerState] = []


def _state_left_by_crash() -> str:
    """A note on the state a crashed answer left changed, which the lab puts back;
    the watch then sees nothing left, so the crash, not the state, is reported."""
    if not _WATCHES:
        return ""
    watch = _WATCHES[-1]
    changed = watch.now_changed()
    if not changed:
        return ""
    watch.put_back()
    return f" (It also left {' and '.join(changed)} changed: the lab put it back.)"


def _state_refusal(exercise: str, status: str) -> Result | None:
    """The refusal of an answer whose code left global state changed, or None: asked
    by :func:`report` before it reports a checker's verdict."""
    if not _WATCHES or status == TODO:
        return None
    watch = _WATCHES[-1]
    changed = watch.now_changed()
    if not changed:
        return None
    _WATCHES.pop()  # the refusal is reported without being watched again
    # a wrong answer already counted its try: this refusal replaces it
    TRIES[exercise] = watch.tries.get(exercise, 0)
    try:
        return not_yet(
            exercise,
            [
                watch.hint(changed),
                "change global state (grad mode, the default dtype, anomaly detection) "
                "for a while only, inside a `with` block, or not at all: the caller's "
                "code after your function must find it as it was.",
            ],
            gave=f"a function that left {' and '.join(changed)} changed",
        )
    finally:
        _WATCHES.append(watch)


def keeps_learner_state(check: Callable) -> Callable:
    """A checker that refuses an answer whose code left global state changed (grad
    mode, the default dtype, anomaly detection, ...: see :class:`LearnerState`),
    whatever it would have said otherwise, naming what was left changed; and puts
    that state back as it was afterwards.  :func:`checker` wraps every checker in it.

    >>> import naivegraph as ng
    >>> @keeps_learner_state
    ... def check(fn):
    ...     fn()
    ...     return correct("00-0", "fine.")
    >>> TRIES.pop("00-0", None)
    >>> r = check(lambda: ng.set_grad_enabled(False))  # doctest: +ELLIPSIS
    ✗ not yet [00-0]: you gave a function that left grad mode changed; hint: ...grad mode off, ...
    >>> r.passed, ng.is_grad_enabled(), TRIES.pop("00-0")
    (False, True, 1)
    """
    if getattr(check, "_keeps_learner_state", False):
        return check

    @functools.wraps(check)
    def checked(*args: Any, **kwargs: Any) -> Any:
        with LearnerState() as state:
            state.tries = dict(TRIES)
            _WATCHES.append(state)
            try:
                return check(*args, **kwargs)
            finally:
                _WATCHES.remove(state)

    checked._keeps_learner_state = True  # type: ignore[attr-defined]
    return checked


def forgot_return(exercise: str, fn: Any, value: Any) -> Result | None:
    """:func:`returned_blank`, except for a function with no ``...`` left in it that
    returned None: that one is written, and wrong for a `return` it lacks."""
    if value is None and not has_placeholder(fn):
        return not_yet(
            exercise,
            "your function returned None: its body has no `...` left, but it has no "
            "`return` of its result either (without one, Python returns None).",
            gave="a function that returns None",
        )
    return returned_blank(exercise, value)


# What a notebook cell that computes a value instead of working it out names: a
# backward, autograd (naivegraph's or torch's) or torch itself.  Read from the cell's
# compiled code (the names it looks up), so a comment or a string that mentions them
# does not count.
COMPUTING_NAMES = {"backward": "a backward", "torch": "torch", "autograd": "autograd"}


def learner_frame():
    """The frame of the code that called the checker (a notebook cell), as
    ``learner_namespace`` finds it: the first outside the library and packages."""
    frame = inspect.currentframe()
    while frame is not None:
        name = frame.f_code.co_filename
        if name.startswith("<") or not _is_library(name):
            return frame
        frame = frame.f_back
    return None


def _code_names(code: CodeType) -> set[str]:
    """The names a code object (and the code nested in it) looks up, attributes included."""
    names = set(code.co_names)
    for const in code.co_consts:
        if isinstance(const, CodeType):
            names |= _code_names(const)
    return names



def cell_computes(reads: Sequence[str] = (), calls: Sequence[str] = ()) -> str:
    """What the notebook cell that called the checker runs to compute the answer
    instead of working it out ("a backward", "autograd", "torch", ".is_leaf" for an
    attribute named in ``reads`` that the cell reads, "Plan" for a name in ``calls`` it
    looks up), or "" when it runs none.

    The library's derivative functions count under whatever name the cell calls them
    (:func:`_derivative_name`): ``ng.func.jacrev``, ``ng.func.vjp``, ``ng.autograd.grad``
    imported as ``agrad`` in an earlier cell ("agrad (that is ng.autograd.grad)"), a
    tensor's ``backward`` kept under another name, torch under another name.  An
    attribute read off a module (``ng.func.grad``) is not a tensor's attribute.

    Only a cell is read (code at the top level of a module, as a notebook cell is
    compiled): the names looked up in it and in the functions it defines, and, for a
    value the cell only names, the learner's earlier cells it came from
    (:mod:`earlier_cells`).  A number read off the screen and typed leaves no trace:
    a limit, as is any number worked out by code outside the notebook."""
    frame = learner_frame()
    if frame is None or frame.f_code.co_name != "<module>":
        return ""
    space = frame.f_globals

    def computes(code: CodeType) -> str:
        names = _code_names(code)
        found = [
            shown
            for key, shown in COMPUTING_NAMES.items()
            if any(key == n or key in n.split(".") for n in names)
        ]
        on_modules: Counter[str] = Counter()  # attributes read off a module: ng.func.grad
        for chain, objects in _chains_of(code, space):
            on_modules.update(
                chain[i] for i in range(1, len(objects)) if isinstance(objects[i - 1], ModuleType)
            )
            spelled = ".".join(chain[: len(objects)])
            canonical = _derivative_name(objects[-1]) if objects else None
            if canonical is None or any(key in chain[: len(objects)] for key in COMPUTING_NAMES):
                continue  # not a derivative, or named (and reported) as autograd already
            shown = canonical if spelled == canonical else f"{spelled} (that is {canonical})"
            if canonical == "torch":
                shown = "torch"
            if shown not in found:
                found.append(shown)
        read = _attributes_counted(code)
        by_name = set(_strings_in(code)) if names & _BY_NAME else set()
        read.update(by_name)  # getattr(t, "grad"), attrgetter("is_leaf"): a read all the same
        found += [f".{name}" for name in reads if read[name] > on_modules[name]]
        plain = _only_plain_values(code, space)  # str(0), f"Sqrt{n}": no object printed
        found += [name for name in calls if (name in names or name in by_name)
                  and not (plain and name in PRINTED_FORM)]
        if "str" in calls and "str" not in found and not plain and _formats(code):
            found.append("an f-string")  # f"{t}" turns t into its printed form, as str(t)
        return " and ".join(found)

    code, lines = _answer_part(frame)
    return (computes(code) or _used(cell_reads.uses_so_far(lines))
            or computed_earlier(frame, computes,
                                lambda cell, lines: _used(cell_reads.uses_in(cell, lines))))


def _answer_part(frame: Any) -> tuple[CodeType, set[int] | None]:
    """The statements of the checking cell that have to do with its answer
    (:func:`earlier_cells.related_part` of the check and its arguments), compiled, and
    their lines: a look at the model elsewhere in the cell (``print(loss.item())``
    beside a typed answer) makes nothing the check is given.  The whole cell (or the
    frame's code, and None for its lines) when the cell cannot be read."""
    tree = _cell_tree(frame)
    whole = _whole_cell(frame) or frame.f_code
    if tree is None:
        return whole, None
    depends, checked = dependencies(tree)
    part, lines = related_part(tree, sources_of(checked, depends), unrelated(frame.f_globals),
                               keep=calls_a_check)
    if not any(calls_a_check(statement) for statement in part.body):
        return whole, None
    try:
        return compile(part, frame.f_code.co_filename, "exec"), lines
    except (SyntaxError, ValueError):
        return whole, None


def calls_a_check(statement: ast.AST) -> bool:
    """Whether a statement calls one of the checks (`ex.check_...(...)`)."""
    return any(isinstance(n, ast.Call) and _called_name(n.func).startswith("check_")
               for n in ast.walk(statement))


def _called_name(func: ast.AST) -> str:
    return func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")


def _used(uses: list[str]) -> str:
    """The lesson's objects a cell used, as the refusals word it."""
    return " and ".join(uses[:3]) + (" and more" if len(uses) > 3 else "")


#: The names that turn an object into its printed form (an f-string counts as ``str``):
#: a prediction read off a tensor's or a trace's repr uses one of them.
PRINTED_FORM = ("repr", "str", "format", "__repr__", "__str__")

# Functions that read an attribute named by a string.
_BY_NAME = frozenset({"getattr", "attrgetter", "methodcaller"})


def _only_plain_values(code: CodeType, space: dict[str, Any]) -> bool:
    """Whether every value a code object looks up by name is a plain one (a number,
    numpy's included, a string, a flag, or a list, tuple or dict of them), past the
    builtins and modules:
    its printed forms (``str(0)``, ``f"SqrtBackward{n}"``) then print no object."""
    for inner in _codes_in(code):
        for ins in dis.get_instructions(inner):
            if ins.opname not in ("LOAD_NAME", "LOAD_GLOBAL"):
                continue
            name = str(ins.argval)
            if name not in space and hasattr(builtins, name):
                continue
            value = space.get(name)
            if isinstance(value, ModuleType):
                continue
            items = (list(value.values()) if isinstance(value, dict)
                     else value if isinstance(value, (list, tuple, set)) else [value])
            if not all(isinstance(v, (int, float, complex, str, bytes, type(None), np.generic))
                       for v in items):
                return False
    return True


def _formats(code: CodeType) -> bool:
    """Whether a code object (or the code nested in it) formats a value in an f-string."""
    return any(ins.opname == "FORMAT_VALUE" for inner in _codes_in(code)
               for ins in dis.get_instructions(inner))


def _strings_in(code: CodeType) -> list[str]:
    """The string constants of a code object and the code nested in it."""
    return [c for inner in _codes_in(code) for c in inner.co_consts if isinstance(c, str)]


def _attributes_counted(code: CodeType) -> Counter[str]:
    """How many times a code object (and the code nested in it) reads each attribute,
    a ``case C(_version=v)`` pattern's included (it reads ``_version``)."""
    found: Counter[str] = Counter()
    for inner in _codes_in(code):
        last = None
        for ins in dis.get_instructions(inner):
            if ins.opname in ("LOAD_ATTR", "LOAD_METHOD"):
                found[str(ins.argval)] += 1
            elif ins.opname == "MATCH_CLASS" and last is not None and isinstance(last.argval, tuple):
                found.update(str(name) for name in last.argval)
            last = ins
    return found


def _chains_of(code: CodeType, space: dict[str, Any]) -> list[tuple[list[str], list[Any]]]:
    """The dotted names a code object (and the code nested in it) looks up from a
    global (``ng.func.jacrev`` as ``["ng", "func", "jacrev"]``), each with the objects
    it reaches in ``space``: the global, then each attribute read off a module (an
    attribute of another object is not read here, which could run code)."""
    chains: list[list[str]] = []
    chain: list[str] | None = None
    for ins in dis.get_instructions(code):
        if ins.opname in ("LOAD_NAME", "LOAD_GLOBAL"):
            chain = [str(ins.argval)]
            chains.append(chain)
        elif ins.opname in ("LOAD_ATTR", "LOAD_METHOD") and chain is not None:
            chain.append(str(ins.argval))
        elif ins.opname not in ("CACHE", "PRECALL", "EXTENDED_ARG"):
            chain = None
    found = []
    for chain in chains:
        objects: list[Any] = []
        if chain[0] in space:
            obj = space[chain[0]]
            objects.append(obj)
            for attribute in chain[1:]:
                if not isinstance(obj, ModuleType):
                    break
                try:
                    obj = getattr(obj, attribute, _MISSING)
                except Exception:  # a module whose __getattr__ fails (a lazy import)
                    obj = _MISSING
                if obj is _MISSING:
                    break
                objects.append(obj)
        found.append((chain, objects))
    for const in code.co_consts:
        if isinstance(const, CodeType):
            found += _chains_of(const, space)
    return found


_MISSING = object()

#: The modules of the library's derivative functions (dynamic mode's: a static graph's
#: gradients are built, not computed, in the cell that calls them), and how a lesson
#: spells them.
_DERIVATIVE_MODULES = {
    "naivegraph.func.transforms": "ng.func",
    "naivegraph.dynamic.engine": "ng.autograd",
    "naivegraph.autograd.functional": "ng.autograd.functional",
    "naivegraph.autograd.forward_ad": "ng.autograd.forward_ad",
    "naivegraph.static.gradients": "ns",
    "naivegraph.static.jvp": "ns",
    # the drawings: they show values, versions and gradients
    "naivegraph.render": "ng",
    "naivegraph.render.walk_static": "ns",
}


# The optimizers: a step moves a weight by its gradient, which the move then shows.
_OPTIMIZER_MODULES = {"naivegraph.optim": "ng.optim", "naivegraph.static.optim": "ns.optim"}

# Libraries that differentiate symbolically: their derivatives are not worked out by hand.
_SYMBOLIC = frozenset({"sympy", "jax", "autograd"})


def _derivative_name(obj: Any) -> str | None:
    """How a lesson spells ``obj`` when it computes derivatives: one of the library's
    derivative functions (``ng.func.jacrev``, ``ng.autograd.grad``), a tensor's
    ``backward``, or anything of torch ("torch"); None for anything else.

    >>> import naivegraph as ng
    >>> _derivative_name(ng.func.vjp), _derivative_name(ng.autograd.grad)
    ('ng.func.vjp', 'ng.autograd.grad')
    >>> _derivative_name(ng.ones(2).backward), _derivative_name(ng.exp), _derivative_name(2.0)
    ('backward', None, None)
    >>> _derivative_name(ng.func.vjp(ng.exp, ng.ones(2))[1])
    'the function ng.func.vjp returned'
    """
    try:
        return _derivative_name_of(obj)
    except Exception:  # an object of the learner's that answers oddly: not a derivative
        return None


def _derivative_name_of(obj: Any) -> str | None:
    """:func:`_derivative_name`, which may raise on an odd object."""
    if isinstance(obj, ModuleType):
        top = obj.__name__.split(".")[0]
        return top if top == "torch" or top in _SYMBOLIC else None
    if type(obj).__module__.split(".")[0] == "torch":  # a torch tensor, a torch builtin
        return "torch"
    if (getattr(obj, "__module__", None) or "").split(".")[0] in _SYMBOLIC:
        return (obj.__module__ or "").split(".")[0]  # sympy.diff: derivatives by a library
    if isinstance(obj, type) and obj.__module__ in _OPTIMIZER_MODULES:
        return f"{_OPTIMIZER_MODULES[obj.__module__]}.{obj.__name__}"  # a step shows a gradient
    if not isinstance(obj, (FunctionType, BuiltinFunctionType, MethodType)):
        return None
    function = getattr(obj, "__func__", obj)
    name = getattr(function, "__name__", "")
    owner = getattr(obj, "__self__", None)
    if is_tensor(owner) and getattr(owner, "backward", None) == obj:
        return "backward"
    module = getattr(function, "__module__", None)
    if not isinstance(module, str) or name.startswith("_"):
        return None
    if module.split(".")[0] == "torch":
        return "torch"
    prefix = _DERIVATIVE_MODULES.get(module)
    if prefix is None:
        return None
    maker, _, inner = getattr(function, "__qualname__", name).partition(".<locals>.")
    if inner:  # a function one of them made and returned: ng.func.vjp's vjp_fn
        return f"the function {prefix}.{maker.lstrip('_')} returned"
    return f"{prefix}.{name}"


def cell_model_tensors() -> list[str]:
    """The model's tensors the answer of the cell that called the checker is computed
    from, by name (``["l1", "loss"]``), or [] for none: the tensors of the notebook
    that require grad or were made by a recorded op, whatever the cell then did to
    them (``float(l1[0, 0])``, ``int(loss)``, ``np.asarray(l3)``, a list of them, the
    forward pass again under ``ng.no_grad()``).

    The cell's source is read: the names the arguments of its ``check_...`` call read,
    and through the cell's own assignments, every name those were computed from (a
    name assigned from an expression depends on the names the expression reads; a
    list a method call fills, on the call's arguments; a function, on the names its
    body reads).  A model built in the same cell, above answers typed as numbers, is
    not what they were computed from.  Without the source (code run by ``exec``),
    the names the code reads and never assigns count.  A value the cell only names is
    followed back through the learner's earlier cells (:mod:`earlier_cells`): the
    model's tensors it was computed from there are named, with the cell."""
    frame = learner_frame()
    if frame is None or frame.f_code.co_name != "<module>":
        return []
    space = frame.f_globals
    tree = _cell_tree(frame)
    if tree is not None:
        depends, checked = dependencies(tree)
        # the cell's own names are followed to what it made them from, the notebook's
        # model tensors stop the walk; a model the cell builds itself counts by the
        # tensors its ops made (a number typed as a tensor is a typed number)
        used = sources_of(checked, depends, stop=lambda name: name not in depends
                          and _model_tensor(space.get(name)))
        found = sorted(n for n in used - depends.keys() if _model_tensor(space.get(n)))
        found = found or sorted(n for n in used & depends.keys() if _made_by_an_op(space.get(n)))
        if found:
            return found

        def model_in(code: CodeType, cell: ast.Module, name: str) -> str:
            return ", ".join(sorted(
                n for n in free_names(cell, {name}, filled=True) if _model_tensor(space.get(n))))

        earlier = traced_back(frame, model_in)
        return [earlier] if earlier else []
    else:
        instructions = [
            ins for code in _codes_in(frame.f_code) for ins in dis.get_instructions(code)
        ]
        stored = {str(i.argval) for i in instructions if i.opname in ("STORE_NAME", "STORE_GLOBAL")}
        used = {
            str(i.argval) for i in instructions if i.opname in ("LOAD_NAME", "LOAD_GLOBAL")
        } - stored
    return sorted(name for name in used if _model_tensor(space.get(name)))


def _model_tensor(value: Any) -> bool:
    """A tensor of the model: one that requires grad, or that a recorded op made."""
    try:
        return is_tensor(value) and (
            bool(getattr(value, "requires_grad", False)) or value.grad_fn is not None
        )
    except Exception:  # an object of the learner's that answers oddly: not the model's
        return False


def _made_by_an_op(value: Any) -> bool:
    """A tensor a recorded op made (it has a grad_fn)."""
    try:
        return is_tensor(value) and value.grad_fn is not None
    except Exception:  # an object of the learner's that answers oddly
        return False


def _codes_in(code: CodeType) -> list[CodeType]:
    """``code`` and the code objects nested in it."""
    found = [code]
    for const in code.co_consts:
        if isinstance(const, CodeType):
            found += _codes_in(const)
    return found


def _cell_tree(frame: Any) -> ast.Module | None:
    """The whole notebook cell the frame runs, parsed, or None (see :func:`_whole_cell`)."""
    source = _cell_source(frame)
    try:
        return ast.parse(source) if source else None
    except (SyntaxError, ValueError):
        return None


def _whole_cell(frame: Any) -> CodeType | None:
    """The whole notebook cell the frame runs, compiled, or None (not a cell, or its
    source not kept).  IPython compiles a cell's last expression apart from the lines
    above it, so the frame's own code may hold only ``ex.check_...(answer)`` while the
    line that computed ``answer`` sits above it."""
    source = _cell_source(frame)
    try:
        return compile(source, frame.f_code.co_filename, "exec") if source else None
    except (SyntaxError, ValueError):
        return None


def _cell_source(frame: Any) -> str | None:
    """The source of the notebook cell the frame runs, or None: not a cell (a
    script's whole file is more than the cell), or its source not kept."""
    filename = frame.f_code.co_filename
    if not (filename.startswith("<") or "ipykernel_" in filename):
        return None
    return "".join(linecache.getlines(filename)) or None


def tensor_state(x: Any, with_grad: bool = True) -> dict[str, object]:
    """What a caller sees of a tensor it handed to the learner's function: whether it
    requires grad, its hooks, its value, version counter and dtype, and (``with_grad``)
    its ``.grad``; :func:`tensor_changes` says in words what a call changed."""
    state: dict[str, object] = {
        "requires_grad": x.requires_grad,
        "hooks": len(x._hooks or {}),
        "post-accumulate hooks": len(x.__dict__.get("_post_accumulate_hooks") or {}),
        "value": x.detach().numpy().tobytes(),
        "version": x._version,
        "dtype": x.dtype,
    }
    if with_grad:
        state["grad"] = x.grad
        state["grad values"] = None if x.grad is None else x.grad.detach().numpy().tobytes()
    return state


def tensor_changes(before: dict[str, object], after: dict[str, object]) -> str:
    """What changed between two :func:`tensor_state` of one tensor, in words ("" when
    nothing did)."""
    said = []
    if before["requires_grad"] != after["requires_grad"]:
        said.append(f"requires_grad switched to {after['requires_grad']}")
    for kind in ("hooks", "post-accumulate hooks"):
        if after[kind] != before[kind]:
            gained = after[kind] > before[kind]  # type: ignore[operator]
            said.append(
                f"a {kind[:-1]} registered on it" if gained else f"a {kind[:-1]} removed from it"
            )
    if before["value"] != after["value"] or before["version"] != after["version"]:
        said.append("its values changed in place")
    if before["dtype"] != after["dtype"]:
        said.append("its dtype changed")
    if "grad" in before:
        if before["grad"] is not None and after["grad"] is None:
            said.append("its .grad cleared")
        elif before["grad"] is not after["grad"] or before["grad values"] != after["grad values"]:
            said.append("its .grad changed")
    return ", ".join(said)
