"""Behaviours the client corpus found missing, pinned one by one against torch."""

from __future__ import annotations

import copy
import pickle
import subprocess
import sys

import numpy as np
import pytest

import naivegraph as ng


@pytest.fixture
def torch():
    return pytest.importorskip("torch")


def test_python_dash_m_naivegraph_is_the_naivegraph_command() -> None:
    via_m = subprocess.run(
        [sys.executable, "-m", "naivegraph", "--help"], capture_output=True, text=True
    )
    assert via_m.returncode == 0
    assert via_m.stdout.startswith("usage: naivegraph ")


def test_normal_with_numbers_needs_a_size_and_gives_the_default_dtype() -> None:
    assert ng.normal(2.0, 3.0, size=(4, 2)).shape == (4, 2)
    assert ng.normal(0, 1, (3,)).dtype == ng.get_default_dtype()
    with pytest.raises(TypeError, match="give a size too"):
        ng.normal(0.0, 1.0)


def test_normal_with_a_tensor_samples_one_value_per_element_of_its_dtype() -> None:
    sample = ng.normal(ng.zeros(2, 3, dtype=ng.float32), 0.5)
    assert sample.shape == (2, 3) and sample.dtype == ng.float32


def test_normal_refuses_a_negative_std_as_torch_does(torch) -> None:
    for lib in (torch, ng):
        with pytest.raises(RuntimeError, match="normal expects all elements of std >= 0.0"):
            lib.normal(lib.zeros(2), lib.tensor([1.0, -1.0]))
        with pytest.raises(RuntimeError, match=r"normal expects std >= 0.0, but found std -1$"):
            lib.normal(0.0, -1.0, (2,))


def test_normal_is_repeatable_under_manual_seed() -> None:
    ng.manual_seed(7)
    first = ng.normal(1.0, 2.0, size=(5,)).tolist()
    ng.manual_seed(7)
    assert ng.normal(1.0, 2.0, size=(5,)).tolist() == first


def test_torch_dtype_aliases_name_the_same_dtypes(torch) -> None:
    for name in ("int16", "short", "half", "int", "bool", "cfloat", "cdouble", "float", "double"):
        assert str(getattr(torch, name)).removeprefix("torch.") == np.dtype(getattr(ng, name)).name


def test_sgd_with_dampening_and_maximize_updates_as_torch_does(torch) -> None:
    results = []
    for lib in (torch, ng):
        w = lib.tensor([1.0, -2.0], dtype=lib.float64, requires_grad=True)
        opt = lib.optim.SGD([w], lr=0.1, momentum=0.9, dampening=0.3, maximize=True)
        for _ in range(3):
            opt.zero_grad()
            (w * w).sum().backward()
            opt.step()
        results.append(w.tolist())
    assert results[0] == pytest.approx(results[1], rel=1e-15)


def test_sgd_refuses_nesterov_without_momentum(torch) -> None:
    w = ng.tensor([1.0], requires_grad=True)
    with pytest.raises(ValueError, match="Nesterov momentum requires a momentum"):
        ng.optim.SGD([w], lr=0.1, nesterov=True)
    with pytest.raises(ValueError, match="Nesterov momentum requires a momentum"):
        torch.optim.SGD([torch.ones(1, requires_grad=True)], lr=0.1, nesterov=True)


def test_a_parameter_pickles_after_backward_without_its_grad() -> None:
    p = ng.nn.Parameter(ng.tensor([1.0, 2.0], dtype=ng.float32), requires_grad=False)
    q = ng.nn.Parameter(ng.tensor([1.0, 2.0]))
    (q * q).sum().backward()
    for original in (p, q):
        restored = pickle.loads(pickle.dumps(original))
        assert type(restored) is ng.nn.Parameter and restored.grad is None
        assert restored.requires_grad == original.requires_grad
        assert restored.dtype == original.dtype and restored.tolist() == original.tolist()


def test_deepcopy_of_a_module_shares_nothing_and_leaves_grads_behind() -> None:
    model = ng.nn.Linear(2, 1)
    model(ng.ones(1, 2)).sum().backward()
    copied = copy.deepcopy(model)
    assert copied.weight.grad is None and copied.weight is not model.weight
    assert copied.weight.tolist() == model.weight.tolist()


def test_register_parameter_refuses_a_plain_tensor_and_a_taken_name() -> None:
    m = ng.nn.Linear(2, 1)
    with pytest.raises(TypeError, match="Parameter or None required"):
        m.register_parameter("scale", ng.ones(1))
    with pytest.raises(KeyError, match="attribute 'training' already exists"):
        m.register_parameter("training", None)


def test_load_state_dict_result_prints_as_torch_prints_it(torch) -> None:
    a, b = ng.nn.Linear(2, 1), ng.nn.Linear(2, 1)
    ta = torch.nn.Linear(2, 1)
    assert repr(b.load_state_dict(a.state_dict())) == repr(ta.load_state_dict(ta.state_dict()))
    partial = b.load_state_dict({"weight": a.weight.detach()}, strict=False)
    assert repr(partial) == "_IncompatibleKeys(missing_keys=['bias'], unexpected_keys=[])"


def test_normal_and_uniform_fill_in_place_from_the_seeded_generator(torch) -> None:
    for lib in (ng, torch):
        lib.manual_seed(5)
        w = lib.zeros(2000, dtype=lib.float64)
        assert w.normal_(3.0, 0.5) is w
        assert abs(w.mean().item() - 3.0) < 0.05 and abs(w.std().item() - 0.5) < 0.05
        u = lib.zeros(2000, dtype=lib.float64).uniform_(-1.0, 2.0)
        assert -1.0 <= u.min().item() and u.max().item() < 2.0
        with pytest.raises(RuntimeError, match="a leaf Variable that requires grad"):
            lib.zeros(2, requires_grad=True).normal_()
        with pytest.raises(RuntimeError, match="\"normal_kernel_cpu\" not implemented for 'Long'"):
            lib.zeros(2, dtype=lib.int64).normal_()
    ng.manual_seed(5)
    first = ng.zeros(3).normal_().tolist()
    ng.manual_seed(5)
    assert ng.zeros(3).normal_().tolist() == first
    g = ng.Generator().manual_seed(1)
    again = ng.zeros(3).uniform_(generator=g).tolist()
    assert ng.zeros(3).uniform_(generator=g.manual_seed(1)).tolist() == again


def test_vmap_is_also_a_top_level_name_as_in_torch(torch) -> None:
    assert ng.vmap is ng.func.vmap and torch.vmap is torch.func.vmap


def test_equal_is_one_bool_for_same_shape_and_values_as_in_torch(torch) -> None:
    pairs = [
        ([1, 2], [1.0, 2.0]),
        ([1.0, 2.0], [1.0, 2.5]),
        ([1.0], [1.0, 1.0]),
        ([[1.0]], [1.0]),
        ([float("nan")], [float("nan")]),
    ]
    for a, b in pairs:
        expected = torch.equal(torch.tensor(a), torch.tensor(b))
        assert ng.equal(ng.tensor(a), ng.tensor(b)) is expected
        assert ng.tensor(a).equal(ng.tensor(b)) is expected


def test_equal_refuses_what_is_not_a_tensor() -> None:
    with pytest.raises(TypeError, match="argument 'other' must be Tensor, not list"):
        ng.equal(ng.tensor([1.0]), [1.0])


def test_format_of_a_one_value_tensor_is_its_number_as_in_torch(torch) -> None:
    # yunjey's logistic regression prints "{} %".format(100 * correct / total)
    for value, spec in [(27.0, ""), (27.0, ".2f"), (3, ""), (True, ""), (2.5, ">8")]:
        assert format(ng.tensor(value), spec) == format(torch.tensor(value), spec)
    assert "{}".format(ng.tensor(2.0, requires_grad=True)) == "2.0"


def test_format_of_a_larger_tensor_prints_it_and_refuses_a_spec(torch) -> None:
    assert format(ng.tensor([1.0, 2.0])) == format(torch.tensor([1.0, 2.0]))
    with pytest.raises(TypeError, match="unsupported format string passed to Tensor.__format__"):
        format(ng.tensor([1.0, 2.0]), ".2f")


def _exp_with_jvp(torch_module, factor):
    """exp as an autograd.Function whose jvp multiplies by ``factor`` times the result
    (1: right, 2: wrong), as the forward-mode AD tutorial writes it."""

    class Fn(torch_module.autograd.Function):
        @staticmethod
        def forward(ctx, foo):
            result = torch_module.exp(foo)
            ctx.result = result
            return result

        @staticmethod
        def jvp(ctx, gI):
            return gI * ctx.result * factor

    return Fn.apply


FORWARD_ONLY = dict(check_forward_ad=True, check_backward_ad=False, check_undefined_grad=False)


def test_gradcheck_checks_forward_mode_jacobians_as_torch_does(torch) -> None:
    for lib in (torch, ng):
        x = lib.tensor([0.5, 1.0], dtype=lib.float64, requires_grad=True)
        assert lib.autograd.gradcheck(_exp_with_jvp(lib, 1), (x,), **FORWARD_ONLY) is True
        wrong = _exp_with_jvp(lib, 2)
        assert lib.autograd.gradcheck(wrong, (x,), raise_exception=False, **FORWARD_ONLY) is False
        with pytest.raises(RuntimeError, match="Jacobian computed with forward mode mismatch"):
            lib.autograd.gradcheck(wrong, (x,), **FORWARD_ONLY)


def test_gradcheck_checks_both_modes_of_a_builtin_function() -> None:
    x = ng.tensor([0.3, -1.2, 2.0], dtype=ng.float64, requires_grad=True)
    y = ng.tensor([1.5, 0.5, -0.7], dtype=ng.float64, requires_grad=True)
    assert ng.autograd.gradcheck(lambda a, b: a.sin() * b**2, (x, y), check_forward_ad=True)


def test_gradcheck_needs_one_mode_and_refuses_batched_checks(torch) -> None:
    x = ng.tensor([0.5], dtype=ng.float64, requires_grad=True)
    with pytest.raises(ValueError, match="at least one of check_forward_ad or check_backward_ad"):
        ng.autograd.gradcheck(lambda a: a * 2, (x,), check_backward_ad=False)
    batched = r"gradcheck\(check_batched_grad=True\) is not supported"
    with pytest.raises(NotImplementedError, match=batched):
        ng.autograd.gradcheck(lambda a: a * 2, (x,), check_batched_grad=True)


def test_a_custom_function_runs_its_jvp_under_forward_mode_as_in_torch(torch) -> None:
    seen = {}
    for lib in (torch, ng):
        fwAD = lib.autograd.forward_ad

        class Scale(lib.autograd.Function):
            @staticmethod
            def forward(ctx, x, y, k):
                return x * y * k

            @staticmethod
            def jvp(ctx, gx, gy, gk):
                # a tensor input without a tangent gets zeros, a number None
                return gx * 3 + gy.sum() + (gk is None)

        with fwAD.dual_level():
            x = fwAD.make_dual(lib.tensor([1.0, 2.0]), lib.tensor([1.0, -1.0]))
            out = Scale.apply(x, lib.tensor([5.0, 5.0]), 7)
            seen[lib.__name__] = (out.tolist(), fwAD.unpack_dual(out).tangent.tolist())
    assert seen["naivegraph"] == seen["torch"] == ([35.0, 70.0], [4.0, -2.0])


def test_a_custom_function_without_jvp_refuses_a_dual_input(torch) -> None:
    class Twice(ng.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2

        @staticmethod
        def backward(ctx, g):
            return g * 2

    with ng.autograd.forward_ad.dual_level():
        x = ng.autograd.forward_ad.make_dual(ng.tensor([1.0]), ng.tensor([1.0]))
        with pytest.raises(NotImplementedError, match="You must implement the jvp function"):
            Twice.apply(x)
        plain = Twice.apply(ng.tensor([1.0]))  # no tangent in: no jvp needed
        assert ng.autograd.forward_ad.unpack_dual(plain).tangent is None


def test_argmax_and_argmin_take_numpys_axis_as_torch_does(torch) -> None:
    # d2l's accuracy(): y_hat.argmax(axis=1)
    data = [[1.0, 3.0, 2.0], [5.0, 0.0, 1.0]]
    x, t = ng.tensor(data), torch.tensor(data)
    assert x.argmax(axis=1).tolist() == t.argmax(axis=1).tolist() == [1, 0]
    assert ng.argmax(x, axis=0).tolist() == torch.argmax(t, axis=0).tolist()
    assert x.argmin(axis=1, keepdim=True).tolist() == t.argmin(axis=1, keepdim=True).tolist()
    with pytest.raises(TypeError, match="got both dim and its alias axis"):
        x.argmax(1, axis=1)
