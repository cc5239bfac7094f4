"""Where the values a checking cell hands over were computed, when it only names them.

A prediction exercise refuses a checking cell that computes its answer (runs a
backward, reads ``.grad``, calls the planner): see ``checking.cell_computes``.  A
learner may do that work in a cell of their own above, and only name the result in the
checking cell (``a_rg, b_rg, c_rg = flags``).  A notebook's kernel keeps every cell it
ran, in order (IPython's ``In``), so the names the check is given can be followed back:
through the assignments of the checking cell, then to the earlier cell that last bound
each name, and through that cell's own assignments, until a cell that computes is
found, or a cell of the lesson itself (the lesson's cells are its own business), or a
name no cell bound.

A value read off the screen and typed as a literal leaves no trace: nothing can tell
it from a prediction, and nothing here tries.
"""

from __future__ import annotations

import ast
import glob
import json
import linecache
import os
import types
from collections.abc import Callable
from functools import lru_cache
from typing import Any

_COURSE = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "course")

# How far back a value is followed: cells, one name after another.
_MAX_STEPS = 12


def computed_earlier(frame: Any, computes: Callable[[types.CodeType], str]) -> str:
    """What an earlier cell of the learner's computed the checked values with, as
    ``computes`` words it for a cell's code, and the name it bound: e.g.
    ``".requires_grad (in the cell above that set `flags`)"``; "" when the values
    come from no such cell (or the kernel keeps no history: a script, a test)."""
    history = frame.f_globals.get("In")
    if not isinstance(history, list) or not history:
        return ""
    here = _cell_index(history, frame)
    if here is None:
        return ""
    tree = _parse(history[here])
    if tree is None:
        return ""
    wanted = _free_names(tree, _checked_names(tree, frame.f_lineno), frame.f_lineno)
    return _follow(history, here, wanted, frame.f_globals, computes)


def _follow(history: list, here: int, wanted: set[str], namespace: dict,
            computes: Callable[[types.CodeType], str]) -> str:
    todo = [(name, here) for name in sorted(wanted) if _is_data(namespace.get(name))]
    seen: set[tuple[str, int]] = set()
    while todo and len(seen) < _MAX_STEPS:
        name, before = todo.pop(0)
        found = _binding_cell(history, before, name)
        if found is None or (name, found) in seen:
            continue
        seen.add((name, found))
        source = history[found]
        if _is_lesson_cell(source):
            continue
        tree = _parse(source)
        try:
            code = compile(source, "<earlier cell>", "exec")
        except (SyntaxError, ValueError):
            continue
        what = computes(code)
        if what:
            return f"{what} (in a cell above that set `{name}`)"
        if tree is not None:
            todo += [(n, found) for n in sorted(_free_names(tree, {name}, None))]
    return ""


def _cell_index(history: list, frame: Any) -> int | None:
    """The index in ``In`` of the cell the frame runs: the last one with its source."""
    source = "".join(linecache.getlines(frame.f_code.co_filename)).strip()
    if not source:
        return None
    for i in range(len(history) - 1, -1, -1):
        if isinstance(history[i], str) and history[i].strip() == source:
            return i
    return None


def _parse(source: Any) -> ast.Module | None:
    if not isinstance(source, str):
        return None
    try:
        return ast.parse(source)
    except SyntaxError:
        return None


def _checked_names(tree: ast.Module, line: int) -> set[str]:
    """The names loaded in the arguments of the checker call on ``line``."""
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and node.lineno <= line <= (node.end_lineno or line):
            if _call_name(node.func).startswith("check"):
                for arg in [*node.args, *(k.value for k in node.keywords)]:
                    names |= _loaded(arg)
    return names


def _call_name(func: ast.expr) -> str:
    if isinstance(func, ast.Attribute):
        return func.attr
    return func.id if isinstance(func, ast.Name) else ""


def _loaded(node: ast.AST) -> set[str]:
    """The names an expression reads from outside it (a comprehension's or a lambda's
    own variables are its own)."""
    names = {n.id for n in ast.walk(node) if isinstance(n, ast.Name)}
    own = {n.id for n in ast.walk(node) if isinstance(n, ast.Name) and not isinstance(
        n.ctx, ast.Load)} | {a.arg for a in ast.walk(node) if isinstance(a, ast.arg)}
    return names - own if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) \
        else names - own - {a.arg for a in ast.walk(node.args)}


def _top_scope(tree: ast.AST):
    """The nodes of a cell's own scope: not inside a function, lambda, class or
    comprehension, whose names are their own."""
    todo = list(ast.iter_child_nodes(tree))
    while todo:
        node = todo.pop()
        yield node
        if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda,
                                 ast.ClassDef, ast.ListComp, ast.SetComp, ast.DictComp,
                                 ast.GeneratorExp)):
            todo += list(ast.iter_child_nodes(node))


def _free_names(tree: ast.Module, names: set[str], line: int | None) -> set[str]:
    """``names`` followed back through the cell's assignments (above ``line``, or all
    of them): the names they come from that the cell does not bind itself."""
    bound = _bindings(tree, line)
    free: set[str] = set()
    todo, seen = list(names), set()
    while todo:
        name = todo.pop()
        if name in seen:
            continue
        seen.add(name)
        if name in bound:
            todo += [n for value in bound[name] for n in _loaded(value)]
        else:
            free.add(name)
    return free


def _bindings(tree: ast.Module, line: int | None) -> dict[str, list[ast.AST]]:
    """Each name the cell binds (above ``line``) -> the expressions it is bound from
    (for a loop variable, what the loop runs over; for a function, the function)."""
    bound: dict[str, list[ast.AST]] = {}
    for node in _top_scope(tree):
        if line is not None and getattr(node, "lineno", 0) > line:
            continue
        pairs: list[tuple[ast.AST, ast.AST]] = []
        if isinstance(node, ast.Assign):
            pairs = [(t, node.value) for t in node.targets]
        elif isinstance(node, (ast.AugAssign, ast.AnnAssign)) and node.value is not None:
            pairs = [(node.target, node.value)]
        elif isinstance(node, ast.For):
            pairs = [(node.target, node.iter)]
        elif isinstance(node, ast.NamedExpr):
            pairs = [(node.target, node.value)]
        elif isinstance(node, ast.withitem) and node.optional_vars is not None:
            pairs = [(node.optional_vars, node.context_expr)]
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            pairs = [(ast.Name(id=node.name, ctx=ast.Store()), node)]
        for target, value in pairs:
            for name in _stored(target):
                bound.setdefault(name, []).append(value)
    return bound


def _stored(target: ast.AST) -> list[str]:
    return [n.id for n in ast.walk(target) if isinstance(n, ast.Name)]


def _binding_cell(history: list, before: int, name: str) -> int | None:
    """The last cell before ``before`` that binds ``name`` at its top level."""
    for i in range(before - 1, -1, -1):
        tree = _parse(history[i])
        if tree is not None and name in _bindings(tree, None):
            return i
    return None


def _is_data(value: Any) -> bool:
    """A value an answer is made of (a number, a flag, a list, an array, a tensor), not
    a module, a function or a class: those are the lesson's tools."""
    return not isinstance(value, (types.ModuleType, types.FunctionType, type,
                                  types.BuiltinFunctionType, types.MethodType))


def _is_lesson_cell(source: str) -> bool:
    return source.strip() in _lesson_sources()


@lru_cache(maxsize=1)
def _lesson_sources() -> frozenset[str]:
    """The code cells of every lesson as the course ships them, stripped."""
    sources: set[str] = set()
    for path in glob.glob(os.path.join(_COURSE, "*.ipynb")):
        with open(path, encoding="utf-8") as f:
            notebook = json.load(f)
        for cell in notebook.get("cells", []):
            if cell.get("cell_type") == "code":
                text = cell.get("source", "")
                sources.add(("".join(text) if isinstance(text, list) else text).strip())
    return frozenset(sources)
