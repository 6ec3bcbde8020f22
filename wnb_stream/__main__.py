"""``python -m wnb_stream``: the same as the ``wnb-stream`` command."""

import sys

from wnb_stream.apps.cli import main

if __name__ == "__main__":  # not when a tool (pytest --doctest-modules) imports the module
    sys.exit(main())
