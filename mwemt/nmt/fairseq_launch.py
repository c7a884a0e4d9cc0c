"""``fairseq-train`` under torchrun on CPU: run as ``torchrun ... -m mwemt.nmt.fairseq_launch ARGS``.

fairseq's own torchrun support computes ``rank % torch.cuda.device_count()`` and so fails on a
machine without GPUs. This entry point only passes torchrun's rank and world size to fairseq as
its documented ``--distributed-*`` flags (env:// rendezvous, no spawning) and then runs the
unchanged ``fairseq_cli.train``: the training loop, gradient all-reduce and checkpointing are
fairseq's.
"""

from __future__ import annotations

import os
import sys

from mwemt.process_tree import die_with_parent


def main() -> None:
    die_with_parent()   # torchrun's agent is our parent: when it dies (killed with its run), so do we
    missing = [k for k in ("RANK", "WORLD_SIZE", "MASTER_ADDR", "MASTER_PORT") if k not in os.environ]
    if missing:
        sys.exit(f"mwemt.nmt.fairseq_launch must run under torchrun (missing {', '.join(missing)})")
    sys.argv += ["--distributed-init-method", "env://", "--distributed-no-spawn",
                 "--distributed-rank", os.environ["RANK"], "--distributed-world-size", os.environ["WORLD_SIZE"],
                 "--device-id", os.environ.get("LOCAL_RANK", "0")]
    from fairseq_cli.train import cli_main

    cli_main()


if __name__ == "__main__":
    main()
