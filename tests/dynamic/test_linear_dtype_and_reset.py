"""nn.Linear: a dtype mismatch names which way to convert, for the dtypes at hand; and
reset_parameters draws the weights afresh as the constructor does (torch's method)."""

from __future__ import annotations

import numpy as np
import pytest

import naivegraph as ng


def test_a_double_input_to_a_float_layer_is_told_to_convert_the_input_to_float():
    layer = ng.nn.Linear(2, 3)
    with pytest.raises(RuntimeError) as error:
        layer(ng.ones(4, 2).double())
    message = str(error.value)
    assert "self and mat2 must have the same dtype, but got Double and Float" in message
    assert "convert the input to the layer's dtype (x.float())" in message
    assert "or the layer to the input's (layer.double())" in message


def test_a_float_input_to_a_double_layer_is_told_to_convert_the_input_to_double():
    layer = ng.nn.Linear(2, 3).double()
    with pytest.raises(RuntimeError) as error:
        layer(ng.ones(4, 2))
    message = str(error.value)
    assert "convert the input to the layer's dtype (x.double())" in message
    assert "or the layer to the input's (layer.float())" in message


def test_reset_parameters_draws_new_values_in_place_within_the_constructors_bound():
    layer = ng.nn.Linear(4, 3)
    weight, bias = layer.weight, layer.bias
    before = weight.detach().numpy().copy()
    assert layer.reset_parameters() is None
    assert layer.weight is weight and layer.bias is bias  # the same Parameters, refilled
    now = weight.detach().numpy()
    assert not np.array_equal(now, before)
    assert np.abs(now).max() <= 0.5 and np.abs(bias.detach().numpy()).max() <= 0.5  # 1/sqrt(4)
    assert weight.requires_grad and weight.grad_fn is None
    assert now.dtype == np.float32


def test_reset_parameters_keeps_a_double_layer_double_and_a_missing_bias_missing():
    layer = ng.nn.Linear(2, 2, bias=False).double()
    layer.reset_parameters()
    assert layer.bias is None
    assert layer.weight.dtype == ng.float64
