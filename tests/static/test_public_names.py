"""``naivegraph.static.__all__`` is static mode's public API: what
``from naivegraph.static import *`` gives, every name of it defined, none of them
private or a piece of the fast layer (``fastbuild``, ``fastgraph``, ``fastrun`` are
reached by their own module names)."""

from __future__ import annotations

import types

import naivegraph.static as ns

# The names DESIGN.md fixes for static mode; learners and lessons use them as ``ns.X``.
DESIGNED = (
    "Graph",
    "placeholder",
    "Variable",
    "constant",
    "assign",
    "gradients",
    "jvp",
    "cond",
    "while_loop",
    "trace",
    "optimize",
    "optim",
    "load",
    "to_onnx",
    "exp",
    "where",
    "mse_loss",
    "cross_entropy",
)


def test_every_name_in_all_exists():
    missing = [name for name in ns.__all__ if not hasattr(ns, name)]
    assert missing == []


def test_all_lists_each_name_once():
    assert len(ns.__all__) == len(set(ns.__all__))


def test_all_holds_no_private_name_and_no_fast_layer_module():
    assert [name for name in ns.__all__ if name.startswith("_")] == []
    assert [name for name in ns.__all__ if name.startswith("fast")] == []


def test_the_only_module_in_all_is_optim():
    modules = [name for name in ns.__all__ if isinstance(getattr(ns, name), types.ModuleType)]
    assert modules == ["optim"]


def test_all_holds_the_designed_names():
    assert [name for name in DESIGNED if name not in ns.__all__] == []


def test_every_public_function_or_class_of_the_package_is_in_all():
    # A new export that is not listed fails here: add it to __all__ in
    # naivegraph/static/__init__.py (submodules are not exports).
    public = [
        name
        for name, value in vars(ns).items()
        if not name.startswith("_") and not isinstance(value, types.ModuleType)
    ]
    unlisted = [name for name in public if name not in ns.__all__]
    assert unlisted == []


def test_star_import_gives_exactly_all():
    namespace: dict = {}
    exec("from naivegraph.static import *", namespace)
    assert sorted(name for name in namespace if name != "__builtins__") == sorted(ns.__all__)
