"""``vmap``: a function of one sample, run over a batch."""

from __future__ import annotations

import contextlib
import functools
from typing import Any, Callable, Iterator

import numpy as np

from ..dynamic.functions import stack
from ..dynamic.rng import _random
from ..dynamic.tensor import Tensor
from .pytree import broadcast_prefix, flatten, unflatten

__all__ = ["vmap"]

RANDOMNESS = ("error", "different", "same")
RANDOM_IN_ERROR_MODE = (
    "vmap: called random operation while in randomness error mode. Please either use the "
    "'same' or 'different' randomness flags on vmap or perform the randomness operation out "
    "of vmap"
)


def vmap(
    func: Callable,
    in_dims: Any = 0,
    out_dims: Any = 0,
    randomness: str = "error",
    *,
    chunk_size: int | None = None,
) -> Callable:
    """``func`` mapped over dimension ``in_dims`` of its arguments, the results stacked
    along ``out_dims``: ``vmap(f)(x)[i]`` is ``f(x[i])``.

    ``in_dims``: an int for every argument, or a tuple with one entry per argument (an
    int, None for an argument passed whole to every call, or a nested entry matching a
    nested argument); keyword arguments are passed whole.  ``out_dims`` likewise per
    output (None: the output is the same for every sample and returned once).
    ``randomness``: ``"error"`` refuses random operations inside ``func``; ``"different"``
    draws anew per sample; ``"same"`` gives every sample the same draws.  Composes with
    the other transforms: ``vmap(grad(f), in_dims=(None, 0, 0))`` gives per-sample
    gradients, ``vmap(jacrev(f))`` a batch of Jacobians.

    Unlike torch's, which runs ``func`` once on batched tensors, this ``vmap`` *calls
    func once per sample and stacks the results*: the same numbers and the same errors
    for bad arguments, but the time of a Python loop.  A Python-level difference
    follows: ``func`` sees plain tensors, so what torch refuses inside vmap only because
    it cannot batch it (``.item()``, data-dependent control flow) runs here.

    >>> import naivegraph as ng
    >>> x = ng.tensor([[1.0, 2.0], [3.0, 4.0]])
    >>> vmap(lambda row: row.dot(row))(x)
    tensor([ 5., 25.])
    >>> vmap(lambda row, w: row * w, in_dims=(1, None))(x, ng.tensor(10.0))
    tensor([[10., 30.],
            [20., 40.]])
    """
    check_randomness(randomness)
    if chunk_size is not None and (not isinstance(chunk_size, int) or chunk_size < 1):
        raise ValueError(f"vmap: chunk_size should be None or greater than 0. (got {chunk_size})")
    name = getattr(func, "__name__", repr(func))

    @functools.wraps(func)
    def wrapped(*args: Any, **kwargs: Any) -> Any:
        flat, dims, size = _batched_arguments(name, args, in_dims)
        arg_spec = flatten(args)[1]
        with random_mode(randomness) as before_each:
            if size == 0:  # no samples: one call on a stand-in gives the results' shapes
                results = [_call(func, _stand_in(flat, dims), arg_spec, kwargs)]
            else:
                results = []
                for i in range(size):
                    before_each()
                    sample = [
                        x if d is None else x[(slice(None),) * d + (i,)] for x, d in zip(flat, dims)
                    ]
                    results.append(_call(func, sample, arg_spec, kwargs))
        return _stacked(name, results, out_dims, size)

    return wrapped


def _call(func: Callable, sample: list, spec, kwargs: dict) -> Any:
    return func(*unflatten(sample, spec), **kwargs)


# ----------------------------------------------------------------------------- inputs
def _batched_arguments(name: str, args: tuple, in_dims: Any) -> tuple[list, list, int]:
    """The flat arguments, the dimension each is mapped over (or None), the batch size."""
    where = f"vmap({name}, in_dims={in_dims!r}, ...)(<inputs>)"
    if not args:
        raise ValueError(
            f"vmap({name})(<inputs>): got no inputs. Maybe you forgot to add inputs, or you "
            "are trying to vmap over a function with no inputs. The latter is unsupported."
        )
    if not isinstance(in_dims, (int, tuple)) or isinstance(in_dims, bool):
        raise ValueError(
            f"{where}: expected `in_dims` to be int or a (potentially nested) tuple matching "
            f"the structure of inputs, got: {type(in_dims)}."
        )
    flat, spec = flatten(args)
    dims = broadcast_prefix(in_dims if isinstance(in_dims, tuple) else (in_dims,) * len(args), args)
    if dims is None:
        raise ValueError(
            f"{where}: in_dims is not compatible with the structure of `inputs`. in_dims has "
            f"structure {flatten(in_dims)[1]} but inputs has structure {spec}."
        )
    sizes = []
    for x, d in zip(flat, dims):
        if d is None:
            continue
        if not isinstance(d, int) or isinstance(d, bool):
            raise ValueError(
                f"{where}: Got in_dim={d} for an input but in_dim must be either an integer "
                "dimension or None."
            )
        if not isinstance(x, Tensor):
            raise ValueError(
                f"{where}: Got in_dim={d} for an input but the input is of type {type(x)}. We "
                "cannot vmap over non-Tensor arguments, please use None as the respective "
                "in_dim"
            )
        if not -x.dim() <= d < x.dim():
            raise ValueError(
                f"{where}: Got in_dim={d} for some input, but that input is a Tensor of "
                f"dimensionality {x.dim()} so expected in_dim to satisfy "
                f"-{x.dim()} <= in_dim < {x.dim()}."
            )
        sizes.append(x.shape[d])
    if not sizes:
        raise ValueError("vmap: Expected at least one Tensor to vmap over")
    if len(set(sizes)) > 1:
        raise ValueError(
            "vmap: Expected all tensors to have the same size in the mapped dimension, got "
            f"sizes {sizes} for the mapped dimension"
        )
    dims = [None if d is None else d % x.dim() for x, d in zip(flat, dims)]
    return flat, dims, sizes[0]


def _stand_in(flat: list, dims: list) -> list:
    """For an empty batch: zeros shaped as one sample of each mapped argument."""
    sample = []
    for x, d in zip(flat, dims):
        if d is None:
            sample.append(x)
        else:
            shape = tuple(x.shape[:d]) + tuple(x.shape[d + 1 :])
            sample.append(Tensor._make(np.zeros(shape, dtype=x.dtype), False, None, 0))
    return sample


# ----------------------------------------------------------------------------- outputs
def _stacked(name: str, results: list, out_dims: Any, size: int) -> Any:
    """The per-sample results stacked along ``out_dims`` (a tree like one result)."""
    flat_first, spec = flatten(results[0])
    per_leaf = [flatten(r)[0] for r in results]
    dims = broadcast_prefix(out_dims, results[0])
    if dims is None or not isinstance(out_dims, (int, tuple, type(None))):
        raise ValueError(
            f"vmap({name}, ..., out_dims={out_dims!r})(<inputs>): out_dims is not compatible "
            f"with the structure of `outputs`. out_dims has structure {flatten(out_dims)[1]} "
            f"but outputs has structure {spec}."
        )
    stacked = []
    for k, (first, d) in enumerate(zip(flat_first, dims)):
        column = [leaves[k] for leaves in per_leaf]
        if d is None:
            stacked.append(_unbatched(name, column))
            continue
        if not isinstance(first, Tensor):
            raise ValueError(
                f"vmap({name}, ...): `{name}` must only return Tensors, got type "
                f"{type(first)}. Did you mean to set out_dims= to None for output?"
            )
        if size == 0:
            stacked.append(_empty_batch(first, d))
        else:
            stacked.append(stack(column, dim=d))
    return unflatten(stacked, spec)


def _empty_batch(sample: Tensor, dim: int) -> Tensor:
    """No samples: an empty tensor, the batch dimension of size 0 at ``dim``."""
    shape = list(sample.shape)
    ndim = len(shape) + 1
    if not -ndim <= dim < ndim:
        stack([sample], dim=dim)  # raises stack's error for a dimension out of range
    shape.insert(dim % ndim, 0)
    return Tensor._make(np.zeros(shape, dtype=sample.dtype), False, None, 0)


def _unbatched(name: str, column: list) -> Any:
    """An ``out_dims=None`` output: the same in every call, returned once."""
    first = column[0]
    if isinstance(first, Tensor) and any(
        not np.array_equal(first.detach().numpy(), v.detach().numpy(), equal_nan=True)
        for v in column
    ):
        raise ValueError(
            f"vmap({name}, ...): `{name}` can not return a BatchedTensor when out_dim is None"
        )
    return first


# ----------------------------------------------------------------------------- randomness
class _RefusingGenerator:
    """Stands in for the random generator in ``randomness="error"`` mode."""

    def __getattr__(self, name: str) -> Any:
        raise RuntimeError(RANDOM_IN_ERROR_MODE)


def check_randomness(randomness: str) -> None:
    if randomness not in RANDOMNESS:
        raise RuntimeError(
            "Only allowed values for randomness are 'error', 'different', or 'same'. "
            f"Got {randomness}"
        )


@contextlib.contextmanager
def random_mode(randomness: str) -> Iterator[Callable[[], None]]:
    """Set up the random generator for one vmap; yields what to do before each sample."""
    generator = _random.generator
    if randomness == "error":
        _random.generator = _RefusingGenerator()
        try:
            yield lambda: None
        finally:
            _random.generator = generator
    elif randomness == "same" and not isinstance(generator, _RefusingGenerator):
        start = generator.bit_generator.state

        def rewind() -> None:  # every sample draws what the first one drew
            generator.bit_generator.state = start

        yield rewind
    else:
        yield lambda: None
