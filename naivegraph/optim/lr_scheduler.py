"""Learning-rate schedules: ``scheduler.step()`` once per epoch changes every group's lr."""

from __future__ import annotations

from . import Optimizer


class LRScheduler:
    """Base class: keeps ``base_lrs`` and ``last_epoch``; subclasses say how lr changes.

    Built, it records each group's ``initial_lr`` and counts as epoch 0 (lr unchanged),
    as torch does.
    """

    def __init__(self, optimizer: Optimizer, last_epoch: int = -1) -> None:
        if not isinstance(optimizer, Optimizer):
            raise TypeError(f"{type(optimizer).__name__} is not an Optimizer")
        if last_epoch != -1 and any("initial_lr" not in g for g in optimizer.param_groups):
            raise KeyError(
                "param 'initial_lr' is not specified in param_groups when resuming "
                "an optimizer: pass last_epoch=-1 for a new schedule"
            )
        self.optimizer = optimizer
        for group in optimizer.param_groups:
            group.setdefault("initial_lr", group["lr"])
        self.base_lrs = [group["initial_lr"] for group in optimizer.param_groups]
        self.last_epoch = last_epoch
        self.step()

    def _next_lr(self, lr: float) -> float:  # pragma: no cover - defined by subclasses
        raise NotImplementedError

    def step(self) -> None:
        """Advance one epoch and set every group's lr for it."""
        self.last_epoch += 1
        if self.last_epoch > 0:
            for group in self.optimizer.param_groups:
                group["lr"] = self._next_lr(group["lr"])
        self._last_lr = [group["lr"] for group in self.optimizer.param_groups]

    def get_last_lr(self) -> list[float]:
        """The lr of each group set by the last ``step()``."""
        return list(self._last_lr)

    def state_dict(self) -> dict:
        """Everything but the optimiser (save that with its own ``state_dict``)."""
        return {key: value for key, value in self.__dict__.items() if key != "optimizer"}

    def load_state_dict(self, state_dict: dict) -> None:
        self.__dict__.update(state_dict)


class StepLR(LRScheduler):
    """Multiply lr by ``gamma`` every ``step_size`` epochs.

    >>> import naivegraph as ng
    >>> opt = ng.optim.SGD([ng.tensor([1.0], requires_grad=True)], lr=1.0)
    >>> scheduler = ng.optim.lr_scheduler.StepLR(opt, step_size=2, gamma=0.5)
    >>> lrs = []
    >>> for epoch in range(5):
    ...     lrs.append(scheduler.get_last_lr()[0]); opt.step(); scheduler.step()
    >>> lrs
    [1.0, 1.0, 0.5, 0.5, 0.25]
    """

    def __init__(
        self, optimizer: Optimizer, step_size: int, gamma: float = 0.1, last_epoch: int = -1
    ) -> None:
        if isinstance(step_size, bool) or not isinstance(step_size, int) or step_size < 1:
            raise ValueError(
                f"step_size must be a positive integer (epochs between two "
                f"changes of lr), got {step_size!r}"
            )
        self.step_size, self.gamma = step_size, gamma
        super().__init__(optimizer, last_epoch)

    def _next_lr(self, lr: float) -> float:
        # Chained, as torch's: lr changes by gamma exactly at multiples of step_size.
        return lr * self.gamma if self.last_epoch % self.step_size == 0 else lr


class ExponentialLR(LRScheduler):
    """Multiply lr by ``gamma`` every epoch.

    >>> import naivegraph as ng
    >>> opt = ng.optim.SGD([ng.tensor([1.0], requires_grad=True)], lr=1.0)
    >>> scheduler = ng.optim.lr_scheduler.ExponentialLR(opt, gamma=0.5)
    >>> opt.step(); scheduler.step(); scheduler.get_last_lr()
    [0.5]
    """

    def __init__(self, optimizer: Optimizer, gamma: float, last_epoch: int = -1) -> None:
        self.gamma = gamma
        super().__init__(optimizer, last_epoch)

    def _next_lr(self, lr: float) -> float:
        return lr * self.gamma


__all__ = ["LRScheduler", "StepLR", "ExponentialLR"]
