"""``ng.func.vmap`` and ``ng.func.functional_call`` against torch.func: values, shapes,
composition with the derivative transforms, and torch's errors for bad arguments;
``autograd.grad(materialize_grads=)`` and the squeeze/unsqueeze double-backward nodes."""

import numpy as np
import pytest

import naivegraph as ng

torch = pytest.importorskip("torch")
pytestmark = pytest.mark.filterwarnings(
    "ignore:`torch.jit.script` is deprecated:DeprecationWarning"
)

X = np.arange(6.0).reshape(2, 3) / 4 - 0.5
W = np.array([0.5, -1.0, 2.0])


def both(values):
    return ng.tensor(values, dtype=ng.float64), torch.tensor(values, dtype=torch.float64)


def close(mine, theirs, rtol=1e-13):
    if isinstance(theirs, (tuple, list)):
        assert len(mine) == len(theirs)
        for m, t in zip(mine, theirs):
            close(m, t, rtol)
        return
    assert tuple(mine.shape) == tuple(theirs.shape)
    np.testing.assert_allclose(mine.detach().numpy(), theirs.detach().numpy(), rtol=rtol)


MAPPED = {
    "one argument": lambda F, lib, x, w: F.vmap(lambda r: r.dot(r))(x),
    "in_dims with None": lambda F, lib, x, w: F.vmap(lambda r, v: r * v, in_dims=(0, None))(x, w),
    "in_dims 1": lambda F, lib, x, w: F.vmap(lambda c: c.sum(), in_dims=1)(x),
    "negative in_dims": lambda F, lib, x, w: F.vmap(lambda c: c * 2, in_dims=-1)(x),
    "out_dims 1": lambda F, lib, x, w: F.vmap(lambda r: r * 2, out_dims=1)(x),
    "tuple outputs and out_dims": lambda F, lib, x, w: F.vmap(
        lambda r: (r.exp(), r.sum()), out_dims=(1, 0)
    )(x),
    "out_dims None for an unbatched output": lambda F, lib, x, w: F.vmap(
        lambda r: (r * 2, w + 1), out_dims=(0, None)
    )(x),
    "dict argument and nested in_dims": lambda F, lib, x, w: F.vmap(
        lambda d: d["a"] * d["b"], in_dims=({"a": 1, "b": None},)
    )({"a": x, "b": w[:2]}),
    "keyword arguments passed whole": lambda F, lib, x, w: F.vmap(lambda r, s=1: r * s)(x, s=w),
    "nested vmap: an outer product": lambda F, lib, x, w: F.vmap(
        F.vmap(lambda a, b: a * b, in_dims=(0, None)), in_dims=(None, 0)
    )(w, x),
    "per-sample gradients": lambda F, lib, x, w: F.vmap(
        F.grad(lambda v, r: lib.sin(v * r).sum()), in_dims=(None, 0)
    )(w, x),
    "batched Jacobians": lambda F, lib, x, w: F.vmap(F.jacrev(lambda r: r.sin() * r.sum()))(x),
    "batched jacfwd": lambda F, lib, x, w: F.vmap(F.jacfwd(lambda r: r.exp() * r[0]))(x),
    "grad of a vmap": lambda F, lib, x, w: F.grad(
        lambda v: F.vmap(lambda r: (v * r).sum())(x).pow(2).sum()
    )(w),
    "an empty batch": lambda F, lib, x, w: F.vmap(lambda r: r * 2)(x[:0]),
    "an empty batch along out_dims 1": lambda F, lib, x, w: F.vmap(lambda r: r * 2, out_dims=1)(
        x[:0]
    ),
}


@pytest.mark.parametrize("case", sorted(MAPPED))
def test_vmap_gives_torchs_results(case):
    (x_ng, x_t), (w_ng, w_t) = both(X), both(W)
    close(MAPPED[case](ng.func, ng, x_ng, w_ng), MAPPED[case](torch.func, torch, x_t, w_t))


def test_vmap_of_grad_gives_the_per_sample_gradients_of_a_model():
    """The per-sample-gradients recipe: functional_call + grad + vmap over the batch."""
    data, targets = np.linspace(-1, 1, 12).reshape(4, 3), np.array([0.5, -0.5, 1.0, 0.0])

    def run(lib):
        lib.manual_seed(0)
        model = lib.nn.Linear(3, 1).to(lib.float64)
        with lib.no_grad():
            model.weight.copy_(lib.tensor([[0.3, -0.2, 0.1]], dtype=lib.float64))
            model.bias.fill_(0.05)
        params = {k: v.detach() for k, v in model.named_parameters()}

        def loss(p, x, y):
            out = lib.func.functional_call(model, p, (x.unsqueeze(0),))
            return ((out.squeeze() - y) ** 2).sum()

        x, y = lib.tensor(data, dtype=lib.float64), lib.tensor(targets, dtype=lib.float64)
        return lib.func.vmap(lib.func.grad(loss), in_dims=(None, 0, 0))(params, x, y)

    got, want = run(ng), run(torch)
    assert list(got) == list(want) == ["weight", "bias"]
    for k in want:
        close(got[k], want[k])


@pytest.mark.parametrize("lib", [ng, torch], ids=["naivegraph", "torch"])
def test_vmap_randomness_modes_as_torch(lib):
    x = lib.tensor(X)
    with pytest.raises(RuntimeError, match="called random operation while in randomness"):
        lib.func.vmap(lambda r: r + lib.rand(3))(x)
    lib.manual_seed(3)
    same = lib.func.vmap(lambda r: lib.rand(3) + r * 0, randomness="same")(x)
    assert same[0].tolist() == same[1].tolist()
    different = lib.func.vmap(lambda r: lib.rand(3) + r * 0, randomness="different")(x)
    assert different[0].tolist() != different[1].tolist()
    with pytest.raises(RuntimeError, match="Only allowed values for randomness"):
        lib.func.vmap(lambda r: r, randomness="sometimes")(x)


def test_vmap_with_randomness_same_draws_once_from_the_global_generator():
    x, _ = both(X)
    ng.manual_seed(7)
    ng.func.vmap(lambda r: ng.rand(3) + r * 0, randomness="same")(x)
    after_vmap = ng.rand(2).tolist()
    ng.manual_seed(7)
    ng.rand(3)
    assert ng.rand(2).tolist() == after_vmap


def test_vmap_leaves_the_generator_usable_after_a_refused_random_call():
    x, _ = both(X)
    with pytest.raises(RuntimeError, match="randomness error mode"):
        ng.func.vmap(lambda r: ng.randn(3) * r)(x)
    assert ng.rand(2).shape == (2,)


BAD_VMAPS = {
    "mismatched batch sizes": (
        lambda F, lib, x: F.vmap(lambda a, b: a + b)(x, lib.ones(3, 3)),
        ValueError,
        r"same size in the mapped dimension, got sizes \[2, 3\]",
    ),
    "in_dims out of range": (
        lambda F, lib, x: F.vmap(lambda a: a, in_dims=2)(x),
        ValueError,
        "expected in_dim to satisfy -2 <= in_dim < 2",
    ),
    "in_dims of a 0-d tensor": (
        lambda F, lib, x: F.vmap(lambda a: a)(x[0, 0]),
        ValueError,
        "dimensionality 0 so expected in_dim to satisfy -0 <= in_dim < 0",
    ),
    "in_dims too short": (
        lambda F, lib, x: F.vmap(lambda a, b: a, in_dims=(0,))(x, x),
        ValueError,
        "in_dims is not compatible with the structure of `inputs`",
    ),
    "in_dims a list": (
        lambda F, lib, x: F.vmap(lambda a, b: a, in_dims=[0, None])(x, x),
        ValueError,
        "expected `in_dims` to be int or a \\(potentially nested\\) tuple",
    ),
    "in_dims a string": (
        lambda F, lib, x: F.vmap(lambda a: a, in_dims=("a",))(x),
        ValueError,
        "in_dim must be either an integer dimension or None",
    ),
    "nothing to map over": (
        lambda F, lib, x: F.vmap(lambda a: a, in_dims=(None,))(x),
        ValueError,
        "Expected at least one Tensor to vmap over",
    ),
    "no inputs": (
        lambda F, lib, x: F.vmap(lambda: 1)(),
        ValueError,
        "got no inputs",
    ),
    "a number mapped": (
        lambda F, lib, x: F.vmap(lambda a: a)(3.0),
        ValueError,
        "We cannot vmap over non-Tensor arguments",
    ),
    "a number returned": (
        lambda F, lib, x: F.vmap(lambda a: 3.0)(x),
        ValueError,
        "must only return Tensors, got type <class 'float'>",
    ),
    "out_dims out of range": (
        lambda F, lib, x: F.vmap(lambda a: a * 2, out_dims=2)(x),
        IndexError,
        r"Dimension out of range \(expected to be in range of \[-2, 1\], but got 2\)",
    ),
    "a batched output with out_dims None": (
        lambda F, lib, x: F.vmap(lambda a: a * 2, out_dims=None)(x),
        ValueError,
        "can not return a BatchedTensor when out_dim is None",
    ),
    "out_dims too long": (
        lambda F, lib, x: F.vmap(lambda a: (a, a), out_dims=(0, 0, 0))(x),
        ValueError,
        "out_dims is not compatible with the structure of `outputs`",
    ),
}


@pytest.mark.parametrize("case", sorted(BAD_VMAPS))
@pytest.mark.parametrize("lib", [ng, torch], ids=["naivegraph", "torch"])
def test_vmap_refuses_bad_arguments_with_torchs_words(case, lib):
    build, error, phrase = BAD_VMAPS[case]
    x = lib.tensor(X)
    with pytest.raises(error, match=phrase):
        build(lib.func, lib, x)


def linear(lib):
    model = lib.nn.Linear(2, 1).to(lib.float64)
    with lib.no_grad():
        model.weight.copy_(lib.tensor([[0.5, -1.0]], dtype=lib.float64))
        model.bias.fill_(0.25)
    return model


CALLS = {
    "one parameter replaced": lambda lib, m, x: lib.func.functional_call(
        m, {"weight": lib.ones(1, 2, dtype=lib.float64)}, (x,)
    ),
    "a single argument not in a tuple": lambda lib, m, x: lib.func.functional_call(
        m, {"bias": lib.zeros(1, dtype=lib.float64)}, x
    ),
    "two dicts": lambda lib, m, x: lib.func.functional_call(
        m, ({"weight": m.weight * 2}, {"bias": m.bias * 0}), (x,)
    ),
    "an unexpected name set for the call": lambda lib, m, x: lib.func.functional_call(
        m, {"weight": m.weight * 3, "extra": x}, (x,)
    ),
}


@pytest.mark.parametrize("case", sorted(CALLS))
def test_functional_call_gives_torchs_result_and_leaves_the_module_alone(case):
    results = []
    for lib in (ng, torch):
        m = linear(lib)
        x = lib.tensor([1.0, 3.0], dtype=lib.float64)
        results.append(CALLS[case](lib, m, x))
        assert m.weight.tolist() == [[0.5, -1.0]] and m.bias.tolist() == [0.25]
        assert not hasattr(m, "extra")
        assert isinstance(m.weight, lib.nn.Parameter)
    close(*results)


def test_grad_through_functional_call_is_the_gradient_of_the_parameters():
    results = []
    for lib in (ng, torch):
        m, x = linear(lib), lib.tensor([[1.0, 3.0], [2.0, -1.0]], dtype=lib.float64)
        params = {k: v.detach() for k, v in m.named_parameters()}

        def loss(p, lib=lib, m=m, x=x):
            return lib.func.functional_call(m, p, (x,)).pow(2).sum()

        found = lib.func.grad(loss)(params)
        results.append([found["weight"], found["bias"]])
    close(*results)


@pytest.mark.parametrize("lib", [ng, torch], ids=["naivegraph", "torch"])
def test_functional_call_refuses_what_torch_refuses(lib):
    m = linear(lib)
    x = lib.ones(2, dtype=lib.float64)
    with pytest.raises(RuntimeError, match="Missing key\\(s\\): 'bias'"):
        lib.func.functional_call(m, {"weight": m.weight}, (x,), strict=True)
    with pytest.raises(ValueError, match=r"\['weight'\] appeared in multiple dictionaries"):
        lib.func.functional_call(m, ({"weight": m.weight}, {"weight": m.weight}), (x,))


def test_functional_call_replaces_a_tied_parameter_under_both_names():
    results = []
    for lib in (ng, torch):
        shared = lib.nn.Linear(2, 2, bias=False).to(lib.float64)
        net = lib.nn.Sequential(shared, shared)
        x = lib.tensor([1.0, 2.0], dtype=lib.float64)
        new = lib.tensor([[1.0, 2.0], [3.0, 4.0]], dtype=lib.float64)
        results.append(lib.func.functional_call(net, {"0.weight": new}, (x,)))
    close(*results)


def test_materialize_grads_gives_zeros_for_unused_inputs_as_torch():
    for create_graph in (False, True):
        found = []
        for lib in (ng, torch):
            a = lib.tensor([1.0, 2.0], dtype=lib.float64, requires_grad=True)
            unused = lib.ones(2, dtype=lib.float64, requires_grad=True)
            found.append(
                lib.autograd.grad(
                    (a * 2).sum(), [a, unused], materialize_grads=True, create_graph=create_graph
                )
            )
        close(found[0], found[1])
        assert [g.requires_grad for g in found[0]] == [g.requires_grad for g in found[1]]


@pytest.mark.parametrize("lib", [ng, torch], ids=["naivegraph", "torch"])
def test_materialize_grads_refuses_allow_unused_false(lib):
    a = lib.tensor([1.0], requires_grad=True)
    with pytest.raises(ValueError, match="Expected allow_unused to be True or not passed"):
        lib.autograd.grad(a.sum(), [a], materialize_grads=True, allow_unused=False)


@pytest.mark.parametrize("requires_grad", [False, True])
def test_jvp_with_create_graph_of_a_squeeze_records_torchs_squeeze_node(requires_grad):
    names = []
    for lib in (ng, torch):
        x = lib.tensor([[1.0, 2.0]], requires_grad=requires_grad)
        _, tangent = lib.autograd.functional.jvp(
            lambda x: (x * x).squeeze(0), x, lib.ones(1, 2), create_graph=True
        )
        names.append(type(tangent.grad_fn).__name__)
    assert names[0] == names[1] == "SqueezeBackward1"


def test_double_backward_of_squeeze_and_unsqueeze_records_torchs_nodes():
    names = []
    for lib in (ng, torch):
        x = lib.tensor([[1.0, 2.0]], requires_grad=True)
        for build in (lambda x: x.squeeze(0), lambda x: x.unsqueeze(-1), lambda x: x.squeeze()):
            seed = lib.ones(build(x).shape, requires_grad=True)
            (g,) = lib.autograd.grad(build(x), x, seed, create_graph=True)
            names.append(type(g.grad_fn).__name__)
    assert names[:3] == names[3:]


def test_stack_module_state_stacks_parameters_as_new_leaves_for_an_ensemble():
    results = []
    for lib in (ng, torch):
        models = [linear(lib) for _ in range(3)]
        with lib.no_grad():
            for k, m in enumerate(models):
                m.weight.mul_(k + 1)
        params, buffers = lib.func.stack_module_state(models)
        assert buffers == {} and list(params) == ["weight", "bias"]
        assert all(p.is_leaf and p.requires_grad for p in params.values())
        x = lib.tensor([[1.0, 3.0], [2.0, -1.0]], dtype=lib.float64)
        results.append(
            lib.func.vmap(
                lambda p, b, x, m=models[0], lib=lib: lib.func.functional_call(m, (p, b), (x,)),
                in_dims=(0, 0, None),
            )(params, buffers, x)
        )
    close(*results)


@pytest.mark.parametrize("lib", [ng, torch], ids=["naivegraph", "torch"])
def test_stack_module_state_refuses_unlike_models_with_torchs_words(lib):
    with pytest.raises(RuntimeError, match="Expected at least one model, got 0"):
        lib.func.stack_module_state([])
    with pytest.raises(RuntimeError, match="Expected all models to be of the same class"):
        lib.func.stack_module_state([lib.nn.Linear(2, 2), lib.nn.Sequential()])
    with pytest.raises(RuntimeError, match="same training/eval mode"):
        lib.func.stack_module_state([lib.nn.Linear(2, 2), lib.nn.Linear(2, 2).eval()])
