"""A Slurm array task's entry point: datatrove's ``launch_pickled_pipeline``, after a SHA-256 check.

datatrove's Slurm executor pickles itself (``dill``) to ``<logs>/executor.pik`` in the run folder and each array
task runs ``launch_pickled_pipeline <that file>``, which unpickles whatever the file holds when the task starts
-- minutes or hours after submission. Anyone who can write the run folder in between would run code on the
cluster. ``pipeline.slurm.WaitingSlurmExecutor`` therefore submits ``python -m pipeline.slurm_launch PATH SHA256``
with the digest of the file it wrote (the batch script itself is copied by ``sbatch`` at submission); a file
that no longer matches is refused (exit 2) without being unpickled. The one ``dill.loads`` of the product
(``tests/e2e/test_safe_loading.py`` allows it here only).
"""

from __future__ import annotations

import hashlib
import sys

import dill
from datatrove.io import open_file


def main(argv: list[str] | None = None) -> int:
    path, expected = argv if argv is not None else sys.argv[1:]
    with open_file(path, "rb") as handle:
        data = handle.read()
    if hashlib.sha256(data).hexdigest() != expected:
        print(f"error: {path} changed after the job was submitted (SHA-256 mismatch); not loaded", file=sys.stderr)
        return 2
    executor = dill.loads(data)  # the bytes the submitting run wrote, checked above
    executor.run()
    return 0


if __name__ == "__main__":
    sys.exit(main())
