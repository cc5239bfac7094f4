"""Which library functions an answer called, however it reached them.

A checker that refuses a ready-made rule (the library's jacfwd for a Jacobian the
exercise builds, an op-table partial for a backward the exercise writes) cannot patch
the function's attribute: a learner may have imported it under another name, reached it
through a table, or copied it.  :class:`LibraryCalls` watches calls with
:func:`sys.setprofile` instead, by the function's code object (and by its bytecode,
constants and names, so a copy of the code is seen too), by the package directory a Python
function lives in, and, for a package such as torch, by the module of the builtins the
answer calls.

A call counts only when the answer made it directly: the frame that called it (past
the standard library's, such as functools') is the learner's, neither the library's
nor a checker's nor the watched package's own.  The engine's own uses (a backward pass
calls the op table's partials) do not count.
"""

from __future__ import annotations

import importlib.util
import os
import sys
import sysconfig
import types
from collections.abc import Iterable

_PACKAGE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
_STDLIB = tuple(
    os.path.abspath(p) + os.sep
    for p in {sysconfig.get_paths()["stdlib"], sysconfig.get_paths()["platstdlib"]}
)


def _codes_of(fn) -> list[types.CodeType]:
    """The code objects of ``fn`` (a function, a code object, a functools.partial, a
    bound method) and of the functions it defines inside (a closure it returns)."""
    if isinstance(fn, types.CodeType):
        code = fn
    else:
        inner = getattr(fn, "func", None) or getattr(fn, "__func__", None)
        if inner is not None and inner is not fn:
            return _codes_of(inner)
        code = getattr(fn, "__code__", None)
    if code is None:
        return []
    found = [code]
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            found += _codes_of(const)
    return found


# Shorter bytecode is a one-line expression (``g * y``), which the learner's own code
# may well spell the same way: such a function is watched by identity only.
_COPY_MIN_BYTES = 24


def _key(code: types.CodeType):
    if len(code.co_code) < _COPY_MIN_BYTES:
        return None
    try:
        key = (code.co_argcount, code.co_code, code.co_consts, code.co_names)
        hash(key)
    except TypeError:  # an unhashable constant: watched by identity only
        return None
    return key


class LibraryCalls:
    """The watched functions and packages an answer called inside a ``with`` block.

    ``functions`` maps a name to show to a function or code object, or a builtin (or is
    an iterable of functions, named by their ``__name__``); ``packages`` maps a name to a
    directory: any Python function of that directory counts, and so does any builtin
    whose module is the package (``torch.from_numpy``, a torch tensor's methods).
    ``called`` lists the names, in the order the answer called them.  With
    ``any_caller``, a call counts whoever makes it (the library on the answer's behalf:
    for a block in which the library itself never calls the watched functions)."""

    def __init__(self, functions=(), packages=None, any_caller: bool = False) -> None:
        self._by_code: dict[types.CodeType, str] = {}
        self._by_key: dict[object, str] = {}
        items = (
            functions.items()
            if isinstance(functions, dict)
            else (
                (getattr(fn, "__name__", None) or getattr(fn, "co_name", "?"), fn)
                for fn in functions
            )
        )
        self._by_builtin: dict[object, str] = {}  # functions without Python code
        for name, fn in items:
            if not _codes_of(fn):
                self._by_builtin.setdefault(fn, name)
            for code in _codes_of(fn):
                self._by_code.setdefault(code, name)
                key = _key(code)
                if key is not None:
                    self._by_key.setdefault(key, name)
        self._packages = {
            name: os.path.abspath(directory) + os.sep
            for name, directory in (packages or {}).items()
            if directory
        }
        self._not_learner = (_PACKAGE + os.sep, *self._packages.values())
        self._any_caller = any_caller
        self.called: list[str] = []

    def __enter__(self) -> LibraryCalls:
        self._previous = sys.getprofile()
        previous = self._previous

        def watch(frame, event, arg):
            if event == "call":
                self._on_call(frame)
            elif event == "c_call":
                self._on_builtin(frame, arg)
            if previous is not None:
                previous(frame, event, arg)

        sys.setprofile(watch)
        return self

    def __exit__(self, *exc_info: object) -> None:
        sys.setprofile(self._previous)

    def _on_call(self, frame) -> None:
        code = frame.f_code
        name = self._by_code.get(code)
        if name is None and self._by_key and not code.co_filename.startswith(self._not_learner):
            key = _key(code)  # a copy lives in the learner's code, not the library's
            name = self._by_key.get(key) if key is not None else None
        if name is None and self._packages:
            name = self._package_of(code.co_filename)
        if name is not None and self._by_learner(frame.f_back):
            self.called.append(name)

    def _on_builtin(self, frame, builtin) -> None:
        name = self._by_builtin.get(builtin) if self._by_builtin else None
        if name is not None:
            if self._by_learner(frame):
                self.called.append(name)
            return
        if not self._packages:
            return
        module = getattr(builtin, "__module__", None)
        owner = getattr(builtin, "__self__", None)
        if not isinstance(module, str):
            module = type(owner).__module__ if owner is not None else ""
        if isinstance(owner, types.ModuleType):
            module = owner.__name__
        top = module.split(".", 1)[0]
        if top in self._packages and self._by_learner(frame):
            self.called.append(top)

    def _package_of(self, filename: str) -> str | None:
        for name, directory in self._packages.items():
            if filename.startswith(directory):
                return name
        return None

    def _by_learner(self, frame) -> bool:
        """Whether ``frame`` (past the standard library's frames) is the learner's: not
        in naivegraph (its library or its checkers) nor in a watched package; any frame
        with ``any_caller``."""
        if self._any_caller:
            return True
        while frame is not None and in_stdlib(frame.f_code.co_filename):
            frame = frame.f_back
        return frame is not None and not frame.f_code.co_filename.startswith(self._not_learner)


def in_stdlib(filename: str) -> bool:
    return filename.startswith(_STDLIB) and "-packages" not in filename


def package_directory(name: str) -> str | None:
    """The directory of an installed package, found without importing it (None when
    it is not installed)."""
    try:
        spec = importlib.util.find_spec(name)
    except (ImportError, ValueError):
        return None
    locations = getattr(spec, "submodule_search_locations", None)
    return list(locations)[0] if locations else None


def watched(functions: Iterable) -> list:
    """``functions`` without the ones that are None (a name the library lacks)."""
    return [fn for fn in functions if fn is not None]
