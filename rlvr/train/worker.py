"""One rank of a multi-process update: `torchrun ... -m rlvr.train.worker SPEC.json`.

The update stage starts this with `update.nproc` processes when nproc > 1 (gloo on CPU;
nccl for CUDA tensors and gloo for host ones on CUDA); each rank runs rlvr.train.update.run_update on its share of the micro-batches (DDP or
FSDP2, as update.strategy says) and rank 0 writes the checkpoint, the metrics and SPEC.json's
stats next to it.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import torch.distributed as tdist

from rlvr.models.load import resolve_device
from rlvr.train.update import UpdateSpec, run_update


def main(spec_path: str) -> None:
    spec = UpdateSpec.model_validate_json(Path(spec_path).read_text())
    # NCCL for CUDA tensors, gloo for the host's (the step's metric sums, Dist.min/max): NCCL alone
    # refuses a CPU tensor
    cuda = resolve_device(spec.config.update.device).type == "cuda"
    tdist.init_process_group(backend="cpu:gloo,cuda:nccl" if cuda else "gloo")
    try:
        stats = run_update(spec)
        if tdist.get_rank() == 0:
            Path(spec_path).with_suffix(".stats.json").write_text(json.dumps(stats))
    finally:
        tdist.destroy_process_group()


if __name__ == "__main__":
    main(sys.argv[1])
