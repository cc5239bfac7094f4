"""Animations of a training step: frames rendered through the engine chain, GIF via Pillow."""

from __future__ import annotations

import pytest
from PIL import Image

from naivegraph.render import animate


def test_dynamic_step_grows_flows_back_and_frees(tmp_path):
    frames = animate.dynamic_step_frames()
    # 5 forward ops, one frame per gradient reaching l1..l4 and loss, freed, updated
    assert len(frames) == 5 + 5 + 2
    assert all(f.mode == "RGB" and f.width > 100 for f in frames)
    # the forward frames grow: each drawing is at least as tall as the one before
    heights = [f.height for f in frames[:5]]
    assert heights == sorted(heights) and heights[0] < heights[-1]
    paths = animate.save_animation(frames, tmp_path / "step.gif", tmp_path / "frames")
    gif = Image.open(paths[0])
    assert gif.format == "GIF" and gif.n_frames == len(frames)
    assert len(paths) == 1 + len(frames)
    assert Image.open(paths[1]).format == "PNG"


def test_the_step_really_trains_the_leaves():
    leaves, steps = animate.reference_steps()
    animate.dynamic_step_frames(leaves, steps, lr=0.01)
    assert leaves["w1"].item() == pytest.approx(2.0 - 0.28)
    assert leaves["w2"].item() == pytest.approx(3.0 - 0.08)
    assert leaves["w3"].item() == pytest.approx(4.0 - 0.10)


def test_static_graph_is_built_once_and_values_flow_on_each_run(tmp_path):
    frames = animate.static_run_frames()
    assert len(frames) == 1 + 3 * (5 + 1)  # built, then 3 runs of 5 ops each
    paths = animate.animate_static_runs(tmp_path / "static.gif")
    assert Image.open(paths[0]).n_frames == len(frames)


def test_no_frames_is_an_error(tmp_path):
    with pytest.raises(ValueError, match="no frames"):
        animate.save_animation([], tmp_path / "empty.gif")
