"""What each of the learner's cells did with the lesson's own objects while it ran.

A prediction exercise refuses an answer computed with the library
(``checking.cell_computes``), and :mod:`earlier_cells` follows the names a checking cell
hands over back to the cells that made them.  A value can also travel where no name
shows it: a bound method kept in one cell and called in the next (``get = loss.item``),
a dict's ``get``, a function that fills the list it is given, ``heapq``.  So the
notebook's kernel also keeps, for each cell of the learner's, the calls its code made
on the objects the lesson's cells made: a method or property of theirs (``loss.item``,
``a.requires_grad``), a library function given one of them (``Plan`` given ``chain``),
a function a lesson cell defined (``scaled``).  A cell of the lesson itself (its
shipped source) is not watched: what the lesson shows is its own business; nor is a
checker while it runs.

The watch is a :func:`sys.setprofile` hook, on while a learner's cell runs (IPython's
``pre_run_cell`` and ``post_run_cell`` events); it chains to a hook already set.
"""

from __future__ import annotations

import ast
import os
import sys
import sysconfig
import types
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

from .earlier_cells import dependencies, is_lesson_cell, lesson_of
from .library_calls import in_stdlib

_PACKAGE = os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep
# The checks themselves: calling one is handing the answer over, not using the model.
_CHECKS = tuple(os.path.join(os.path.dirname(os.path.abspath(__file__)), name)
                for name in ("checking.py", "checkers" + os.sep, "exercises.py"))
_NOT_LEARNER = tuple(
    os.path.abspath(sysconfig.get_paths()[k]) + os.sep for k in ("purelib", "platlib")
) + (_PACKAGE,)

# How calls are worded: the dunder methods by what the learner wrote.
_SPELLED = {
    "__float__": "float({})", "__int__": "int({})", "__bool__": "bool({})",
    "__array__": "np.asarray({})", "__getitem__": "{}[...]", "__iter__": "iter({})",
    "__repr__": "repr({})", "__str__": "str({})", "__format__": "format({})",
    "__call__": "{}(...)", "__len__": "len({})",
}

_OPERATORS = frozenset(
    f"__{r}{op}__" for op in ("add", "sub", "mul", "truediv", "floordiv", "pow", "matmul", "mod")
    for r in ("", "r", "i")) | {"__neg__", "__pos__", "__abs__"}

_state: dict[str, Any] = {"paused": 0, "record": None, "lessons": set()}
#: cell number -> the uses its code made of the lesson's objects, in order, each with
#: the line of the cell it ran from
RECORDS: dict[int, list[tuple[str, int | None]]] = {}
_lesson_names: dict[str, bool] = {}  # in the order the lesson bound them -> a loop's?


def _always(lessons: set[str]) -> bool:
    return True


#: whether a learner's cell is watched, given the lessons whose cells have run ("" for a
#: cell of no known lesson): the checks set it to "while a prediction of theirs is open",
#: so a training loop of one's own runs at full speed once there is nothing to protect
needed: list[Callable[[set[str]], bool]] = [_always]


def watch_cells(shell: Any = None) -> None:
    """Keep, from now on, what each cell of the learner's does with the lesson's
    objects (no-op outside IPython, and when already watching ``shell``)."""
    if shell is None:
        try:
            from IPython import get_ipython
        except ImportError:  # not in a notebook: nothing to watch
            return
        shell = get_ipython()
    if shell is None or getattr(shell, "_naivegraph_cell_reads", False):
        return
    shell._naivegraph_cell_reads = True
    RECORDS.clear()  # a new kernel: cell numbers start again
    _lesson_names.clear()
    _state["lessons"] = set()
    shell.events.register("pre_run_cell", lambda info: _before_cell(shell, info))
    shell.events.register("post_run_cell", lambda result: _after_cell(shell, result))


def uses_in(cell: int, lines: set[int] | None = None) -> list[str]:
    """What cell number ``cell`` did with the lesson's objects (``["loss.item"]``): all
    of it, or what its statements on ``lines`` did (a look at the model on another
    line, feeding nothing into the answer, is no use of it for the answer)."""
    return _on_lines(RECORDS.get(cell, ()), lines)


def uses_so_far(lines: set[int] | None = None) -> list[str]:
    """As :func:`uses_in`, for the running cell up to now."""
    record = _state["record"]
    return _on_lines(record.uses, lines) if record is not None else []


def _on_lines(uses: Any, lines: set[int] | None) -> list[str]:
    return list(dict.fromkeys(use for use, line in uses if lines is None or line in lines))


@contextmanager
def paused() -> Iterator[None]:
    """Record nothing while a checker runs: its own reads are not the learner's."""
    _state["paused"] += 1
    try:
        yield
    finally:
        _state["paused"] -= 1


class _Record:
    """The watch over one learner cell: the lesson's objects by id, the code of the
    functions the lesson defined, and the uses seen."""

    def __init__(self, namespace: dict) -> None:
        self.objects: dict[int, str] = {}
        self.codes: dict[types.CodeType, str] = {}
        self.kept: list[Any] = []  # the objects stay alive, so their ids stay theirs
        # an object the lesson named twice is called by its first name, a loop's
        # variable (`for t in (l1, loss)`) last
        for name in sorted(_lesson_names, key=lambda n: _lesson_names[n]):
            value = namespace.get(name)
            if isinstance(value, types.FunctionType) and value.__module__ == "__main__":
                self.codes.setdefault(value.__code__, name)
            elif _watched(value) and id(value) not in self.objects:
                self.objects[id(value)] = name
                self.kept.append(value)
        self.uses: list[tuple[str, int | None]] = []  # with the line of the cell it ran from
        self.previous = sys.getprofile()

    def hook(self, frame: Any, event: str, arg: Any) -> None:
        if event == "call" and not _state["paused"]:
            try:
                back = frame.f_back
                if back is not None and not back.f_code.co_filename.startswith(_PACKAGE):
                    self._on_call(frame)  # (the library's calls of its own are skipped at once)
            except Exception:  # a watch never breaks the learner's cell
                pass
        if self.previous is not None:
            self.previous(frame, event, arg)

    def _on_call(self, frame: Any) -> None:
        code = frame.f_code
        name = self.codes.get(code)
        if name is not None:  # a function a lesson cell defined
            use = f"{name}(...)" if _by_learner(frame.f_back) else None
        elif (code.co_filename.startswith(_PACKAGE) and not code.co_filename.startswith(_CHECKS)
              and _by_learner(frame.f_back)):
            use = self._library_use(frame)  # the library's calls of its own are not looked at
        else:
            return
        if use is not None:
            self.uses.append((use, _cell_line(frame.f_back)))

    def _library_use(self, frame: Any) -> str | None:
        """``loss.item``, ``float(loss)``, ``grad(loss)``, ``Plan(chain)``: a call into
        the library given one of the lesson's objects (or a node of a graph), or None."""
        code = frame.f_code
        count = code.co_argcount + code.co_kwonlyargcount
        count += bool(code.co_flags & 0x04) + bool(code.co_flags & 0x08)  # *args, **kwargs
        local = frame.f_locals
        method = code.co_name
        if method == "__init__":  # Plan(chain): the class made, not its __init__
            method = type(local.get("self")).__name__
        for position, parameter in enumerate(code.co_varnames[:count]):
            value = local.get(parameter)
            values = (value if isinstance(value, (list, tuple))
                      else value.values() if isinstance(value, dict) else (value,))
            for v in values:
                name = self.objects.get(id(v))
                if name is None and _is_node(v):  # its own name would give answers away
                    return f"a node of the graph ({_method_name(type(v), code) or method})"
                if name is None:
                    continue
                if position > 0:  # ones * w1: an operator of the first operand's type
                    first = local.get(code.co_varnames[0])
                    own = _method_name(type(first), code) if first is not None else None
                    if own in _OPERATORS or method in _OPERATORS:
                        return _arithmetic_on(v, name)
                    return f"{method}({name})"
                own = _method_name(type(v), code)
                if own == "":
                    return f"a method of {name}"
                if own in _OPERATORS:
                    return _arithmetic_on(v, name)
                if own is not None:  # loss.item, a.requires_grad, float(loss)
                    return _SPELLED.get(own, "{}." + own).format(name)
                return f"{method}({name})"
        return None


def _arithmetic_on(value: Any, name: str) -> str | None:
    """Arithmetic on a lesson's tensor, as a use: on a leaf it only takes the input's
    value, as typing the number does (``2 * x * 2`` for x = 3 is the learner's formula);
    on a tensor an op made it reads what the model computed."""
    return None if getattr(value, "grad_fn", 0) is None else f"arithmetic on {name}"


_METHODS: dict[tuple[type, types.CodeType], str | None] = {}


def _method_name(cls: type, code: types.CodeType) -> str | None:
    """The name under which ``cls`` has the method (or property) whose code runs,
    whatever the function is called (a fast path kept as ``Tensor.mean``); None for no
    method of ``cls``; "__add__" for code its operators share; "" for code that several
    other methods share."""
    key = (cls, code)
    if key not in _METHODS:
        names = {
            attribute
            for klass in cls.__mro__
            for attribute, member in vars(klass).items()
            if attribute != "__init__" and _code_of(member) is code
        }
        if names and names <= _OPERATORS:
            _METHODS[key] = "__add__"  # one of the operators: which one does not matter
        else:
            _METHODS[key] = names.pop() if len(names) == 1 else "" if names else None
    return _METHODS[key]


def _code_of(member: Any) -> types.CodeType | None:
    function = member.fget if isinstance(member, property) else member
    return getattr(getattr(function, "__func__", function), "__code__", None)


def _cell_line(frame: Any) -> int | None:
    """The line of the notebook cell that is running, through the learner's functions
    it called: the line of the outermost code of the learner's (a cell's top level)."""
    line = None
    while frame is not None:
        if frame.f_code.co_name == "<module>" and not frame.f_code.co_filename.startswith(
                _NOT_LEARNER):
            line = frame.f_lineno
        frame = frame.f_back
    return line


def _watched(value: Any) -> bool:
    """An object of the library's the lesson made: a tensor, a graph, a node, a traced
    function, a model (not a module, a class or a library function)."""
    if isinstance(value, (types.ModuleType, type, types.FunctionType,
                          types.BuiltinFunctionType, types.MethodType)):
        return False
    return type(value).__module__.split(".")[0] == "naivegraph"


def _is_node(value: Any) -> bool:
    """A node of a recorded graph (what ``grad_fn`` and ``next_functions`` hold)."""
    return hasattr(type(value), "next_functions") and type(value).__module__.startswith(
        "naivegraph")


def _by_learner(frame: Any) -> bool:
    """Whether the code that made the call (past the standard library's frames:
    ``map``, ``heapq``, ``functools``, and code made by ``exec``) is the learner's: not naivegraph's, nor an
    installed package's (IPython showing a cell's value is not the learner reading it)."""
    while frame is not None and (in_stdlib(frame.f_code.co_filename)
                                 or frame.f_code.co_filename == "<string>"):
        frame = frame.f_back  # "<string>": code made by exec, a dataclass's __repr__
    return frame is not None and not frame.f_code.co_filename.startswith(_NOT_LEARNER)


def _before_cell(shell: Any, info: Any) -> None:
    source = getattr(info, "raw_cell", "") or ""
    if is_lesson_cell(source):
        _state["lessons"].add(lesson_of(source))
        _state["record"] = None
        return
    if not needed[0](_state["lessons"]):
        _state["record"] = None
        return
    record = _Record(shell.user_ns)
    _state["record"] = record
    sys.setprofile(record.hook)


def _after_cell(shell: Any, result: Any) -> None:
    record = _state["record"]
    _state["record"] = None
    if record is not None and sys.getprofile() == record.hook:  # a bound method: ==, not is
        sys.setprofile(record.previous)
    if record is not None and getattr(result, "execution_count", None) is not None:
        RECORDS[result.execution_count] = record.uses  # by its number in `In`
    source = getattr(getattr(result, "info", None), "raw_cell", "") or ""
    if record is None and is_lesson_cell(source):
        try:
            tree = ast.parse(source)
            loops = {n.id for node in ast.walk(tree) if isinstance(node, (ast.For, ast.comprehension))
                     for n in ast.walk(node.target) if isinstance(n, ast.Name)}
            for name in dependencies(tree)[0]:
                _lesson_names[name] = _lesson_names.get(name, True) and name in loops
        except SyntaxError:  # a lesson cell that does not parse binds nothing we follow
            pass
