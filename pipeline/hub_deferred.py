"""Stand-ins for the ``huggingface_hub`` names that datatrove imports when it is imported, until one is used.

``datatrove.io`` runs ``from huggingface_hub import HfFileSystem`` at import (for ``hf://`` paths and one
``isinstance`` check) and ``datatrove.pipeline.writers`` imports its Hub writers, which take ``create_commit``,
``CommitOperationAdd`` and five more names; each brings the Hub API client (``hf_api``, the file system, HTTP/2):
0.25-0.3 CPU-s in every process that imports a datatrove executor, reader or writer -- the CLI, each pool
worker, the extraction sandbox -- of a one-off ``tokenmill curate`` of 1.5-2 CPU-s (2-core VM, 2026-12-06;
docs/fixed_cost.md). tokenmill runs offline, and local paths never touch the Hub. (``huggingface_hub.utils``,
which the writers import as well, still brings httpx: ~0.03 CPU-s, a real submodule import no stand-in can
replace.)

``defer()`` puts a stand-in for each name of ``DEFERRED`` into ``huggingface_hub``'s namespace before datatrove
is imported (``huggingface_hub`` resolves its names lazily, PEP 562, so the package itself is cheap). A stand-in
behaves as the real object wherever datatrove or a user touches it: calling it or reading an attribute imports
the real one and hands over; ``isinstance``/``issubclass`` with a stand-in class ask the real class once its
module is loaded and are false before (no object of a class that was never imported can exist). fsspec resolves
the ``hf://`` protocol by the real class's import path, so Hub paths work as before. Written by hand: neither
library offers a lazy import of these names.
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable
from typing import Any

import huggingface_hub  # the package only (1 ms): it resolves its names on first use

#: name -> the ``huggingface_hub`` module that defines it; the classes among them get a stand-in class
DEFERRED: dict[str, str] = {
    "HfFileSystem": "huggingface_hub.hf_file_system",
    "CommitOperationAdd": "huggingface_hub._commit_api",
    "batch_bucket_files": "huggingface_hub.hf_api",
    "create_bucket": "huggingface_hub.hf_api",
    "create_commit": "huggingface_hub.hf_api",
    "create_repo": "huggingface_hub.hf_api",
    "list_bucket_tree": "huggingface_hub.hf_api",
    "preupload_lfs_files": "huggingface_hub.hf_api",
}
CLASSES = frozenset({"HfFileSystem", "CommitOperationAdd"})


def _real(name: str) -> Any:
    """The real object, which from then on also replaces the stand-in in ``huggingface_hub``'s namespace."""
    real = getattr(importlib.import_module(DEFERRED[name]), name)
    if name in huggingface_hub.__dict__:  # the stand-in ``defer`` put there
        huggingface_hub.__dict__[name] = real
    return real


class _Deferred(type):
    """The metaclass of a stand-in class: every use is handed over to the real class."""

    def __call__(cls, *args: Any, **kwargs: Any) -> Any:
        return _real(cls.__name__)(*args, **kwargs)

    def __getattr__(cls, attribute: str) -> Any:
        return getattr(_real(cls.__name__), attribute)

    def __instancecheck__(cls, obj: object) -> bool:
        module = sys.modules.get(DEFERRED[cls.__name__])
        return module is not None and isinstance(obj, getattr(module, cls.__name__))

    def __subclasscheck__(cls, sub: type) -> bool:
        module = sys.modules.get(DEFERRED[cls.__name__])
        return module is not None and issubclass(sub, getattr(module, cls.__name__))


def _function(name: str) -> Callable[..., Any]:
    def deferred(*args: Any, **kwargs: Any) -> Any:
        return _real(name)(*args, **kwargs)

    deferred.__name__ = deferred.__qualname__ = name
    deferred.__doc__ = f"Stands in for huggingface_hub.{name} until it is called (pipeline/hub_deferred.py)."
    return deferred


def stand_in(name: str) -> Any:
    """The stand-in for ``huggingface_hub.<name>``."""
    if name in CLASSES:
        doc = f"Stands in for huggingface_hub.{name} until it is called or read (pipeline/hub_deferred.py)."
        return _Deferred(name, (), {"__doc__": doc, "__module__": __name__})
    return _function(name)


def defer() -> None:
    """Put the stand-ins in place, unless datatrove is imported already (too late to save anything); a name whose
    module is loaded already keeps the real object."""
    if "datatrove.io" in sys.modules:
        return
    for name, module in DEFERRED.items():
        if module not in sys.modules:
            huggingface_hub.__dict__.setdefault(name, stand_in(name))
