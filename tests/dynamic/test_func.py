"""``ng.func`` against ``torch.func``: grad, vjp, jvp, jacrev, jacfwd and hessian give
torch's numbers and shapes (float64, 1e-10), including nested transforms."""

import numpy as np
import pytest

import naivegraph as ng

torch = pytest.importorskip("torch")
tf = torch.func
# torch.func's first use scripts a helper with torch.jit, which torch itself deprecates:
# the oracle's warning, not naivegraph's.
pytestmark = pytest.mark.filterwarnings(
    "ignore:`torch.jit.script` is deprecated:DeprecationWarning"
)

FUNCTIONS = {
    "sin-exp": lambda lib, x: (lib.sin(x) * lib.exp(x / 3)).sum(),
    "cubic": lambda lib, x: (x**3 - 2 * x).sum(),
    "softmax-dot": lambda lib, x: (lib.softmax(x, dim=0) * x).sum(),
}
VECTOR_FUNCTIONS = {
    "elementwise": lambda lib, x: lib.tanh(x) * x,
    "matrix": lambda lib, x: lib.sin(x[:2]).unsqueeze(1) * x.unsqueeze(0),  # (2, n)
}
X = np.array([0.3, -1.2, 2.0])


def pair(fn):
    return (lambda x: fn(ng, x)), (lambda x: fn(torch, x))


def tensors():
    return ng.tensor(X), torch.tensor(X, dtype=torch.float64)


def close(a, b):
    np.testing.assert_allclose(a.numpy(), b.detach().numpy(), rtol=1e-10, atol=1e-12)
    assert tuple(a.shape) == tuple(b.shape)


@pytest.mark.parametrize("name", sorted(FUNCTIONS))
def test_grad_and_hessian_match_torch_func(name):
    mine, theirs = pair(FUNCTIONS[name])
    x_ng, x_torch = tensors()
    close(ng.func.grad(mine)(x_ng), tf.grad(theirs)(x_torch))
    close(ng.func.hessian(mine)(x_ng), tf.hessian(theirs)(x_torch))
    assert ng.func.grad(mine)(x_ng).grad_fn is None  # outermost results are plain tensors


@pytest.mark.parametrize("name", sorted(VECTOR_FUNCTIONS))
def test_jacrev_and_jacfwd_match_torch_func(name):
    mine, theirs = pair(VECTOR_FUNCTIONS[name])
    x_ng, x_torch = tensors()
    want = tf.jacrev(theirs)(x_torch)
    close(ng.func.jacrev(mine)(x_ng), want)
    close(ng.func.jacfwd(mine)(x_ng), tf.jacfwd(theirs)(x_torch))


@pytest.mark.parametrize("name", sorted(VECTOR_FUNCTIONS))
def test_jvp_and_vjp_match_torch_func(name):
    mine, theirs = pair(VECTOR_FUNCTIONS[name])
    x_ng, x_torch = tensors()
    t = np.array([1.0, -0.5, 2.0])
    out, tangent = ng.func.jvp(mine, (x_ng,), (ng.tensor(t),))
    want_out, want_tangent = tf.jvp(theirs, (x_torch,), (torch.tensor(t, dtype=torch.float64),))
    close(out, want_out)
    close(tangent, want_tangent)
    out, vjp_fn = ng.func.vjp(mine, x_ng)
    want_out, want_fn = tf.vjp(theirs, x_torch)
    cotangent = np.linspace(-1, 1, out.numel()).reshape(tuple(out.shape))
    (got,) = vjp_fn(ng.tensor(cotangent))
    (want,) = want_fn(torch.tensor(cotangent, dtype=torch.float64))
    close(got, want)


def test_grad_with_argnums_tuple_and_aux_matches_torch_func():
    def f(lib, x, w):
        y = (lib.tanh(x * w)).sum()
        return y, y * 2

    x_ng, x_torch = tensors()
    w = np.array([0.5, 1.5, -1.0])
    got, aux = ng.func.grad(lambda a, b: f(ng, a, b), argnums=(0, 1), has_aux=True)(
        x_ng, ng.tensor(w)
    )
    want, want_aux = tf.grad(lambda a, b: f(torch, a, b), argnums=(0, 1), has_aux=True)(
        x_torch, torch.tensor(w, dtype=torch.float64)
    )
    close(got[0], want[0])
    close(got[1], want[1])
    close(aux, want_aux)


def test_a_function_that_ignores_its_input_has_zero_derivatives():
    x_ng, x_torch = tensors()
    close(ng.func.grad(lambda x: ng.tensor(2.0))(x_ng), torch.zeros(3, dtype=torch.float64))
    close(ng.func.jacfwd(lambda x: x * 0 + 1)(x_ng), tf.jacfwd(lambda x: x * 0 + 1)(x_torch))


def test_grad_of_a_non_scalar_function_is_refused_with_torchs_words():
    with pytest.raises(RuntimeError, match="Expected f\\(\\*args\\) to return a scalar Tensor"):
        ng.func.grad(lambda x: x * 2)(ng.tensor(X))


def test_jvp_needs_tuples_of_matching_shapes_with_torchs_words():
    for lib in (ng, torch):
        x = lib.tensor(X)
        with pytest.raises(RuntimeError, match="Expected primals to be a tuple"):
            lib.func.jvp(lambda x: x, x, x)
        with pytest.raises(RuntimeError, match="different size than that of the original"):
            lib.func.jvp(lambda x: x, (x,), (lib.tensor([1.0]),))
