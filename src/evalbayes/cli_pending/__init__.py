"""CLI command modules waiting to be moved into ``evalbayes/cli/`` by the integrator."""
