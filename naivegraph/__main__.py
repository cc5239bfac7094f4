"""``python -m naivegraph``: the same as the ``naivegraph`` command."""

import sys

from .cli import main

if __name__ == "__main__":
    sys.exit(main())
