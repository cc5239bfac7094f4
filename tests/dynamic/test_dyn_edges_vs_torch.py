"""Gradients through the ops whose nodes leave out an edge, against torch.

``where``'s condition and ``nll_loss``'s targets get no edge in ``next_functions``, and a
vector times a matrix records three nodes (unsqueeze, mm, squeeze).  Everything that
pairs a node's edges with its gradients is run through them here: saved-tensor hooks,
tensor and node hooks, ``retain_graph``, a write into a view, forward mode and
``ng.func``'s transforms.  Each case runs once with ``lib = naivegraph`` and once with
``lib = torch`` on the same float64 values.
"""

from __future__ import annotations

import numpy as np
import pytest

import naivegraph as ng

torch = pytest.importorskip("torch")

X = np.array([[1.5, -2.0, 0.5], [3.0, -0.75, 2.5]])
CONDITION = np.array([[True, False, True], [False, True, False]])


def same_as_torch(case) -> None:
    for got, want in zip(case(ng), case(torch), strict=True):
        np.testing.assert_allclose(np.asarray(got), np.asarray(want), rtol=1e-12, atol=1e-15)


def test_saved_tensor_hooks_around_where_see_and_change_what_backward_reads():
    def case(lib):
        x = lib.tensor(X, requires_grad=True)
        y = lib.tensor(-X, requires_grad=True)
        packed = []

        def pack(t):
            packed.append(tuple(t.shape))
            return t

        def unpack(t):  # doubles the saved products; the condition must stay boolean
            return t * 2 if t.is_floating_point() else t

        with lib.autograd.graph.saved_tensors_hooks(pack, unpack):
            z = lib.where(lib.tensor(CONDITION), x * y, y)
        z.sum().backward()
        return x.grad, y.grad, np.array(packed)

    same_as_torch(case)


def test_tensor_hook_node_prehook_and_retain_graph_through_where():
    def case(lib):
        x = lib.tensor(X, requires_grad=True)
        y = lib.tensor(-X, requires_grad=True)
        z = lib.where(lib.tensor(CONDITION), x, y)
        z.retain_grad()
        z.register_hook(lambda g: g * 3)
        z.grad_fn.register_prehook(lambda grad_outputs: (grad_outputs[0] * 2,))
        (z * z).sum().backward(retain_graph=True)
        (z * z).sum().backward()
        return x.grad, y.grad, z.grad

    same_as_torch(case)


def test_a_write_into_a_view_that_feeds_where_reaches_the_base():
    def case(lib):
        x = lib.tensor(X, requires_grad=True)
        b = x * 1
        b[0].mul_(2)
        lib.where(lib.tensor(CONDITION), b, x).sum().backward()
        return (x.grad,)

    same_as_torch(case)


def test_forward_mode_through_where_cross_entropy_and_vector_times_matrix():
    def case(lib):
        fa = lib.autograd.forward_ad
        with fa.dual_level():
            x = fa.make_dual(lib.tensor(X), lib.tensor(np.ones_like(X)))
            v = fa.make_dual(
                lib.tensor([1.0, 2.0], dtype=lib.float64),
                lib.tensor([0.5, -1.0], dtype=lib.float64),
            )
            z = lib.where(lib.tensor(CONDITION), x, 2 * x)
            loss = lib.nn.functional.cross_entropy(z, lib.tensor([0, 2]))
            product = v @ lib.tensor(X)
            return fa.unpack_dual(loss).tangent, fa.unpack_dual(product).tangent

    same_as_torch(case)


def test_jacrev_jacfwd_and_hessian_through_where_matmul_and_cross_entropy():
    def case(lib):
        def f(x):
            return lib.where(x > 0, x**2, -x) @ lib.tensor(X.T)

        def loss(x):
            return lib.nn.functional.cross_entropy(x.reshape(2, 3), lib.tensor([0, 2]))

        point = lib.tensor([1.0, -2.0, 3.0], dtype=lib.float64)
        return (
            lib.func.jacrev(f)(point),
            lib.func.jacfwd(f)(point),
            lib.func.hessian(loss)(lib.tensor(X.ravel())),
        )

    same_as_torch(case)


@pytest.mark.parametrize("v_grad, m_grad", [(True, False), (False, True), (True, True)])
def test_vector_times_matrix_gives_torchs_gradients_to_whichever_side_requires_them(v_grad, m_grad):
    def case(lib):
        v = lib.tensor([1.0, -2.0], dtype=lib.float64, requires_grad=v_grad)
        m = lib.tensor(X, requires_grad=m_grad)
        out = v @ m
        out.pow(2).sum().backward()
        grads = [t.grad for t in (v, m) if t.requires_grad]
        return [out.detach(), *grads]

    same_as_torch(case)


def test_vector_times_matrix_under_no_grad_records_nothing():
    with ng.no_grad():
        out = ng.tensor([1.0, -2.0], requires_grad=True) @ ng.tensor(X)
    assert out.grad_fn is None and not out.requires_grad
    np.testing.assert_array_equal(out.numpy(), np.array([1.0, -2.0]) @ X)
