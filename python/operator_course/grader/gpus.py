"""The GPUs a grader uses, and which of them each concurrent job gets (issue 32).

One worker slot per concurrent job; slot i runs on GPU i mod G, so the jobs spread over every
GPU of the host, each sandbox sees only its own (CUDA_VISIBLE_DEVICES: the sandbox's CUDA
numbers it 0), and a timed check takes the lock of its GPU only: timings on different GPUs
run at once, two on one GPU never do. The ratios a timing reports are against torch measured
in the same process on the same GPU, so a submission's points do not depend on which GPU it
landed on.

    gpus.visible(None)        # every GPU this process may use: ['0', '1', ...] or [] without CUDA
    gpus.visible("2,3")       # --gpus 2,3
    gpus.slots(4, ['0', '1']) # ['0', '1', '0', '1']: the GPU of each of 4 job slots
"""

from __future__ import annotations

import os


def visible(spec: str | None, count: int | None = None) -> list[str]:
    """The GPU ids to grade on: ``spec`` ("0,2", from --gpus) if given, else those
    CUDA_VISIBLE_DEVICES names, else 0 .. count - 1 (count: torch.cuda.device_count(), asked
    when None). Ids are as CUDA_VISIBLE_DEVICES takes them (indices, or GPU-/MIG- UUIDs)."""
    if spec is not None:
        ids = [s.strip() for s in spec.split(",") if s.strip()]
        if not ids or len(set(ids)) != len(ids):
            raise ValueError(f"--gpus {spec!r}: name each GPU once, comma-separated (e.g. 0,1)")
        return ids
    if count is None:
        import torch

        count = torch.cuda.device_count() if torch.cuda.is_available() else 0
    inherited = os.environ.get("CUDA_VISIBLE_DEVICES")
    if inherited is not None and inherited.strip():
        ids = [s.strip() for s in inherited.split(",") if s.strip()]
        return ids[:count] if count else []
    return [str(i) for i in range(count)]


def slots(jobs: int, ids: list[str]) -> list[str | None]:
    """The GPU of each of ``jobs`` concurrent job slots: round robin over ``ids`` (None: no GPU)."""
    return [ids[i % len(ids)] if ids else None for i in range(jobs)]
