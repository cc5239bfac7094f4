"""Anomaly detection, as ``torch.autograd.detect_anomaly``: find the op behind a NaN.

While it is on, every recorded node keeps the user's stack at the moment the op ran
(``grad_fn.metadata["traceback_"]``).  A backward node that returns NaN then raises,
naming the node and the line that created it; any other error in a node is preceded by
a warning that shows that line.  It makes every op slower: use it to debug only.
"""

from __future__ import annotations

import functools
import os
import traceback
import warnings
from typing import Callable

import numpy as np

_PACKAGE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


class _Mode:
    """Process-wide, as torch's (not per thread)."""

    enabled = False
    check_nan = True


mode = _Mode()


def is_anomaly_enabled() -> bool:
    """Whether backward nodes record where they were created (``detect_anomaly``)."""
    return mode.enabled


def is_anomaly_check_nan_enabled() -> bool:
    """Whether anomaly mode also checks every backward output for NaN."""
    return mode.check_nan


class set_detect_anomaly:
    """Turn anomaly detection on or off now; as a context manager, until the block ends.

    >>> import naivegraph as ng
    >>> with ng.autograd.set_detect_anomaly(True):
    ...     ng.autograd.is_anomaly_enabled()
    True
    >>> ng.autograd.is_anomaly_enabled()
    False
    """

    def __init__(self, mode_on: bool, check_nan: bool = True) -> None:
        self._previous = (mode.enabled, mode.check_nan)
        mode.enabled, mode.check_nan = bool(mode_on), bool(check_nan)

    def __enter__(self) -> None:
        return None

    def __exit__(self, *exc) -> None:
        mode.enabled, mode.check_nan = self._previous


class detect_anomaly:
    """Context manager (or decorator) that turns anomaly detection on inside it.

    >>> import warnings, naivegraph as ng
    >>> x = ng.tensor([0.0], requires_grad=True)
    >>> with warnings.catch_warnings():  # doctest: +ELLIPSIS
    ...     warnings.simplefilter("ignore")
    ...     with ng.autograd.detect_anomaly():
    ...         y = (x.sqrt() * 0.0).sum()
    ...         y.backward()
    Traceback (most recent call last):
    ...
    RuntimeError: Function 'SqrtBackward0' returned nan values in its 0th output. ...
    """

    def __init__(self, check_nan: bool = True) -> None:
        self.check_nan = check_nan
        self._previous = (mode.enabled, mode.check_nan)
        warnings.warn(
            "Anomaly Detection has been enabled. This mode will increase the runtime "
            "and should only be enabled for debugging.",
            UserWarning,
            stacklevel=2,
        )

    def __enter__(self) -> None:
        self._previous = (mode.enabled, mode.check_nan)
        mode.enabled, mode.check_nan = True, self.check_nan

    def __exit__(self, *exc) -> None:
        mode.enabled, mode.check_nan = self._previous

    def __call__(self, function: Callable) -> Callable:
        @functools.wraps(function)
        def wrapper(*args, **kwargs):
            with self.__class__(self.check_nan):
                return function(*args, **kwargs)

        return wrapper


# -- used by the engine and the recorders ------------------------------------------------
def record_creation(node) -> None:
    """Keep the user's stack (frames outside naivegraph) in ``node.metadata``."""
    stack = [
        frame
        for frame in traceback.extract_stack()[:-1]
        if not os.path.abspath(frame.filename).startswith(_PACKAGE + os.sep)
    ]
    node.metadata["traceback_"] = traceback.format_list(stack)


def creation_site(node) -> str:
    """Where ``node`` was created, or a hint when it was created outside anomaly mode."""
    trace = node.metadata.get("traceback_") if hasattr(node, "metadata") else None
    if not trace:
        return (
            "No forward traceback was recorded: enable anomaly detection before the "
            "forward pass that created this node."
        )
    return "It was created at (most recent call last):\n" + "".join(trace[-3:]).rstrip()


def check_outputs(node, grad_inputs) -> None:
    """Raise torch's error if backward ``node`` returned NaN in any output."""
    if not mode.check_nan:
        return
    for i, grad in enumerate(grad_inputs):
        data = getattr(grad, "_data", grad)
        if isinstance(data, np.ndarray) and data.dtype.kind in "fc" and np.isnan(data).any():
            raise RuntimeError(
                f"Function '{node.name()}' returned nan values in its {i}th "
                f"output. {creation_site(node)}"
            )


def warn_error_in(node) -> None:
    """Before an error in backward ``node`` propagates: show where the node was made."""
    trace = node.metadata.get("traceback_") if hasattr(node, "metadata") else None
    if trace:
        warnings.warn(
            f"Error detected in {node.name()}. Traceback of forward call that caused "
            "the error:\n" + "".join(trace).rstrip(),
            UserWarning,
            stacklevel=2,
        )
