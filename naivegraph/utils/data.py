"""Datasets and data loaders with ``torch.utils.data``'s names and semantics.

A *dataset* answers ``len(ds)`` and ``ds[i]`` (one sample); a *sampler* yields the order
of the indices (in turn, or a fresh random permutation per epoch); a *batch sampler*
groups them by ``batch_size``; the *loader* fetches each group's samples and collates
them into one batch (tensors stacked along a new first dimension).  Everything runs in
the calling process: ``num_workers`` is accepted and the batches are the same, loaded
without worker processes.

>>> import naivegraph as ng
>>> X, y = ng.arange(10.0).reshape(5, 2), ng.arange(5)
>>> loader = DataLoader(TensorDataset(X, y), batch_size=2)
>>> len(loader)
3
>>> for xb, yb in loader:
...     print(xb.tolist(), yb.tolist())
[[0.0, 1.0], [2.0, 3.0]] [0, 1]
[[4.0, 5.0], [6.0, 7.0]] [2, 3]
[[8.0, 9.0]] [4]

**Shuffling** follows torch's ``RandomSampler``: each epoch (each ``iter(loader)``) draws
a seed from the global generator (or the loader's ``generator``) and takes one
``randperm(len(dataset))`` from a generator seeded with it, so ``ng.manual_seed`` makes
the epochs repeatable and every epoch is a new order; iterating a loader also draws
one number from the global generator, as torch's loader draws its workers' base seed.
naivegraph's generator is numpy's, not torch's, so a seed gives another permutation than
in torch: the semantics carry over, the exact order does not.
"""

from __future__ import annotations

import bisect
import copy
import itertools
import math
import warnings
from collections.abc import Mapping, MutableSequence, Sequence
from typing import Any, Callable, Iterable, Iterator

import numpy as np

from ..dynamic.factories import Generator, randperm, tensor
from ..dynamic.functions import stack
from ..dynamic.rng import generator_rng
from ..dynamic.tensor import Tensor

__all__ = [
    "BatchSampler",
    "ConcatDataset",
    "DataLoader",
    "Dataset",
    "IterableDataset",
    "RandomSampler",
    "Sampler",
    "SequentialSampler",
    "Subset",
    "SubsetRandomSampler",
    "TensorDataset",
    "default_collate",
    "default_convert",
    "random_split",
]


# ----------------------------------------------------------------------------- datasets
class Dataset:
    """A map-style dataset: define ``__getitem__`` (one sample) and ``__len__``."""

    def __getitem__(self, index: int) -> Any:
        raise NotImplementedError("Subclasses of Dataset should implement __getitem__.")

    def __add__(self, other: "Dataset") -> "ConcatDataset":
        return ConcatDataset([self, other])


class IterableDataset(Dataset):
    """A dataset that is a stream: define ``__iter__``; the loader batches what it yields."""

    def __iter__(self) -> Iterator:
        raise NotImplementedError("Subclasses of IterableDataset should implement __iter__.")


class TensorDataset(Dataset):
    """Samples are rows: ``ds[i]`` is ``(t[i] for t in tensors)``, all of one length.

    >>> import naivegraph as ng
    >>> ds = TensorDataset(ng.tensor([[1.0], [2.0]]), ng.tensor([0, 1]))
    >>> len(ds), ds[1]
    (2, (tensor([2.]), tensor(1)))
    """

    def __init__(self, *tensors: Tensor) -> None:
        if any(t.shape[0] != tensors[0].shape[0] for t in tensors):
            raise AssertionError("Size mismatch between tensors")
        self.tensors = tensors

    def __getitem__(self, index: Any) -> tuple:
        return tuple(t[index] for t in self.tensors)

    def __len__(self) -> int:
        return self.tensors[0].shape[0]


class Subset(Dataset):
    """The samples of ``dataset`` at ``indices``, in that order."""

    def __init__(self, dataset: Any, indices: Sequence[int]) -> None:
        self.dataset, self.indices = dataset, indices

    def __getitem__(self, idx: Any) -> Any:
        if isinstance(idx, list):
            return self.dataset[[self.indices[i] for i in idx]]
        return self.dataset[self.indices[idx]]

    def __len__(self) -> int:
        return len(self.indices)


class ConcatDataset(Dataset):
    """Several datasets one after the other."""

    def __init__(self, datasets: Iterable) -> None:
        self.datasets = list(datasets)
        if not self.datasets:
            raise AssertionError("datasets should not be an empty iterable")
        for d in self.datasets:
            if isinstance(d, IterableDataset):
                raise AssertionError("ConcatDataset does not support IterableDataset")
        self.cumulative_sizes = list(itertools.accumulate(len(d) for d in self.datasets))

    def __len__(self) -> int:
        return self.cumulative_sizes[-1]

    def __getitem__(self, idx: int) -> Any:
        if idx < 0:
            if -idx > len(self):
                raise ValueError("absolute value of index should not exceed dataset length")
            idx = len(self) + idx
        which = bisect.bisect_right(self.cumulative_sizes, idx)
        start = self.cumulative_sizes[which - 1] if which else 0
        return self.datasets[which][idx - start]


def random_split(dataset: Any, lengths: Sequence, generator: Generator | None = None) -> list:
    """``dataset`` split at random into non-overlapping subsets of the given lengths (or
    fractions summing to 1), from one ``randperm`` of the global generator or
    ``generator``."""
    if math.isclose(sum(lengths), 1) and sum(lengths) <= 1:
        sizes = []
        for i, fraction in enumerate(lengths):
            if fraction < 0 or fraction > 1:
                raise ValueError(f"Fraction at index {i} is not between 0 and 1")
            sizes.append(math.floor(len(dataset) * fraction))
        for i in range(len(dataset) - sum(sizes)):  # the remainder, one each, round robin
            sizes[i % len(sizes)] += 1
        for i, size in enumerate(sizes):
            if size == 0:
                warnings.warn(
                    f"Length of split at index {i} is 0. This might result in an empty dataset.",
                    stacklevel=2,
                )
        lengths = sizes
    if sum(lengths) != len(dataset):
        raise ValueError("Sum of input lengths does not equal the length of the input dataset!")
    indices = randperm(sum(lengths), generator=generator).tolist()
    ends = list(itertools.accumulate(lengths))
    return [Subset(dataset, indices[end - n : end]) for end, n in zip(ends, lengths)]


# ----------------------------------------------------------------------------- samplers
class Sampler:
    """Yields dataset indices: subclasses define ``__iter__`` (and ``__len__``)."""

    def __init__(self, data_source: Any = None) -> None:
        pass

    def __iter__(self) -> Iterator:
        raise NotImplementedError


class SequentialSampler(Sampler):
    """``0, 1, ..., len(data_source) - 1``."""

    def __init__(self, data_source: Any) -> None:
        self.data_source = data_source

    def __iter__(self) -> Iterator[int]:
        return iter(range(len(self.data_source)))

    def __len__(self) -> int:
        return len(self.data_source)


def _draw_seed(generator: Generator | None) -> int:
    """One 64-bit number from ``generator`` (the global one if None), as torch's
    ``torch.empty((), dtype=torch.int64).random_()``."""
    return int(generator_rng(generator).integers(0, 2**63))


class RandomSampler(Sampler):
    """A random order: per pass, a seed from ``generator`` (global if None) and one
    ``randperm`` from a generator seeded with it, as torch's (see the module docstring);
    with ``replacement``, ``num_samples`` indices drawn independently."""

    def __init__(
        self,
        data_source: Any,
        replacement: bool = False,
        num_samples: int | None = None,
        generator: Generator | None = None,
    ) -> None:
        self.data_source = data_source
        self.replacement = replacement
        self._num_samples = num_samples
        self.generator = generator
        if not isinstance(replacement, bool):
            raise TypeError(
                f"replacement should be a boolean value, but got replacement={replacement}"
            )
        if not isinstance(self.num_samples, int) or self.num_samples <= 0:
            raise ValueError(
                "num_samples should be a positive integer value, but got "
                f"num_samples={self.num_samples}"
            )

    @property
    def num_samples(self) -> int:
        return len(self.data_source) if self._num_samples is None else self._num_samples

    def __iter__(self) -> Iterator[int]:
        n = len(self.data_source)
        if self.generator is None:
            generator = Generator().manual_seed(_draw_seed(None))
        else:
            generator = self.generator
        if self.replacement:
            yield from generator_rng(generator).integers(0, n, self.num_samples).tolist()
            return
        for _ in range(self.num_samples // n):
            yield from randperm(n, generator=generator).tolist()
        yield from randperm(n, generator=generator).tolist()[: self.num_samples % n]

    def __len__(self) -> int:
        return self.num_samples


class SubsetRandomSampler(Sampler):
    """The given indices in a random order (one permutation per pass)."""

    def __init__(self, indices: Sequence[int], generator: Generator | None = None) -> None:
        self.indices, self.generator = indices, generator

    def __iter__(self) -> Iterator[int]:
        for i in randperm(len(self.indices), generator=self.generator).tolist():
            yield self.indices[i]

    def __len__(self) -> int:
        return len(self.indices)


class BatchSampler(Sampler):
    """``sampler``'s indices in lists of ``batch_size`` (the last one shorter, or
    dropped with ``drop_last``)."""

    def __init__(self, sampler: Iterable, batch_size: int, drop_last: bool) -> None:
        if not isinstance(batch_size, int) or isinstance(batch_size, bool) or batch_size <= 0:
            raise ValueError(
                f"batch_size should be a positive integer value, but got batch_size={batch_size}"
            )
        if not isinstance(drop_last, bool):
            raise ValueError(f"drop_last should be a boolean value, but got drop_last={drop_last}")
        self.sampler, self.batch_size, self.drop_last = sampler, batch_size, drop_last

    def __iter__(self) -> Iterator[list[int]]:
        indices = iter(self.sampler)
        while batch := list(itertools.islice(indices, self.batch_size)):
            if len(batch) < self.batch_size and self.drop_last:
                return
            yield batch

    def __len__(self) -> int:
        if self.drop_last:
            return len(self.sampler) // self.batch_size
        return (len(self.sampler) + self.batch_size - 1) // self.batch_size


# ----------------------------------------------------------------------------- collation
COLLATE_ERROR = (
    "default_collate: batch must contain tensors, numpy arrays, numbers, dicts or lists; found {}"
)


def default_collate(batch: Sequence) -> Any:
    """Samples into one batch, as torch's: tensors (and numpy arrays) stacked along a new
    first dimension; Python floats into a float64 tensor, ints into int64; strings left
    as a list; dicts, namedtuples and sequences collated field by field (a tuple sample
    gives a *list* of fields, as in torch).

    >>> import naivegraph as ng
    >>> xs, fields = default_collate([(1.0, {"k": 2}), (3.0, {"k": 4})])
    >>> xs.tolist(), xs.dtype == ng.float64, fields
    ([1.0, 3.0], True, {'k': tensor([2, 4])})
    """
    elem = batch[0]
    if isinstance(elem, Tensor):
        return stack(batch, 0)
    if isinstance(elem, np.ndarray):
        if elem.dtype.kind in "OSU":
            raise TypeError(COLLATE_ERROR.format(elem.dtype))
        return default_collate([tensor(b) for b in batch])
    if isinstance(elem, np.generic):
        return tensor(np.array(batch))
    if isinstance(elem, float):
        return tensor(batch, dtype=np.float64)
    if isinstance(elem, int):  # bool too: a bool tensor
        return tensor(batch)
    if isinstance(elem, (str, bytes)):
        return batch
    if isinstance(elem, Mapping):
        fields = {key: default_collate([d[key] for d in batch]) for key in elem}
        try:
            return type(elem)(fields)
        except TypeError:
            return fields
    if isinstance(elem, tuple) and hasattr(elem, "_fields"):  # a namedtuple
        return type(elem)(*(default_collate(s) for s in zip(*batch)))
    if isinstance(elem, Sequence):
        if any(len(sample) != len(elem) for sample in batch):
            raise RuntimeError("each element in list of batch should be of equal size")
        fields = [default_collate(s) for s in zip(*batch)]  # each a tuple, as torch's
        if isinstance(elem, tuple):
            return fields  # torch's backward-compatible choice: a tuple becomes a list
        if isinstance(elem, MutableSequence):
            try:
                clone = copy.copy(elem)
                for i, f in enumerate(fields):
                    clone[i] = f
                return clone
            except TypeError:
                return fields
        return fields
    raise TypeError(COLLATE_ERROR.format(type(elem)))


def default_convert(data: Any) -> Any:
    """One sample without batching (``batch_size=None``): numpy arrays become tensors,
    containers are converted element by element (a tuple into a list, as torch's),
    everything else is left alone."""
    if isinstance(data, np.ndarray) and data.dtype.kind not in "OSU":
        return tensor(data)
    if isinstance(data, np.generic) and data.dtype.kind not in "OSU":
        return tensor(data)
    if isinstance(data, Mapping):
        return type(data)({k: default_convert(v) for k, v in data.items()})
    if isinstance(data, tuple) and hasattr(data, "_fields"):
        return type(data)(*(default_convert(v) for v in data))
    if isinstance(data, tuple):
        return [default_convert(v) for v in data]  # a list, as torch's
    if isinstance(data, list):
        return [default_convert(v) for v in data]
    return data


# ----------------------------------------------------------------------------- the loader
class DataLoader:
    """Batches of ``dataset``, one epoch per ``iter(loader)`` (see the module docstring).

    ``batch_size`` samples per batch (None: single samples, unbatched), ``shuffle``: a
    new random order every epoch, ``drop_last``: no short last batch; ``sampler`` or
    ``batch_sampler`` give the order yourself, ``collate_fn`` the batching.
    ``len(loader)`` is the number of batches.
    """

    def __init__(
        self,
        dataset: Any,
        batch_size: int | None = 1,
        shuffle: bool | None = None,
        sampler: Iterable | None = None,
        batch_sampler: Iterable | None = None,
        num_workers: int = 0,
        collate_fn: Callable | None = None,
        pin_memory: bool = False,
        drop_last: bool = False,
        timeout: float = 0,
        worker_init_fn: Callable | None = None,
        multiprocessing_context: Any = None,
        generator: Generator | None = None,
        *,
        prefetch_factor: int | None = None,
        persistent_workers: bool = False,
        pin_memory_device: str = "",
        in_order: bool = True,
    ) -> None:
        if num_workers < 0:
            raise ValueError(
                "num_workers option should be non-negative; use num_workers=0 to disable "
                "multiprocessing."
            )
        if timeout < 0:
            raise ValueError("timeout option should be non-negative")
        if num_workers == 0 and prefetch_factor is not None:
            raise ValueError(
                "prefetch_factor option could only be specified in multiprocessing.let "
                "num_workers > 0 to enable multiprocessing, otherwise set prefetch_factor to None."
            )
        if prefetch_factor is not None and prefetch_factor < 0:
            raise ValueError("prefetch_factor option should be non-negative")
        if persistent_workers and num_workers == 0:
            raise ValueError("persistent_workers option needs num_workers > 0")
        self.dataset = dataset
        self.num_workers, self.timeout, self.pin_memory = num_workers, timeout, pin_memory
        self.generator = generator
        self._iterable = isinstance(dataset, IterableDataset)
        if self._iterable:
            if shuffle not in (False, None):
                raise ValueError(
                    "DataLoader with IterableDataset: expected unspecified shuffle option, "
                    f"but got shuffle={shuffle}"
                )
            if sampler is not None or batch_sampler is not None:
                raise ValueError(
                    "DataLoader with IterableDataset: expected unspecified sampler option, "
                    f"but got sampler={sampler if sampler is not None else batch_sampler}"
                )
        shuffle = bool(shuffle)
        if sampler is not None and shuffle:
            raise ValueError("sampler option is mutually exclusive with shuffle")
        if batch_sampler is not None:
            if batch_size != 1 or shuffle or sampler is not None or drop_last:
                raise ValueError(
                    "batch_sampler option is mutually exclusive with batch_size, shuffle, "
                    "sampler, and drop_last"
                )
            batch_size, drop_last = None, False
        elif batch_size is None and drop_last:
            raise ValueError(
                "batch_size=None option disables auto-batching and is mutually exclusive "
                "with drop_last"
            )
        if sampler is None and not self._iterable:
            sampler = (
                RandomSampler(dataset, generator=generator)
                if shuffle
                else SequentialSampler(dataset)
            )
        if batch_size is not None and batch_sampler is None and not self._iterable:
            batch_sampler = BatchSampler(sampler, batch_size, drop_last)
        self.batch_size, self.drop_last = batch_size, drop_last
        self.sampler, self.batch_sampler = sampler, batch_sampler
        batched = batch_sampler is not None or (self._iterable and batch_size is not None)
        self.collate_fn = collate_fn or (default_collate if batched else default_convert)

    def __iter__(self) -> Iterator:
        _draw_seed(self.generator)  # torch's loader draws its workers' base seed here
        if self._iterable:
            return self._iterate_stream()
        if self.batch_sampler is not None:
            return (self._fetch(indices) for indices in self.batch_sampler)
        return (self.collate_fn(self.dataset[i]) for i in self.sampler)

    def _fetch(self, indices: list) -> Any:
        getitems = getattr(self.dataset, "__getitems__", None)
        samples = getitems(indices) if callable(getitems) else [self.dataset[i] for i in indices]
        return self.collate_fn(samples)

    def _iterate_stream(self) -> Iterator:
        stream = iter(self.dataset)
        if self.batch_size is None:
            yield from (self.collate_fn(sample) for sample in stream)
            return
        while batch := list(itertools.islice(stream, self.batch_size)):
            if len(batch) < self.batch_size and self.drop_last:
                return
            yield self.collate_fn(batch)

    def __len__(self) -> int:
        if self._iterable:
            length = len(self.dataset)  # a TypeError if the stream has no length, as in torch
            if self.batch_size is None:
                return length
            rounded = math.floor if self.drop_last else math.ceil
            return rounded(length / self.batch_size)
        if self.batch_sampler is not None:
            return len(self.batch_sampler)
        return len(self.sampler)
