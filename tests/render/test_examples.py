"""The built-in examples the CLI draws (``naivegraph render`` / ``naivegraph tour``)."""

from __future__ import annotations

import os

import pytest

from naivegraph.render.examples import EXAMPLES, render_examples


def test_every_example_writes_forward_backward_and_freed_drawings(tmp_path):
    paths = render_examples(tmp_path, formats=("svg", "png"))
    names = {os.path.basename(p) for p in paths}
    for example in ("reference", "exp", "mlp"):
        for view in ("forward", "backward", "after_backward"):
            assert f"{example}_{view}.svg" in names and f"{example}_{view}.png" in names
    for view in ("forward", "run", "gradients", "optimized"):
        assert f"static_reference_{view}.png" in names
    assert all(os.path.getsize(p) > 500 for p in paths)
    after = (tmp_path / "reference_after_backward.svg").read_text()
    assert "freed" in after and "grad 28" in after
    gradients = (tmp_path / "reference_backward_gradients.svg").read_text()
    assert "∂loss/∂l1 = [[7, 7], [7, 7]]" in gradients and "∂loss/∂w1 = 28" in gradients
    assert "grad 28" not in gradients  # drawn before backward: no .grad yet
    assert "grad 56" not in after  # drawing the gradients accumulated nothing
    assert {n for n in names if "backward_gradients" in n} == {
        "reference_backward_gradients.svg",
        "reference_backward_gradients.png",
    }
    assert {"reference", "exp", "mlp", "static-reference"} <= set(EXAMPLES)


def test_a_subset_in_pdf(tmp_path):
    paths = render_examples(tmp_path, names=["exp"], formats=("pdf",))
    assert len(paths) == 3
    assert open(paths[0], "rb").read(4) == b"%PDF"


def test_unknown_example_or_format_is_a_clear_error(tmp_path):
    with pytest.raises(ValueError, match="unknown example.*reference"):
        render_examples(tmp_path, names=["nope"])
    with pytest.raises(ValueError, match="unsupported output format"):
        render_examples(tmp_path, names=["exp"], formats=("bmpx",))
