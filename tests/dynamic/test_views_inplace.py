"""Views and in-place writes in dynamic mode, side by side with torch (issue items 1, 2, 8).

A view shares its base's memory and version counter.  An in-place op on the base gives
every view a new history over the base's (``AsStridedBackward0``); an in-place op on a view
rewrites the *base's* history (``CopySlices``).  Each program below runs on torch and on
naivegraph with the same float64 inputs; the values, every leaf's ``.grad``, the
``grad_fn`` names and the raised error must agree.
"""

import re

import numpy as np
import pytest
from default_dtype import float64_default

import naivegraph as ng

torch = pytest.importorskip("torch")

# torch runs with its default set to float64 below: naivegraph too, so that
# Python floats mean float64 in both
pytestmark = pytest.mark.usefixtures(float64_default.__name__)


def run(program, M):
    """Run ``program(M)``; return what it returns, or ("raised", type, message)."""
    try:
        return program(M)
    except (RuntimeError, ValueError, TypeError) as error:
        # the first sentence, up to where torch names the tensor its own way
        return ("raised", type(error).__name__, re.split(r"[.\[]", str(error))[0])


def as_plain(value):
    if isinstance(value, (list, tuple)):
        return type(value)(as_plain(v) for v in value)
    if hasattr(value, "detach"):
        return np.asarray(value.detach().numpy(), dtype=np.float64)
    return value


def assert_same_as_torch(program):
    torch.set_default_dtype(torch.float64)
    try:
        want = as_plain(run(program, torch))
    finally:
        torch.set_default_dtype(torch.float32)
    got = as_plain(run(program, ng))
    assert_equal(got, want)
    return got


def assert_equal(got, want):
    if isinstance(want, (list, tuple)):
        assert type(got) is type(want) and len(got) == len(want), (got, want)
        for g, w in zip(got, want):
            assert_equal(g, w)
    elif isinstance(want, np.ndarray):
        np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-14)
    else:
        assert got == want


def leaf(M, values):
    return M.tensor(values, requires_grad=True)


# -- the reproducers of the issue --------------------------------------------------------
def test_view_read_after_mul_inplace_on_base_sees_the_multiplication():
    def program(M):
        x = leaf(M, [1.0, 2.0])
        a = x * 1.0
        v = a[0:1]
        a.mul_(2)
        v.sum().backward()
        return x.grad

    np.testing.assert_array_equal(assert_same_as_torch(program), [2.0, 0.0])


def test_view_read_after_exp_inplace_on_base_differentiates_the_exp():
    def program(M):
        x = leaf(M, [1.0, 2.0])
        a = x * 1.0
        v = a.reshape(2)
        a.exp_()
        v.sum().backward()
        return x.grad

    np.testing.assert_allclose(assert_same_as_torch(program), np.exp([1.0, 2.0]))


def test_grad_carrying_write_into_view_of_plain_tensor_reaches_the_value():
    def program(M):
        w = leaf(M, 2.0)
        w2 = leaf(M, 2.0)
        a = M.zeros(3)
        v = a[0:2]
        v[0:1] = w * 2
        flags = [a.requires_grad, a.is_leaf, v.requires_grad, v.is_leaf]
        (a * w2).sum().backward()
        return flags, w.grad, w2.grad

    flags, w_grad, w2_grad = assert_same_as_torch(program)
    assert flags == [True, False, True, False]
    assert w_grad == 4.0 and w2_grad == 4.0


def test_data_replaced_after_use_is_what_backward_reads():
    def program(M):
        x = leaf(M, [1.0, 2.0])
        y = x * x
        x.data = M.tensor([5.0, 7.0])
        y.sum().backward()
        return x.grad

    np.testing.assert_array_equal(assert_same_as_torch(program), [10.0, 14.0])


def test_data_replaced_before_use_takes_the_new_shape():
    def program(M):
        x = leaf(M, [1.0, 2.0])
        x.data = M.tensor([5.0, 7.0, 9.0])
        (x * x).sum().backward()
        return x.grad

    np.testing.assert_array_equal(assert_same_as_torch(program), [10.0, 14.0, 18.0])


def test_data_replaced_by_another_shape_after_use_is_refused_at_backward():
    # torch stores a (2,) gradient on a (3,) tensor here; naivegraph refuses, clearly.
    x = ng.tensor([1.0, 2.0], requires_grad=True)
    y = (x * 2).sum()
    x.data = ng.tensor([5.0, 7.0, 9.0])
    with pytest.raises(RuntimeError, match="its .data was replaced by one of another shape"):
        y.backward()
    assert x.grad is None


# -- grad_fn names follow torch's ------------------------------------------------------------
def test_history_names_after_writes_match_torch():
    def program(M):
        x = leaf(M, [1.0, 2.0, 3.0])
        a = x * 1
        v = a[1:]
        before = type(v.grad_fn).__name__  # torch's name() spells CopySlices in full
        v.mul_(3)
        after = [
            type(v.grad_fn).__name__,
            type(a.grad_fn).__name__,
            [type(f).__name__ for f, _ in a.grad_fn.next_functions],
        ]
        b = x * 1
        b[[0, 2]] = 5.0
        return before, after, type(b.grad_fn).__name__

    got = assert_same_as_torch(program)
    assert got == (
        "SliceBackward0",
        ["AsStridedBackward0", "CopySlices", ["MulBackward0", "NoneType"]],
        "IndexPutBackward0",
    )


# -- a table of programs ---------------------------------------------------------------------
VIEWS = {
    "slice": lambda t: t[1:],
    "step": lambda t: t[::2],
    "row": lambda t: t[0],
    "reshape": lambda t: t.reshape(-1),
    "view": lambda t: t.view(-1),
    "transpose": lambda t: t.transpose(0, 1),
    "t": lambda t: t.t(),
    "permute": lambda t: t.permute(1, 0),
    "unsqueeze": lambda t: t.unsqueeze(0),
    "squeeze_noop": lambda t: t.squeeze(),
    "flatten": lambda t: t.flatten(),
    "view_of_view": lambda t: t[1:].transpose(0, 1)[0],
}

WRITES = {
    "add_": lambda v, y: v.add_(y),
    "mul_": lambda v, y: v.mul_(y),
    "div_": lambda v, y: v.div_(y + 3.0),
    "exp_": lambda v, y: v.exp_(),
    "clamp_": lambda v, y: v.clamp_(min=-0.5, max=0.5),
    "fill_": lambda v, y: v.fill_(0.25),
    "zero_": lambda v, y: v.zero_(),
    "copy_": lambda v, y: v.copy_(y),
    "setitem": lambda v, y: v.__setitem__(..., y),
    "iadd": lambda v, y: v.__iadd__(y),
    "pow_": lambda v, y: v.pow_(2),
}


def _view_program(view, write, target, use):
    def program(M):
        x = leaf(M, [[0.5, -1.0, 1.5], [2.0, -0.25, 0.75], [1.25, 0.1, -0.6]])
        base = x * 1.5
        v = VIEWS[view](base)
        y = leaf(M, np.linspace(-0.4, 0.9, int(np.prod(v.shape))).reshape(tuple(v.shape)))
        if target == "view":
            WRITES[write](v, y)
        else:
            WRITES[write](base, y.sum())
        w = M.tensor(np.arange(9.0).reshape(3, 3) / 7.0)
        loss = (base * w).sum() if use == "base" else (v * v).sum()
        loss.backward()
        return base, v, x.grad, y.grad

    return program


@pytest.mark.parametrize("view", sorted(VIEWS))
@pytest.mark.parametrize("write", sorted(WRITES))
def test_write_into_view_then_read_base_matches_torch(view, write):
    assert_same_as_torch(_view_program(view, write, "view", "base"))


@pytest.mark.parametrize("view", sorted(VIEWS))
@pytest.mark.parametrize("write", ["add_", "mul_", "exp_", "copy_", "setitem"])
def test_write_into_base_then_read_view_matches_torch(view, write):
    assert_same_as_torch(_view_program(view, write, "base", "view"))


# -- hostile cases -----------------------------------------------------------------------------
def test_view_read_after_two_writes_into_base_sees_both():
    def program(M):
        x = leaf(M, [1.0, 2.0, 3.0])
        a = x * 2
        v = a[::2]
        a.mul_(3)
        a.add_(x)
        (v * v).sum().backward()
        return v, x.grad

    assert_same_as_torch(program)


def test_write_into_view_of_view_rewrites_the_root_history():
    def program(M):
        x = leaf(M, [[1.0, 2.0], [3.0, 4.0]])
        y = leaf(M, 5.0)
        a = x * 1
        a[1][0:1].mul_(y)
        a.sum().backward()
        return a, x.grad, y.grad

    assert_same_as_torch(program)


def test_sibling_view_sees_a_write_through_another_view():
    def program(M):
        x = leaf(M, [1.0, 2.0, 3.0, 4.0])
        a = x * 1
        left, middle = a[:2], a[1:3]
        left.mul_(10)
        middle.sum().backward()
        return middle, x.grad

    assert_same_as_torch(program)


def test_backward_twice_through_copyslices_with_retain_graph():
    def program(M):
        x = leaf(M, [1.0, 2.0])
        a = x * 1
        a[0:1].exp_()
        loss = (a * a).sum()
        loss.backward(retain_graph=True)
        first = x.grad.clone()
        loss.backward()
        return first, x.grad

    assert_same_as_torch(program)


def test_second_backward_through_a_freed_copyslices_raises():
    def program(M):
        x = leaf(M, [1.0, 2.0])
        a = x * 1
        a[0:1].exp_()
        loss = a.sum()
        loss.backward()
        loss.backward()

    assert assert_same_as_torch(program)[:2] == ("raised", "RuntimeError")


def test_double_backward_through_a_write_into_a_view():
    def program(M):
        x = leaf(M, [1.0, 2.0])
        a = x * x
        a[1:].mul_(x[:1])
        (g,) = M.autograd.grad(a.sum(), x, create_graph=True)
        g.sum().backward()
        return g, x.grad

    assert_same_as_torch(program)


def test_detached_view_shares_the_version_counter():
    def program(M):
        x = leaf(M, [1.0, 2.0])
        a = x.exp()
        d = a[0:1].detach()
        d.mul_(2)
        a.sum().backward()

    assert assert_same_as_torch(program)[:2] == ("raised", "RuntimeError")


def test_writes_into_views_under_no_grad_record_nothing():
    def program(M):
        x = leaf(M, [1.0, 2.0])
        a = x * 3
        with M.no_grad():
            a[0:1].mul_(0.0)
        a.sum().backward()
        return a, x.grad

    assert_same_as_torch(program)


def test_view_of_a_leaf_written_in_place_is_refused():
    def program(M):
        leaf(M, [1.0, 2.0])[0:1].add_(1.0)

    assert assert_same_as_torch(program)[:2] == ("raised", "RuntimeError")


def test_view_made_in_no_grad_and_written_with_grad_is_refused():
    def program(M):
        x = leaf(M, [1.0, 2.0])
        a = x * 1
        with M.no_grad():
            v = a[0:1]
        v.mul_(2)

    got = assert_same_as_torch(program)
    assert got == (
        "raised",
        "RuntimeError",
        "A view was created in no_grad mode and is being modified inplace with grad mode enabled",
    )


def test_writes_into_expanded_views_follow_torch():
    def fill(M):
        b = M.zeros(3, 1)
        b.expand(3, 2).fill_(1.0)
        e = M.zeros(3, 1).expand(3, 2)
        e[:, 0] = 5.0
        return b, e

    assert_same_as_torch(fill)

    def add(M):
        M.zeros(3, 1).expand(3, 2).add_(1.0)

    assert assert_same_as_torch(add) == (
        "raised",
        "RuntimeError",
        "unsupported operation: more than one element of the "
        "written-to tensor refers to a single memory location",
    )


def test_view_of_a_transposed_tensor_is_refused_and_reshape_is_suggested():
    def program(M):
        M.ones(2, 3).t().view(-1)

    assert assert_same_as_torch(program)[:2] == ("raised", "RuntimeError")
    with pytest.raises(RuntimeError, match=r"Use \.reshape\(\.\.\.\) instead"):
        ng.ones(2, 3).t().view(-1)


def test_integer_index_of_a_vector_is_a_view():
    def program(M):
        a = M.zeros(3)
        v = a[1]
        v.add_(2.0)
        return a

    np.testing.assert_array_equal(assert_same_as_torch(program), [0.0, 2.0, 0.0])


def test_setitem_drops_leading_ones_of_the_value_as_torch():
    def program(M):
        b = M.zeros(2, 3)
        b[0] = M.ones(1, 3)
        return b

    assert_same_as_torch(program)
