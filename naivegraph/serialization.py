"""``ng.save`` / ``ng.load``: tensors and containers of them in a ``.npz`` file, no pickle.

The file is an ordinary numpy ``.npz`` archive: one array per tensor (``t0``, ``t1``, ...)
and a JSON description of the saved object (``__naivegraph__``).  Loading reads arrays
and JSON only, so a file can never run code, unlike torch's pickle-based format.
"""

from __future__ import annotations

import io
import json
import os
import zipfile
from collections import OrderedDict
from typing import Any, BinaryIO

import numpy as np

from .dynamic.tensor import Tensor, _check_device
from .nn.modules import Parameter

_HEADER = "__naivegraph__"
_FORMAT = 1
_SCALARS = (bool, int, float, str, type(None))


class _Encoder:
    """Turns an object into JSON-ready data plus the list of arrays it refers to."""

    def __init__(self) -> None:
        self.arrays: list[np.ndarray] = []
        self._seen: dict[int, int] = {}  # id(tensor) -> its number: a shared tensor once
        self._storages: dict[int, int] = {}  # id(storage array) -> array index

    def encode(self, obj: Any, where: str) -> Any:
        if isinstance(obj, Tensor):
            return self._tensor(obj)
        if isinstance(obj, _SCALARS):
            return {"value": obj}
        if isinstance(obj, (list, tuple)):
            kind = "list" if isinstance(obj, list) else "tuple"
            return {kind: [self.encode(v, f"{where}[{i}]") for i, v in enumerate(obj)]}
        if isinstance(obj, dict):
            return self._dict(obj, where)
        raise TypeError(
            f"ng.save cannot store {where}, a {type(obj).__name__}: it stores "
            "tensors, numbers, strings, None and lists, tuples and dicts of them "
            "(save a module's state_dict(), not the module)"
        )

    def _tensor(self, t: Tensor) -> dict:
        """A tensor as its storage (the array its data is a view of, stored once) and,
        for a view, where in it the data lies: two views of one storage come back
        sharing it, as torch's files keep them."""
        data = np.asarray(t._data)
        storage = _storage_of(data)
        if id(storage) not in self._storages:
            self._storages[id(storage)] = len(self.arrays)
            self.arrays.append(storage)  # kept in the list: its id stays unique
        self._seen.setdefault(id(t), len(self._seen))
        entry = {
            "tensor": self._storages[id(storage)],
            "id": self._seen[id(t)],
            "requires_grad": t.requires_grad,
            "parameter": isinstance(t, Parameter),
        }
        if data is not storage:
            entry["view"] = {
                "offset": _address(data) - _address(storage),
                "shape": list(data.shape),
                "strides": list(data.strides),
                "dtype": data.dtype.str,
            }
        return entry

    def _dict(self, obj: dict, where: str) -> dict:
        items = []
        for key, value in obj.items():
            if not isinstance(key, _SCALARS):
                raise TypeError(
                    f"ng.save cannot store the dict key {key!r} in {where}: keys "
                    "must be strings, numbers, booleans or None"
                )
            items.append([self.encode(key, where), self.encode(value, f"{where}[{key!r}]")])
        return {"dict": items, "ordered": isinstance(obj, OrderedDict)}


def _storage_of(data: np.ndarray) -> np.ndarray:
    """The array owning ``data``'s memory, if it is one laid out as a file stores it
    (contiguous); else ``data`` itself (saved as a copy of its own)."""
    root = data
    while isinstance(root.base, np.ndarray):
        root = root.base
    contiguous = root.flags.c_contiguous or root.flags.f_contiguous
    return root if contiguous and not root.dtype.hasobject else data


def _address(array: np.ndarray) -> int:
    return array.__array_interface__["data"][0]


def save(obj: Any, f: str | os.PathLike | BinaryIO) -> None:
    """Write ``obj`` (a tensor, a number, a state dict, or lists/tuples/dicts of them) to
    ``f``, a path or a binary file, exactly there (no suffix is added).

    >>> import io, naivegraph as ng
    >>> buffer = io.BytesIO()
    >>> ng.save({"w": ng.tensor([1.0, 2.0]), "step": 3}, buffer)
    >>> _ = buffer.seek(0); ng.load(buffer)
    {'w': tensor([1., 2.]), 'step': 3}
    """
    encoder = _Encoder()
    description = encoder.encode(obj, "the object")  # before touching the file
    header = json.dumps({"format": _FORMAT, "object": description})
    arrays = {f"t{i}": a for i, a in enumerate(encoder.arrays)}
    arrays[_HEADER] = np.frombuffer(header.encode("utf-8"), dtype=np.uint8)
    buffer = io.BytesIO()
    np.savez(buffer, **arrays)
    if isinstance(f, (str, os.PathLike)):
        with open(f, "wb") as file:
            file.write(buffer.getvalue())
    else:
        f.write(buffer.getvalue())


def load(f: str | os.PathLike | BinaryIO, map_location=None, weights_only: bool = True) -> Any:
    """Read back what ``save`` wrote.  Shared tensors come back shared, parameters as
    ``nn.Parameter``; ``map_location`` may only name the CPU.

    >>> import io, naivegraph as ng
    >>> buffer = io.BytesIO(); ng.save([ng.ones(2), 1.5], buffer); _ = buffer.seek(0)
    >>> ng.load(buffer)
    [tensor([1., 1.]), 1.5]
    """
    if map_location is not None and not callable(map_location):
        _check_device(map_location)
    name = os.fspath(f) if isinstance(f, (str, os.PathLike)) else "the file"
    try:
        with np.load(f, allow_pickle=False) as archive:
            header = json.loads(bytes(archive[_HEADER]).decode("utf-8"))
            arrays = {key: archive[key] for key in archive.files if key != _HEADER}
    except FileNotFoundError:
        raise
    except (
        zipfile.BadZipFile,
        ValueError,
        KeyError,
        OSError,
        EOFError,
        TypeError,
        UnicodeDecodeError,
    ):
        raise RuntimeError(
            f"ng.load: {name} is not a file written by ng.save: ng.load reads "
            "only ng.save's .npz files (never pickle, so not torch's files); "
            "save the data again with ng.save"
        ) from None
    if not isinstance(header, dict) or header.get("format") != _FORMAT:
        raise RuntimeError(
            f"ng.load: {name} has an unknown format version "
            f"{header.get('format') if isinstance(header, dict) else header!r}; "
            "it was written by another version of naivegraph"
        )
    try:
        return _Decoder(arrays).decode(header["object"])
    except (KeyError, TypeError, IndexError, ValueError) as error:
        raise RuntimeError(
            f"ng.load: {name} is damaged: its description does not match its "
            f"arrays ({type(error).__name__}: {error})"
        ) from None


class _Decoder:
    def __init__(self, arrays: dict[str, np.ndarray]) -> None:
        self.arrays = arrays
        self._made: dict[int, Tensor] = {}

    def decode(self, data: dict) -> Any:
        if "tensor" in data:
            return self._tensor(data)
        if "value" in data:
            return data["value"]
        if "list" in data:
            return [self.decode(v) for v in data["list"]]
        if "tuple" in data:
            return tuple(self.decode(v) for v in data["tuple"])
        if "dict" in data:
            kind = OrderedDict if data["ordered"] else dict
            return kind((self.decode(k), self.decode(v)) for k, v in data["dict"])
        raise ValueError(f"unknown entry {sorted(data)}")

    def _tensor(self, data: dict) -> Tensor:
        index = int(data["tensor"])
        key = int(data.get("id", index))  # files before views were kept: one per array
        if key not in self._made:
            array = self.arrays[f"t{index}"]
            view = data.get("view")
            if view is not None:  # a view into the storage, sharing its memory
                array = np.ndarray(
                    tuple(int(n) for n in view["shape"]),
                    np.dtype(view["dtype"]),
                    buffer=array,
                    offset=int(view["offset"]),
                    strides=tuple(int(n) for n in view["strides"]),
                )
            if data["parameter"]:
                t = Parameter(Tensor._make(array, False, None, 0), data["requires_grad"])
            else:
                t = Tensor._make(array, False, None, 0)
                t.requires_grad = bool(data["requires_grad"])
            self._made[key] = t
        return self._made[key]
