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
import builtins
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
_MAX_STEPS = 64


def computed_earlier(frame: Any, computes: Callable[[types.CodeType], str],
                     used: Callable[[int, set[int]], str] | None = None) -> str:
    """What an earlier cell of the learner's computed the checked values with, as
    ``computes`` words it for a cell's code (or ``used`` for what the lines of the cell
    with that number did when they ran), and the name it bound: e.g.
    ``".requires_grad (in a cell above that set `flags`)"``; "" when the values
    come from no such cell (or the kernel keeps no history: a script, a test)."""
    return traced_back(frame, lambda code, tree, name: computes(code), used)


def traced_back(frame: Any, judge: Callable[[types.CodeType, ast.Module, str], str],
                used: Callable[[int, set[int]], str] | None = None) -> str:
    """As :func:`computed_earlier`, with ``judge(code, tree, name)`` saying what the
    earlier cell that set ``name`` computed it with ("" for nothing to say)."""
    history = frame.f_globals.get("In")
    if not isinstance(history, list) or not history:
        return ""
    here = _cell_index(history, frame)
    if here is None:
        return ""
    tree = _parse(history[here])
    if tree is None:
        return ""
    _, checked = dependencies(tree, frame.f_lineno)
    wanted = free_names(tree, checked, frame.f_lineno)
    return _follow(history, here, wanted, frame.f_globals, judge, used)


def _follow(history: list, here: int, wanted: set[str], namespace: dict,
            judge: Callable[[types.CodeType, ast.Module, str], str],
            used: Callable[[int, set[int]], str] | None) -> str:
    todo = [(name, here, name) for name in sorted(wanted) if _followed(namespace.get(name))]
    seen: set[tuple[str, int]] = set()
    while todo and len(seen) < _MAX_STEPS:
        name, before, label = todo.pop(0)
        shown = _output_cells(namespace, before, name)
        if name in _ALL_OUTPUTS:  # every output above, the latest first
            todo = [(f"_{n}", n + 1, f"{name}[{n}]") for n in shown] + todo
            continue
        found, seed = (shown[0], name) if shown else _binding(history, before, name, namespace)
        if found is None or (name, found) in seen:
            continue
        seen.add((name, found))
        source = history[found]
        if is_lesson_cell(source):
            continue
        tree = _parse(source)
        if tree is None:
            continue
        if shown:  # the value is what the cell's last line shows
            tree = _shown_as(tree, name)
        # only what has to do with the value: a look at the model beside it is no source
        part, lines = related_part(tree, {seed}, unrelated(namespace))
        try:
            code = compile(part, "<earlier cell>", "exec")
        except (SyntaxError, ValueError):
            continue
        what = judge(code, part, name) or (used(found, lines) if used is not None else "")
        if what:
            where = "whose output is" if shown else "that set"
            return f"{what} (in a cell above {where} `{label}`)"
        todo += [(n, found, n) for n in sorted(free_names(tree, {seed}, filled=True))
                 if _followed(namespace.get(n))]
        if seed not in dependencies(tree)[0]:  # only filled here: made further up
            todo.append((name, found, label))
    return ""


# IPython's dicts of every output, by cell number.
_ALL_OUTPUTS = ("Out", "_oh")


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


def dependencies(tree: ast.Module, line: int | None = None, filled: bool = False
                 ) -> tuple[dict[str, set[str]], set[str]]:
    """A cell's data flow: each name it binds (above ``line``, or anywhere) -> the
    names it is computed from (a name assigned from an expression depends on the names
    the expression reads; a list a method call fills, on the call's arguments; a
    function, on the names its body reads, and so does a global it sets), and the names
    the arguments of its ``check_...`` calls read.  ``Out[7]`` and ``_oh[7]`` read the
    name ``_7``.  With ``filled``, a name the cell only fills (``vals.append(x)`` on a
    list an earlier cell made) counts as bound by it too."""
    tree = _OutputsByNumber().visit(tree)
    depends: dict[str, set[str]] = {}
    changed: list[tuple[ast.AST, set[str]]] = []  # v.append(x): v now holds x
    checked: set[str] = set()
    for node in _top_scope(tree):
        if line is not None and getattr(node, "lineno", 0) > line:
            continue
        pairs: list[tuple[ast.AST, set[str]]] = []
        if isinstance(node, ast.Assign):
            pairs = [(t, _reads(node.value, t)) for t in node.targets]
        elif isinstance(node, (ast.AugAssign, ast.AnnAssign, ast.NamedExpr)):
            pairs = [(node.target, _reads(node.value, node.target))]
        elif isinstance(node, (ast.For, ast.AsyncFor)):
            pairs = [(node.target, _reads(node.iter))]
        elif isinstance(node, ast.withitem) and node.optional_vars is not None:
            pairs = [(node.optional_vars, _reads(node.context_expr))]
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            body = _reads(node)
            depends.setdefault(node.name, set()).update(body)
            for name in _globals_set(node):  # def f(): global v; v = ...
                depends.setdefault(name, set()).update(body - {name})
        elif isinstance(node, ast.Call):
            func = node.func
            name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
            arguments = _reads(*node.args, *(k.value for k in node.keywords))
            if name.startswith("check_"):
                checked |= arguments
            elif isinstance(func, ast.Name) and name == "setattr" and len(node.args) == 3:
                pairs = [(node.args[0], _reads(node.args[2]))]  # setattr(o, "v", x): o.v = x
            elif isinstance(func, ast.Attribute) and arguments:
                changed.append((func.value, arguments))
            if _fills_first(func) and node.args and isinstance(node.args[0], ast.Name):
                # fill(box, a), heapq.heappush(h, x): the call fills the container first given
                changed.append((node.args[0], arguments | _reads(func)))
        elif isinstance(node, ast.Match):
            pairs = [(ast.Name(id=n, ctx=ast.Store()), _reads(node.subject))
                     for case in node.cases for n in _captured(case.pattern)]
        elif isinstance(node, (ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)):
            # [(v := x) for ...] binds v in the cell, not in the comprehension
            pairs = [(n.target, _reads(n.value)) for n in ast.walk(node)
                     if isinstance(n, ast.NamedExpr)]
        for target, sources in pairs:
            for name in _roots(target):
                depends.setdefault(name, set()).update(sources - {name})
    for statement in tree.body:  # map(v.append, xs): v's method fills v with the xs
        if line is not None and statement.lineno > line:
            continue
        changed += [(n.value, _reads(statement)) for n in ast.walk(statement)
                    if isinstance(n, ast.Attribute) and n.attr in _FILLING
                    and isinstance(n.value, ast.Name)]
    for target, sources in changed:  # a name the cell binds, filled by a method call
        for name in _roots(target) if filled else _roots(target) & depends.keys():
            depends.setdefault(name, set()).update(sources - {name})
    return depends, checked


# The methods that fill the container they belong to.
_FILLING = frozenset({"append", "extend", "insert", "update", "setdefault", "add",
                      "appendleft", "extendleft", "put", "__setitem__", "fill"})
_FILLING_FUNCTIONS = frozenset({"heappush", "heappushpop", "heapreplace", "copyto", "put",
                                "place", "putmask", "insort", "insort_left", "insort_right"})
_BUILTINS = frozenset(dir(builtins))


def _fills_first(func: ast.AST) -> bool:
    """Whether a call may fill its first argument: a function of the notebook's (a
    bare name, not a builtin: ``record(flags, a)``) or the library's functions that
    fill one (``heapq.heappush``, ``np.copyto``)."""
    if isinstance(func, ast.Name):
        return func.id not in _BUILTINS and not func.id.startswith("check_")
    return isinstance(func, ast.Attribute) and func.attr in _FILLING_FUNCTIONS


def _captured(pattern: ast.AST) -> set[str]:
    """The names a ``case`` pattern binds (``case v:``, ``case [a, *rest]:``)."""
    return {n.name for n in ast.walk(pattern)
            if isinstance(n, (ast.MatchAs, ast.MatchStar)) and n.name} | {
        n.rest for n in ast.walk(pattern) if isinstance(n, ast.MatchMapping) and n.rest}


def related_part(tree: ast.Module, seeds: set[str], unrelating: set[str],
                 keep: Callable[[ast.stmt], bool] = lambda statement: False
                 ) -> tuple[ast.Module, set[int]]:
    """The statements of a cell that have to do with the names ``seeds`` (and those
    ``keep`` holds for), and their lines: each statement that binds, fills or reads
    one of them, and so on through the names those statements use (``x3 = ...``,
    ``(x3 ** 2).backward()``, ``opt = SGD([x3])``, ``opt.step()``).  A look at the
    model beside a typed value (``print(loss.item()); v = 40`` on two lines) has
    nothing to do with ``v``.  The names in ``unrelating`` (modules, builtins) connect
    nothing."""
    related = set(seeds)  # a seed connects even if a module: ex.flags = ... sets ex
    kept: set[int] = set()
    grown = True
    while grown:
        grown = False
        for i, statement in enumerate(tree.body):
            names = _names_in(statement)
            if i not in kept and (keep(statement) or names & related):
                kept.add(i)
                related |= names - unrelating
                grown = True
    body = [statement for i, statement in enumerate(tree.body) if i in kept]
    lines = {line for statement in body
             for line in range(statement.lineno, (statement.end_lineno or statement.lineno) + 1)}
    return ast.Module(body=body, type_ignores=[]), lines


def unrelated(namespace: dict) -> set[str]:
    """The names that connect no statements: the notebook's modules and the builtins
    it does not shadow."""
    return {n for n, v in namespace.items() if isinstance(v, types.ModuleType)} | (
        _BUILTINS - namespace.keys())


def _names_in(statement: ast.AST) -> set[str]:
    """Every name a statement reads or binds, in the functions it defines and the
    ``case`` patterns it captures with too."""
    return {n.id for n in ast.walk(statement) if isinstance(n, ast.Name)} | {
        n.name for n in ast.walk(statement)
        if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))} | {
        name for n in ast.walk(statement) if isinstance(n, ast.match_case)
        for name in _captured(n.pattern)}


def _globals_set(function: ast.AST) -> set[str]:
    """The notebook's names a function sets: those it declares ``global``, and those
    whose attributes or items it sets (``o.v = x``, ``setattr(o, "v", x)``, ``d[k] = x``)
    that are not its own parameters or locals."""
    declared = {name for node in ast.walk(function) if isinstance(node, ast.Global)
                for name in node.names}
    own = {a.arg for a in ast.walk(function) if isinstance(a, ast.arg)} | {
        n.id for n in ast.walk(function) if isinstance(n, ast.Name)
        and isinstance(n.ctx, ast.Store)} - declared
    changed: set[str] = set()
    for node in ast.walk(function):
        targets: list[ast.AST] = []
        if isinstance(node, (ast.Assign, ast.AugAssign, ast.AnnAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            targets = [t for t in targets if isinstance(t, (ast.Attribute, ast.Subscript))]
        elif (isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
              and node.func.id == "setattr" and node.args):
            targets = [node.args[0]]
        changed |= {name for t in targets for name in _roots(t)}
    return declared | (changed - own)


class _OutputsByNumber(ast.NodeTransformer):
    """``Out[7]`` and ``_oh[7]`` (IPython's dicts of outputs, indexed by a number) as
    the name IPython also keeps that output under, ``_7``."""

    def visit_Subscript(self, node: ast.Subscript) -> ast.AST:
        self.generic_visit(node)
        index = node.slice
        if (isinstance(node.value, ast.Name) and node.value.id in _ALL_OUTPUTS
                and isinstance(index, ast.Constant) and type(index.value) is int):
            return ast.copy_location(ast.Name(id=f"_{index.value}", ctx=ast.Load()), node)
        return node


def sources_of(names: set[str], depends: dict[str, set[str]],
               stop: Callable[[str], bool] = lambda name: False) -> set[str]:
    """``names`` and every name they were computed from in a cell (``depends``, from
    :func:`dependencies`), not looking past the names ``stop`` holds for."""
    seen: set[str] = set()
    todo = list(names)
    while todo:
        name = todo.pop()
        if name not in seen:
            seen.add(name)
            todo += () if stop(name) else depends.get(name, ())
    return seen


def free_names(tree: ast.Module, names: set[str], line: int | None = None,
               filled: bool = False) -> set[str]:
    """``names`` followed back through the cell's data flow (above ``line``, or all
    of it): the names they come from that the cell does not bind itself."""
    depends, _ = dependencies(tree, line, filled)
    return {n for n in sources_of(names, depends) if n not in depends}


def _reads(*nodes: ast.AST | None) -> set[str]:
    """The names the expressions (or definitions) read from outside themselves: a
    function's parameters and locals, a lambda's or a comprehension's variables are
    their own (``lambda a, b: a * b`` reads no ``a``)."""
    found: set[str] = set()
    for node in nodes:
        if node is None:
            continue
        read = {n.id for n in ast.walk(node) if isinstance(n, ast.Name)
                and isinstance(n.ctx, ast.Load)}
        own = {a.arg for a in ast.walk(node) if isinstance(a, ast.arg)}
        for inner in ast.walk(node):
            if isinstance(inner, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda,
                                  ast.ClassDef, ast.ListComp, ast.SetComp, ast.DictComp,
                                  ast.GeneratorExp)):  # a class body's names are its own too
                own |= {n.id for n in ast.walk(inner) if isinstance(n, ast.Name)
                        and isinstance(n.ctx, ast.Store)}
        found |= read - own
    return found


def _roots(target: ast.AST) -> set[str]:
    """The names an assignment target binds or changes (``v[0] = ...`` changes v)."""
    while isinstance(target, (ast.Subscript, ast.Attribute, ast.Starred)):
        target = target.value
    if isinstance(target, ast.Name):
        return {target.id}
    if isinstance(target, (ast.Tuple, ast.List)):
        return set().union(*(_roots(t) for t in target.elts)) if target.elts else set()
    return set()


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


def _output_cells(namespace: dict, before: int, name: str) -> list[int]:
    """The cells whose displayed values IPython keeps under ``name``: ``_``, ``__``,
    ``___`` (the last three outputs before cell ``before``), ``_7`` (cell 7's), ``Out``
    and ``_oh`` (all of them, the latest first: whichever the cell indexes); [] for
    any other name."""
    outputs = namespace.get("Out")
    if not isinstance(outputs, dict):
        return []
    shown = sorted(n for n in outputs if isinstance(n, int) and n < before)
    if name in _ALL_OUTPUTS:  # an index the cell computes: every output that may hold data
        return [n for n in shown[::-1] if _followed(outputs[n])][:_MAX_STEPS]
    if name in ("_", "__", "___"):
        return [shown[-len(name)]] if len(shown) >= len(name) else []
    if name[:1] == "_" and name[1:].isdigit():
        return [int(name[1:])] if int(name[1:]) in outputs else []
    return []


def _shown_as(tree: ast.Module, name: str) -> ast.Module:
    """The cell with its last expression, the one IPython displayed, assigned to
    ``name``: so the cell's data flow says what the shown value was made from."""
    last = tree.body[-1] if tree.body else None
    if not isinstance(last, ast.Expr):
        return tree
    assign = ast.Assign(targets=[ast.Name(id=name, ctx=ast.Store())], value=last.value)
    body = [*tree.body[:-1], ast.copy_location(assign, last)]
    return ast.fix_missing_locations(ast.Module(body=body, type_ignores=[]))


def _binding(history: list, before: int, name: str, namespace: dict) -> tuple[int | None, str]:
    """The last cell before ``before`` that binds or fills ``name``, and the name it
    does it under.  A module is bound by what a cell assigns to it under any of its
    names (``ex2.flags = ...`` for ``ex.flags``), not filled by calling its functions
    (``ng.render(y)`` changes nothing ``ng`` holds)."""
    value = namespace.get(name)
    if not isinstance(value, types.ModuleType):
        return _binding_cell(history, before, name), name
    found = [(cell, alias) for alias in sorted(n for n, v in namespace.items() if v is value)
             if (cell := _binding_cell(history, before, alias, filled=False)) is not None]
    return max(found) if found else (None, name)


def _binding_cell(history: list, before: int, name: str, filled: bool = True) -> int | None:
    """The last cell before ``before`` that binds ``name`` at its top level (or, with
    ``filled``, fills it: ``v.append(x)``)."""
    for i in range(before - 1, -1, -1):
        tree = _parse(history[i])
        if tree is not None and name in dependencies(tree, filled=filled)[0]:
            return i
    return None


def _followed(value: Any) -> bool:
    """Whether a value may hold what an earlier cell of the learner's computed: a
    number, a flag, a list, an array, a function, class or partial the notebook made,
    a bound method (``get = d.get``), a module (a cell may set its attributes), a
    tensor, an object of the library's (a graph, an optimize report, a compiled
    function, a node); not the library's functions."""
    if isinstance(value, types.ModuleType):  # attributes a cell set on it: ex.flags = ...
        return True
    if isinstance(value, (types.FunctionType, type)):
        return value.__module__ == "__main__"
    if isinstance(value, (types.BuiltinFunctionType, types.MethodType)):
        owner = getattr(value, "__self__", None)  # get = d.get, getv = loss.item
        return owner is not None and not isinstance(owner, types.ModuleType)
    return True  # data, a tensor, or an object of the library's a cell made (a report,
    # a compiled function, a node): one a lesson cell made leads to that cell, which is
    # not blamed; one the learner made, to what they did with it (x3.backward(), a step)


def is_lesson_cell(source: str) -> bool:
    """Whether ``source`` is a code cell of a lesson as the course ships it."""
    return source.strip() in _lesson_sources()


def lesson_of(source: str) -> str:
    """The number of the lesson ("01") whose code cell ``source`` is, "" for a lesson
    cell found in no notebook of the course (only a test makes one)."""
    return _lessons_by_source().get(source.strip(), "")


@lru_cache(maxsize=1)
def _lesson_sources() -> frozenset[str]:
    """The code cells of every lesson as the course ships them, stripped."""
    return frozenset(_lessons_by_source())


@lru_cache(maxsize=1)
def _lessons_by_source() -> dict[str, str]:
    """Each code cell of the course, stripped -> its lesson's number ("01")."""
    lessons: dict[str, str] = {}
    for path in sorted(glob.glob(os.path.join(_COURSE, "*.ipynb"))):
        with open(path, encoding="utf-8") as f:
            notebook = json.load(f)
        for cell in notebook.get("cells", []):
            if cell.get("cell_type") == "code":
                text = cell.get("source", "")
                source = ("".join(text) if isinstance(text, list) else text).strip()
                lessons.setdefault(source, os.path.basename(path)[:2])
    return lessons
