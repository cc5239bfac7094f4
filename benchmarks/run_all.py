"""Run every benchmark in this folder, one after another: ``python benchmarks/run_all.py``."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
SCRIPTS = ["bench_dynamic.py", "bench_static.py", "bench_scale.py"]


def main() -> int:
    status = 0
    for name in SCRIPTS:
        script = HERE / name
        if not script.exists():
            print(f"skipping {name}: not present")
            continue
        print(f"\n$ python benchmarks/{name}", flush=True)
        status |= subprocess.call([sys.executable, str(script), *sys.argv[1:]])
    return status


if __name__ == "__main__":
    sys.exit(main())
