"""Grad mode: whether new ops record history.  Thread-local, as in PyTorch."""

from __future__ import annotations

import functools
import threading
from typing import Any


class _State(threading.local):
    enabled = True
    inference = False  # inside inference_mode(): new tensors are inference tensors


_state = _State()
#: how many inference_mode blocks are open, in all threads: the hot paths test this
#: plain number first and read the thread-local flag only when some block is open
inference_users = [0]
_inference_lock = threading.Lock()


def count_inference_user(delta: int) -> None:
    with _inference_lock:
        inference_users[0] += delta


INFERENCE_SAVED = (
    "Inference tensors cannot be saved for backward. Please do not use Tensors created in "
    "inference mode in computation tracked by autograd. To work around this, you can make a "
    "clone to get a normal tensor and use it in autograd, or use `torch.no_grad()` instead of "
    "`torch.inference_mode()`."
)
INFERENCE_INPLACE = (
    "Inplace update to inference tensor outside InferenceMode is not allowed.You can make a "
    "clone to get a normal tensor before doing inplace update.See "
    "https://github.com/pytorch/rfcs/pull/17 for more details."
)


class _InferenceCounter:
    """What an inference tensor has for a version counter: none that works outside
    inference mode.  Saving the tensor for backward reads its version (refused where
    autograd records); changing it in place bumps it (refused anywhere outside).  Its
    views share it."""

    __slots__ = ()

    @property
    def value(self) -> int:
        if _state.enabled and not _state.inference:
            raise RuntimeError(INFERENCE_SAVED)
        return 0

    @value.setter
    def value(self, new: int) -> None:
        if not _state.inference:
            raise RuntimeError(INFERENCE_INPLACE)


INFERENCE = _InferenceCounter()


def mark_inference(tensor: Any) -> Any:
    """Make ``tensor`` (just created inside inference mode) an inference tensor."""
    if tensor._version_counter is None:
        tensor._version_counter = INFERENCE
    return tensor


def is_grad_enabled() -> bool:
    """True when new ops record a ``grad_fn`` (the default).

    >>> import naivegraph as ng
    >>> with ng.no_grad():
    ...     ng.is_grad_enabled()
    False
    """
    return _state.enabled


class _GradModeContext:
    """Base for context managers that also work as function decorators."""

    mode: bool

    def __enter__(self) -> None:
        self._previous = _state.enabled
        _state.enabled = self.mode

    def __exit__(self, *exc) -> None:
        _state.enabled = self._previous

    def __call__(self, function):
        if isinstance(self, set_grad_enabled):
            _state.enabled = self._previous  # used as a decorator: no lasting effect
        mode = self.mode

        @functools.wraps(function)
        def wrapper(*args, **kwargs):
            previous = _state.enabled
            _state.enabled = mode
            try:
                return function(*args, **kwargs)
            finally:
                _state.enabled = previous

        return wrapper


class _NoParamDecorator(_GradModeContext):
    """Also usable bare, ``@ng.no_grad`` without parentheses, as in PyTorch 2.x."""

    def __new__(cls, function=None):
        self = super().__new__(cls)
        if function is None:
            return self
        return self(function)


class no_grad(_NoParamDecorator):
    """Ops inside record no history: outputs have ``requires_grad=False``.

    >>> import naivegraph as ng
    >>> w = ng.tensor(2.0, requires_grad=True)
    >>> with ng.no_grad():
    ...     y = w * 3
    >>> y.requires_grad
    False
    """

    mode = False


class enable_grad(_NoParamDecorator):
    """Turn history recording back on inside a ``no_grad`` block."""

    mode = True


class set_grad_enabled(_GradModeContext):
    """Set grad mode to ``mode``: at once as a call, or for a block as a context manager.

    >>> import naivegraph as ng
    >>> with ng.set_grad_enabled(False):
    ...     ng.is_grad_enabled()
    False
    """

    def __init__(self, mode: bool) -> None:
        self.mode = bool(mode)
        self._previous = _state.enabled
        _state.enabled = self.mode  # PyTorch applies it immediately, too

    def __enter__(self) -> None:
        pass

    def __exit__(self, *exc) -> None:
        _state.enabled = self._previous
