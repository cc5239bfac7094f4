"""The package's imports go one way: ops -> {dynamic, static} -> export / render -> fast,
lessons, cli.

Read from the source with ``ast`` (module-level imports only), so the test needs no
import side effects and names the offending line.
"""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[2] / "naivegraph"

# Each layer may import its own modules and those of the layers listed for it.  No layer
# imports the fast layer: ``naivegraph/__init__.py`` installs it into the core's seams.
ALLOWED = {
    # the fast layer, a plug-in above the core
    "fast": {"ops", "dynamic", "static", "export", "render", "examples"},
    "ops": set(),
    "dynamic": {"ops"},
    "static": {"ops"},
    # ONNX export sits above static mode: ns.to_onnx is installed by naivegraph.export
    "export": {"ops", "static"},
    "autograd": {"ops", "dynamic", "check"},
    "func": {"ops", "dynamic"},
    "nn": {"ops", "dynamic"},
    "optim": {"ops", "dynamic"},
    "utils": {"ops", "dynamic"},
    "check": {"ops", "dynamic"},
    "serialization": {"ops", "dynamic", "nn"},
    "examples": {"ops", "dynamic", "static", "nn", "optim"},
    "render": {"ops", "dynamic", "static", "examples"},
    "course": set(),  # the lessons themselves: notebooks and pictures, and their generator
    "lessons": {
        "course",
        "ops",
        "dynamic",
        "static",
        "nn",
        "optim",
        "autograd",
        "check",
        "examples",
        "render",
        "serialization",
    },
    "cli": {
        "course",
        "ops",
        "dynamic",
        "static",
        "nn",
        "optim",
        "autograd",
        "check",
        "examples",
        "render",
        "lessons",
        "serialization",
        "export",
    },
    "__main__": {"cli"},
}


# Modules that need a package beyond numpy (graphviz, pillow, matplotlib, nbclient, onnx): they
# may be imported inside a function, as optional dependencies are, so that
# ``import naivegraph`` stays numpy-only and a missing package is one clear error.
NEEDS_MORE_THAN_NUMPY = {
    "naivegraph.render.drawing",
    "naivegraph.render.examples",
    "naivegraph.render.animate",
    "naivegraph.lessons.plots",
    "naivegraph.lessons.exercises",
    "naivegraph.export.exporter",  # imports onnx inside to_onnx
}


# (module, module it imports inside a function): a Graph's methods run it with the
# session, which sits above the graph module (it imports the executor, the gradients and
# the passes, which each import the graph module), so they import it when they run.
IMPORTED_WHEN_RUN = {
    ("naivegraph.static.graph", "naivegraph.static.session"),
    ("naivegraph.static.executor", "naivegraph.static.session"),
}


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _is_package(name: str) -> bool:
    return (PACKAGE.parent / name.replace(".", "/") / "__init__.py").exists()


def _target(module: str, node: ast.ImportFrom) -> str:
    if not node.level:
        return node.module or ""
    package = module if _is_package(module) else module.rpartition(".")[0]
    base = package.split(".")[: len(package.split(".")) - node.level + 1]
    return ".".join(base + ([node.module] if node.module else []))


def _imports(module: str, tree: ast.Module):
    """(line, imported naivegraph module, at module level?) for every import; imports
    under ``if TYPE_CHECKING:`` are for annotations only and never run."""
    typing_only = {
        id(n) for stmt in ast.walk(tree) if _is_type_checking_block(stmt) for n in ast.walk(stmt)
    }
    top_level = {id(n) for n in tree.body} | {
        id(n) for stmt in tree.body if isinstance(stmt, (ast.If, ast.Try)) for n in ast.walk(stmt)
    }
    for node in ast.walk(tree):
        if id(node) in typing_only:
            continue
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            target = _target(module, node)
            names = [
                f"{target}.{alias.name}" if _is_module(f"{target}.{alias.name}") else target
                for alias in node.names
            ]
        else:
            continue
        for name in names:
            if name == "naivegraph" or name.startswith("naivegraph."):
                yield node.lineno, name, id(node) in top_level


def _is_type_checking_block(node: ast.AST) -> bool:
    test = getattr(node, "test", None) if isinstance(node, ast.If) else None
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def _is_module(name: str) -> bool:
    path = PACKAGE.parent / name.replace(".", "/")
    return path.with_suffix(".py").exists() or (path / "__init__.py").exists()


def _graph() -> tuple[dict[str, set[str]], list[str]]:
    edges: dict[str, set[str]] = {}
    inner: list[str] = []
    for path in sorted(PACKAGE.rglob("*.py")):
        if not (path.parent / "__init__.py").exists():
            continue  # no module: the course's lesson sources are notebooks written as Python
        module = _module_name(path)
        edges.setdefault(module, set())
        for line, name, top in _imports(module, ast.parse(path.read_text(), str(path))):
            if top:
                edges[module].add(name)
            elif name not in NEEDS_MORE_THAN_NUMPY and (module, name) not in IMPORTED_WHEN_RUN:
                inner.append(f"{module}:{line} imports {name} inside a function")
    return edges, inner


def _layer(module: str) -> str:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else "naivegraph"


def _cycle(edges: dict[str, set[str]]) -> list[str] | None:
    """One import cycle, as a list of modules, or None."""
    state: dict[str, int] = {}  # 1: on the current path, 2: done
    for start in edges:
        if state.get(start):
            continue
        path = [start]
        stack = [iter(sorted(edges.get(start, ())))]
        state[start] = 1
        while stack:
            child = next(stack[-1], None)
            if child is None:
                state[path.pop()] = 2
                stack.pop()
            elif state.get(child) == 1:
                return path[path.index(child) :] + [child]
            elif not state.get(child) and child in edges:
                state[child] = 1
                path.append(child)
                stack.append(iter(sorted(edges[child])))
    return None


def _parents(name: str) -> set[str]:
    """Importing ``a.b.c`` runs the ``__init__`` of ``a`` and ``a.b`` first."""
    parts = name.split(".")
    return {".".join(parts[:i]) for i in range(2, len(parts))}


def test_there_is_no_import_cycle_in_the_package():
    edges, _ = _graph()
    # a subpackage's __init__ importing its own modules is not a cycle back to it
    cycle = _cycle(
        {m: {t for t in targets if t not in _parents(m) and t != m} for m, targets in edges.items()}
    )
    assert cycle is None, "import cycle: " + " -> ".join(cycle)


def test_no_function_imports_a_naivegraph_module():
    _, inner = _graph()
    assert not inner, "\n".join(inner)


def test_each_layer_imports_only_the_layers_below_it():
    edges, _ = _graph()
    wrong = []
    for module, targets in edges.items():
        layer = _layer(module)
        if layer == "naivegraph":  # the package's __init__ gathers the public API
            continue
        allowed = ALLOWED[layer] | {layer}
        wrong += [
            f"{module} imports {t}"
            for t in sorted(targets)
            if t != "naivegraph" and _layer(t) not in allowed
        ]
    assert not wrong, "\n".join(wrong)


def test_the_checker_finds_a_cycle_and_a_layering_breach():
    # the test above cannot pass vacuously: the cycle finder sees a planted cycle
    assert _cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert _cycle({"a": {"b"}, "b": set()}) is None
    edges, _ = _graph()
    assert "naivegraph.dynamic.node" in edges["naivegraph.dynamic.tensor"]


def test_no_module_below_the_package_root_imports_the_fast_layer():
    edges, _ = _graph()
    importers = [
        module
        for module, targets in edges.items()
        if module != "naivegraph"
        and _layer(module) != "fast"
        and any(t == "naivegraph.fast" or t.startswith("naivegraph.fast.") for t in targets)
    ]
    assert importers == []
    assert "naivegraph.fast" in edges["naivegraph"]  # the package root installs it
