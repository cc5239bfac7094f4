"""``ng.utils.data`` against ``torch.utils.data``: datasets, batches, collation, lengths,
errors; shuffling as torch's RandomSampler draws it (one permutation per epoch from the
global generator), with numpy's permutations in place of torch's."""

from collections import namedtuple

import numpy as np
import pytest

import naivegraph as ng
from naivegraph.utils import data as ngdata

torch = pytest.importorskip("torch")
LIBS = pytest.mark.parametrize("lib", [ng, torch], ids=["naivegraph", "torch"])
X = np.arange(14.0).reshape(7, 2)
Y = np.arange(7) % 3


def dataset(lib):
    x = lib.tensor(X, dtype=lib.float64)
    y = lib.tensor(Y, dtype=lib.int64)
    return lib.utils.data.TensorDataset(x, y)


def described(batches):
    """What a run of batches holds, as plain Python values and type names."""
    out = []
    for batch in batches:
        if isinstance(batch, (list, tuple)):
            out.append((type(batch).__name__, [described([b])[0] for b in batch]))
        elif isinstance(batch, dict):
            out.append({k: described([v])[0] for k, v in batch.items()})
        elif hasattr(batch, "tolist"):
            out.append((str(batch.dtype).split(".")[-1], tuple(batch.shape), batch.tolist()))
        else:
            out.append(batch)
    return out


LOADERS = {
    "batch_size 3": dict(batch_size=3),
    "drop_last": dict(batch_size=3, drop_last=True),
    "batch_size 1 by default": dict(),
    "batch_size larger than the dataset": dict(batch_size=10),
    "batch_size None gives single samples": dict(batch_size=None),
}


@pytest.mark.parametrize("case", sorted(LOADERS))
def test_an_unshuffled_loader_gives_torchs_batches_and_length(case):
    runs = []
    for lib in (ng, torch):
        loader = lib.utils.data.DataLoader(dataset(lib), **LOADERS[case])
        runs.append((len(loader), described(loader), described(loader)))  # two epochs
    assert runs[0] == runs[1]


def test_a_tensor_dataset_indexes_every_tensor_and_refuses_different_lengths():
    for lib in (ng, torch):
        ds = dataset(lib)
        assert len(ds) == 7
        assert described([ds[2]]) == [("tuple", [("float64", (2,), [4.0, 5.0]), ("int64", (), 2)])]
        with pytest.raises(AssertionError, match="Size mismatch between tensors"):
            lib.utils.data.TensorDataset(lib.zeros(3), lib.zeros(4))


Pair = namedtuple("Pair", "a b")
SAMPLES = {
    "tuples become lists of stacked fields": [(1.0, 2), (3.0, 4)],
    "dicts collate per key": [{"x": 1.5, "n": [1, 2]}, {"x": 2.5, "n": [3, 4]}],
    "namedtuples keep their type": [Pair(1, 2.0), Pair(3, 4.0)],
    "strings stay a list": [("a", 1), ("b", 2)],
    "numpy arrays are stacked": [np.array([1.0, 2.0]), np.array([3.0, 4.0])],
    "booleans": [True, False],
}


@pytest.mark.parametrize("case", sorted(SAMPLES))
def test_default_collate_batches_as_torch(case):
    from torch.utils.data import default_collate as torch_collate

    got = described([ngdata.default_collate(SAMPLES[case])])
    want = described([torch_collate(SAMPLES[case])])
    assert got == want


def test_default_collate_of_tensors_stacks_them():
    got = ngdata.default_collate([ng.tensor([1.0, 2.0]), ng.tensor([3.0, 4.0])])
    assert got.tolist() == [[1.0, 2.0], [3.0, 4.0]]


@LIBS
def test_default_collate_refuses_what_torch_refuses(lib):
    collate = lib.utils.data.default_collate
    with pytest.raises(TypeError, match="batch must contain tensors, numpy arrays, numbers"):
        collate([object(), object()])
    with pytest.raises(RuntimeError, match="each element in list of batch should be of equal"):
        collate([[1, 2], [3]])


@LIBS
def test_a_shuffled_epoch_is_a_permutation_of_the_whole_dataset(lib):
    loader = lib.utils.data.DataLoader(dataset(lib), batch_size=3, shuffle=True)
    lib.manual_seed(0)
    first = [xb[:, 0].tolist() for xb, _ in loader]
    second = [xb[:, 0].tolist() for xb, _ in loader]
    assert [len(b) for b in first] == [len(b) for b in second] == [3, 3, 1]
    assert sorted(sum(first, [])) == sorted(sum(second, [])) == X[:, 0].tolist()
    assert first != second  # a new order every epoch
    lib.manual_seed(0)
    assert [xb[:, 0].tolist() for xb, _ in loader] == first  # the seed repeats the epochs


def test_shuffling_draws_torchs_sequence_from_the_global_generator():
    """Per epoch: the loader's base seed, then the sampler's seed (both from the global
    generator), then one randperm from a generator seeded with the second."""
    loader = ngdata.DataLoader(dataset(ng), batch_size=7, shuffle=True)
    ng.manual_seed(11)
    (xb, _), after = next(iter(loader)), ng.rand(1).item()
    ng.manual_seed(11)
    rng = ng.dynamic.rng._random.generator
    rng.integers(0, 2**63)  # the loader's base seed
    seed = int(rng.integers(0, 2**63))
    order = ng.randperm(7, generator=ng.Generator().manual_seed(seed)).tolist()
    assert (xb[:, 0] / 2).tolist() == order
    assert ng.rand(1).item() == after


def test_a_loader_with_a_generator_repeats_its_order_and_leaves_the_global_one_alone():
    g = ng.Generator().manual_seed(3)
    loader = ngdata.DataLoader(dataset(ng), batch_size=7, shuffle=True, generator=g)
    ng.manual_seed(0)
    first = next(iter(loader))[0][:, 0].tolist()
    untouched = ng.rand(1).item()
    ng.manual_seed(0)
    g.manual_seed(3)
    assert next(iter(loader))[0][:, 0].tolist() == first
    assert ng.rand(1).item() == untouched


BAD_LOADERS = {
    "sampler with shuffle": (
        lambda lib, ds: lib.utils.data.DataLoader(
            ds, shuffle=True, sampler=lib.utils.data.SequentialSampler(ds)
        ),
        "sampler option is mutually exclusive with shuffle",
    ),
    "batch_sampler with batch_size": (
        lambda lib, ds: lib.utils.data.DataLoader(ds, batch_size=2, batch_sampler=[[0, 1]]),
        "batch_sampler option is mutually exclusive with batch_size",
    ),
    "batch_size None with drop_last": (
        lambda lib, ds: lib.utils.data.DataLoader(ds, batch_size=None, drop_last=True),
        "batch_size=None option disables auto-batching",
    ),
    "batch_size 0": (
        lambda lib, ds: lib.utils.data.DataLoader(ds, batch_size=0),
        "batch_size should be a positive integer value, but got batch_size=0",
    ),
    "negative num_workers": (
        lambda lib, ds: lib.utils.data.DataLoader(ds, num_workers=-1),
        "num_workers option should be non-negative",
    ),
    "prefetch_factor without workers": (
        lambda lib, ds: lib.utils.data.DataLoader(ds, prefetch_factor=2),
        "prefetch_factor option could only be specified in multiprocessing",
    ),
    "persistent_workers without workers": (
        lambda lib, ds: lib.utils.data.DataLoader(ds, persistent_workers=True),
        "persistent_workers option needs num_workers > 0",
    ),
    "split lengths that do not add up": (
        lambda lib, ds: lib.utils.data.random_split(ds, [3, 3]),
        "Sum of input lengths does not equal the length of the input dataset",
    ),
}


@pytest.mark.parametrize("case", sorted(BAD_LOADERS))
@LIBS
def test_bad_loader_arguments_are_refused_with_torchs_words(case, lib):
    build, phrase = BAD_LOADERS[case]
    with pytest.raises(ValueError, match=phrase):
        build(lib, dataset(lib))


def test_a_batch_sampler_gives_the_batches_itself():
    runs = []
    for lib in (ng, torch):
        loader = lib.utils.data.DataLoader(dataset(lib), batch_sampler=[[6, 0], [3]])
        runs.append((len(loader), described(loader)))
    assert runs[0] == runs[1]


@LIBS
def test_random_split_by_lengths_and_fractions_partitions_the_dataset(lib):
    ds = dataset(lib)
    lib.manual_seed(1)
    for lengths, sizes in (([2, 5], [2, 5]), ([0.5, 0.5], [4, 3])):
        parts = lib.utils.data.random_split(ds, lengths)
        assert [len(p) for p in parts] == sizes
        firsts = sorted(p[i][0][0].item() for p in parts for i in range(len(p)))
        assert firsts == X[:, 0].tolist()


def test_subsets_and_concatenations_index_as_torch():
    runs = []
    for lib in (ng, torch):
        ds = dataset(lib)
        both = lib.utils.data.Subset(ds, [4, 1]) + ds
        runs.append((len(both), described([both[0], both[1], both[2], both[-1]])))
    assert runs[0] == runs[1]


def test_an_iterable_dataset_is_batched_as_it_streams():
    runs = []
    for lib in (ng, torch):

        class Stream(lib.utils.data.IterableDataset):
            def __iter__(self, lib=lib):
                return iter([lib.tensor([float(i)], dtype=lib.float64) for i in range(5)])

        runs.append(described(lib.utils.data.DataLoader(Stream(), batch_size=2)))
    assert runs[0] == runs[1]


def test_randperm_refuses_what_torch_refuses():
    for lib in (ng, torch):
        with pytest.raises(RuntimeError, match="negative dimension -1"):
            lib.randperm(-1)
        with pytest.raises(TypeError, match="must be int, not float"):
            lib.randperm(2.0)
        assert lib.randperm(0).tolist() == []
        assert str(lib.randperm(3).dtype).endswith("int64")


def test_workers_are_accepted_and_the_batches_are_the_same():
    ds = dataset(ng)
    plain = described(ngdata.DataLoader(ds, batch_size=3))
    assert described(ngdata.DataLoader(ds, batch_size=3, num_workers=2)) == plain
