"""``functional_call``: run a module with other tensors in place of its parameters;
``stack_module_state``: the parameters of several like modules, stacked for ``vmap``."""

from __future__ import annotations

import contextlib
from typing import Any, Iterator, Sequence

from ..dynamic.functions import stack

__all__ = ["functional_call", "stack_module_state"]

_MISSING = object()


def functional_call(
    module: Any,
    parameter_and_buffer_dicts: Any,
    args: Any = None,
    kwargs: dict | None = None,
    *,
    tie_weights: bool = True,
    strict: bool = False,
) -> Any:
    """``module(*args, **kwargs)`` computed with the tensors of
    ``parameter_and_buffer_dicts`` (by dotted name, as ``named_parameters`` gives them)
    in place of the module's own; the module is left as it was.

    This turns a module into a function of its parameters, for the other transforms:
    ``grad(lambda p, x: functional_call(model, p, (x,)).sum())(params, x)``.  A name the
    module does not have is set as an attribute for the call (``strict=True`` refuses
    missing and unexpected names); with ``tie_weights`` a parameter shared by two names
    is replaced under both when one is given.

    >>> import naivegraph as ng
    >>> lin = ng.nn.Linear(2, 1)
    >>> params = {"weight": ng.tensor([[1.0, 2.0]]), "bias": ng.tensor([0.5])}
    >>> functional_call(lin, params, (ng.tensor([3.0, 4.0]),))
    tensor([11.5000])
    """
    given = _merged(parameter_and_buffer_dicts)
    if strict:
        _check_strict(module, given)
    if args is None:
        args = ()
    elif not isinstance(args, tuple):
        args = (args,)
    with _swapped(module, _with_tied(module, given) if tie_weights else given):
        return module(*args, **(kwargs or {}))


def _merged(dicts: Any) -> dict:
    if isinstance(dicts, dict):
        return dict(dicts)
    repeated = sorted(
        {k for i, d in enumerate(dicts) for k in d if any(k in e for e in dicts[i + 1 :])}
    )
    if repeated:
        raise ValueError(
            f"{repeated} appeared in multiple dictionaries; behavior of functional call is "
            "ambiguous"
        )
    return {k: v for d in dicts for k, v in d.items()}


def _check_strict(module: Any, given: dict) -> None:
    names = [n for n, _ in module.named_parameters(remove_duplicate=False)]
    missing = [n for n in names if n not in given]
    unexpected = [n for n in given if n not in names]
    problems = []
    if unexpected:
        problems.append("Unexpected key(s): " + ", ".join(f"'{n}'" for n in unexpected) + ".")
    if missing:
        problems.append("Missing key(s): " + ", ".join(f"'{n}'" for n in missing) + ".")
    if problems:
        raise RuntimeError(
            f"Error(s) in reparametrizing for {type(module).__name__}:\n\t" + "\n\t".join(problems)
        )


def _with_tied(module: Any, given: dict) -> dict:
    """``given`` extended to every other name of a parameter it replaces (tied weights)."""
    by_object: dict[int, list[str]] = {}
    for name, p in module.named_parameters(remove_duplicate=False):
        by_object.setdefault(id(p), []).append(name)
    extended = dict(given)
    for names in by_object.values():
        chosen = [n for n in names if n in given]
        for n in names:
            if chosen and n not in given:
                extended[n] = given[chosen[0]]
    return extended


@contextlib.contextmanager
def _swapped(module: Any, tensors: dict) -> Iterator[None]:
    """The module with ``tensors`` in place of its parameters (attributes otherwise)."""
    undo = []
    try:
        for name, value in tensors.items():
            owner_path, _, attr = name.rpartition(".")
            owner = module.get_submodule(owner_path) if owner_path else module
            table = owner.__dict__.get("_parameters", {})
            if attr in table:  # bypasses the Parameter-only check: only for this call
                undo.append((table, attr, table[attr]))
                table[attr] = value
            else:
                undo.append((owner.__dict__, attr, owner.__dict__.get(attr, _MISSING)))
                owner.__dict__[attr] = value
        yield
    finally:
        for table, attr, old in reversed(undo):
            if old is _MISSING:
                del table[attr]
            else:
                table[attr] = old


def stack_module_state(models: Sequence) -> tuple[dict, dict]:
    """``(params, buffers)``: each parameter of ``models`` (modules of one class) stacked
    along a new first dimension, by name, as new leaves (optimisable, unrelated to the
    modules' own); for an ensemble run by ``vmap`` over ``functional_call``.  naivegraph
    modules have no buffers, so ``buffers`` is empty.

    >>> import naivegraph as ng
    >>> models = [ng.nn.Linear(3, 2) for _ in range(4)]
    >>> params, buffers = stack_module_state(models)
    >>> {k: tuple(v.shape) for k, v in params.items()}, buffers
    ({'weight': (4, 2, 3), 'bias': (4, 2)}, {})
    """
    models = list(models)
    if not models:
        raise RuntimeError("stack_module_state: Expected at least one model, got 0.")
    if len({m.training for m in models}) != 1:
        raise RuntimeError(
            "stack_module_state: Expected all models to have the same training/eval mode."
        )
    if any(type(m) is not type(models[0]) for m in models):
        raise RuntimeError("stack_module_state: Expected all models to be of the same class.")
    tables = [dict(m.named_parameters()) for m in models]
    params = {name: _stacked_leaf([t[name] for t in tables], name) for name in tables[0]}
    return params, {}


def _stacked_leaf(tensors: list, name: str) -> Any:
    flags = {t.requires_grad for t in tensors}
    if len(flags) != 1:
        raise RuntimeError(f"Expected {name} from each model to have the same .requires_grad")
    stacked = stack(tensors)
    return stacked.detach().requires_grad_() if flags == {True} else stacked
