"""Command modules waiting to move into ``evalbayes/cli/`` (integrator: move ``plan.py``,
``gate.py`` and ``_decisions_io.py``, or point them at ``cli/_common.py``, and register
``"plan"`` and ``"gate"`` in ``COMMANDS``; then delete this folder). Each module defines
``HELP``, ``add_arguments(parser)`` and ``run(args) -> int``.
"""
