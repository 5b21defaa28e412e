"""rlvr: Reinforcement Learning from Verifiable Rewards (see DESIGN.md).

The library in layers; imports point down only (tests/unit/project/test_layers.py enforces it):

    errors, schema, files, seeds, progress, procs   the foundation: no rlvr imports above it
    config/     the one config tree (pydantic), loaded from one TOML file
    store/      the run store: commit records, runs, locks, retention, integrity
    verify/  rollout/  train/   the components: scoring, sampling, the GRPO update; they never
                import each other and never commit (stages do)
    problems/   datasets and the one prompt path
    models/     the model registry, the embedded tiny model, policy loading
    checks/     preflight, doctor, starting a run
    stages/     prepare, rollout, verify, update, evaluate; import and rescore
    views/      sql, status, report, prompt preview, `rlvr eval` folders, `rlvr export`: they never write a run
    rlvr.tasks, rlvr.flows (tasks/, flows/)   Prefect tasks and flows, and the CLI (flows/cli/)

The shipped tasks' data and loaders are rlvr.data (data/); the builders of its files, rlvr.data.generators.
"""

import os

# OpenMP threads that busy-wait between parallel regions collapse when another process wants the
# same cores: a tiny-model training step on 2 threads went from 0.13 s to 4.5 s with a second busy
# process on this 2-core machine, and back to 0.12 s with passive waiting. Set before torch is
# imported (libgomp reads it once); an explicit OMP_WAIT_POLICY in the environment wins.
os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
