"""``ng.utils``: torch.utils' learner-facing part, ``ng.utils.data`` (datasets and loaders)."""

from . import data

__all__ = ["data"]
