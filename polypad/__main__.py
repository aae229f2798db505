"""``python -m polypad``: the same command line as the ``polypad`` script."""

import sys

from polypad.cli import main

sys.exit(main())
