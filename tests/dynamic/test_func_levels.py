"""Each ``ng.func`` transform differentiates its own argument only (torch.func's levels),
whatever else requires grad; nested outputs and arguments; checked against torch.func."""

import numpy as np
import pytest

import naivegraph as ng

torch = pytest.importorskip("torch")
pytestmark = pytest.mark.filterwarnings(
    "ignore:`torch.jit.script` is deprecated:DeprecationWarning"
)


def both(values, requires_grad=False):
    """The same float64 tensor in naivegraph and torch."""
    a = ng.tensor(values, dtype=ng.float64, requires_grad=requires_grad)
    b = torch.tensor(values, dtype=torch.float64, requires_grad=requires_grad)
    return a, b


def same(mine, theirs):
    """Equal nesting, shapes and values (exact: these are sums of a few products)."""
    if isinstance(theirs, (tuple, list)):
        assert type(mine) is type(theirs) and len(mine) == len(theirs)
        for m, t in zip(mine, theirs):
            same(m, t)
    elif isinstance(theirs, dict):
        assert list(mine) == list(theirs)
        for k in theirs:
            same(mine[k], theirs[k])
    else:
        assert tuple(mine.shape) == tuple(theirs.shape)
        np.testing.assert_array_equal(mine.detach().numpy(), theirs.detach().numpy())


def run(lib, x, build):
    return build(lib.func, x)


CONFUSIONS = {
    "grad of a closure over its own argument": lambda F, x: F.grad(lambda y: (x * y).sum())(x),
    "nested grad with the outer input captured": lambda F, x: F.grad(
        lambda x: F.grad(lambda y: (x * y).sum())(x).sum()
    )(x.detach()),
    "vjp of a closure": lambda F, x: F.vjp(lambda y: x * y, x)[1](x.detach() * 0 + 1),
    "jacrev of a closure": lambda F, x: F.jacrev(lambda y: x * y)(x),
    "jacfwd of a closure": lambda F, x: F.jacfwd(lambda y: x * y)(x),
    "hessian of a closure": lambda F, x: F.hessian(lambda y: (x * y * y).sum())(x),
    "grad of x times the grad of x plus y": lambda F, x: F.grad(
        lambda x: (x * F.grad(lambda y: (x + y).sum())(x)).sum()
    )(x.detach()),
    "jacfwd over jvp of a closure": lambda F, x: F.jacfwd(
        lambda x: F.jvp(lambda y: x * y, (x,), (x.detach() * 0 + 1,))[1]
    )(x.detach()),
}


@pytest.mark.parametrize("case", sorted(CONFUSIONS))
def test_a_transform_treats_a_captured_tensor_requiring_grad_as_a_constant(case):
    mine, theirs = both([1.0, 2.0, 3.0], requires_grad=True)
    same(CONFUSIONS[case](ng.func, mine), CONFUSIONS[case](torch.func, theirs))


def test_grad_of_a_closure_over_its_own_argument_gives_x_not_twice_x():
    x = ng.tensor([1.0, 2.0, 3.0], dtype=ng.float64, requires_grad=True)
    assert ng.func.grad(lambda y: (x * y).sum())(x).tolist() == [1.0, 2.0, 3.0]
    outer = ng.func.grad(lambda x: ng.func.grad(lambda y: (x * y).sum())(x).sum())
    assert outer(ng.tensor([1.0, 2.0], dtype=ng.float64)).tolist() == [1.0, 1.0]


def test_a_result_that_depends_on_a_captured_tensor_keeps_its_graph_as_in_torch():
    mine, theirs = both([1.0, 2.0, 3.0], requires_grad=True)
    plain_ng, plain_t = both([4.0, 5.0, 6.0])
    g_ng = ng.func.grad(lambda y: (mine * y * y).sum())(plain_ng)
    g_t = torch.func.grad(lambda y: (theirs * y * y).sum())(plain_t)
    assert g_ng.requires_grad and g_t.requires_grad
    g_ng.sum().backward()
    g_t.sum().backward()
    same(mine.grad, theirs.grad)  # d/dx sum(2 x y) = 2 y
    # and one that depends only on the transform's input is a plain tensor
    assert ng.func.grad(lambda y: (plain_ng * y).sum())(mine).grad_fn is None
    assert torch.func.grad(lambda y: (plain_t * y).sum())(theirs).grad_fn is None


def test_transforms_differentiate_even_under_no_grad():
    mine, theirs = both([1.0, 2.0])
    with ng.no_grad():
        got = ng.func.grad(lambda y: (y**3).sum())(mine)
    with torch.no_grad():
        want = torch.func.grad(lambda y: (y**3).sum())(theirs)
    same(got, want)


TUPLE_OUTPUTS = {
    "jacrev": lambda F, x: F.jacrev(lambda y: (y * 2, y.sum(), {"sq": y * y}))(x),
    "jacfwd": lambda F, x: F.jacfwd(lambda y: (y * 2, y.sum(), {"sq": y * y}))(x),
    "vjp": lambda F, x: F.vjp(lambda y: (y * 2, [y.sum()]), x)[1]((x * 0 + 1, [x.sum() * 0 + 3])),
    "jvp": lambda F, x: F.jvp(lambda y: (y * 2, {"s": y.sum()}), (x,), (x * 0 + 1,)),
    "jacrev of two arguments": lambda F, x: F.jacrev(lambda a, b: (a * b, a.sum()), argnums=(0, 1))(
        x, x * 2
    ),
    "jacrev of a dict argument": lambda F, x: F.jacrev(lambda p: p["a"] * p["b"])(
        {"a": x, "b": x + 1}
    ),
    "grad of a list argument": lambda F, x: F.grad(lambda p: (p[0] * p[1]).sum())([x, x * 3]),
    "jacfwd of two arguments": lambda F, x: F.jacfwd(lambda a, b: (a * b).sum(), argnums=(0, 1))(
        x, x * 2
    ),
}


@pytest.mark.parametrize("case", sorted(TUPLE_OUTPUTS))
def test_nested_outputs_and_arguments_give_torchs_nested_jacobians(case):
    mine, theirs = both([1.0, 2.0, 3.0])
    same(TUPLE_OUTPUTS[case](ng.func, mine), TUPLE_OUTPUTS[case](torch.func, theirs))


def test_hessian_with_two_argnums_gives_the_four_blocks():
    def f(lib):
        return lambda a, b: (a * a * b + lib.sin(a) * b).sum()

    a_ng, a_t = both([0.5, 1.0, 2.0])
    b_ng, b_t = both([1.0, -1.0, 3.0])
    got = ng.func.hessian(f(ng), argnums=(0, 1))(a_ng, b_ng)
    want = torch.func.hessian(f(torch), argnums=(0, 1))(a_t, b_t)
    for i in range(2):
        for j in range(2):
            np.testing.assert_allclose(got[i][j].numpy(), want[i][j].numpy(), rtol=1e-14)


def test_jacrev_and_jacfwd_return_aux_as_torch():
    mine, theirs = both([1.0, 2.0])
    for name in ("jacrev", "jacfwd"):
        got = getattr(ng.func, name)(lambda y: (y * 2, {"a": y + 1}), has_aux=True)(mine)
        want = getattr(torch.func, name)(lambda y: (y * 2, {"a": y + 1}), has_aux=True)(theirs)
        same(got, want)
        assert got[1]["a"].grad_fn is None


@pytest.mark.parametrize("lib", [ng, torch], ids=["naivegraph", "torch"])
def test_grad_refuses_a_one_element_1d_output(lib):
    x = lib.tensor([1.0, 2.0])
    with pytest.raises(RuntimeError, match="to return a scalar Tensor, got tensor with 1 dims"):
        lib.func.grad(lambda y: y.sum().reshape(1))(x)


@pytest.mark.parametrize("lib", [ng, torch], ids=["naivegraph", "torch"])
def test_bad_arguments_to_the_transforms_are_refused_with_torchs_words(lib):
    x = lib.tensor([1.0, 2.0])
    with pytest.raises(RuntimeError, match=r"Got argnum=2, but only 1 positional inputs"):
        lib.func.grad(lambda y: y.sum(), argnums=2)(x)
    with pytest.raises(RuntimeError, match="argnums must be non-empty"):
        lib.func.grad(lambda y: y.sum(), argnums=())(x)
    with pytest.raises(RuntimeError, match="to return a Tensor, got <class 'float'>"):
        lib.func.grad(lambda y: 1.0)(x)
    with pytest.raises(RuntimeError, match=r"should be a tuple: \(output, aux\)"):
        lib.func.grad(lambda y: y.sum(), has_aux=True)(x)
    with pytest.raises(ValueError, match="Thing passed to transform API must be Tensor"):
        lib.func.grad(lambda y: y * 2)(3.0)
    with pytest.raises(RuntimeError, match="floating point dtype can require gradients"):
        lib.func.grad(lambda y: y.sum())(lib.tensor([1, 2]))
    _, vjp_fn = lib.func.vjp(lambda y: (y * 2, y.sum()), x)
    with pytest.raises(RuntimeError, match="Expected pytree structure of cotangents"):
        vjp_fn(x)
    with pytest.raises(RuntimeError, match="expected f\\(\\*primals\\) to return only tensors"):
        lib.func.vjp(lambda y: 3.0, x)


@pytest.mark.parametrize("lib", [ng, torch], ids=["naivegraph", "torch"])
def test_jacfwd_runs_under_vmaps_randomness_rule_and_jacrev_does_not(lib):
    x = lib.ones(3, dtype=lib.float64)
    with pytest.raises(RuntimeError, match="called random operation while in randomness error"):
        lib.func.jacfwd(lambda y: y * lib.rand(3, dtype=lib.float64))(x)
    with pytest.raises(RuntimeError, match="called random operation while in randomness error"):
        lib.func.hessian(lambda y: (y * lib.rand(3, dtype=lib.float64)).sum())(x)
    same = lib.func.jacfwd(lambda y: y * lib.rand(3, dtype=lib.float64), randomness="same")(x)
    assert (same * (1 - lib.eye(3, dtype=lib.float64))).abs().sum().item() == 0.0
    assert lib.func.jacrev(lambda y: y * lib.rand(3, dtype=lib.float64))(x).shape == (3, 3)
    with pytest.raises(ValueError, match="`chunk_size` should be greater than 0"):
        lib.func.jacrev(lib.sin, chunk_size=0)(x)
