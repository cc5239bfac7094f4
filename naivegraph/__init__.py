"""naivegraph: computational graphs and reverse-mode autodiff, static and dynamic.

Dynamic (eager) mode speaks PyTorch:

>>> import naivegraph as ng
>>> x = ng.ones([2, 2])
>>> w1 = ng.tensor(2.0, requires_grad=True)
>>> loss = ((x * w1 + 3) * (x * w1 * 4)).mean()
>>> loss
tensor(40., grad_fn=<MeanBackward0>)
>>> loss.backward(); w1.grad
tensor(28.)

Static mode (build, then run) lives in :mod:`naivegraph.static`.
"""

from . import autograd, func, nn, optim, utils
from .dynamic.anomaly_mode import is_anomaly_check_nan_enabled, is_anomaly_enabled

# PyTorch's top-level surface for learner code (devices, default dtype, legacy types, files)
from .dynamic.defaults import cuda, device, get_default_dtype, set_default_dtype
from .dynamic.engine import backward
from .dynamic.factories import (
    DoubleTensor,
    FloatTensor,
    Generator,
    LongTensor,
    allclose,
    arange,
    as_tensor,
    bool_,
    cdouble,
    cfloat,
    complex64,
    complex128,
    double,
    empty,
    empty_like,
    equal,
    eye,
    float,
    float16,
    float32,
    float64,
    from_numpy,
    full,
    full_like,
    half,
    inference_mode,
    int8,
    int16,
    int32,
    int64,
    is_tensor,
    linspace,
    long,
    manual_seed,
    normal,
    numel,
    ones,
    ones_like,
    rand,
    rand_like,
    randint,
    randn,
    randn_like,
    randperm,
    short,
    tensor,
    uint8,
    zeros,
    zeros_like,
)
from .dynamic.functions import *  # noqa: F403  (ng.exp, ng.sum, ng.cat, ...)
from .dynamic.functions import __all__ as _function_names
from .dynamic.grad_mode import enable_grad, is_grad_enabled, no_grad, set_grad_enabled
from .dynamic.surface import Size, get_default_device, set_default_device
from .dynamic.tensor import Tensor
from .func import vmap  # torch.vmap is torch.func.vmap
from .serialization import load, save

__version__ = "0.1.0"

# Import the package first, then bind the function: importing a submodule sets the
# parent's attribute of the same name, so the function must come after it.
from . import export as _export  # noqa: F401  (installs ns.to_onnx: it sits above static mode)

# The fast layer plugs itself into the core's seams (naivegraph.fast.SEAMS), unless
# NAIVEGRAPH_FAST=0: then every function is the one the reading order shows.
from . import fast
from . import render as _render_package
from . import static as _static
from .render import render, walkthrough
from .render import walk_static as _walk_static

if fast.tricks.enabled:
    fast.install()

# ``ns.walkthrough`` shows its steps on a drawing, which static mode (below the renderer)
# cannot import: installed here, before any ``import naivegraph.static`` returns
_static.walkthrough = _walk_static.walkthrough

# torch.int and torch.bool: module attributes only, kept out of __all__ so that
# ``from naivegraph import *`` does not hide the builtins int and bool
int, bool = int32, bool_

__all__ = [
    "Tensor",
    "autograd",
    "backward",
    "enable_grad",
    "is_anomaly_check_nan_enabled",
    "is_anomaly_enabled",
    "is_grad_enabled",
    "nn",
    "no_grad",
    "optim",
    "render",
    "walkthrough",
    "set_grad_enabled",
    "utils",
    "vmap",
    "tensor",
    "ones",
    "zeros",
    "full",
    "rand",
    "randn",
    "arange",
    "from_numpy",
    "ones_like",
    "zeros_like",
    "full_like",
    "rand_like",
    "randn_like",
    "manual_seed",
    "normal",
    "randperm",
    "Generator",
    "float32",
    "float64",
    "int64",
    "device",
    "cuda",
    "get_default_dtype",
    "set_default_dtype",
    "FloatTensor",
    "DoubleTensor",
    "LongTensor",
    "inference_mode",
    "empty_like",
    "save",
    "load",
    "numel",
    "allclose",
    "equal",
    "is_tensor",
    "Size",
    "as_tensor",
    "get_default_device",
    "set_default_device",
] + list(_function_names)
