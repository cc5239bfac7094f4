"""``functional_call``: run a module with other tensors in place of its parameters."""

from __future__ import annotations

import contextlib
from typing import Any, Iterator

__all__ = ["functional_call"]

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
