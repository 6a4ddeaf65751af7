"""``python -m evalbayes``: the ``evalbayes`` command (as ``python -m evalbayes.cli``).

Guarded: a Dask worker process started by spawn (``fit --workers N``) imports this module
again as ``__mp_main__``, which must not run the command a second time.
"""

import sys

from evalbayes.cli import main

if __name__ == "__main__":
    sys.exit(main())
