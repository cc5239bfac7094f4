"""A small training kit for the lessons: modules, layers and losses (PyTorch names)."""

from . import functional, init, losses
from .modules import (
    BCELoss,
    BCEWithLogitsLoss,
    CrossEntropyLoss,
    Embedding,
    Flatten,
    Linear,
    LogSoftmax,
    Module,
    MSELoss,
    NLLLoss,
    Parameter,
    ReLU,
    Sequential,
    Sigmoid,
    Softmax,
    Tanh,
)

__all__ = [
    "BCELoss",
    "BCEWithLogitsLoss",
    "CrossEntropyLoss",
    "Embedding",
    "Flatten",
    "Linear",
    "LogSoftmax",
    "MSELoss",
    "Module",
    "NLLLoss",
    "Parameter",
    "ReLU",
    "Sequential",
    "Sigmoid",
    "Softmax",
    "Tanh",
    "functional",
    "init",
    "losses",
]
