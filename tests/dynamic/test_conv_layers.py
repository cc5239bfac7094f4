"""Convolution, pooling and batch norm against torch 2.13: values and gradients (to the
rounding of their sums), grad_fn names, the modules' state (running statistics, buffers,
state_dict, repr) and the errors, type and key phrase."""

from __future__ import annotations

import numpy as np
import pytest
from torch_oracle import assert_exact, assert_sum_close

import naivegraph as ng

torch = pytest.importorskip("torch")
TF = torch.nn.functional
F = ng.nn.functional

RNG = np.random.default_rng(33)
X = RNG.normal(size=(2, 4, 7, 6))


def _run(lib, fn, arrays, dtype):
    tensors = [lib.tensor(a.astype(dtype), requires_grad=True) for a in arrays]
    out = fn(lib, *tensors)
    seed = np.random.default_rng(1).normal(size=tuple(out.shape)).astype(dtype)
    out.backward(lib.tensor(seed))
    return out, [t.grad for t in tensors]


def _compare(fn, arrays, terms: int, dtype=np.float64):
    ours, our_grads = _run(ng, fn, arrays, dtype)
    theirs, their_grads = _run(torch, fn, arrays, dtype)
    assert ours.grad_fn.name() == theirs.grad_fn.name()
    assert tuple(ours.shape) == tuple(theirs.shape)
    assert_sum_close(ours.detach().numpy(), theirs.detach().numpy(), terms, "value")
    for i, (a, b) in enumerate(zip(our_grads, their_grads)):
        assert_sum_close(a.numpy(), b.numpy(), terms * 4, f"gradient {i}")


CONVOLUTIONS = {
    "plain": (lambda lib, x, w: lib.nn.functional.conv2d(x, w), (3, 4, 3, 3)),
    "bias-stride-padding": (
        lambda lib, x, w, b: lib.nn.functional.conv2d(x, w, b, stride=2, padding=(1, 2)),
        (5, 4, 3, 2),
        (5,),
    ),
    "dilation-groups": (
        lambda lib, x, w: lib.nn.functional.conv2d(x, w, dilation=(2, 1), groups=2, padding=1),
        (6, 2, 2, 3),
    ),
    "depthwise": (lambda lib, x, w: lib.nn.functional.conv2d(x, w, groups=4), (4, 1, 3, 3)),
    "same-odd": (lambda lib, x, w: lib.nn.functional.conv2d(x, w, padding="same"), (2, 4, 3, 5)),
    "same-even-dilated": (
        lambda lib, x, w: lib.nn.functional.conv2d(x, w, padding="same", dilation=(1, 3)),
        (2, 4, 2, 2),
    ),
    "valid": (lambda lib, x, w: lib.nn.functional.conv2d(x, w, padding="valid"), (2, 4, 7, 6)),
    "unbatched": (lambda lib, x, w: lib.nn.functional.conv2d(x[0], w, stride=(1, 3)), (2, 4, 2, 2)),
}


@pytest.mark.filterwarnings("ignore:Using padding='same'")
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("name", CONVOLUTIONS)
def test_conv2d_values_and_gradients_match_torch(name, dtype):
    fn, *shapes = CONVOLUTIONS[name]
    arrays = [X] + [RNG.normal(size=s) for s in shapes]
    _compare(fn, arrays, terms=4 * 3 * 5 * 4, dtype=dtype)


POOLS = {
    "max-side-by-side": lambda lib, x: lib.nn.functional.max_pool2d(x, 2),
    "max-overlap-padded-ceil": lambda lib, x: lib.nn.functional.max_pool2d(
        x, 3, 2, 1, ceil_mode=True
    ),
    "max-dilated-rect": lambda lib, x: lib.nn.functional.max_pool2d(x, (2, 3), (1, 2), (1, 0), 2),
    "max-unbatched": lambda lib, x: lib.nn.functional.max_pool2d(x[0], (3, 1)),
    "avg-side-by-side": lambda lib, x: lib.nn.functional.avg_pool2d(x, 2),
    "avg-padded-ceil": lambda lib, x: lib.nn.functional.avg_pool2d(x, 3, 2, 1, ceil_mode=True),
    "avg-uncounted-padding": lambda lib, x: lib.nn.functional.avg_pool2d(
        x, 3, 2, 1, ceil_mode=True, count_include_pad=False
    ),
    "avg-divisor": lambda lib, x: lib.nn.functional.avg_pool2d(x, (2, 3), 1, divisor_override=5),
    "max-module": lambda lib, x: lib.nn.MaxPool2d(3, stride=1, padding=1)(x),
    "avg-module": lambda lib, x: lib.nn.AvgPool2d((2, 2), ceil_mode=True)(x),
}


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("name", POOLS)
def test_pooling_values_and_gradients_match_torch(name, dtype):
    _compare(POOLS[name], [X], terms=9, dtype=dtype)


def test_max_pool_takes_the_first_maximum_of_a_tie_and_nan_wins_as_in_torch():
    x = np.array([[[[1.0, 1.0, 0.0], [1.0, np.nan, 2.0], [2.0, 2.0, 2.0]]]])
    for fn in (lambda lib, t: lib.nn.functional.max_pool2d(t, 2, 1),):
        ours, (our_grad,) = _run(ng, fn, [x], np.float64)
        theirs, (their_grad,) = _run(torch, fn, [x], np.float64)
        assert_exact(ours.detach().numpy(), theirs.detach().numpy())
        assert_exact(our_grad.numpy(), their_grad.numpy())


def test_max_pool_return_indices_are_torchs_positions_in_each_plane():
    ours = F.max_pool2d(ng.tensor(X), 3, 2, 1, dilation=1, return_indices=True)
    theirs = TF.max_pool2d(torch.tensor(X), 3, 2, 1, return_indices=True)
    assert_exact(ours[1].numpy(), theirs[1].numpy())
    assert ours[1].dtype == np.int64


BATCH_NORMS = {
    "training-affine-4d": lambda lib, x, w, b: lib.nn.functional.batch_norm(
        x, None, None, w, b, training=True
    ),
    "training-plain-2d": lambda lib, x, w, b: lib.nn.functional.batch_norm(
        x[:, :, 0, 0], None, None, training=True, eps=1e-3
    ),
    "training-3d": lambda lib, x, w, b: lib.nn.functional.batch_norm(
        x[:, :, 0], None, None, w, b, training=True
    ),
    "eval": lambda lib, x, w, b: lib.nn.functional.batch_norm(
        x,
        lib.tensor([0.5, -1.0, 0.0, 2.0], dtype=x.dtype),
        lib.tensor([1.5, 0.25, 1.0, 3.0], dtype=x.dtype),
        w,
        b,
    ),
}


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("name", BATCH_NORMS)
def test_batch_norm_values_and_gradients_match_torch(name, dtype):
    arrays = [X, RNG.normal(size=4), RNG.normal(size=4)]
    ours, our_grads = _run(ng, BATCH_NORMS[name], arrays, dtype)
    theirs, their_grads = _run(torch, BATCH_NORMS[name], arrays, dtype)
    assert ours.grad_fn.name() == theirs.grad_fn.name() == "NativeBatchNormBackward0"
    assert_sum_close(ours.detach().numpy(), theirs.detach().numpy(), 84, "value")
    for i, (a, b) in enumerate(zip(our_grads, their_grads)):
        if b is None:
            assert a is None
        else:
            assert_sum_close(a.numpy(), b.numpy(), 84 * 4, f"gradient {i}")


def _paired_modules(factory, dtype=np.float64):
    ours, theirs = factory(ng), factory(torch)
    ours.to(dtype), theirs.to(getattr(torch, np.dtype(dtype).name))
    for (name, p), (name_t, q) in zip(ours.named_parameters(), theirs.named_parameters()):
        assert name == name_t
        values = RNG.normal(size=tuple(q.shape)).astype(dtype)
        with ng.no_grad():
            p.copy_(ng.tensor(values))
        with torch.no_grad():
            q.copy_(torch.tensor(values))
    return ours, theirs


@pytest.mark.parametrize("momentum", [0.1, 0.5, None])
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_batch_norm_modules_keep_torchs_running_statistics_through_train_and_eval(momentum, dtype):
    ours, theirs = _paired_modules(lambda lib: lib.nn.BatchNorm2d(4, momentum=momentum), dtype)
    for step in range(3):
        batch = RNG.normal(loc=step, size=(3, 4, 2, 5)).astype(dtype)
        a, b = ours(ng.tensor(batch)), theirs(torch.tensor(batch))
        assert_sum_close(a.detach().numpy(), b.detach().numpy(), 30)
    for name in ("running_mean", "running_var"):
        assert_sum_close(getattr(ours, name).numpy(), getattr(theirs, name).numpy(), 30, name)
    assert int(ours.num_batches_tracked) == int(theirs.num_batches_tracked) == 3
    ours.eval(), theirs.eval()
    batch = RNG.normal(size=(2, 4, 3, 3)).astype(dtype)
    assert_sum_close(
        ours(ng.tensor(batch)).detach().numpy(), theirs(torch.tensor(batch)).detach().numpy(), 4
    )
    assert int(ours.num_batches_tracked) == 3  # eval mode counts nothing


def test_batch_norm_without_running_statistics_uses_the_batch_in_eval_mode_too():
    ours, theirs = _paired_modules(
        lambda lib: lib.nn.BatchNorm1d(3, affine=False, track_running_stats=False)
    )
    ours.eval(), theirs.eval()
    batch = RNG.normal(size=(5, 3))
    assert_sum_close(ours(ng.tensor(batch)).numpy(), theirs(torch.tensor(batch)).numpy(), 10)
    assert ours.running_mean is None and list(ours.parameters()) == []
    assert repr(ours) == repr(theirs)


def test_batch_norm_state_dict_reprs_and_buffers_are_torchs():
    for lib_module in (
        lambda lib: lib.nn.BatchNorm2d(3),
        lambda lib: lib.nn.BatchNorm1d(2, eps=1e-3, momentum=None),
    ):
        ours, theirs = lib_module(ng), lib_module(torch)
        assert list(ours.state_dict()) == list(theirs.state_dict())
        assert [n for n, _ in ours.named_buffers()] == [n for n, _ in theirs.named_buffers()]
        assert repr(ours) == repr(theirs)
    ours = ng.nn.BatchNorm2d(3).double()
    assert ours.running_mean.dtype == np.float64 and ours.num_batches_tracked.dtype == np.int64
    ours(ng.randn(2, 3, 2, 2, dtype=ng.float64))
    fresh = ng.nn.BatchNorm2d(3).double()
    fresh.load_state_dict(ours.state_dict())
    assert fresh.running_var.tolist() == ours.running_var.tolist()
    assert int(fresh.num_batches_tracked) == 1


def test_running_statistics_are_updated_without_moving_their_version_as_in_torch():
    mean, var = ng.zeros(2, dtype=ng.float64), ng.ones(2, dtype=ng.float64)
    F.batch_norm(ng.randn(4, 2, dtype=ng.float64), mean, var, training=True)
    assert mean._version == var._version == 0
    assert mean.tolist() != [0.0, 0.0]


@pytest.mark.filterwarnings("ignore:Using padding='same'")
def test_conv_module_reprs_shapes_and_parameters_are_torchs():
    builds = [
        lambda lib: lib.nn.Conv2d(1, 6, 5),
        lambda lib: lib.nn.Conv2d(4, 6, (3, 2), stride=2, padding=1, dilation=2, bias=False),
        lambda lib: lib.nn.Conv2d(4, 4, 3, padding="same", groups=2),
        lambda lib: lib.nn.MaxPool2d(2),
        lambda lib: lib.nn.MaxPool2d((2, 3), stride=1),
        lambda lib: lib.nn.AvgPool2d(3, 1, 1, ceil_mode=True),
    ]
    for build in builds:
        ours, theirs = build(ng), build(torch)
        assert repr(ours) == repr(theirs)
        assert [(n, tuple(p.shape)) for n, p in ours.named_parameters()] == [
            (n, tuple(p.shape)) for n, p in theirs.named_parameters()
        ]
    conv = ng.nn.Conv2d(3, 2, 3)
    bound = 1 / np.sqrt(27)
    assert np.abs(conv.weight.detach().numpy()).max() <= bound
    assert np.abs(conv.bias.detach().numpy()).max() <= bound
    assert conv.weight.dtype == ng.get_default_dtype()


ERRORS = [
    (
        lambda lib: lib.nn.functional.conv2d(lib.ones(1, 1, 8, 8), lib.ones(6, 3, 5, 5)),
        RuntimeError,
        "expected input[1, 1, 8, 8] to have 3 channels, but got 1 channels instead",
    ),
    (
        lambda lib: lib.nn.functional.conv2d(lib.ones(1, 3, 2, 2), lib.ones(6, 3, 5, 5)),
        RuntimeError,
        "Kernel size can't be greater than actual input size",
    ),
    (
        lambda lib: lib.nn.functional.conv2d(
            lib.ones(1, 3, 8, 8, dtype=lib.float32), lib.ones(6, 3, 5, 5, dtype=lib.float64)
        ),
        RuntimeError,
        "should be the same",
    ),
    (
        lambda lib: lib.nn.functional.conv2d(
            lib.ones(1, 3, 8, 8), lib.ones(6, 3, 5, 5), stride=2, padding="same"
        ),
        RuntimeError,
        "padding='same' is not supported for strided convolutions",
    ),
    (
        lambda lib: lib.nn.functional.conv2d(
            lib.ones(1, 3, 8, 8), lib.ones(6, 3, 5, 5), padding="foo"
        ),
        RuntimeError,
        "Invalid padding string: 'foo'",
    ),
    (
        lambda lib: lib.nn.functional.conv2d(lib.ones(8, 8), lib.ones(6, 3, 5, 5)),
        RuntimeError,
        "Expected 3D (unbatched) or 4D (batched) input to conv2d, but got input of size: [8, 8]",
    ),
    (
        lambda lib: lib.nn.functional.max_pool2d(lib.ones(1, 1, 4, 4), 3, padding=2),
        RuntimeError,
        "pad should be at most half of effective kernel size",
    ),
    (
        lambda lib: lib.nn.functional.max_pool2d(lib.ones(1, 1, 2, 2), 3),
        RuntimeError,
        "Output size is too small",
    ),
    (
        lambda lib: lib.nn.functional.avg_pool2d(lib.ones(1, 1, 4, 4), 3, padding=2),
        RuntimeError,
        "pad should be at most half of effective kernel size",
    ),
    (
        lambda lib: lib.nn.BatchNorm1d(3)(lib.ones(1, 3)),
        ValueError,
        "Expected more than 1 value per channel when training",
    ),
    (
        lambda lib: lib.nn.BatchNorm2d(3)(lib.ones(2, 3)),
        ValueError,
        "expected 4D input (got 2D input)",
    ),
    (
        lambda lib: lib.nn.BatchNorm1d(3)(lib.ones(2, 4)),
        RuntimeError,
        "running_mean should contain 4 elements not 3",
    ),
]


@pytest.mark.parametrize("index", range(len(ERRORS)))
def test_errors_have_torchs_type_and_message(index):
    build, error, phrase = ERRORS[index]
    for lib in (torch, ng):
        with pytest.raises(error) as raised:
            build(lib)
        assert phrase in str(raised.value), lib.__name__


def test_gradients_of_gradients_record_torchs_double_backward_nodes():
    calls = [
        lambda lib, x, w: lib.nn.functional.conv2d(x, w).sum(),
        lambda lib, x, w: (lib.nn.functional.conv2d(x, w) ** 2).sum(),
        lambda lib, x, w: (lib.nn.functional.avg_pool2d(x, 2) ** 2).sum(),
        lambda lib, x, w: (lib.nn.functional.max_pool2d(x, 2) ** 2).sum(),
    ]
    w = RNG.normal(size=(3, 4, 3, 3))
    for call in calls:
        names = []
        for lib in (ng, torch):
            inputs = [lib.tensor(X, requires_grad=True), lib.tensor(w, requires_grad=True)]
            grads = lib.autograd.grad(
                call(lib, *inputs), inputs, create_graph=True, allow_unused=True
            )
            names.append([g.grad_fn.name() if g is not None and g.grad_fn else None for g in grads])
        assert names[0] == names[1]


def test_a_convolutional_graph_draws_with_torchs_node_names():
    x = ng.tensor(X[:1], requires_grad=True)
    net = ng.nn.Sequential(
        ng.nn.Conv2d(4, 2, 3, dtype=ng.float64),
        ng.nn.BatchNorm2d(2, dtype=ng.float64),
        ng.nn.MaxPool2d(2),
        ng.nn.AvgPool2d(2, ceil_mode=True),
    )
    source = ng.render(net(x).sum(), kind="backward").source
    for name in (
        "ConvolutionBackward0",
        "NativeBatchNormBackward0",
        "MaxPool2DWithIndicesBackward0",
        "AvgPool2DBackward0",
    ):
        assert name in source
