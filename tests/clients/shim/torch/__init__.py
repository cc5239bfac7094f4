"""naivegraph posing as torch, for the client corpus: ``import torch`` (and any
``torch.X.Y``) resolves to ``naivegraph`` (``naivegraph.X.Y``), so a PyTorch program runs
unchanged.  Put this directory first on PYTHONPATH to use it."""

import importlib
import importlib.abc
import importlib.machinery
import sys

import naivegraph


class _Alias(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """Finds ``torch.X`` as the already-importable ``naivegraph.X``."""

    def find_spec(self, name, path=None, target=None):
        if not name.startswith("torch."):
            return None
        try:
            module = importlib.import_module("naivegraph" + name[len("torch") :])
        except ModuleNotFoundError:
            return None  # a missing submodule is reported under its torch name
        spec = importlib.machinery.ModuleSpec(name, self, is_package=True)
        spec.loader_state = (module, module.__spec__)
        return spec

    def create_module(self, spec):
        return spec.loader_state[0]

    def exec_module(self, module):
        # importing stamps the torch spec on the module: give naivegraph's back
        module.__spec__ = module.__spec__.loader_state[1]


sys.meta_path.insert(0, _Alias())
sys.modules["torch"] = naivegraph
