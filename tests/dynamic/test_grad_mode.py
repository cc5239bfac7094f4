"""Grad mode: no_grad, enable_grad, set_grad_enabled; context managers, decorators, threads."""

from __future__ import annotations

import threading

import pytest

import naivegraph as ng


@pytest.fixture
def w():
    return ng.tensor([1.0, 2.0], requires_grad=True)


def test_no_grad_context_records_nothing(w):
    with ng.no_grad():
        assert ng.is_grad_enabled() is False
        y = w * 2
    assert ng.is_grad_enabled() is True
    assert y.requires_grad is False and y.grad_fn is None and y.is_leaf


def test_enable_grad_inside_no_grad(w):
    with ng.no_grad():
        with ng.enable_grad():
            assert ng.is_grad_enabled()
            y = w * 2
        assert not ng.is_grad_enabled()
    assert y.requires_grad and y.grad_fn.name() == "MulBackward0"


def test_set_grad_enabled_as_context_and_as_call(w):
    with ng.set_grad_enabled(False):
        assert (w * 2).requires_grad is False
    assert ng.is_grad_enabled()
    ng.set_grad_enabled(False)
    try:
        assert not ng.is_grad_enabled()
        assert (w * 2).grad_fn is None
    finally:
        ng.set_grad_enabled(True)
    assert ng.is_grad_enabled()
    with ng.set_grad_enabled(True):
        assert (w * 2).requires_grad


def test_no_grad_decorator_with_parentheses(w):
    @ng.no_grad()
    def double(t):
        return t * 2, ng.is_grad_enabled()

    y, enabled = double(w)
    assert enabled is False and y.requires_grad is False
    assert ng.is_grad_enabled()
    assert double.__name__ == "double"


def test_enable_grad_and_set_grad_enabled_decorators(w):
    @ng.enable_grad()
    def tracked(t):
        return t * 2

    @ng.set_grad_enabled(False)
    def untracked(t):
        return t * 2

    assert ng.is_grad_enabled()  # defining the decorator changed nothing
    with ng.no_grad():
        assert tracked(w).requires_grad
    assert untracked(w).requires_grad is False
    assert ng.is_grad_enabled()


def test_grad_mode_restored_after_exception(w):
    with pytest.raises(ValueError):
        with ng.no_grad():
            raise ValueError
    assert ng.is_grad_enabled()

    @ng.no_grad()
    def boom():
        raise ValueError

    with pytest.raises(ValueError):
        boom()
    assert ng.is_grad_enabled()


def test_nested_no_grad_restores_outer_state():
    with ng.no_grad():
        with ng.no_grad():
            pass
        assert not ng.is_grad_enabled()
    assert ng.is_grad_enabled()


def test_no_grad_in_one_thread_does_not_affect_another(w):
    inside = threading.Event()
    checked = threading.Event()
    seen = {}

    def worker():
        with ng.no_grad():
            seen["worker_enabled"] = ng.is_grad_enabled()
            seen["worker_y"] = w * 2
            inside.set()
            checked.wait(5)

    thread = threading.Thread(target=worker)
    thread.start()
    assert inside.wait(5)
    try:
        assert ng.is_grad_enabled()  # main thread unaffected while the worker is inside
        y = w * 2
        assert y.requires_grad
    finally:
        checked.set()
        thread.join(5)
    assert seen["worker_enabled"] is False
    assert seen["worker_y"].requires_grad is False


def test_grad_enabled_in_one_thread_while_main_is_in_no_grad(w):
    seen = {}

    def worker():
        seen["enabled"] = ng.is_grad_enabled()
        seen["y"] = w * 2

    with ng.no_grad():
        thread = threading.Thread(target=worker)
        thread.start()
        thread.join(5)
        assert not ng.is_grad_enabled()
    assert seen["enabled"] is True and seen["y"].requires_grad


def test_backward_does_not_change_grad_mode(w):
    (w * w).sum().backward()
    assert ng.is_grad_enabled()
    with ng.no_grad():
        pass
    x = ng.tensor(1.0, requires_grad=True)
    with ng.no_grad():
        y = x * 1
    assert not y.requires_grad


def test_no_grad_and_enable_grad_work_as_bare_decorators(w):
    @ng.no_grad
    def untracked(t):
        return t * 2

    @ng.enable_grad
    def tracked(t):
        return t * 2

    assert untracked(w).requires_grad is False
    with ng.no_grad():
        assert tracked(w).requires_grad is True
    assert ng.is_grad_enabled() and untracked.__name__ == "untracked"


# -- inference tensors: made in inference_mode, refused by autograd outside it ----------------
INFERENCE_SAVED = "Inference tensors cannot be saved for backward"
INFERENCE_INPLACE = "Inplace update to inference tensor outside InferenceMode is not allowed"


def _inference_tensor(lib):
    with lib.inference_mode():
        made = lib.ones(2, dtype=lib.float64)
        doubled = made * 2  # an op's result is one too
    return made, doubled


@pytest.mark.parametrize("lib_name", ["naivegraph", "torch"])
@pytest.mark.parametrize(
    "use",
    [lambda x, t: x * t, lambda x, t: t * x, lambda x, t: x @ t, lambda x, t: x * t[:1]],
    ids=["mul", "rmul", "matmul", "mul_view"],
)
def test_an_inference_tensor_saved_for_backward_is_refused_as_torch(lib_name, use):
    lib = pytest.importorskip("torch") if lib_name == "torch" else ng
    made, doubled = _inference_tensor(lib)
    assert made.is_inference() and doubled.is_inference()
    x = lib.ones(2, dtype=lib.float64, requires_grad=True)
    for t in (made, doubled):
        with pytest.raises(RuntimeError, match=INFERENCE_SAVED):
            use(x, t)
    (x + made).sum().backward()  # nothing saved: allowed
    assert x.grad.tolist() == [1.0, 1.0]
    (x * made.clone()).sum().backward()  # a clone is a normal tensor
    assert x.grad.tolist() == [2.0, 2.0]


@pytest.mark.parametrize("lib_name", ["naivegraph", "torch"])
def test_an_inference_tensor_changed_in_place_outside_inference_mode_is_refused(lib_name):
    lib = pytest.importorskip("torch") if lib_name == "torch" else ng
    made, _ = _inference_tensor(lib)
    with pytest.raises(RuntimeError, match=INFERENCE_INPLACE):
        made.add_(1)
    with lib.no_grad(), pytest.raises(RuntimeError, match=INFERENCE_INPLACE):
        made[:1].mul_(2)  # under no_grad too
    if lib is ng:  # refused before any change (torch writes, then raises)
        assert made.tolist() == [1.0, 1.0]
    with lib.inference_mode():  # inside: allowed
        made.copy_(lib.ones(2, dtype=lib.float64))
        made[:1].mul_(2)
    assert made.tolist() == [2.0, 1.0]


def test_tensors_made_outside_inference_mode_and_their_views_inside_stay_normal():
    normal = ng.ones(2, dtype=ng.float64)
    with ng.no_grad():
        plain = ng.ones(2) * 2
    with ng.inference_mode():
        view = normal[:1]
        with ng.inference_mode(False):
            recorded = ng.ones(2)
    assert not (normal.is_inference() or plain.is_inference() or view.is_inference())
    assert not recorded.is_inference()
