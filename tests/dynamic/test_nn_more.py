"""More of torch.nn: Flatten, Softmax, Embedding, the NLL/BCE losses, nn.init, module
walks and reprs, each compared with torch."""

import math

import numpy as np
import pytest

import naivegraph as ng

nn = ng.nn


@pytest.fixture
def torch():
    return pytest.importorskip("torch")


def both(torch, data, requires_grad=False):
    """The same float64 values as a naivegraph tensor and a torch tensor (float64 pinned:
    the comparisons below hold to 1e-12)."""
    return (
        ng.tensor(data, dtype=ng.float64, requires_grad=requires_grad),
        torch.tensor(data, dtype=torch.float64, requires_grad=requires_grad),
    )


def assert_close(ours, theirs, rtol=1e-12):
    np.testing.assert_allclose(
        np.asarray(ours.tolist()), theirs.detach().numpy(), rtol=rtol, atol=1e-14
    )


# -- layers ------------------------------------------------------------------------------
@pytest.mark.parametrize("args", [(), (0,), (1, 2), (0, -2)])
def test_flatten_matches_torch_shape_and_repr(torch, args):
    x = np.arange(24.0).reshape(2, 3, 4)
    ours, theirs = nn.Flatten(*args), torch.nn.Flatten(*args)
    assert ours(ng.tensor(x)).shape == tuple(theirs(torch.tensor(x)).shape)
    assert ours(ng.tensor(x)).tolist() == theirs(torch.tensor(x)).tolist()
    assert repr(ours) == repr(theirs)


@pytest.mark.parametrize("module", ["Softmax", "LogSoftmax"])
@pytest.mark.parametrize("dim", [0, 1, -1])
def test_softmax_modules_match_torch_values_and_gradients(torch, module, dim):
    data = [[0.5, -1.0, 2.0], [1.5, 0.25, -0.5]]
    x, tx = both(torch, data, requires_grad=True)
    y, ty = getattr(nn, module)(dim=dim)(x), getattr(torch.nn, module)(dim=dim)(tx)
    assert_close(y, ty)
    weights = [[1.0, 2.0, 3.0], [-1.0, 0.5, 0.0]]
    (y * ng.tensor(weights)).sum().backward()
    (ty * torch.tensor(weights, dtype=torch.float64)).sum().backward()
    assert_close(x.grad, tx.grad)
    assert repr(getattr(nn, module)(dim=dim)) == repr(getattr(torch.nn, module)(dim=dim))


def test_softmax_without_dim_warns_and_picks_torchs_dim(torch):
    data = [[0.5, -1.0, 2.0], [1.5, 0.25, -0.5]]
    x, tx = both(torch, data)
    with pytest.warns(UserWarning, match="Implicit dimension choice for softmax"):
        y = nn.Softmax()(x)
    with pytest.warns(UserWarning, match="Implicit dimension choice for softmax"):
        ty = torch.nn.Softmax()(tx)
    assert_close(y, ty)
    assert repr(nn.Softmax()) == repr(torch.nn.Softmax()) == "Softmax(dim=None)"


def test_embedding_looks_up_rows_and_accumulates_their_gradients_as_torch(torch):
    ours, theirs = nn.Embedding(5, 3), torch.nn.Embedding(5, 3).double()
    with torch.no_grad():
        theirs.weight.copy_(torch.tensor(ours.weight.tolist(), dtype=torch.float64))
    indices = [[1, 0], [4, 4]]
    y, ty = ours(ng.tensor(indices)), theirs(torch.tensor(indices))
    assert y.shape == (2, 2, 3) and y.tolist() == ty.tolist()
    y.sum().backward()
    ty.sum().backward()
    assert ours.weight.grad.tolist() == theirs.weight.grad.tolist()
    assert ours.weight.grad.tolist()[4] == [2.0, 2.0, 2.0]


def test_embedding_padding_row_starts_at_zero_and_gets_no_gradient_as_torch(torch):
    ours, theirs = nn.Embedding(4, 2, padding_idx=1), torch.nn.Embedding(4, 2, padding_idx=1)
    assert ours.weight.tolist()[1] == [0.0, 0.0] == theirs.weight.tolist()[1]
    with ng.no_grad():
        ours.weight[1] = ng.tensor([7.0, 8.0])  # a changed padding row is still looked up
    y = ours(ng.tensor([1, 2, 1]))
    assert y.tolist()[0] == [7.0, 8.0]
    (y * 3).sum().backward()
    assert ours.weight.grad.tolist() == [[0.0, 0.0], [0.0, 0.0], [3.0, 3.0], [0.0, 0.0]]
    assert repr(ours) == repr(theirs) == "Embedding(4, 2, padding_idx=1)"
    assert repr(nn.Embedding(5, 2)) == repr(torch.nn.Embedding(5, 2)) == "Embedding(5, 2)"
    assert nn.Embedding(3, 2, padding_idx=-1).padding_idx == 2


def test_embedding_weights_start_as_standard_normal_draws():
    ng.manual_seed(0)
    w = nn.Embedding(400, 50).weight
    assert w.requires_grad and isinstance(w, nn.Parameter)
    values = w.detach().numpy()
    assert abs(values.mean()) < 0.02 and abs(values.std() - 1) < 0.02


def test_embedding_refuses_bad_indices_with_torchs_errors(torch):
    with pytest.raises(IndexError, match="index out of range in self"):
        torch.nn.Embedding(3, 2)(torch.tensor([3]))
    with pytest.raises(IndexError, match="index out of range in self"):
        nn.Embedding(3, 2)(ng.tensor([3]))
    with pytest.raises(IndexError, match="index out of range in self"):
        nn.Embedding(3, 2)(ng.tensor([-1]))
    with pytest.raises(
        RuntimeError, match="'indices' to have one of the following scalar types: Long, Int"
    ):
        nn.Embedding(3, 2)(ng.tensor([1.0]))
    with pytest.raises(AssertionError, match="Padding_idx must be within num_embeddings"):
        nn.Embedding(3, 2, padding_idx=3)


# -- losses --------------------------------------------------------------------------------
LOGITS = [[0.5, -1.0, 2.0], [1.5, 0.25, -0.5], [-2.0, 0.0, 0.75]]
CLASSES = [2, 0, 1]


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
def test_nll_loss_after_log_softmax_matches_torch(torch, reduction):
    x, tx = both(torch, LOGITS, requires_grad=True)
    loss = nn.NLLLoss(reduction=reduction)(nn.LogSoftmax(dim=1)(x), ng.tensor(CLASSES))
    expected = torch.nn.NLLLoss(reduction=reduction)(
        torch.nn.LogSoftmax(dim=1)(tx), torch.tensor(CLASSES)
    )
    assert_close(loss, expected)
    loss.sum().backward()
    expected.sum().backward()
    assert_close(x.grad, tx.grad)


PROBS = [[0.1, 0.9], [0.5, 0.25], [0.99, 0.001]]
TARGETS = [[0.0, 1.0], [1.0, 0.0], [1.0, 0.5]]


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
@pytest.mark.parametrize("weighted", [False, True])
def test_bce_loss_matches_torch_values_and_gradients(torch, reduction, weighted):
    p, tp = both(torch, PROBS, requires_grad=True)
    weight = [2.0, 0.5] if weighted else None
    ours = nn.BCELoss(weight=ng.tensor(weight) if weighted else None, reduction=reduction)
    theirs = torch.nn.BCELoss(
        weight=torch.tensor(weight, dtype=torch.float64) if weighted else None, reduction=reduction
    )
    loss, expected = (
        ours(p, ng.tensor(TARGETS)),
        theirs(tp, torch.tensor(TARGETS, dtype=torch.float64)),
    )
    assert_close(loss, expected)
    loss.sum().backward()
    expected.sum().backward()
    assert_close(p.grad, tp.grad, rtol=1e-10)


def test_bce_loss_clamps_the_log_at_minus_100_as_torch(torch):
    assert nn.BCELoss()(ng.tensor([0.0, 1.0]), ng.tensor([1.0, 0.0])).item() == 100.0
    assert torch.nn.BCELoss()(torch.tensor([0.0, 1.0]), torch.tensor([1.0, 0.0])).item() == 100.0


@pytest.mark.parametrize("target", [[1.0, 0.0], [0.0, 1.0], [0.5, 0.5]])
def test_bce_loss_gradient_at_saturated_probabilities_is_torchs_not_nan(torch, target):
    p, tp = both(torch, [0.0, 1.0], requires_grad=True)
    loss = nn.BCELoss()(p, ng.tensor(target))
    expected = torch.nn.BCELoss()(tp, torch.tensor(target, dtype=torch.float64))
    loss.backward()
    expected.backward()
    assert loss.item() == expected.item()
    assert p.grad.tolist() == tp.grad.tolist()
    assert not np.isnan(p.grad.tolist()).any()


def test_bce_loss_gradient_reaches_the_target_as_torch(torch):
    p, tp = both(torch, [0.3, 0.8], requires_grad=True)
    t, tt = both(torch, [0.6, 0.1], requires_grad=True)
    nn.BCELoss(reduction="sum")(p, t).backward()
    torch.nn.BCELoss(reduction="sum")(tp, tt).backward()
    assert_close(p.grad, tp.grad)
    assert_close(t.grad, tt.grad)


def test_bce_loss_refuses_values_outside_0_1_and_mismatched_shapes_as_torch(torch):
    with pytest.raises(RuntimeError, match="all elements of input should be between 0 and 1"):
        torch.nn.BCELoss()(torch.tensor([1.5]), torch.tensor([1.0]))
    with pytest.raises(RuntimeError, match="all elements of input should be between 0 and 1"):
        nn.BCELoss()(ng.tensor([1.5]), ng.tensor([1.0]))
    with pytest.raises(RuntimeError, match="all elements of input should be between 0 and 1"):
        nn.BCELoss()(ng.tensor([float("nan")]), ng.tensor([1.0]))
    message = (
        r"Using a target size \(torch.Size\(\[2\]\)\) that is different to the input "
        r"size \(torch.Size\(\[2, 1\]\)\) is deprecated"
    )
    with pytest.raises(ValueError, match=message):
        torch.nn.BCELoss()(torch.tensor([[0.5], [0.2]]), torch.tensor([1.0, 0.0]))
    with pytest.raises(ValueError, match=message):
        nn.BCELoss()(ng.tensor([[0.5], [0.2]]), ng.tensor([1.0, 0.0]))


LOGIT_VALUES = [[0.5, -1.0], [30.0, -40.0], [0.0, 3.0]]


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
@pytest.mark.parametrize("pos_weight", [None, [3.0, 0.5]])
def test_bce_with_logits_matches_torch_values_and_gradients(torch, reduction, pos_weight):
    x, tx = both(torch, LOGIT_VALUES, requires_grad=True)
    ours = nn.BCEWithLogitsLoss(
        reduction=reduction, pos_weight=None if pos_weight is None else ng.tensor(pos_weight)
    )
    theirs = torch.nn.BCEWithLogitsLoss(
        reduction=reduction,
        pos_weight=None if pos_weight is None else torch.tensor(pos_weight, dtype=torch.float64),
    )
    loss = ours(x, ng.tensor(TARGETS))
    expected = theirs(tx, torch.tensor(TARGETS, dtype=torch.float64))
    assert_close(loss, expected)
    loss.sum().backward()
    expected.sum().backward()
    assert_close(x.grad, tx.grad, rtol=1e-10)


def test_bce_with_logits_is_finite_for_huge_logits_as_torch(torch):
    x, tx = both(torch, [1000.0, -1000.0, 800.0], requires_grad=True)
    target = [0.0, 1.0, 1.0]
    loss = nn.BCEWithLogitsLoss(reduction="none")(x, ng.tensor(target))
    expected = torch.nn.BCEWithLogitsLoss(reduction="none")(
        tx, torch.tensor(target, dtype=torch.float64)
    )
    assert loss.tolist() == expected.tolist() == [1000.0, 1000.0, 0.0]
    loss.sum().backward()
    expected.sum().backward()
    assert x.grad.tolist() == tx.grad.tolist() == [1.0, -1.0, 0.0]


def test_bce_with_logits_refuses_mismatched_shapes_as_torch(torch):
    message = (
        r"Target size \(torch.Size\(\[2\]\)\) must be the same as input size "
        r"\(torch.Size\(\[2, 1\]\)\)"
    )
    with pytest.raises(ValueError, match=message):
        torch.nn.BCEWithLogitsLoss()(torch.tensor([[0.5], [0.2]]), torch.tensor([1.0, 0.0]))
    with pytest.raises(ValueError, match=message):
        nn.BCEWithLogitsLoss()(ng.tensor([[0.5], [0.2]]), ng.tensor([1.0, 0.0]))


@pytest.mark.parametrize("name", ["NLLLoss", "BCELoss", "BCEWithLogitsLoss"])
def test_a_bad_reduction_is_refused_when_called_as_in_torch(torch, name):
    with pytest.raises(ValueError, match="avg is not a valid value for reduction"):
        torch.nn.BCELoss(reduction="avg")(torch.tensor([0.5]), torch.tensor([1.0]))
    loss = getattr(nn, name)(reduction="avg")
    inputs = (
        (ng.tensor([[-0.5, -1.0]]), ng.tensor([0]))
        if name == "NLLLoss"
        else (ng.tensor([0.5]), ng.tensor([1.0]))
    )
    with pytest.raises(ValueError, match="avg is not a valid value for reduction"):
        loss(*inputs)


def test_loss_reprs_match_torch(torch):
    for name in ("NLLLoss", "BCELoss", "BCEWithLogitsLoss", "MSELoss", "CrossEntropyLoss"):
        assert repr(getattr(nn, name)()) == repr(getattr(torch.nn, name)()) == f"{name}()"


# -- nn.init --------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "call",
    [
        lambda init, t: init.zeros_(t),
        lambda init, t: init.ones_(t),
        lambda init, t: init.constant_(t, 0.25),
    ],
    ids=["zeros_", "ones_", "constant_"],
)
def test_constant_inits_fill_in_place_and_return_the_tensor_as_torch(torch, call):
    w, tw = ng.randn(3, 4, requires_grad=True), torch.randn(3, 4, requires_grad=True)
    version, tversion = w._version, tw._version
    assert call(nn.init, w) is w and call(torch.nn.init, tw) is tw
    assert w.tolist() == tw.tolist()
    assert w.is_leaf and w.requires_grad and w.grad_fn is None
    assert w._version == version + 1 and tw._version == tversion + 1


def draw(init_call, shape=(200, 300)):
    ng.manual_seed(0)
    w = ng.zeros(*shape, requires_grad=True)
    assert init_call(w) is w and w.is_leaf and w.grad_fn is None
    return w.detach().numpy()


def test_uniform_and_normal_draw_with_the_requested_parameters():
    values = draw(lambda w: nn.init.uniform_(w, -2.0, 3.0))
    assert values.min() >= -2.0 and values.max() < 3.0 and abs(values.mean() - 0.5) < 0.02
    values = draw(lambda w: nn.init.normal_(w, mean=1.0, std=0.5))
    assert abs(values.mean() - 1.0) < 0.005 and abs(values.std() - 0.5) < 0.005


@pytest.mark.parametrize(
    "name,kwargs,bound",
    [
        ("xavier_uniform_", {}, math.sqrt(6 / 500)),
        ("xavier_uniform_", {"gain": 2.0}, 2 * math.sqrt(6 / 500)),
        ("kaiming_uniform_", {}, math.sqrt(2) * math.sqrt(3 / 300)),
        (
            "kaiming_uniform_",
            {"mode": "fan_out", "nonlinearity": "relu"},
            math.sqrt(2) * math.sqrt(3 / 200),
        ),
        ("kaiming_uniform_", {"a": math.sqrt(5)}, math.sqrt(2 / 6) * math.sqrt(3 / 300)),
    ],
)
def test_uniform_schemes_fill_up_to_torchs_bound(name, kwargs, bound):
    values = draw(lambda w: getattr(nn.init, name)(w, **kwargs))
    assert np.abs(values).max() <= bound
    assert np.abs(values).max() > 0.99 * bound  # the whole range is used


@pytest.mark.parametrize(
    "name,kwargs,std",
    [
        ("xavier_normal_", {}, math.sqrt(2 / 500)),
        ("kaiming_normal_", {}, math.sqrt(2) / math.sqrt(300)),
        ("kaiming_normal_", {"mode": "fan_out", "nonlinearity": "tanh"}, (5 / 3) / math.sqrt(200)),
    ],
)
def test_normal_schemes_draw_with_torchs_std(name, kwargs, std):
    values = draw(lambda w: getattr(nn.init, name)(w, **kwargs))
    assert abs(values.std() / std - 1) < 0.01 and abs(values.mean()) < 0.01 * std * 10


def test_calculate_gain_matches_torch(torch):
    for args in [
        ("linear",),
        ("sigmoid",),
        ("tanh",),
        ("relu",),
        ("leaky_relu",),
        ("leaky_relu", 0.2),
        ("selu",),
        ("conv2d",),
    ]:
        assert nn.init.calculate_gain(*args) == torch.nn.init.calculate_gain(*args)


def test_init_errors_match_torch(torch):
    with pytest.raises(
        ValueError,
        match="Fan in and fan out can not be computed for tensor with fewer than 2 dimensions",
    ):
        nn.init.xavier_uniform_(ng.ones(3))
    with pytest.raises(ValueError, match="Unsupported nonlinearity foo"):
        nn.init.kaiming_uniform_(ng.ones(3, 2), nonlinearity="foo")
    with pytest.raises(
        ValueError,
        match=r"Mode fan not supported, please use one of "
        r"\['fan_in', 'fan_out'\]",
    ):
        nn.init.kaiming_uniform_(ng.ones(3, 2), mode="fan")
    w = ng.ones(3, 2)
    with pytest.raises(ValueError, match="Unsupported nonlinearity"):
        nn.init.kaiming_normal_(w, nonlinearity="foo")
    assert w.tolist() == [[1.0, 1.0]] * 3  # left unchanged
    with pytest.raises(TypeError, match="nn.init fills a Tensor in place, got list"):
        nn.init.zeros_([1.0, 2.0])


def test_init_keeps_a_float32_parameter_float32():
    w = nn.Linear(2, 3, dtype=ng.float32).weight
    nn.init.xavier_uniform_(w)
    assert w.dtype == np.float32


# -- module walks and reprs -------------------------------------------------------------------
def build(lib):
    inner = lib.nn.Sequential(lib.nn.Linear(3, 3), lib.nn.Tanh())
    return lib.nn.Sequential(
        lib.nn.Flatten(), lib.nn.Linear(4, 3), inner, lib.nn.ReLU(), lib.nn.Linear(3, 1, bias=False)
    )


def test_named_modules_children_and_named_children_match_torch(torch):
    ours, theirs = build(ng), build(torch)
    assert [n for n, _ in ours.named_modules()] == [n for n, _ in theirs.named_modules()]
    assert [type(m).__name__ for m in ours.modules()] == [
        type(m).__name__ for m in theirs.modules()
    ]
    assert [n for n, _ in ours.named_children()] == [n for n, _ in theirs.named_children()]
    assert [type(m).__name__ for m in ours.children()] == [
        type(m).__name__ for m in theirs.children()
    ]


def test_repr_of_nested_modules_matches_torch_line_for_line(torch):
    assert repr(build(ng)) == repr(build(torch))
    assert repr(build(ng)).splitlines()[:4] == [
        "Sequential(",
        "  (0): Flatten(start_dim=1, end_dim=-1)",
        "  (1): Linear(in_features=4, out_features=3, bias=True)",
        "  (2): Sequential(",
    ]


def test_repr_of_a_custom_module_with_extra_repr_and_children_matches_torch(torch):
    def make(lib):
        class Net(lib.nn.Module):
            def __init__(self):
                super().__init__()
                self.fc = lib.nn.Linear(2, 2)
                self.empty = None

            def extra_repr(self):
                return "scale=2"

        return Net()

    assert repr(make(ng)) == repr(make(torch))


def test_train_and_eval_set_training_everywhere_as_torch(torch):
    ours, theirs = build(ng), build(torch)
    assert ours.eval() is ours and theirs.eval() is theirs
    assert (
        [m.training for m in ours.modules()]
        == [m.training for m in theirs.modules()]
        == [False] * 8
    )
    ours.train()
    assert all(m.training for m in ours.modules())
    ours[2].train(False)
    assert [m.training for m in ours.modules()] == [
        True,
        True,
        True,
        False,
        False,
        False,
        True,
        True,
    ]


def test_apply_visits_children_first_then_the_module_as_torch(torch):
    def order(lib):
        seen = []
        build(lib).apply(lambda m: seen.append(type(m).__name__))
        return seen

    assert order(ng) == order(torch)


def test_add_module_registers_a_child_as_torch(torch):
    for lib in (ng, torch):
        model = lib.nn.Sequential()
        model.add_module("hidden", lib.nn.Linear(2, 2))
        assert [n for n, _ in model.named_parameters()] == ["hidden.weight", "hidden.bias"]
    with pytest.raises(TypeError, match="is not a Module subclass"):
        ng.nn.Sequential().add_module("x", 3)


def test_printing_a_parameter_starts_with_parameter_containing_as_torch(torch):
    p, tp = nn.Parameter(ng.ones(2)), torch.nn.Parameter(torch.ones(2))
    assert str(p) == str(tp) == "Parameter containing:\ntensor([1., 1.], requires_grad=True)"
    assert repr(p) == repr(tp)


def test_a_classifier_trains_with_bce_with_logits_and_init(torch):
    ng.manual_seed(0)
    model = nn.Sequential(nn.Linear(2, 8), nn.ReLU(), nn.Linear(8, 1), nn.Flatten(0))
    model.apply(lambda m: nn.init.xavier_uniform_(m.weight) if isinstance(m, nn.Linear) else None)
    x = ng.tensor([[0.0, 0.0], [0.0, 1.0], [1.0, 0.0], [1.0, 1.0]])
    y = ng.tensor([0.0, 1.0, 1.0, 1.0])
    optimizer = ng.optim.SGD(model.parameters(), lr=0.5)
    loss_fn = nn.BCEWithLogitsLoss()
    first = loss_fn(model(x), y).item()
    for _ in range(200):
        optimizer.zero_grad()
        loss = loss_fn(model(x), y)
        loss.backward()
        optimizer.step()
    assert loss.item() < 0.05 * first
    assert ((model(x) > 0).long().tolist()) == [0, 1, 1, 1]


def test_module_to_takes_devices_and_dtypes_as_tensor_to_does(torch):
    for lib in (ng, torch):
        model = lib.nn.Linear(2, 3)
        weight = model.weight
        assert model.to("cpu") is model and model.cpu() is model
        assert model.to(lib.device("cpu"), lib.float32).weight.dtype == lib.float32
        assert model.to(device="cpu", dtype=lib.float64).weight.dtype == lib.float64
        assert model.weight is weight  # cast in place: an optimiser keeps its parameters
    with pytest.raises(RuntimeError, match="naivegraph runs on the CPU only"):
        ng.nn.Linear(2, 3).to("cuda")
    with pytest.raises(RuntimeError, match="naivegraph runs on the CPU only"):
        ng.nn.Linear(2, 3).cuda()


def test_a_slice_of_a_sequential_is_a_sequential_of_those_layers_under_their_names(torch):
    layers = [ng.nn.ReLU(), ng.nn.Tanh(), ng.nn.Sigmoid()]
    model = ng.nn.Sequential(*layers)
    tail = model[1:]
    assert type(tail) is ng.nn.Sequential and len(tail) == 2
    assert [name for name, _ in tail.named_children()] == ["1", "2"]
    assert tail[0] is layers[1] and model[::-1][0] is layers[2] and model[-1] is layers[2]
    assert repr(tail) == repr(
        torch.nn.Sequential(torch.nn.ReLU(), torch.nn.Tanh(), torch.nn.Sigmoid())[1:]
    )
    assert tail(ng.tensor([0.0], dtype=ng.float64)).item() == 0.5  # sigmoid(tanh(0))
    with pytest.raises(IndexError, match="index 3 is out of range"):
        model[3]
