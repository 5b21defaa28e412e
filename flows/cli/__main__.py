"""`python -m rlvr.flows.cli ...`: the same as `rlvr ...` (the tests start the CLI this way)."""

from rlvr.flows.cli import main

main()
