"""``python -m evalbayes``: the ``evalbayes`` command (as ``python -m evalbayes.cli``)."""

import sys

from evalbayes.cli import main

sys.exit(main())
