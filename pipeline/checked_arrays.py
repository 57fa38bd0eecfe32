"""Arrays on disk that cannot run code when read: ``.npz`` loaded with ``allow_pickle=False``, checked by SHA-256.

Seen on main ``b7eca32`` (issue 19, X1): the decontamination index was a pickle in the run folder,
``stages/decontaminate/eval-index-<fingerprint>.pkl``, loaded whenever it existed. The fingerprint is
computable from the eval files, settings and code, so anyone who could write into a run folder (a shared
``runs/``, a copied run, a deployment's ``output_root``) ran code in the next curation. What a run caches for
itself is therefore written here:

* ``write_arrays`` stores named NumPy arrays (numbers and bytes only, never object arrays) and a JSON header
  in one ``.npz``, under a temporary name then renamed, and a card beside it (``<name>.json``, the caller's
  fields plus ``format`` and the file's ``sha256``).
* ``read_arrays`` returns ``None`` -- the caller rebuilds -- when the card is missing, its ``sha256`` does not
  match the file, the header names another format, or the file is not such an archive. ``np.load`` with
  ``allow_pickle=False`` refuses anything that would unpickle, so even a file with a matching card runs nothing.
"""

from __future__ import annotations

import json
import zipfile
from pathlib import Path
from typing import Any

import numpy as np

from pipeline.atomic import atomic_open, write_json_atomic
from pipeline.fingerprint import sha256_file

SUFFIX = ".npz"


def card_path(path: Path) -> Path:
    return path.with_suffix(".json")


def write_arrays(path: Path, fmt: str, header: dict[str, Any], arrays: dict[str, np.ndarray], card: dict) -> None:
    """Write ``arrays`` and ``header`` (JSON) to ``path`` and the card with the file's SHA-256 beside it."""
    payload = {"header": np.frombuffer(json.dumps({**header, "format": fmt}).encode("utf-8"), dtype=np.uint8)}
    for name, array in arrays.items():
        if array.dtype == object:
            raise TypeError(f"{name}: object arrays would need pickle")
        payload[name] = array
    path.parent.mkdir(parents=True, exist_ok=True)
    with atomic_open(path, "wb") as handle:
        np.savez(handle, allow_pickle=False, **payload)  # object arrays are refused above
    write_json_atomic(card_path(path), {**card, "format": fmt, "sha256": sha256_file(path)}, indent=1)


def read_arrays(path: Path, fmt: str) -> tuple[dict[str, Any], dict[str, np.ndarray]] | None:
    """``(header, arrays)`` from ``path``, or ``None`` when it is missing, does not match its card, or is not a
    ``fmt`` archive. Never unpickles anything."""
    try:
        card = json.loads(card_path(path).read_text(encoding="utf-8"))
        if not isinstance(card, dict) or card.get("format") != fmt or card.get("sha256") != sha256_file(path):
            return None
        with np.load(path, allow_pickle=False) as data:
            header = json.loads(bytes(data["header"]).decode("utf-8"))
            if not isinstance(header, dict) or header.get("format") != fmt:
                return None
            arrays = {name: data[name] for name in data.files if name != "header"}
    except (OSError, ValueError, KeyError, TypeError, UnicodeDecodeError, zipfile.BadZipFile):
        return None
    return header, arrays


__all__ = ["SUFFIX", "card_path", "read_arrays", "sha256_file", "write_arrays"]
