"""``python -m hiredlock``: the ``hiredlock`` command (``hiredlock run ...``)."""

import sys

from ._run import main

sys.exit(main())
