"""Run every client program in this one process and write what each printed as JSON.

``python run_programs.py OUT.json a.py b.py ...``: importing torch (or naivegraph) once
for the whole corpus, rather than once per program, keeps the corpus fast.  Between
programs the default dtype is put back, so no program sees another's setting.
"""

from __future__ import annotations

import contextlib
import io
import json
import runpy
import sys
import traceback

import torch


def run_one(path: str) -> dict:
    default_dtype = torch.get_default_dtype()
    out = io.StringIO()
    error = None
    try:
        with contextlib.redirect_stdout(out):
            runpy.run_path(path, run_name="__main__")
    except BaseException:  # noqa: BLE001 - a failing program is reported, not fatal
        error = traceback.format_exc()
    finally:
        torch.set_default_dtype(default_dtype)
    return {"stdout": out.getvalue(), "error": error}


def main(argv: list[str]) -> None:
    target, paths = argv[0], argv[1:]
    results = {path: run_one(path) for path in paths}
    with open(target, "w") as f:
        json.dump(results, f)


if __name__ == "__main__":
    main(sys.argv[1:])
