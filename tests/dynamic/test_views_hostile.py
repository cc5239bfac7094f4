"""Hostile programs against views, in-place writes, ``.data`` and anomaly mode.

Each program runs on torch (float64 default) and on naivegraph; values, gradients,
``grad_fn`` names, versions and the raised error (type and the first words of torch's
message) must agree.  Programs that naivegraph gets wrong today are ``xfail(strict=True)``
with a one-line reason, so the suite stays green until the fix lands.
"""

import gc
import re
import warnings

import numpy as np
import pytest
from default_dtype import float64_default

import naivegraph as ng

torch = pytest.importorskip("torch")

# torch runs with its default set to float64 below: naivegraph too, so that
# Python floats mean float64 in both
pytestmark = pytest.mark.usefixtures(float64_default.__name__)


class Raised(tuple):
    """(type name, message) of an exception a program raised."""


def run(program, M):
    try:
        return program(M)
    except (RuntimeError, ValueError, TypeError, IndexError) as error:
        return Raised((type(error).__name__, str(error)))


def as_plain(value):
    if isinstance(value, Raised):
        return value
    if isinstance(value, (list, tuple)):
        return type(value)(as_plain(v) for v in value)
    if isinstance(value, dict):
        return {k: as_plain(v) for k, v in value.items()}
    if hasattr(value, "detach") and hasattr(value, "numpy"):
        data = value.detach().numpy()
        return np.asarray(data, dtype=np.float64 if data.dtype.kind in "fc" else data.dtype)
    return value


def key_phrase(message: str) -> str:
    """The first words of an error message, before torch names a tensor its own way."""
    return re.split(r"[.\[:]", message)[0][:60].strip().lower()


def assert_equal(got, want, where="result"):
    if isinstance(want, Raised):
        assert isinstance(got, Raised), f"{where}: torch raised {want}, naivegraph gave {got!r}"
        assert got[0] == want[0], f"{where}: error types differ: {got} vs torch {want}"
        assert key_phrase(want[1]) in got[1].lower(), (
            f"{where}: torch says {want[1]!r}, naivegraph says {got[1]!r}"
        )
    elif isinstance(got, Raised):
        raise AssertionError(f"{where}: naivegraph raised {got}, torch gave {want!r}")
    elif isinstance(want, (list, tuple)):
        assert isinstance(got, (list, tuple)) and len(got) == len(want), (where, got, want)
        for i, (g, w) in enumerate(zip(got, want)):
            assert_equal(g, w, f"{where}[{i}]")
    elif isinstance(want, dict):
        assert isinstance(got, dict) and set(got) == set(want), (where, got, want)
        for k in want:
            assert_equal(got[k], want[k], f"{where}[{k!r}]")
    elif isinstance(want, np.ndarray):
        assert isinstance(got, np.ndarray), (where, got, want)
        assert got.shape == want.shape, (where, got, want)
        assert got.dtype.kind == want.dtype.kind, (where, got.dtype, want.dtype)
        np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-14, err_msg=where)
    else:
        assert got == want, (where, got, want)


def same_as_torch(program):
    torch.set_default_dtype(torch.float64)
    try:
        want = as_plain(run(program, torch))
    finally:
        torch.set_default_dtype(torch.float32)
    got = as_plain(run(program, ng))
    assert_equal(got, want)
    return got


def leaf(M, values):
    return M.tensor(values, requires_grad=True)


def name(t):
    return None if t.grad_fn is None else type(t.grad_fn).__name__


# -- chains of views, siblings, repeated writes ------------------------------------------
def test_write_through_a_view_of_a_view_of_a_view():
    def program(M):
        x = leaf(M, [[1.0, 2.0, 3.0], [4.0, 5.0, 6.0], [7.0, 8.0, 9.0]])
        a = x * 1
        v = a[1:][:, 1:][0]
        v.mul_(M.tensor([3.0, 4.0]))
        (a * a).sum().backward()
        return a, v, x.grad, name(a), name(v)

    same_as_torch(program)


def test_view_of_view_written_then_read_through_a_sibling_of_another_depth():
    def program(M):
        x = leaf(M, [1.0, 2.0, 3.0, 4.0, 5.0, 6.0])
        a = x * 1
        deep = a.view(2, 3)[:, 1:].t()  # shape (2, 2)
        sib = a[2:5]
        deep[1].mul_(10.0)  # writes a[2] and a[5]
        (sib * sib).sum().backward()
        return a, sib, deep, x.grad, name(sib), name(deep)

    same_as_torch(program)


def test_write_base_then_take_a_view_then_write_the_view():
    def program(M):
        x = leaf(M, [1.0, 2.0, 3.0])
        a = x * 1
        a.mul_(2)
        v = a[1:]
        a.add_(1)
        v.exp_()
        (a * a).sum().backward()
        return a, v, x.grad, name(a), name(v)

    same_as_torch(program)


def test_two_writes_through_two_siblings_with_grad_operands():
    def program(M):
        x = leaf(M, [1.0, 2.0, 3.0, 4.0])
        w = leaf(M, [2.0, 3.0])
        a = x * 1
        u, v = a[0:2], a[2:4]
        u.mul_(w)
        v.add_(u)  # the operand is a sibling view, already rewritten
        (a**2).sum().backward()
        return a, x.grad, w.grad

    same_as_torch(program)


def test_setitem_of_a_view_with_a_sibling_value_is_torchs():
    def program(M):
        x = leaf(M, [1.0, 2.0, 3.0, 4.0])
        a = x * 1
        a[0:2] = a[2:4] * 3
        (a * a).sum().backward()
        return a, x.grad

    same_as_torch(program)


def test_write_into_a_tranposed_tensor_through_setitem():
    def program(M):
        x = leaf(M, [[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]])
        y = leaf(M, [10.0, 20.0, 30.0])
        a = (x * 1).t()
        a[0] = y
        a[1, 2] = y[0] * 2
        (a * M.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])).sum().backward()
        return a, x.grad, y.grad, name(a)

    same_as_torch(program)


# -- overlap between operand and written view --------------------------------------------
def test_add_of_an_overlapping_view_of_the_same_base_is_refused():
    def program(M):
        a = M.tensor([1.0, 2.0, 3.0, 4.0])
        a[1:].add_(a[:-1])
        return a

    same_as_torch(program)


def test_copy_from_a_transposed_alias_is_refused():
    def program(M):
        a = M.tensor([[1.0, 2.0], [3.0, 4.0]])
        a.copy_(a.t())
        return a

    same_as_torch(program)


def test_mul_by_a_0d_view_of_itself_is_refused():
    def program(M):
        a = M.tensor([1.0, 2.0, 3.0])
        a.mul_(a[0])
        return a

    same_as_torch(program)


def _square(M):
    return M.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0], [7.0, 8.0, 9.0]])


def _written(write):
    def program(M):
        a = _square(M)
        write(M, a)
        return a

    return program


# operands that overlap the written-to tensor only in part: refused, as torch
@pytest.mark.parametrize(
    "write",
    [
        lambda M, a: a.__setitem__((slice(1, None),), a[:-1]),  # a[1:] = a[:-1]
        lambda M, a: a.add_(a.t()),
        lambda M, a: a.div_(a[2]),
        lambda M, a: a.pow_(a[0, 0]),
        lambda M, a: a.clamp_(min=a[1, 1]),
        lambda M, a: a.__iadd__(a[0]),
        lambda M, a: a.index_add_(0, M.tensor([0, 1]), a[1:]),
        lambda M, a: a[1:].sub_(a[:2]),
        lambda M, a: a.view(9)[1:].copy_(a.view(9)[:-1]),
    ],
)
def test_an_operand_partly_overlapping_the_written_tensor_is_refused(write):
    got = same_as_torch(_written(write))
    assert isinstance(got, Raised) and "clone() the tensor" in got[1]


# the very same elements, elements apart, an empty slice, fill_ and index_put: allowed
@pytest.mark.parametrize(
    "write",
    [
        lambda M, a: a.add_(a),
        lambda M, a: a.add_(a[:]),
        lambda M, a: a.mul_(a.view(9).view(3, 3)),
        lambda M, a: a[:1].add_(a[1:2]),
        lambda M, a: a[1:].sub_(a[0]),  # a row into the other rows: apart
        lambda M, a: a[:0].add_(a[:0]),
        lambda M, a: a.fill_(a[0, 0]),
        lambda M, a: a.__setitem__(a > 4, a[0, 0]),
        lambda M, a: a.t().copy_(a.t()),
    ],
)
def test_an_operand_apart_from_or_equal_to_the_written_tensor_is_allowed(write):
    same_as_torch(_written(write))


@pytest.mark.xfail(
    strict=True,
    reason="torch lets a strided column or an expanded row overlap the written tensor (too "
    "hard to tell) and its loop then reads elements it already wrote; numpy reads them all "
    "first",
)
@pytest.mark.parametrize(
    "write", [lambda M, a: a.mul_(a[:, :1]), lambda M, a: a.add_(a[0].expand(3, 3))]
)
def test_an_overlapping_operand_torch_cannot_tell_reads_the_elements_already_written(write):
    same_as_torch(_written(write))


def test_add_of_the_tensor_itself_is_allowed():
    def program(M):
        x = leaf(M, [1.0, 2.0])
        a = x * 1
        a.add_(a)
        a.sum().backward()
        return a, x.grad

    same_as_torch(program)


def test_write_into_a_row_of_an_expanded_view_reaches_the_base():
    def program(M):
        x = leaf(M, [1.0, 2.0])
        a = x * 1
        e = a.unsqueeze(0).expand(3, 2)
        e[1].mul_(5.0)
        (a * M.tensor([1.0, 10.0])).sum().backward()
        return a, e, x.grad

    same_as_torch(program)


def test_fill_of_an_expanded_view_with_grad_then_backward():
    def program(M):
        x = leaf(M, [[1.0], [2.0]])
        a = x * 1
        a.expand(2, 3).fill_(7.0)
        a.sum().backward()
        return a, x.grad

    same_as_torch(program)


# -- repeated backward, create_graph --------------------------------------------------------
def test_double_backward_through_copyslices_of_a_view_of_a_view():
    def program(M):
        x = leaf(M, [1.0, 2.0, 3.0, 4.0])
        a = x * 1
        a.view(2, 2)[1][1:].mul_(x[0])
        y = (a**3).sum()
        (g,) = M.autograd.grad(y, x, create_graph=True)
        (g2,) = M.autograd.grad((g * M.tensor([1.0, 2.0, 3.0, 4.0])).sum(), x)
        return g, g2

    same_as_torch(program)


def test_second_backward_after_a_write_to_a_saved_base_is_refused():
    def program(M):
        x = leaf(M, [1.0, 2.0])
        a = x * 1
        y = (a * a).sum()
        y.backward(retain_graph=True)
        a[0].mul_(2)
        y.backward()
        return x.grad

    same_as_torch(program)


def test_second_backward_after_a_write_to_an_unsaved_base_is_fine():
    def program(M):
        x = leaf(M, [1.0, 2.0])
        a = x * 1
        y = (a * 3).sum()
        y.backward(retain_graph=True)
        a[0].mul_(2)
        y.backward(retain_graph=True)
        first = x.grad.clone()
        a.sum().backward()
        return first, x.grad, a._version

    same_as_torch(program)


def test_retained_copyslices_graph_backward_twice_with_views_in_between():
    def program(M):
        x = leaf(M, [1.0, 2.0, 3.0])
        a = x * 2
        v = a[1:]
        v.mul_(v.detach() + 1)
        y = (a * M.tensor([1.0, 2.0, 3.0])).sum()
        y.backward(retain_graph=True)
        w = a[:2]  # a new view of the rewritten base
        y.backward()
        return x.grad, name(w), name(v)

    same_as_torch(program)


# -- hooks, retain_grad, inputs= ----------------------------------------------------------
def test_hook_on_a_view_before_the_base_is_rewritten():
    def program(M):
        x = leaf(M, [1.0, 2.0, 3.0])
        a = x * 1
        v = a[0:2]
        seen = []
        v.register_hook(lambda g: seen.append(g.clone()))
        a.mul_(2)
        (v * v).sum().backward()
        return x.grad, [s for s in seen], name(v)

    same_as_torch(program)


def test_hook_on_a_view_after_the_base_is_rewritten():
    # torch 2.13 answers x.grad [80, 160, 0], hook saw [4, 8] when run alone; inside
    # this test process its register_hook on the rebased view crashes the interpreter,
    # so its answer is written down rather than asked for.
    x = ng.tensor([1.0, 2.0, 3.0], requires_grad=True)
    a = x * 1
    v = a[0:2]
    a.mul_(2)
    seen = []
    v.register_hook(lambda g: seen.append(g.clone()) or g * 10)
    (v * v).sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), [80.0, 160.0, 0.0])
    assert len(seen) == 1
    np.testing.assert_array_equal(seen[0].numpy(), [4.0, 8.0])


def test_retain_grad_on_a_view_before_the_base_is_rewritten():
    def program(M):
        x = leaf(M, [1.0, 2.0, 3.0])
        a = x * 1
        v = a[1:]
        v.retain_grad()
        a.mul_(3)
        (v * v).sum().backward()
        return x.grad, v.grad

    same_as_torch(program)


def test_retain_grad_on_a_base_then_write_through_a_view():
    def program(M):
        x = leaf(M, [1.0, 2.0, 3.0])
        a = x * 1
        a.retain_grad()
        a[0:2].mul_(3)
        (a * a).sum().backward()
        return x.grad, a.grad, a.retains_grad

    same_as_torch(program)


def test_retain_grad_on_a_view_then_write_through_that_view():
    def program(M):
        x = leaf(M, [1.0, 2.0, 3.0])
        a = x * 1
        v = a[1:]
        v.retain_grad()
        v.mul_(3)
        (a * a).sum().backward()
        return x.grad, v.grad

    same_as_torch(program)


def test_autograd_grad_with_respect_to_a_rebased_view():
    def program(M):
        x = leaf(M, [1.0, 2.0, 3.0])
        a = x * 1
        v = a[0:2]
        a.mul_(2)
        (g,) = M.autograd.grad((v * v).sum(), v)
        return g

    same_as_torch(program)


def test_autograd_grad_with_respect_to_a_view_the_loss_does_not_pass_through():
    def program(M):
        x = leaf(M, [1.0, 2.0, 3.0])
        a = x * 1
        v = a[0:2]
        a.mul_(2)
        return M.autograd.grad(a.sum(), v, allow_unused=True)

    same_as_torch(program)


def test_backward_inputs_a_view_of_a_leaf():
    def program(M):
        x = leaf(M, [1.0, 2.0, 3.0])
        v = x[1:]
        (v * v).sum().backward(inputs=[v])
        return v.grad, x.grad

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        same_as_torch(program)


def test_backward_inputs_the_base_after_a_write_through_a_view():
    def program(M):
        x = leaf(M, [1.0, 2.0, 3.0])
        w = leaf(M, [5.0])
        a = x * 1
        a[0:1].mul_(w)
        (a * a).sum().backward(inputs=[w])
        return w.grad, x.grad

    same_as_torch(program)


# -- detach, no_grad, optimizer-style updates ----------------------------------------------
def test_detach_in_place_of_a_view_is_refused_and_leaves_it_unchanged():
    def program(M):
        x = leaf(M, [1.0, 2.0])
        a = x * 1
        v = a[0:1]
        try:
            v.detach_()
        except RuntimeError as error:
            return str(error).split(".")[0], name(v), v.requires_grad

    same_as_torch(program)


def test_detach_in_place_of_a_view_of_a_plain_tensor():
    def program(M):
        a = M.tensor([1.0, 2.0])
        v = a[0:1]
        v.detach_()
        v.mul_(3)
        return a, v.requires_grad

    same_as_torch(program)


def test_detached_view_written_then_backward_through_a_saved_base():
    def program(M):
        x = leaf(M, [1.0, 2.0])
        a = x * 1
        y = (a * a).sum()
        a[0:1].detach().mul_(5)
        y.backward()

    same_as_torch(program)


def test_optimizer_style_update_of_a_slice_of_a_leaf():
    def program(M):
        p = leaf(M, [1.0, 2.0, 3.0])
        (p * p).sum().backward()
        with M.no_grad():
            p[0:2] -= 0.1 * p.grad[0:2]
            p[2] -= 1.0
        after = [p.clone(), p.is_leaf, p.requires_grad, name(p), p._version]
        p.grad = None
        (p * p * p).sum().backward()
        return after, p.grad

    same_as_torch(program)


def test_view_of_a_leaf_made_in_no_grad_then_written_in_no_grad():
    def program(M):
        p = leaf(M, [1.0, 2.0, 3.0])
        with M.no_grad():
            v = p[1:]
            v.mul_(2)
        (p * p).sum().backward()
        return p, v, p.grad, p._version, v._version

    same_as_torch(program)


def test_view_of_a_leaf_made_in_no_grad_reports_requires_grad_and_refuses_grad_fn():
    def program(M):
        p = leaf(M, [1.0, 2.0, 3.0])
        with M.no_grad():
            v = p[1:]
            v.mul_(2)
        flags = (v.requires_grad, v.is_leaf)
        return flags, v.grad_fn

    same_as_torch(program)


def test_view_of_a_leaf_made_with_grad_written_in_no_grad_then_used():
    def program(M):
        p = leaf(M, [1.0, 2.0, 3.0])
        v = p[1:]
        with M.no_grad():
            v.mul_(2)
        (v * v).sum().backward()
        return p, p.grad, name(v)

    same_as_torch(program)


def test_view_made_in_no_grad_of_intermediate_then_written_in_no_grad_then_base_read():
    def program(M):
        x = leaf(M, [1.0, 2.0, 3.0])
        a = x * 1
        with M.no_grad():
            a[0:2].mul_(5)
        (a * a).sum().backward()
        return a, x.grad, name(a)

    same_as_torch(program)


def test_a_no_grad_view_of_a_leaf_requires_grad_but_passes_no_gradient_on():
    def program(M):
        p = leaf(M, [1.0, 2.0, 3.0])
        with M.no_grad():
            v = p[1:]
        out = v * 2
        edges = [fn is None for fn, _ in out.grad_fn.next_functions]
        out.sum().backward()
        return (v.requires_grad, v.is_leaf, v.grad_fn), out.requires_grad, edges, p.grad, v.grad

    assert all(same_as_torch(program)[2])


def test_a_no_grad_view_of_a_view_of_a_leaf_requires_grad_too():
    def program(M):
        p = leaf(M, [[1.0, 2.0], [3.0, 4.0]])
        with M.no_grad():
            v = p[1:].t()
        return v.requires_grad, v.is_leaf, (v * v).requires_grad

    same_as_torch(program)


def test_a_view_of_a_no_grad_view_made_with_grad_is_refused_after_the_base_is_written():
    def program(M):
        x = leaf(M, [1.0, 2.0, 3.0])
        a = x * 1
        with M.no_grad():
            v = a[1:]
        w = v[1:]
        a.mul_(2)
        return w.grad_fn

    got = same_as_torch(program)
    assert isinstance(got, Raised) and "created in no_grad mode" in got[1]


@pytest.mark.parametrize("mode", ["no_grad", "inference_mode"])
def test_a_no_grad_view_whose_base_is_written_without_grad_is_refused_when_used(mode):
    def program(M):
        x = leaf(M, [1.0, 2.0, 3.0])
        a = x * 1
        with M.no_grad():
            v = a[1:]
        with getattr(M, mode)():
            a.mul_(2)
        return v * 2

    got = same_as_torch(program)
    assert isinstance(got, Raised) and "its base or another view of its base" in got[1]


def test_a_no_grad_view_that_is_itself_written_without_grad_is_refused_when_used():
    def program(M):
        x = leaf(M, [1.0, 2.0, 3.0])
        a = x * 1
        with M.no_grad():
            v = a[1:]
            v.mul_(2)
        return a * 1, (a * 1).grad_fn is not None, v.requires_grad, v.is_leaf

    same_as_torch(program)


def test_a_no_grad_view_of_a_tensor_without_grad_may_be_written_and_read_freely():
    def program(M):
        data = M.tensor([1.0, 2.0, 3.0])
        w = leaf(M, [2.0])
        with M.no_grad():
            v = data[1:]
        data.mul_(2)
        v.add_(1)
        loss = (v * w).sum()
        loss.backward()
        return data, v, v.requires_grad, v.grad_fn, w.grad

    same_as_torch(program)


@pytest.mark.parametrize("mode", ["no_grad", "inference_mode"])
@pytest.mark.parametrize("written", ["base", "view", "sibling"])
def test_views_made_with_grad_take_as_strided_histories_after_a_write_without_grad(mode, written):
    def program(M):
        x = leaf(M, [1.0, 2.0, 3.0, 4.0])
        a = x * 1
        v = a[1:]
        w = v[::2]
        s = a[:2]
        with getattr(M, mode)():
            {"base": a, "view": v, "sibling": s}[written].mul_(3)
        (v * w.sum()).sum().backward()
        return a, v, w, x.grad, name(a), name(v), name(w), name(s)

    same_as_torch(program)


def test_a_leafs_view_takes_an_as_strided_history_after_an_optimizer_like_step():
    def program(M):
        p = leaf(M, [1.0, 2.0, 3.0])
        v = p[0]
        with M.no_grad():
            p -= 0.5
        (v * 3).backward()
        return p, p.grad, name(v), v

    same_as_torch(program)


def test_a_plain_write_without_grad_leaves_a_tensor_without_views_unchanged():
    def program(M):
        x = leaf(M, [1.0, 2.0])
        a = x * 1
        with M.no_grad():
            a.add_(1)
        (a * a).sum().backward()
        return a, x.grad, name(a), a._version

    same_as_torch(program)


@pytest.mark.parametrize("mode", ["no_grad", "inference_mode"])
def test_a_view_made_in_a_no_grad_mode_of_a_leaf_is_refused_in_place_with_grad_on(mode):
    def program(M):
        p = leaf(M, [1.0, 2.0, 3.0])
        with getattr(M, mode)():
            v = p[1:]
        v.mul_(2)
        return v

    got = same_as_torch(program)
    assert isinstance(got, Raised)


# -- .data --------------------------------------------------------------------------------
def test_data_replaced_on_a_base_with_views():
    def program(M):
        x = leaf(M, [1.0, 2.0, 3.0])
        v = x[0:2]
        x.data = M.tensor([10.0, 20.0, 30.0])
        before = v.clone()
        (v * x[1:]).sum().backward()
        return before, x.grad

    same_as_torch(program)


def test_data_replaced_on_a_base_with_views_then_written_in_no_grad():
    def program(M):
        x = leaf(M, [1.0, 2.0, 3.0])
        v = x[0:2]
        x.data = M.tensor([10.0, 20.0, 30.0])
        with M.no_grad():
            x.mul_(2)
        return x, v

    same_as_torch(program)


def test_data_of_a_view_written_reaches_the_base():
    def program(M):
        x = leaf(M, [1.0, 2.0, 3.0])
        a = x * 1
        v = a[0:2]
        v.data.mul_(10)
        a.sum().backward()
        return a, x.grad, a._version

    same_as_torch(program)


def test_data_assigned_on_a_view():
    def program(M):
        x = leaf(M, [1.0, 2.0, 3.0])
        a = x * 1
        v = a[0:2]
        v.data = M.tensor([7.0, 8.0])
        v.mul_(2)
        (a * a).sum().backward()
        return a, v, x.grad

    same_as_torch(program)


# -- dtypes, 0-d, empty ------------------------------------------------------------------
def test_integer_views_write_and_refuse_float_results():
    def program(M):
        a = M.tensor([1, 2, 3])
        v = a[1:]
        v += 5
        v[0] = 0
        try:
            v.mul_(2.5)
        except RuntimeError as error:
            return a, v, type(error).__name__, str(error).split(" ")[:2], a._version
        return a, v

    got = same_as_torch(program)
    assert got[2] == "RuntimeError"


def test_bool_views_write():
    def program(M):
        b = M.tensor([True, False, True])
        v = b[::2]
        v[0] = False
        v.fill_(True)
        b[1] = True
        return b, v

    same_as_torch(program)


def test_failed_write_leaves_data_and_version_unchanged():
    def program(M):
        a = M.tensor([1.0, 2.0, 3.0])
        v = a[0:2]
        try:
            v.add_(M.tensor([1.0, 2.0, 3.0]))
        except RuntimeError:
            pass
        return a, a._version, v._version

    same_as_torch(program)


def test_0d_views_of_a_0d_tensor():
    def program(M):
        x = leaf(M, 3.0)
        a = x * 1
        v = a[...]
        w = a.view(1)
        v.mul_(2)
        w.add_(1)
        (a * a).backward()
        return a, v, w, x.grad, name(v), name(w)

    same_as_torch(program)


def test_0d_view_of_a_vector_setitem_with_a_0d_tensor_that_needs_grad():
    def program(M):
        x = leaf(M, [1.0, 2.0])
        s = leaf(M, 4.0)
        a = x * 1
        a[1] = s * s
        a[0] += s
        (a * M.tensor([2.0, 3.0])).sum().backward()
        return a, x.grad, s.grad

    same_as_torch(program)


def test_empty_views_are_written_and_backpropagated():
    def program(M):
        x = leaf(M, [[1.0, 2.0, 3.0]])
        a = x * 1
        e = a[1:]  # (0, 3)
        e.mul_(2)
        a[:, 1:1] = 5.0
        a.sum().backward()
        return a, e, x.grad

    same_as_torch(program)


def test_empty_view_shares_the_version_counter_and_history():
    def program(M):
        x = leaf(M, [[1.0, 2.0, 3.0]])
        a = x * 1
        y = (a * a).sum()
        e = a[1:]
        e.mul_(2)
        versions = (a._version, e._version, name(a), e._base is a)
        y.backward()
        return versions

    same_as_torch(program)


def test_view_of_an_empty_transposed_tensor():
    def program(M):
        return M.zeros(0, 3).t().view(-1).shape

    same_as_torch(program)


def test_view_of_a_strided_vector_that_torch_can_describe():
    def program(M):
        a = M.arange(8.0)
        v = a[::2].view(2, 2)
        v[1, 1] = 100.0
        return a, v

    same_as_torch(program)


# -- nn parameters ----------------------------------------------------------------------
def test_slice_of_an_nn_parameter_written_with_grad_is_refused():
    def program(M):
        lin = M.nn.Linear(2, 2)
        lin.weight[0].mul_(2)

    same_as_torch(program)


def test_slice_of_an_nn_parameter_updated_in_no_grad_then_trained():
    def program(M):
        lin = M.nn.Linear(2, 2)
        start = lin.weight._version
        with M.no_grad():
            lin.weight.copy_(M.tensor([[1.0, 2.0], [3.0, 4.0]]))
            lin.bias.zero_()
            lin.weight[0] += 1.0
            lin.bias[1:] = 0.5
        out = lin(M.tensor([[1.0, -1.0]]))
        out.sum().backward()
        return out, lin.weight.grad, lin.bias.grad, lin.weight.is_leaf, lin.weight._version - start

    same_as_torch(program)


# -- anomaly mode --------------------------------------------------------------------------
def test_anomaly_mode_names_copyslices_for_nan_through_a_view_write():
    def program(M):
        x = leaf(M, [0.0, 1.0])
        t = leaf(M, [0.0])
        a = x * 1
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            with M.autograd.detect_anomaly():
                a[0:1].div_(t)
                try:
                    a[1:].sum().backward()
                except RuntimeError as error:  # torch spells 'torch::autograd::CopySlices'
                    return str(error).replace("torch::autograd::", "").split(".")[0], x.grad
        return x.grad

    got = same_as_torch(program)
    assert got[0] == "Function 'CopySlices' returned nan values in its 0th output"


def test_anomaly_mode_through_views_without_nan():
    def program(M):
        x = leaf(M, [1.0, 2.0, 3.0])
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            with M.autograd.detect_anomaly():
                a = x * 1
                v = a[1:]
                v.mul_(2)
                a.mul_(3)
                (v * v).sum().backward()
        return x.grad, name(v)

    same_as_torch(program)


# -- rendering -----------------------------------------------------------------------------
def test_render_of_a_graph_with_copyslices_and_asstrided():
    x = ng.tensor([1.0, 2.0, 3.0], requires_grad=True)
    a = x * 1
    v = a[1:]
    a[0:1].mul_(2)
    loss = a.sum() + v.sum()
    source = ng.render(loss, kind="backward").source
    assert "CopySlices" in source and "AsStridedBackward0" in source


# -- memory ------------------------------------------------------------------------------
def test_many_index_views_of_a_long_lived_tensor_do_not_accumulate():
    x = ng.zeros(1000)
    for i in range(1000):
        x[i]
    gc.collect()
    assert len(x._views or ()) == 0
    y = ng.zeros(1000, requires_grad=True)
    with ng.no_grad():
        for i in range(1000):
            y[i] += 1.0
    gc.collect()
    assert len(y._views or ()) == 0
    np.testing.assert_array_equal(y.detach().numpy(), np.ones(1000))


# -- second batch: dtype casts on writes, unbind views, more history ----------------------
def test_retain_grad_then_in_place_on_the_base_itself():
    def program(M):
        x = leaf(M, [1.0, 2.0, 3.0])
        a = x * 1
        a.retain_grad()
        a.mul_(3)
        (a * a).sum().backward()
        return x.grad, a.grad

    same_as_torch(program)


def test_setitem_of_a_float_number_into_an_integer_view_truncates():
    def program(M):
        a = M.tensor([1, 2, 3])
        a[0] = 2.7
        a[1:].fill_(-1.5)
        return a

    same_as_torch(program)


def test_copy_of_a_float_tensor_into_an_integer_view_casts():
    def program(M):
        a = M.tensor([1, 2, 3])
        a[1:].copy_(M.tensor([1.5, 2.5]))
        a[0] = M.tensor(9.9)
        return a

    same_as_torch(program)


def test_copy_of_ints_into_a_bool_view_and_bools_into_a_float_view():
    def program(M):
        b = M.tensor([True, True, False])
        b[0:2].copy_(M.tensor([0, 3]))
        f = M.zeros(3)
        f[1:] = M.tensor([True, False])
        return b, f

    same_as_torch(program)


def test_iterating_rows_gives_views_that_a_plain_tensor_may_write():
    def program(M):
        a = M.tensor([[1.0, 2.0], [3.0, 4.0]])
        for row in a:
            row.mul_(2)
        return a

    same_as_torch(program)


def test_iterating_rows_of_a_tensor_with_grad_and_writing_them_is_refused():
    def program(M):
        x = leaf(M, [[1.0, 2.0], [3.0, 4.0]])
        a = x * 1
        for row in a:
            row.mul_(2)
        a.sum().backward()
        return x.grad

    same_as_torch(program)


def test_double_backward_through_asstrided_of_a_rebased_view():
    def program(M):
        x = leaf(M, [1.0, 2.0, 3.0])
        a = x * 1
        v = a[1:]
        a.mul_(x)
        y = (v**3).sum()
        (g,) = M.autograd.grad(y, x, create_graph=True)
        (h,) = M.autograd.grad(g.sum(), x)
        return g, h, name(v)

    same_as_torch(program)


def test_index_put_and_mask_writes_into_a_view_with_grad():
    def program(M):
        x = leaf(M, [1.0, 2.0, 3.0, 4.0])
        t = leaf(M, [10.0, 20.0])
        a = x * 1
        v = a[1:]
        v[[0, 2]] = t
        a[a > 15] = 0.0
        (a * M.tensor([1.0, 2.0, 3.0, 4.0])).sum().backward()
        return a, x.grad, t.grad, name(a)

    same_as_torch(program)


def test_write_through_a_column_of_an_expanded_view_with_a_grad_value():
    def program(M):
        x = leaf(M, [1.0, 2.0])
        t = leaf(M, [7.0, 8.0])
        a = x * 1
        e = a.unsqueeze(1).expand(2, 3)
        e[:, 0] = t
        (a * a).sum().backward()
        return a, x.grad, t.grad

    same_as_torch(program)


def test_hook_on_the_base_registered_before_a_write_through_a_view():
    def program(M):
        x = leaf(M, [1.0, 2.0, 3.0])
        a = x * 1
        seen = []
        a.register_hook(lambda g: seen.append(g.clone()))
        a[1:].mul_(2)
        (a * a).sum().backward()
        return x.grad, seen

    same_as_torch(program)


def test_clamp_and_pow_writes_through_views_of_views():
    def program(M):
        x = leaf(M, [[0.5, 2.0, 3.0], [-1.0, 4.0, 0.25]])
        a = x * 1
        a.t()[1:].clamp_(min=1.0, max=3.5)
        a[:, 0::2][0].pow_(2)
        a.sum().backward()
        return a, x.grad

    same_as_torch(program)


def test_permute_squeeze_flatten_chain_written_then_read_through_base():
    def program(M):
        x = leaf(M, [[[1.0, 2.0], [3.0, 4.0]]])  # (1, 2, 2)
        a = x * 1
        v = a.squeeze(0).permute(1, 0).unsqueeze(0)[0][1]
        v.add_(M.tensor([100.0, 200.0]))
        w = a.flatten()
        (w * M.tensor([1.0, 2.0, 3.0, 4.0])).sum().backward()
        return a, w, x.grad, name(w)

    same_as_torch(program)


def test_data_replaced_on_an_intermediate_base_with_a_written_view():
    def program(M):
        x = leaf(M, [1.0, 2.0, 3.0])
        a = x * 2
        v = a[1:]
        v.mul_(3)
        a.data = M.tensor([5.0, 6.0, 7.0])
        r = (a * 1).sum()
        r.backward()
        return a, v, x.grad

    same_as_torch(program)


def test_detached_base_written_through_its_view_bumps_the_shared_version():
    def program(M):
        x = leaf(M, [1.0, 2.0])
        a = x * 1
        y = (a * a).sum()
        d = a.detach()
        d[0] = 5.0
        versions = (a._version, d._version)
        y.backward()
        return versions

    same_as_torch(program)


def test_no_grad_view_of_an_intermediate_used_after_a_write_to_its_base():
    def program(M):
        x = leaf(M, [1.0, 2.0, 3.0])
        a = x * 1
        with M.no_grad():
            v = a[1:]
        a.mul_(2)
        (v * 2).sum().backward()
        return x.grad

    same_as_torch(program)


def test_view_of_0d_as_1_element_and_back_shares_memory():
    def program(M):
        x = leaf(M, 2.0)
        a = x * 1
        v = a.view(1).view(())
        v.mul_(5)
        a.backward()
        return a, x.grad, a._version

    same_as_torch(program)


# -- third batch: leaves made from views, unused inputs, failed writes ---------------------
def test_requires_grad_on_a_view_of_a_plain_tensor_then_base_written_with_grad():
    def program(M):
        a = M.tensor([1.0, 2.0, 3.0])
        v = a[1:]
        v.requires_grad_()
        t = leaf(M, [2.0])
        a.mul_(t)
        (v * v).sum().backward()
        return a, v.grad, t.grad, v.is_leaf, name(v)

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # torch warns: .grad of a non-leaf
        same_as_torch(program)


def test_requires_grad_on_a_view_then_written_in_place_is_refused():
    def program(M):
        a = M.tensor([1.0, 2.0, 3.0])
        v = a[1:]
        v.requires_grad_()
        v.mul_(2)

    same_as_torch(program)


def test_autograd_grad_of_an_unused_view_of_a_leaf():
    def program(M):
        x = leaf(M, [1.0, 2.0, 3.0])
        v = x[1:]
        y = (x * x).sum()
        unused = M.autograd.grad(y, v, retain_graph=True, allow_unused=True)
        try:
            M.autograd.grad(y, v)
        except RuntimeError as error:  # torch 2.13 starts "The differentiated Tensor at index 0"
            return unused, "appears to not have been used in the graph" in str(error)
        return unused

    same_as_torch(program)


def test_refused_write_into_a_leaf_view_changes_nothing():
    def program(M):
        x = leaf(M, [1.0, 2.0, 3.0])
        t = leaf(M, 5.0)
        try:
            x[0] = t
        except RuntimeError:
            pass
        try:
            x[[0, 1]] = t
        except RuntimeError:
            pass
        (x * x).sum().backward()
        return x, x._version, x.grad, t.grad, name(x)

    same_as_torch(program)


def test_refused_overlapping_write_changes_nothing():
    def program(M):
        x = leaf(M, [[1.0], [2.0]])
        a = x * 1
        try:
            a.expand(2, 3).mul_(2)
        except RuntimeError:
            pass
        a.sum().backward()
        return a, a._version, x.grad, name(a)

    same_as_torch(program)


def test_zero_write_into_a_view_under_anomaly_mode_then_double_backward():
    def program(M):
        x = leaf(M, [1.0, 2.0, 3.0])
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            with M.autograd.detect_anomaly():
                a = x**2
                a[1:2].zero_()
                (g,) = M.autograd.grad((a * a).sum(), x, create_graph=True)
                (h,) = M.autograd.grad(g.sum(), x)
        return g, h

    same_as_torch(program)


def test_many_views_of_a_tensor_with_grad_do_not_grow_memory():
    import tracemalloc

    x = ng.arange(100.0).requires_grad_()

    def loop(n):
        for i in range(n):
            (x[i % 100] * 2).sum()

    loop(2000)
    gc.collect()
    tracemalloc.start()
    try:
        loop(2000)
        gc.collect()
        first = tracemalloc.get_traced_memory()[0]
        loop(20000)
        gc.collect()
        second = tracemalloc.get_traced_memory()[0]
    finally:
        tracemalloc.stop()
    assert second - first < 200_000, (first, second)
    assert len(x._views or ()) == 0


# -- fourth batch: gradients with respect to rewritten tensors ------------------------------
def test_hooks_on_the_written_view_before_and_after_the_write():
    def program(M):
        x = leaf(M, [1.0, 2.0, 3.0])
        a = x * 1
        v = a[1:]
        seen = []
        v.register_hook(lambda g: seen.append(("before", g.clone())))
        v.mul_(M.tensor([2.0, 3.0]))
        v.register_hook(lambda g: seen.append(("after", g.clone())))
        (a * a).sum().backward()
        return x.grad, seen

    same_as_torch(program)


def test_autograd_grad_with_respect_to_a_base_rewritten_through_a_view():
    def program(M):
        x = leaf(M, [1.0, 2.0, 3.0])
        a = x * 1
        v = a[1:]
        v.mul_(3)
        (ga,) = M.autograd.grad((a * a).sum(), a, retain_graph=True)
        (gv,) = M.autograd.grad((v * v).sum() + a.sum(), v)
        return ga, gv

    same_as_torch(program)


def test_backward_inputs_a_base_rewritten_through_a_view():
    def program(M):
        x = leaf(M, [1.0, 2.0, 3.0])
        a = x * 1
        a[0:2].mul_(3)
        (a * a).sum().backward(inputs=[a])
        return a.grad, x.grad

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        same_as_torch(program)


def test_write_through_a_view_after_data_replaced_on_its_base():
    def program(M):
        x = leaf(M, [1.0, 2.0, 3.0])
        a = x * 2
        v = a[1:]
        a.data = M.tensor([10.0, 20.0, 30.0])
        v.mul_(3)
        (a * a).sum().backward()
        return a, v, x.grad, name(a)

    same_as_torch(program)


def test_write_into_a_view_of_a_view_taken_after_the_base_was_rewritten():
    def program(M):
        x = leaf(M, [1.0, 2.0, 3.0, 4.0])
        a = x * 1
        v1 = a[1:]
        a.mul_(2)
        v2 = v1[1:]
        v2.add_(x[:2])
        (v1 * v1).sum().backward()
        return a, v1, v2, x.grad, name(v1), name(v2)

    same_as_torch(program)


def test_sgd_step_on_a_parameter_with_a_live_view():
    def program(M):
        p = leaf(M, [1.0, 2.0, 3.0])
        v = p[0:2]
        opt = M.optim.SGD([p], lr=0.5)
        (p * p).sum().backward()
        opt.step()
        opt.zero_grad()
        (v * v).sum().backward()
        return p, v, p.grad

    same_as_torch(program)


def test_anomaly_mode_records_the_traceback_of_a_write_into_a_view():
    def program(M):
        x = leaf(M, [1.0, 2.0, 3.0])
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            with M.autograd.detect_anomaly():
                a = x * 1
                a[0:1].mul_(2)  # the write
        meta = a.grad_fn.metadata
        return name(a), "traceback_" in meta and "# the write" in "".join(meta["traceback_"])

    assert same_as_torch(program) == ("CopySlices", True)


def test_exp_written_into_a_view_then_a_sibling_written_is_a_version_error():
    def program(M):
        x = leaf(M, [1.0, 2.0, 3.0])
        a = x * 1
        v = a[0:2]
        v.exp_()
        a[2:].mul_(2)
        a.sum().backward()
        return x.grad

    same_as_torch(program)


def test_render_of_rebased_views_in_every_kind():
    x = ng.tensor([1.0, 2.0, 3.0], requires_grad=True)
    a = x * 1
    v = a[1:]
    v.mul_(2)
    a[0:1].exp_()
    for kind in ("forward", "backward", "both"):
        source = ng.render((v * v).sum(), kind=kind).source
        assert source.strip().endswith("}")


# -- fifth batch: indexing edges that make views -------------------------------------------
def test_negative_step_slice_is_refused_as_torch():
    def program(M):
        a = M.tensor([1.0, 2.0, 3.0])
        return a[::-1]

    same_as_torch(program)


def test_out_of_range_index_of_a_view_is_an_index_error():
    def program(M):
        a = M.tensor([[1.0, 2.0, 3.0]])
        return a[0][1:][5]

    same_as_torch(program)


def test_0d_view_len_and_item_after_the_base_is_written():
    def program(M):
        a = M.tensor([1.0, 2.0, 3.0])
        v = a[1]
        a.mul_(10)
        try:
            len(v)
        except TypeError as error:
            return v.item(), v.shape, str(error)

    same_as_torch(program)


def test_setitem_with_none_and_ellipsis_indices():
    def program(M):
        x = leaf(M, [[1.0, 2.0], [3.0, 4.0]])
        t = leaf(M, [5.0, 6.0])
        a = x * 1
        a[None, ..., 1] = t
        a[..., 0][None] += 1.0
        (a**2).sum().backward()
        return a, x.grad, t.grad, name(a)

    same_as_torch(program)


def test_write_through_a_flat_view_of_a_column_major_base():
    def program(M):
        x = leaf(M, [[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])
        a = x.t() * 1  # (3, 2), column-major memory in torch and numpy
        a.t().view(-1).mul_(M.tensor([1.0, 2.0, 3.0, 4.0, 5.0, 6.0]))
        a.sum().backward()
        return a, x.grad

    same_as_torch(program)


def test_double_backward_after_a_view_write_overwrote_everything_x_gave():
    def program(M):
        x = leaf(M, [1.0, 2.0])
        y = leaf(M, [3.0, 4.0])
        a = x * 1
        a[:] = y * 1
        (g,) = M.autograd.grad((a * a).sum(), x, create_graph=True)
        ((g * g).sum() + (y * y).sum()).backward()
        return g, g.requires_grad, x.grad, y.grad

    same_as_torch(program)


def test_double_backward_through_a_disconnected_zero_gradient_is_refused():
    def program(M):
        x = leaf(M, [1.0, 2.0])
        a = x * 1
        a[:] = 5.0
        (g,) = M.autograd.grad((a * a).sum(), x, create_graph=True)
        (g * g).sum().backward()
        return x.grad

    same_as_torch(program)


@pytest.mark.parametrize("write", ["copy", "fill", "zero", "setitem", "index_put"])
def test_overwritten_part_gets_an_exact_zero_gradient_even_from_inf(write):
    def program(M):
        x = leaf(M, [1.0, 2.0])
        a = x * 1
        if write == "copy":
            a[0:1].copy_(M.tensor([5.0]))
        elif write == "fill":
            a[0:1].fill_(5.0)
        elif write == "zero":
            a[0:1].zero_()
        elif write == "setitem":
            a[0] = 5.0
        else:
            a[[0]] = 5.0
        with np.errstate(invalid="ignore"):
            (a * M.tensor([float("inf"), 1.0])).sum().backward()
        return x.grad

    same_as_torch(program)


def test_setitem_with_a_0d_integer_tensor_index_on_a_view():
    def program(M):
        x = leaf(M, [[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])
        a = x * 1
        v = a[1]
        v[M.tensor(2)] = 0.5
        a[0][M.tensor([True, False, True])] = -1.0
        (a * a).sum().backward()
        return a, x.grad, name(a)

    same_as_torch(program)


def test_mask_write_into_an_integer_view():
    def program(M):
        a = M.tensor([[1, 2, 3], [4, 5, 6]])
        v = a[:, 1:]
        v[v > 3] = 0
        v.add_(M.tensor([10, 20]))
        return a, v

    same_as_torch(program)


# -- what backward keeps: only the values a needed partial reads (torch's saved set) -----
def test_a_write_to_a_tensor_multiplied_by_a_constant_does_not_break_backward():
    def program(M):
        x = leaf(M, [1.0, 2.0])
        a = x * 1
        c = M.tensor([3.0, 4.0])
        y = (a * c).sum()  # only d/da is needed: c is kept, a is not
        a.add_(1)
        y.backward()
        return x.grad

    same_as_torch(program)


def test_a_write_to_the_kept_constant_operand_still_breaks_backward():
    def program(M):
        x = leaf(M, [1.0, 2.0])
        c = M.tensor([3.0, 4.0])
        y = (x * c).sum()
        c.add_(1)
        y.backward()
        return x.grad

    same_as_torch(program)


@pytest.mark.parametrize("mode", ["no_grad", "inference_mode"])
@pytest.mark.parametrize("make", ["v", "v.t()", "v.unsqueeze(0)", "v[0]", "v.view(3)"])
@pytest.mark.parametrize("write", ["base", "itself"])
def test_a_view_taken_with_grad_of_a_no_grad_view_is_refused_in_torchs_words(mode, make, write):
    # torch names such a view by its own node: "Output 0 of T is a view of a view which..."
    def program(M):
        x = leaf(M, [1.0, 2.0, 3.0, 4.0])
        a = x * 1
        with getattr(M, mode)():
            v = a[1:]
        w = eval(make, {"v": v})
        if write == "base":
            a.mul_(2)
            return w.grad_fn
        w.mul_(2)
        return w

    got = same_as_torch(program)
    assert isinstance(got, Raised) and got == run(program, torch)  # word for word


# -- iteration and unbind: the outputs of one UnbindBackward0 node ---------------------
def graph(fn, depth=3):
    """(name, ((child, output_nr), ...)) of a grad_fn, ``depth`` levels down."""
    if fn is None or depth == 0:
        return None
    kids = tuple((graph(child, depth - 1), nr) for child, nr in fn.next_functions)
    return type(fn).__name__.replace("torch::autograd::", ""), kids


def test_iterating_a_tensor_with_grad_gives_views_out_of_one_unbind_node():
    def program(M):
        x = leaf(M, [[1.0, 2.0], [3.0, 4.0]])
        a = x * 1
        rows = list(a)
        (rows[0] * 1 + rows[1] * 10).sum().backward()
        shared = rows[0].grad_fn is rows[1].grad_fn
        return x.grad, graph(rows[1].grad_fn), shared, rows[1]._version, rows[1]._base is a

    same_as_torch(program)


@pytest.mark.parametrize("dim", [0, 1, -1])
def test_unbind_along_a_dimension_passes_each_slice_its_gradient(dim):
    def program(M):
        x = leaf(M, [[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])
        parts = x.unbind(dim)
        (parts[-1] * parts[0]).sum().backward()
        return x.grad, [p.shape for p in parts], name(parts[0])

    same_as_torch(program)


def test_a_second_order_gradient_through_the_rows_of_a_tensor():
    def program(M):
        x = leaf(M, [[1.0, 2.0], [3.0, 4.0]])
        rows = list(x * 1)
        (g,) = M.autograd.grad((rows[1] ** 2).sum(), x, create_graph=True)
        g.sum().backward()
        return g, x.grad

    same_as_torch(program)


def test_rows_of_a_tensor_without_grad_may_be_written_in_place():
    def program(M):
        d = M.ones(2, 2)
        for row in d:
            row.mul_(3)
        return d

    same_as_torch(program)


@pytest.mark.parametrize(
    "program",
    [
        # a row of a tensor without grad, times a tensor that requires grad
        lambda M: [r.mul_(leaf(M, [2.0])) for r in M.ones(2, 2)],
        # a view of a row
        lambda M: list(leaf(M, [[1.0, 2.0], [3.0, 4.0]]) * 1)[0][0].mul_(2),
    ],
)
def test_an_output_of_unbind_written_in_place_with_grad_is_refused_in_torchs_words(program):
    got = same_as_torch(program)
    assert isinstance(got, Raised) and got == run(program, torch)


@pytest.mark.parametrize("written", ["sibling", "base"])
def test_rows_whose_base_or_sibling_was_written_are_refused_when_used(written):
    def program(M):
        x = leaf(M, [[1.0, 2.0], [3.0, 4.0]])
        a = x * 1
        rows = list(a)
        if written == "sibling":
            with M.no_grad():
                rows[1].mul_(2)
        else:
            a.mul_(2)
        return rows[0] * 1

    got = same_as_torch(program)
    assert isinstance(got, Raised) and got == run(program, torch)


@pytest.mark.parametrize("mode", ["no_grad", "inference_mode"])
def test_rows_taken_in_a_no_grad_mode_require_grad_as_views_of_a_leaf(mode):
    def program(M):
        x = leaf(M, [[1.0, 2.0], [3.0, 4.0]])
        with getattr(M, mode)():
            rows = list(x)
        return rows[0].requires_grad, rows[0].is_leaf

    same_as_torch(program)


def test_rows_keep_retain_grad_and_hooks():
    def program(M):
        x = leaf(M, [[1.0, 2.0], [3.0, 4.0]])
        rows = list(x * 1)
        rows[0].retain_grad()
        seen = []
        rows[1].register_hook(lambda g: seen.append(g * 1))
        (rows[0] * rows[1]).sum().backward()
        return rows[0].grad, seen, x.grad

    same_as_torch(program)


@pytest.mark.parametrize(
    "program",
    [
        lambda M: list(M.ones(0, 2, requires_grad=True) * 1),
        lambda M: list(M.tensor(3.0)),
        lambda M: M.ones(2).unbind(1),
        lambda M: [t.shape for t in M.ones(2, 3).unbind(-1)],
    ],
)
def test_unbind_of_odd_shapes_and_dimensions(program):
    same_as_torch(program)


def test_the_elements_of_a_vector_are_0d_views_that_write_into_it():
    def program(M):
        v = M.tensor([1.0, 2.0, 3.0])
        for element in v:
            element.mul_(2)
        x = leaf(M, [1.0, 2.0])
        first, second = x * 1
        (first * second).backward()
        return v, first.shape, x.grad, first._base is not None

    same_as_torch(program)


def test_a_no_grad_view_is_shown_as_a_tensor():
    def view(M):
        p = M.ones(3, requires_grad=True)
        with M.no_grad():
            return p[1:]

    v = view(ng)
    assert isinstance(v, ng.Tensor) and type(v).__name__ == "Tensor"
    assert repr(v) == repr(view(torch)) == "tensor([1., 1.], requires_grad=True)"


def test_a_view_of_a_parameter_takes_an_as_strided_history_after_an_optimizer_step():
    def program(M):
        p = leaf(M, [1.0, 2.0, 3.0])
        row = p[1:]
        opt = M.optim.SGD([p], lr=0.5)
        (p * p).sum().backward()
        opt.step()
        opt.zero_grad()
        (row * row).sum().backward()
        return p, p.grad, name(row), row

    got = same_as_torch(program)
    assert got[2] == "AsStridedBackward0"


def test_a_no_grad_view_of_a_parameter_is_refused_after_an_optimizer_step():
    def program(M):
        p = leaf(M, [1.0, 2.0, 3.0])
        with M.no_grad():
            frozen = p[:1]
        opt = M.optim.SGD([p], lr=0.5)
        (p * p).sum().backward()
        opt.step()
        return frozen * 1

    got = same_as_torch(program)
    assert isinstance(got, Raised) and "created in no_grad mode" in got[1]
