"""rlvr: Reinforcement Learning from Verifiable Rewards (see DESIGN.md)."""

import os

# OpenMP threads that busy-wait between parallel regions collapse when another process wants the
# same cores: a tiny-model training step on 2 threads went from 0.13 s to 4.5 s with a second busy
# process on this 2-core machine, and back to 0.12 s with passive waiting. Set before torch is
# imported (libgomp reads it once); an explicit OMP_WAIT_POLICY in the environment wins.
os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
