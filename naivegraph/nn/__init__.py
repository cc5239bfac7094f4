"""A small training kit for the lessons: modules, layers and losses (PyTorch names)."""

from . import functional
from .modules import (CrossEntropyLoss, Linear, Module, MSELoss, Parameter, ReLU, Sequential,
                      Sigmoid, Tanh)

__all__ = ["CrossEntropyLoss", "Linear", "MSELoss", "Module", "Parameter", "ReLU", "Sequential",
           "Sigmoid", "Tanh", "functional"]
