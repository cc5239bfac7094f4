"""What backward keeps, as torch 2.13 shows it: ``grad_fn._saved_*``, ``_raw_saved_*``
and the hooks for saved tensors ("Autograd mechanics", section "Hooks for saved tensors").

Every test runs the same program on naivegraph and on torch (the oracle).
"""

from __future__ import annotations

import pytest

import naivegraph as ng

torch = pytest.importorskip("torch")

LIBS = [ng, torch]
SECOND_TIME = "Trying to backward through the graph a second time"


def tensor(lib, values, requires_grad=False):
    return lib.tensor(values, dtype=lib.float64, requires_grad=requires_grad)


def outcome(program):
    try:
        return ("ok", program())
    except Exception as error:  # noqa: BLE001 - the error itself is compared
        return (type(error).__name__, str(error))


def plain(value, inputs):
    """A saved value in comparable form: which input it is, or its values."""
    for name, t in inputs.items():
        if value is t:
            return ("input", name)
    if isinstance(value, (ng.Tensor, torch.Tensor)):
        values = [round(v, 12) for v in value.detach().reshape(-1).tolist()]
        return (
            "tensor",
            tuple(value.shape),
            values,
            value.requires_grad,
            value.grad_fn is not None,
        )
    return ("value", value)


# op -> the attributes torch gives its grad_fn (checked to exist on torch's node too)
OPS = {
    "mul": (lambda x, y: x * y, ["self", "other"]),
    "mul_constant": (lambda x, y: x * y.detach(), ["self", "other"]),
    "mul_number": (lambda x, y: x * 2.0, ["self", "other"]),
    "div": (lambda x, y: x / y, ["self", "other"]),
    "pow_number": (lambda x, y: x**2, ["self", "exponent"]),
    "pow_tensor": (lambda x, y: x**y, ["self", "exponent", "result"]),
    "rpow": (lambda x, y: 2**x, ["self", "exponent", "result"]),
    "exp": (lambda x, y: x.exp(), ["result"]),
    "tanh": (lambda x, y: x.tanh(), ["result"]),
    "sigmoid": (lambda x, y: x.sigmoid(), ["result"]),
    "log": (lambda x, y: x.log(), ["self"]),
    "sin": (lambda x, y: x.sin(), ["self"]),
    "cos": (lambda x, y: x.cos(), ["self"]),
    "relu": (lambda x, y: x.relu(), ["result"]),
    "sqrt": (lambda x, y: x.sqrt(), ["result"]),
    "abs": (lambda x, y: x.abs(), ["self"]),
    "max": (lambda x, y: x.max(), ["self", "result"]),
    "maximum": (lambda x, y: x.maximum(y), ["self", "other"]),
    "clamp": (lambda x, y: x.clamp(0.5, 1.5), ["self", "min", "max"]),
    "softmax": (lambda x, y: x.softmax(0), ["dim", "result"]),
    "log_softmax": (lambda x, y: x.log_softmax(0), ["dim", "result"]),
    "mm": (lambda x, y: x.reshape(2, 1) @ y.reshape(1, 2), ["self", "mat2", "self_sym_sizes"]),
    "mm_constant": (lambda x, y: x.reshape(2, 1) @ y.detach().reshape(1, 2), ["self", "mat2"]),
    "dot": (lambda x, y: x @ y, ["self", "tensor"]),
    "add": (lambda x, y: x + y, ["alpha"]),
    "sum": (lambda x, y: x.sum(), ["self_sym_sizes"]),
}


def saved_attributes(lib, op):
    x = tensor(lib, [1.0, 2.0], requires_grad=True)
    y = tensor(lib, [3.0, 4.0], requires_grad=True)
    fn, names = OPS[op]
    out = fn(x, y)
    inputs = {"x": x, "y": y, "out": out}
    return out, {name: plain(getattr(out.grad_fn, f"_saved_{name}"), inputs) for name in names}


@pytest.mark.parametrize("op", sorted(OPS))
def test_saved_attributes_match_torch(op):
    ours_out, ours = saved_attributes(ng, op)
    theirs_out, theirs = saved_attributes(torch, op)
    assert ours_out.grad_fn.name() == theirs_out.grad_fn.name()
    assert ours == theirs


def test_saved_result_is_a_new_tensor_attached_to_the_node_as_in_torch():
    for lib in LIBS:
        x = tensor(lib, [1.0, 2.0], requires_grad=True)
        y = x.exp()
        result = y.grad_fn._saved_result
        assert result is not y and result.tolist() == y.tolist()
        assert result.grad_fn is y.grad_fn


def test_unknown_saved_attribute_is_an_attribute_error_naming_the_node():
    for lib in LIBS:
        y = tensor(lib, [1.0], requires_grad=True).exp()
        with pytest.raises(AttributeError, match="'ExpBackward0' object has no attribute"):
            y.grad_fn._saved_nothing


def after_backward(lib, op, name, retain):
    x = tensor(lib, [1.0, 2.0], requires_grad=True)
    y = tensor(lib, [3.0, 4.0], requires_grad=True)
    out = OPS[op][0](x, y)
    out.sum().backward(retain_graph=retain)
    return outcome(lambda: plain(getattr(out.grad_fn, name), {"x": x, "y": y}))


@pytest.mark.parametrize(
    "op, name",
    [
        ("exp", "_saved_result"),
        ("mul", "_saved_self"),
        ("mul_number", "_saved_other"),
        ("mul_number", "_saved_self"),
        ("pow_number", "_saved_exponent"),
        ("mm", "_saved_mat2"),
        ("sum", "_saved_self_sym_sizes"),
    ],
)
@pytest.mark.parametrize("retain", [False, True])
def test_saved_attributes_after_backward_match_torch(op, name, retain):
    ours = after_backward(ng, op, name, retain)
    theirs = after_backward(torch, op, name, retain)
    assert ours[0] == theirs[0]
    if ours[0] == "RuntimeError":
        assert SECOND_TIME in ours[1] and SECOND_TIME in theirs[1]
    else:
        assert ours == theirs


def test_freed_saved_tensor_reads_raise_torchs_full_message():
    x = ng.tensor([1.0], requires_grad=True)
    y = x.exp()
    y.backward()
    with pytest.raises(RuntimeError) as ours:
        y.grad_fn._saved_result
    tx = torch.tensor([1.0], requires_grad=True)
    ty = tx.exp()
    ty.backward()
    with pytest.raises(RuntimeError) as theirs:
        ty.grad_fn._saved_result
    assert str(ours.value) == str(theirs.value)


# -- saved_tensors_hooks ------------------------------------------------------------------------


def hooked_mul(lib):
    log = []

    def pack(t):
        log.append(("pack", t.tolist()))
        return ("packed", t)

    def unpack(packed):
        log.append(("unpack", packed[1].tolist()))
        return packed[1]

    a = tensor(lib, [1.0, 2.0], requires_grad=True)
    b = tensor(lib, [3.0, 4.0], requires_grad=True)
    with lib.autograd.graph.saved_tensors_hooks(pack, unpack):
        y = a * b
    packed = sorted(log)
    log.clear()
    read = y.grad_fn._saved_self.tolist()
    on_access = list(log)
    log.clear()
    y.sum().backward()
    return packed, read, on_access, sorted(log), a.grad.tolist(), b.grad.tolist()


def test_pack_runs_when_saving_and_unpack_when_reading_as_in_torch():
    assert hooked_mul(ng) == hooked_mul(torch)
    packed, read, on_access, unpacked, a_grad, b_grad = hooked_mul(ng)
    assert packed == [("pack", [1.0, 2.0]), ("pack", [3.0, 4.0])]
    assert on_access == [("unpack", [1.0, 2.0])]
    assert unpacked == packed_to_unpacked(packed)
    assert (a_grad, b_grad) == ([3.0, 4.0], [1.0, 2.0])


def packed_to_unpacked(packed):
    return [("unpack", values) for _, values in packed]


def backward_uses_unpacked(lib):
    x = tensor(lib, [1.0, 2.0], requires_grad=True)
    with lib.autograd.graph.saved_tensors_hooks(lambda t: t * 10, lambda t: t):
        y = x * x
        z = x.exp()
    (y.sum() + z.sum()).backward()
    return x.grad.tolist()


def test_backward_uses_what_unpack_returns():
    # d(x*x)/dx read from the packed 10x (twice), d exp/dx from the packed 10 exp(x)
    assert backward_uses_unpacked(ng) == pytest.approx(backward_uses_unpacked(torch))


@pytest.mark.parametrize("lib", LIBS, ids=["naivegraph", "torch"])
def test_output_is_packed_as_the_output_tensor_itself(lib):
    seen = []
    x = tensor(lib, [1.0, 2.0], requires_grad=True)
    with lib.autograd.graph.saved_tensors_hooks(lambda t: seen.append(t) or t, lambda t: t):
        y = x.exp()
    assert len(seen) == 1 and seen[0] is y


def packed_for_product(lib):
    seen = []
    w = tensor(lib, [[1.0, 2.0]], requires_grad=True)
    with lib.autograd.graph.saved_tensors_hooks(
        lambda t: seen.append(t.tolist()) or t, lambda t: t
    ):
        y = tensor(lib, [[3.0], [4.0]]) @ w  # d/dw needs only the constant factor
    y.sum().backward()
    return seen, w.grad.tolist()


def test_only_what_torch_saves_is_packed():
    assert packed_for_product(ng) == packed_for_product(torch) == ([[[3.0], [4.0]]], [[7.0, 7.0]])


@pytest.mark.parametrize("lib", LIBS, ids=["naivegraph", "torch"])
def test_nothing_is_packed_when_nothing_is_recorded(lib):
    seen = []
    with lib.autograd.graph.saved_tensors_hooks(lambda t: seen.append(t) or t, lambda t: t):
        tensor(lib, [1.0]).exp()
        with lib.no_grad():
            tensor(lib, [1.0], requires_grad=True).exp()
    assert seen == []


@pytest.mark.parametrize("lib", LIBS, ids=["naivegraph", "torch"])
def test_innermost_hooks_win(lib):
    log = []
    x = tensor(lib, [1.0], requires_grad=True)
    with lib.autograd.graph.saved_tensors_hooks(lambda t: log.append("outer") or t, id):
        with lib.autograd.graph.saved_tensors_hooks(lambda t: log.append("inner") or t, id):
            x.exp()
    assert log == ["inner"]


def test_unpack_must_return_a_tensor():
    def program(lib):
        x = tensor(lib, [1.0], requires_grad=True)
        with lib.autograd.graph.saved_tensors_hooks(lambda t: t, lambda t: 3):
            y = x * x
        return outcome(lambda: y.sum().backward())

    ours, theirs = program(ng), program(torch)
    assert ours == theirs
    assert ours[0] == "TypeError" and "expected to be a Tensor" in ours[1]


def test_hooked_tensors_are_not_version_checked_as_in_torch():
    results = []
    for lib in LIBS:
        a = tensor(lib, [1.0, 2.0], requires_grad=True)
        b = tensor(lib, [3.0, 4.0], requires_grad=True)
        with lib.autograd.graph.saved_tensors_hooks(lambda t: t, lambda t: t):
            c = a * 1
            d = c * b
        with lib.no_grad():
            c.mul_(2)
        d.sum().backward()
        results.append(b.grad.tolist())
    assert results[0] == results[1] == [2.0, 4.0]


def custom_function_hooked(lib):
    log = []

    class Square(lib.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x * x

        @staticmethod
        def backward(ctx, g):
            (x,) = ctx.saved_tensors
            return 2 * x * g

    x = tensor(lib, [1.0, 2.0], requires_grad=True)
    with lib.autograd.graph.saved_tensors_hooks(
        lambda t: log.append("pack") or t * 3, lambda t: log.append("unpack") or t
    ):
        y = Square.apply(x)
    y.sum().backward()
    return log, x.grad.tolist()


def test_custom_function_saves_go_through_the_hooks():
    assert custom_function_hooked(ng) == custom_function_hooked(torch)
    assert custom_function_hooked(ng) == (["pack", "unpack"], [6.0, 12.0])


def test_save_on_cpu_leaves_results_unchanged():
    x = ng.tensor([1.0, 2.0], requires_grad=True)
    with ng.autograd.graph.save_on_cpu(pin_memory=False):
        y = (x * x).exp().sum()
    y.backward()
    tx = torch.tensor([1.0, 2.0], dtype=torch.float64, requires_grad=True)
    (tx * tx).exp().sum().backward()
    assert x.grad.tolist() == pytest.approx(tx.grad.tolist())


def test_non_callable_hooks_are_refused():
    with pytest.raises(TypeError, match="pack_hook must be callable"):
        ng.autograd.graph.saved_tensors_hooks(3, lambda t: t)


# -- _raw_saved_*: one saved slot's own hooks --------------------------------------------------


def raw_hooks(lib):
    log = []
    x = tensor(lib, [1.0, 2.0], requires_grad=True)
    y = x.exp()
    raw = y.grad_fn._raw_saved_result
    raw.register_hooks(
        lambda t: log.append("pack") or t * 0 + 5, lambda t: log.append("unpack") or t
    )
    packed = list(log)
    read = y.grad_fn._saved_result.tolist()
    y.sum().backward()
    return packed, read, log, x.grad.tolist()


def test_raw_saved_register_hooks_packs_now_and_unpacks_for_backward():
    assert raw_hooks(ng) == raw_hooks(torch)
    assert raw_hooks(ng) == (["pack"], [5.0, 5.0], ["pack", "unpack", "unpack"], [5.0, 5.0])


def raw_errors(lib):
    def twice():
        y = tensor(lib, [1.0], requires_grad=True).exp()
        y.grad_fn._raw_saved_result.register_hooks(lambda t: t, lambda t: t)
        y.grad_fn._raw_saved_result.register_hooks(lambda t: t, lambda t: t)

    def after_free():
        y = tensor(lib, [1.0], requires_grad=True).exp()
        raw = y.grad_fn._raw_saved_result
        y.backward()
        raw.register_hooks(lambda t: t, lambda t: t)

    def not_saved():
        w = tensor(lib, [[1.0]], requires_grad=True)
        y = tensor(lib, [[2.0]]) @ w  # only d/dw is needed: mat2 is not kept
        y.grad_fn._raw_saved_mat2.register_hooks(lambda t: t, lambda t: t)

    def under_global_hooks():
        with lib.autograd.graph.saved_tensors_hooks(lambda t: t, lambda t: t):
            y = tensor(lib, [1.0], requires_grad=True).exp()
        y.grad_fn._raw_saved_result.register_hooks(lambda t: t, lambda t: t)

    return [outcome(f)[0] for f in (twice, after_free, not_saved, under_global_hooks)]


def test_raw_saved_register_hooks_errors_match_torch():
    assert raw_errors(ng) == raw_errors(torch) == ["RuntimeError"] * 4


@pytest.mark.parametrize(
    "phrase",
    [
        "whose hooks have already been set",
        "after it has been freed",
        "with value None is forbidden",
    ],
)
def test_raw_saved_register_hooks_messages_match_torch(phrase):
    def program(lib):
        x = tensor(lib, [1.0], requires_grad=True)
        y = x.exp()
        raw = y.grad_fn._raw_saved_result
        if phrase.startswith("whose"):
            raw.register_hooks(lambda t: t, lambda t: t)
        elif phrase.startswith("after"):
            y.backward()
        else:
            raw = (x * 2.0).grad_fn._raw_saved_self  # x * 2 keeps no copy of x
        return outcome(lambda: raw.register_hooks(lambda t: t, lambda t: t))

    ours, theirs = program(ng), program(torch)
    assert ours[0] == theirs[0] == "RuntimeError"
    assert phrase in ours[1] and phrase in theirs[1]


def double_backward_under_hooks(lib):
    x = tensor(lib, [1.0, 2.0], requires_grad=True)
    with lib.autograd.graph.saved_tensors_hooks(lambda t: t, lambda t: t):
        y = (x * x * x).exp().sum()
    (g,) = lib.autograd.grad(y, x, create_graph=True)
    (h,) = lib.autograd.grad(g.sum(), x)
    return g.tolist(), h.tolist()


def test_double_backward_through_hooked_nodes_matches_torch():
    ours, theirs = double_backward_under_hooks(ng), double_backward_under_hooks(torch)
    assert ours[0] == pytest.approx(theirs[0]) and ours[1] == pytest.approx(theirs[1])


# -- a product keeps only the factor the needed gradient reads ------------------------------------
# d(x @ w)/dw reads x's values and w's shape only: with only w requiring grad, torch keeps x
# alone, so w may be changed in place (an optimiser step under no_grad) before backward.

PRODUCT_SHAPES = [
    ((3, 4), (4, 2)),  # MmBackward0
    ((4,), (4, 2)),  # a vector times a matrix
    ((3, 4), (4,)),  # MvBackward0
    ((4,), (4,)),  # DotBackward0
    ((2, 3, 4), (4, 2)),  # batched
    ((4,), (2, 4, 3)),  # a vector times a batch
]


def product_then_change(lib, shapes, grads, changed):
    """``x @ w`` with ``grads`` saying which factor requires grad, then ``changed`` (a
    factor's name) updated in place under no_grad, then backward: the outcome and grads."""
    gen = torch.Generator().manual_seed(0)
    values = [torch.randn(shape, generator=gen, dtype=torch.float64) for shape in shapes]
    x, w = (
        lib.tensor(v.tolist(), dtype=lib.float64, requires_grad=g) for v, g in zip(values, grads)
    )
    out = x @ w
    with lib.no_grad():
        {"x": x, "w": w}[changed].add_(1.0)

    def finish():
        out.sum().backward()
        # rounded: the two libraries sum a product's terms in different orders
        return [None if t.grad is None else plain(t.grad, {}) for t in (x, w)]

    return outcome(finish)


@pytest.mark.parametrize("shapes", PRODUCT_SHAPES)
@pytest.mark.parametrize("grads", [(False, True), (True, False), (True, True)])
@pytest.mark.parametrize("changed", ["x", "w"])
def test_a_product_keeps_only_the_factor_its_needed_gradient_reads(shapes, grads, changed):
    # a vector that requires grad times a batch is folded, as torch, into (w.mT reshaped
    # to 6 x 4) @ x, whose node keeps that copy and so never sees w change
    ours = product_then_change(ng, shapes, grads, changed)
    theirs = product_then_change(torch, shapes, grads, changed)
    assert ours[0] == theirs[0]
    if ours[0] == "ok":
        assert ours == theirs
    else:
        assert "modified by an inplace operation" in ours[1]


@pytest.mark.parametrize("shapes", PRODUCT_SHAPES[:1] + PRODUCT_SHAPES[2:4])
@pytest.mark.parametrize("grads", [(False, True), (True, False)])
def test_a_products_saved_factors_read_as_torchs(shapes, grads):
    seen = []
    for lib in (torch, ng):  # torch first: its node tells which attributes to read
        x, w = (lib.ones(*s, dtype=lib.float64, requires_grad=g) for s, g in zip(shapes, grads))
        fn = (x @ w).grad_fn
        if lib is torch:  # the factors torch's node names, read on both nodes
            names = [n for n in dir(fn) if n.startswith("_saved_") and "sym" not in n]
        seen.append((fn.name(), {n: plain(getattr(fn, n), {"x": x, "w": w}) for n in names}))
    assert seen[1] == seen[0]
