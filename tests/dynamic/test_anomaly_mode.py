"""Anomaly detection (``ng.autograd.detect_anomaly``), side by side with torch's."""

import warnings

import numpy as np
import pytest

import naivegraph as ng

torch = pytest.importorskip("torch")


def nan_in_sqrt_backward(M):
    """x.sqrt() * 0 at x = 0: the forward is fine, SqrtBackward0 computes 0 / 0."""
    x = M.tensor([0.0, 4.0], requires_grad=True)
    y = (x.sqrt() * 0.0).sum()  # the line anomaly mode must point at
    y.backward()


def run_in_anomaly_mode(M, program):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with pytest.raises(RuntimeError) as error:
            with M.autograd.detect_anomaly():
                program(M)
    return str(error.value), [str(w.message) for w in caught]


def test_nan_in_backward_names_the_node_like_torch():
    want, _ = run_in_anomaly_mode(torch, nan_in_sqrt_backward)
    got, _ = run_in_anomaly_mode(ng, nan_in_sqrt_backward)
    assert want == "Function 'SqrtBackward0' returned nan values in its 0th output."
    assert got.startswith(want)


def test_nan_error_shows_the_line_that_created_the_node():
    got, _ = run_in_anomaly_mode(ng, nan_in_sqrt_backward)
    assert "test_anomaly_mode.py" in got
    assert "y = (x.sqrt() * 0.0).sum()  # the line anomaly mode must point at" in got


def test_entering_anomaly_mode_warns_like_torch():
    _, want = run_in_anomaly_mode(torch, nan_in_sqrt_backward)
    _, got = run_in_anomaly_mode(ng, nan_in_sqrt_backward)
    phrase = "Anomaly Detection has been enabled."
    assert any(phrase in w for w in want) and any(phrase in w for w in got)


def test_without_anomaly_mode_nan_passes_silently_as_in_torch():
    for M in (torch, ng):
        x = M.tensor([0.0], requires_grad=True)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            (x.sqrt() * 0.0).sum().backward()
        assert np.isnan(x.grad.numpy()).all()


def test_an_error_in_a_node_warns_with_its_creation_site():
    def program(M):
        x = M.tensor([1.0, 2.0], requires_grad=True)
        y = x.exp()
        y.add_(1.0)  # changes the output that ExpBackward0 saved
        y.sum().backward()

    _, want = run_in_anomaly_mode(torch, program)
    message, got = run_in_anomaly_mode(ng, program)
    assert "modified by an inplace operation" in message
    for warned in (want, got):
        assert any(
            w.startswith("Error detected in ExpBackward0") and "y = x.exp()" in w for w in warned
        ), warned


def test_check_nan_false_lets_nan_through():
    x = ng.tensor([0.0], requires_grad=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with ng.autograd.detect_anomaly(check_nan=False):
            assert ng.is_anomaly_enabled() and not ng.is_anomaly_check_nan_enabled()
            (x.sqrt() * 0.0).sum().backward()
    assert np.isnan(x.grad.numpy()).all()


def test_set_detect_anomaly_applies_at_once_and_restores_as_a_context():
    assert not ng.is_anomaly_enabled()
    with ng.autograd.set_detect_anomaly(True):
        assert ng.is_anomaly_enabled()
    assert not ng.is_anomaly_enabled()
    ng.autograd.set_detect_anomaly(True)
    try:
        assert ng.autograd.is_anomaly_enabled()
    finally:
        ng.autograd.set_detect_anomaly(False)
    assert not ng.is_anomaly_enabled()


def test_detect_anomaly_works_as_a_decorator_and_records_tracebacks():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")

        @ng.autograd.detect_anomaly()
        def forward():
            x = ng.tensor([1.0], requires_grad=True)
            return x * 2

        y = forward()
    assert not ng.is_anomaly_enabled()
    assert any("return x * 2" in line for line in y.grad_fn.metadata["traceback_"])


def test_nan_from_a_custom_function_is_caught():
    class Bad(ng.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x * 1

        @staticmethod
        def backward(ctx, g):
            return g * float("nan")

    x = ng.tensor([1.0], requires_grad=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with pytest.raises(RuntimeError, match="Function 'BadBackward' returned nan values"):
            with ng.autograd.detect_anomaly():
                Bad.apply(x).sum().backward()
