"""The smaller names learners' programs need, each against torch 2.13: torch.Size,
Tensor.type, set_default_device, as_tensor, // and %, div(rounding_mode=), addmm(beta=,
alpha=), sum(dtype=), where(condition), allclose(equal_nan=), the weighted and smoothed
classification losses, smooth L1 and Huber, Adam's amsgrad and maximize, step(closure) and
the autograd profiler: values, dtypes, grad_fn names, error types and key phrases."""

from __future__ import annotations

import numpy as np
import pytest
from torch_oracle import assert_exact, assert_sum_close

import naivegraph as ng
import naivegraph.static as ns

torch = pytest.importorskip("torch")

RNG = np.random.default_rng(3)
SPECIAL = np.array([5.0, -7.0, 3.5, -0.0, 0.0, 7.5, -2.5, np.inf, np.nan, 1e300, 1.0, -1.0])
DIVISOR = np.array([2.0, 2.0, -2.0, 3.0, -3.0, 0.0, -0.0, 2.0, 1.0, 1e-300, 0.1, 0.1])


# -- torch.Size, type(), devices, as_tensor ---------------------------------------------
def test_shapes_are_torch_sizes_that_print_slice_and_add_as_torchs():
    ours, theirs = ng.ones(4, 2).shape, torch.ones(4, 2).shape
    assert repr(ours) == repr(theirs) == "torch.Size([4, 2])" and str(ours) == str(theirs)
    assert isinstance(ours, tuple) and ours == (4, 2) and isinstance(ours, ng.Size)
    assert repr(ours[1:]) == repr(theirs[1:]) and ours[0] == 4 and type(ours[0]) is int
    assert repr(ours + (3,)) == repr(theirs + (3,)) and ours.numel() == theirs.numel() == 8
    assert (
        repr(ng.ones(2, 3).size()) == repr(torch.ones(2, 3).size()) and ng.ones(2, 3).size(-1) == 3
    )
    assert repr(ng.Size([1, 2])) == repr(torch.Size([1, 2]))


def test_static_shapes_stay_plain_tuples():
    with ns.Graph():
        x = ns.placeholder("x", shape=(None, 3))
        assert type(x.shape) is tuple and type((x * 2).shape) is tuple


@pytest.mark.parametrize("dtype", ["float32", "float64", "int64", "int32", "bool", "uint8"])
def test_type_names_the_legacy_tensor_type_as_torch(dtype):
    assert (
        ng.zeros(2, dtype=np.dtype(dtype)).type()
        == torch.zeros(2, dtype=getattr(torch, dtype)).type()
    )


def test_type_with_a_dtype_converts_as_torch_records_it():
    for target in ("float64", "torch.DoubleTensor"):
        x, t = ng.ones(2, dtype=ng.float32, requires_grad=True), torch.ones(2, requires_grad=True)
        to = getattr(ng, target) if target == "float64" else target
        to_t = getattr(torch, target) if target == "float64" else target
        ours, theirs = x.type(to), t.type(to_t)
        assert ours.dtype == np.float64 and theirs.dtype == torch.float64
        assert ours.grad_fn.name() == theirs.grad_fn.name() == "ToCopyBackward0"
    assert ng.ones(2).type(ng.DoubleTensor).dtype == np.float64
    for lib in (ng, torch):
        with pytest.raises(ValueError, match="invalid type: 'DoubleTensor'"):
            lib.ones(2).type("DoubleTensor")
    same = ng.ones(2, dtype=ng.float32)
    assert same.type(ng.float32) is same


def test_set_default_device_takes_the_cpu_and_refuses_others_clearly():
    ng.set_default_device("cpu")
    ng.set_default_device(ng.device("cpu"))
    assert ng.get_default_device() == ng.device("cpu")
    with pytest.raises(RuntimeError, match="CPU only.*'cuda'"):
        ng.set_default_device("cuda")
    assert ng.ones(1).device == ng.device("cpu")


def test_as_tensor_shares_what_torch_shares():
    array = np.zeros(3)
    for lib in (ng, torch):
        shared = lib.as_tensor(array)
        copied = lib.as_tensor(array, dtype=lib.float32)
        array[0] = 2.0
        assert shared.tolist()[0] == 2.0 and copied.tolist()[0] == 0.0
        array[0] = 0.0
        t = lib.tensor([1.0, 2.0])
        assert lib.as_tensor(t) is t
        assert lib.as_tensor([1, 2]).dtype == (np.int64 if lib is ng else torch.int64)


# -- // and %, div(rounding_mode=) ------------------------------------------------------
DIVISIONS = {
    "floor_divide": lambda lib, x, y: x // y,
    "remainder": lambda lib, x, y: x % y,
    "remainder-number": lambda lib, x, y: x % 2.5,
    "reflected-remainder": lambda lib, x, y: 7.0 % x,
    "reflected-floor_divide": lambda lib, x, y: 7.0 // x,
    "trunc": lambda lib, x, y: x.div(y, rounding_mode="trunc"),
    "floor": lambda lib, x, y: lib.div(x, y, rounding_mode="floor"),
    "true": lambda lib, x, y: x.div(y, rounding_mode=None),
    "function-remainder": lambda lib, x, y: lib.remainder(x, y),
    "function-floor_divide": lambda lib, x, y: lib.floor_divide(x, y),
}


@pytest.mark.filterwarnings("ignore:overflow encountered in cast")  # 1e300 as float32: inf
@pytest.mark.parametrize("name", DIVISIONS)
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_rounding_divisions_match_torch_bit_for_bit_with_special_values(name, dtype):
    fn = DIVISIONS[name]
    ours = fn(ng, ng.tensor(SPECIAL.astype(dtype)), ng.tensor(DIVISOR.astype(dtype)))
    theirs = fn(torch, torch.tensor(SPECIAL.astype(dtype)), torch.tensor(DIVISOR.astype(dtype)))
    assert_exact(ours.numpy(), theirs.numpy(), name)


@pytest.mark.parametrize(
    "name", ["floor_divide", "remainder", "remainder-number", "trunc", "floor", "true"]
)
def test_integer_rounding_divisions_keep_torchs_dtype_and_values(name):
    x, y = np.array([7, -7, 0, 9, -9, 5]), np.array([2, 2, 3, -4, -4, -5])
    ours = DIVISIONS[name](ng, ng.tensor(x), ng.tensor(y))
    theirs = DIVISIONS[name](torch, torch.tensor(x), torch.tensor(y))
    assert ours.numpy().tolist() == theirs.numpy().tolist()
    if name not in ("true", "remainder-number"):  # floats in the default dtype
        assert str(ours.dtype) == str(theirs.dtype).replace("torch.", "")


def test_integer_division_by_zero_and_bad_rounding_modes_raise_as_in_torch():
    for lib in (ng, torch):
        i = lib.tensor([1, 2])
        with pytest.raises(RuntimeError, match="ZeroDivisionError"):
            i // 0
        with pytest.raises(RuntimeError, match="ZeroDivisionError"):
            i % lib.tensor([1, 0])
        with pytest.raises(
            RuntimeError, match="rounding_mode to be one of None, 'trunc', or 'floor'"
        ):
            i.div(2, rounding_mode="round")


@pytest.mark.parametrize(
    "expression, name",
    [
        ("x % y", "RemainderBackward1"),
        ("x % 2", "RemainderBackward0"),
        ("x.div(y, rounding_mode='floor')", "DivBackward2"),
        ("x.div(2, rounding_mode='trunc')", "DivBackward2"),
        ("x.div(y, rounding_mode=None)", "DivBackward2"),
    ],
)
def test_rounding_divisions_record_torchs_nodes_and_gradients(expression, name):
    grads = []
    for lib in (ng, torch):
        x = lib.tensor([[5.0, -7.0], [3.5, 1.25]], dtype=lib.float64, requires_grad=True)
        y = lib.tensor([[2.0, 2.0], [-2.0, 3.0]], dtype=lib.float64, requires_grad=True)
        out = eval(expression)
        assert out.grad_fn.name() == name
        out.sum().backward()
        grads.append([x.grad.numpy(), None if y.grad is None else y.grad.numpy()])
    for a, b in zip(*grads):
        assert (a is None) == (b is None)
        if a is not None:
            assert_exact(a, b)


def test_floor_division_records_no_history_where_torch_records_a_node_without_a_derivative():
    x = ng.tensor([5.0, -7.0], requires_grad=True)
    assert (x // 2).grad_fn is None and not (x // 2).requires_grad
    assert torch.tensor([5.0], requires_grad=True).__floordiv__(2).grad_fn is not None


# -- addmm, sum(dtype), where(condition), allclose -------------------------------------------
@pytest.mark.parametrize("beta, alpha", [(2, 3), (0.5, -1.0), (0, 2.0), (1, 1)])
def test_addmm_scales_as_torch(beta, alpha):
    b, m1, m2 = RNG.normal(size=(2, 4)), RNG.normal(size=(2, 3)), RNG.normal(size=(3, 4))
    b[0, 0] = np.nan  # beta = 0 ignores the input, NaN included
    results = []
    for lib in (ng, torch):
        tensors = [lib.tensor(v, requires_grad=True) for v in (b, m1, m2)]
        out = lib.addmm(*tensors, beta=beta, alpha=alpha)
        assert out.grad_fn.name() == "AddmmBackward0"
        out.sum().backward()
        results.append([out.detach().numpy()] + [t.grad.numpy() for t in tensors])
    for a, c in zip(*results):
        assert_sum_close(a, c, 6)


def test_sum_with_a_dtype_sums_in_it_and_sends_the_gradient_back_in_the_inputs():
    values = RNG.normal(size=(3, 4)).astype(np.float32)
    for dim in (None, 1):
        results = []
        for lib in (ng, torch):
            x = lib.tensor(values, requires_grad=True)
            out = x.sum(dtype=lib.float64) if dim is None else lib.sum(x, dim, dtype=lib.float64)
            out.sum().backward()
            results.append((out.detach().numpy(), out.grad_fn.name(), x.grad.numpy()))
        (a, name_a, ga), (b, name_b, gb) = results
        assert a.dtype == b.dtype == np.float64 and name_a == name_b and ga.dtype == np.float32
        assert_sum_close(a, b, 4)
    assert ng.tensor([True, True]).sum(dtype=ng.float32).tolist() == 2.0


def test_where_with_the_condition_alone_gives_torchs_positions():
    values = RNG.normal(size=(3, 4)) > 0
    ours, theirs = ng.where(ng.tensor(values)), torch.where(torch.tensor(values))
    assert len(ours) == len(theirs) == 2
    for a, b in zip(ours, theirs):
        assert a.tolist() == b.tolist() and a.dtype == np.int64
    with pytest.raises(TypeError, match="condition alone, or the condition, input and other"):
        ng.where(ng.tensor(values), ng.ones(3, 4))


def test_allclose_counts_nans_as_equal_only_when_asked():
    a, b = [1.0, float("nan")], [1.0 + 1e-9, float("nan")]
    for lib in (ng, torch):
        assert lib.allclose(lib.tensor(a), lib.tensor(b), equal_nan=True)
        assert not lib.allclose(lib.tensor(a), lib.tensor(b))


# -- classification and regression losses -------------------------------------------------
X2, T2 = RNG.normal(size=(5, 3)), np.array([0, 2, 1, 2, 1])
X3, T3 = RNG.normal(size=(2, 3, 4)), RNG.integers(0, 3, (2, 4))
X4, T4 = RNG.normal(size=(2, 3, 2, 2)), RNG.integers(0, 3, (2, 2, 2))
W3 = np.array([1.0, 2.0, 0.5])
PROBS = RNG.dirichlet(np.ones(3), size=5)
LOSSES = {
    "nll-weight": lambda F, lib, x: F.nll_loss(x, lib.tensor(T2), weight=lib.tensor(W3)),
    "nll-ignore-none": lambda F, lib, x: F.nll_loss(
        x, lib.tensor(T2), ignore_index=2, reduction="none"
    ),
    "nll-weight-sum": lambda F, lib, x: F.nll_loss(
        x, lib.tensor(T2), lib.tensor(W3), reduction="sum"
    ),
    "nll-3d": lambda F, lib, x: F.nll_loss(
        x[:2].reshape(2, 3, 1).log_softmax(1), lib.tensor(T2[:2, None])
    ),
    "ce-3d": lambda F, lib, x: F.cross_entropy(x.reshape(1, 3, 5), lib.tensor(T2[None])),
    "ce-3d-none-weight": lambda F, lib, x: F.cross_entropy(
        x.reshape(1, 3, 5), lib.tensor(T2[None]), lib.tensor(W3), reduction="none"
    ),
    "ce-4d-ignore": lambda F, lib, x: F.cross_entropy(
        x[:4].reshape(1, 3, 2, 2), lib.tensor(T2[:4].reshape(1, 2, 2)), ignore_index=1
    ),
    "ce-smoothing": lambda F, lib, x: F.cross_entropy(x, lib.tensor(T2), label_smoothing=0.1),
    "ce-smoothing-weight-ignore": lambda F, lib, x: F.cross_entropy(
        x, lib.tensor(T2), weight=lib.tensor(W3), ignore_index=1, label_smoothing=0.3
    ),
    "ce-smoothing-sum": lambda F, lib, x: F.cross_entropy(
        x, lib.tensor(T2), reduction="sum", label_smoothing=0.25
    ),
    "ce-probabilities-smoothing-weight": lambda F, lib, x: F.cross_entropy(
        x, lib.tensor(PROBS), weight=lib.tensor(W3), label_smoothing=0.2
    ),
    "ce-unbatched-weight": lambda F, lib, x: F.cross_entropy(
        x[0], lib.tensor(T2[0]), weight=lib.tensor(W3), label_smoothing=0.1
    ),
    "ce-module": lambda F, lib, x: lib.nn.CrossEntropyLoss(
        weight=lib.tensor(W3), ignore_index=0, label_smoothing=0.1
    )(x, lib.tensor(T2)),
    "nll-module": lambda F, lib, x: lib.nn.NLLLoss(lib.tensor(W3), reduction="none")(
        x, lib.tensor(T2)
    ),
    "smooth_l1": lambda F, lib, x: F.smooth_l1_loss(x, lib.tensor(X2[::-1].copy()), beta=0.5),
    "smooth_l1-l1": lambda F, lib, x: F.smooth_l1_loss(x, lib.tensor(X2[::-1].copy()), beta=0.0),
    "huber-sum": lambda F, lib, x: F.huber_loss(
        x, lib.tensor(X2[::-1].copy()), reduction="sum", delta=0.7
    ),
    "huber-module-none": lambda F, lib, x: lib.nn.HuberLoss("none", delta=2.0)(
        x, lib.tensor(X2[::-1].copy())
    ),
    "smooth_l1-module": lambda F, lib, x: lib.nn.SmoothL1Loss(beta=0.3)(x, lib.tensor(X2 * 0.5)),
}


@pytest.mark.parametrize("name", LOSSES)
def test_losses_match_torch_in_value_gradient_and_node(name):
    results = []
    for lib in (ng, torch):
        x = lib.tensor(X2, requires_grad=True)
        out = LOSSES[name](lib.nn.functional, lib, x)
        out.sum().backward()
        results.append((out.detach().numpy(), x.grad.numpy(), out.grad_fn.name()))
    (a, ga, name_a), (b, gb, name_b) = results
    if name != "ce-probabilities-smoothing-weight":  # torch divides by a Scalar there
        assert name_a == name_b
    assert a.shape == b.shape
    assert_sum_close(a, b, 16)
    assert_sum_close(ga, gb, 16)
    assert (
        repr(lib.nn.SmoothL1Loss()) == "SmoothL1Loss()" and repr(ng.nn.HuberLoss()) == "HuberLoss()"
    )


LOSS_ERRORS = [
    (
        lambda F, lib: F.nll_loss(
            lib.tensor(X2), lib.tensor(T2), weight=lib.ones(2, dtype=lib.float64)
        ),
        RuntimeError,
        "weight tensor should be defined either for all 3 classes or no classes",
    ),
    (
        lambda F, lib: F.nll_loss(
            lib.tensor(X2),
            lib.tensor(T2),
            weight=lib.ones(3, dtype=lib.float64, requires_grad=True),
        ),
        RuntimeError,
        "not differentiable with respect to argument 'weight'",
    ),
    (
        lambda F, lib: F.smooth_l1_loss(lib.tensor(X2), lib.tensor(X2), beta=-1.0),
        RuntimeError,
        "smooth_l1_loss does not support negative values for beta.",
    ),
    (
        lambda F, lib: F.huber_loss(lib.tensor(X2), lib.tensor(X2), delta=0.0),
        RuntimeError,
        "huber_loss does not support non-positive values for delta.",
    ),
    (
        lambda F, lib: F.cross_entropy(lib.tensor(X2), lib.tensor(T2), label_smoothing=1.5),
        RuntimeError,
        "label_smoothing must be between 0.0 and 1.0",
    ),
]


@pytest.mark.parametrize("index", range(len(LOSS_ERRORS)))
def test_loss_errors_have_torchs_type_and_phrase(index):
    build, error, phrase = LOSS_ERRORS[index]
    for lib in (ng, torch):
        with pytest.raises(error, match=phrase.replace("(", r"\(").replace(".", r"\.")):
            build(lib.nn.functional, lib)


def test_losses_ignore_every_target_as_torch_does():
    for lib in (ng, torch):
        x = lib.tensor(X2[:2], requires_grad=True)
        loss = lib.nn.functional.nll_loss(x, lib.tensor([1, 1]), ignore_index=1)
        assert np.isnan(loss.item())


# -- optimisers and the profiler ------------------------------------------------------------
@pytest.mark.parametrize(
    "options",
    [dict(amsgrad=True), dict(maximize=True), dict(amsgrad=True, maximize=True, weight_decay=0.1)],
)
def test_adam_amsgrad_and_maximize_follow_torch_step_for_step(options):
    start = RNG.normal(size=(3,))
    grads = [RNG.normal(size=(3,)) * (3.0 if i % 2 else 0.1) for i in range(6)]
    trajectories = []
    for lib in (ng, torch):
        w = lib.tensor(start.copy(), requires_grad=True)
        opt = lib.optim.Adam([w], lr=0.05, **options)
        path = []
        for g in grads:
            w.grad = lib.tensor(g)
            opt.step()
            path.append(w.detach().numpy().copy())
        trajectories.append(np.array(path))
    np.testing.assert_allclose(trajectories[0], trajectories[1], rtol=1e-12, atol=1e-14)


@pytest.mark.parametrize("name", ["SGD", "Adam", "RMSprop", "Adagrad"])
def test_step_with_a_closure_reevaluates_the_loss_and_returns_it(name):
    results = []
    for lib in (ng, torch):
        w = lib.tensor([1.0, -2.0], dtype=lib.float64, requires_grad=True)
        opt = getattr(lib.optim, name)([w], lr=0.1)
        calls = []

        def closure(opt=opt, w=w, calls=calls, lib=lib):
            opt.zero_grad()
            loss = (w * w).sum()
            loss.backward()
            calls.append(lib.is_grad_enabled())
            return loss

        with lib.no_grad():
            loss = opt.step(closure)
        results.append((loss.item(), w.detach().numpy().tolist(), calls))
        assert opt.step() is None
    assert results[0][0] == results[1][0] and results[0][2] == results[1][2] == [True]
    np.testing.assert_allclose(results[0][1], results[1][1], rtol=1e-12)


def test_the_profiler_times_ops_and_prints_torchs_table():
    from naivegraph.autograd.profiler import profile, record_function

    model = ng.nn.Sequential(ng.nn.Linear(4, 3), ng.nn.ReLU())
    x = ng.randn(5, 4)
    with profile(record_shapes=True) as prof:
        with record_function("model_inference"):
            model(x).sum(0).sum().backward()
    rows = {row.key: row for row in prof.key_averages()}
    assert {"aten::addmm", "model_inference"} <= set(rows)
    assert rows["model_inference"].count == 1
    assert rows["model_inference"].cpu_time_total >= rows["aten::addmm"].cpu_time_total
    table = prof.key_averages().table(sort_by="self_cpu_time_total", row_limit=10)
    for column in (
        "Name",
        "Self CPU %",
        "Self CPU",
        "CPU total %",
        "CPU total",
        "CPU time avg",
        "# of Calls",
    ):
        assert column in table
    assert "Self CPU time total:" in table
    before = len(prof.events())
    model(x)  # after the block nothing is recorded
    assert len(prof.events()) == before
    assert ng.autograd.profiler is not None and torch.autograd.profiler.profile is not None
