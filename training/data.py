"""The training side of the token shards: fixed windows, a seeded global order, data-parallel sharding and
exact resume.

A window is ``seq_len + 1`` consecutive tokens (inputs and shifted labels) cut from one shard file, without
overlap, exactly as datatrove's ``DatatroveFolderDataset`` cuts them: file by file in sorted order,
``len(file) // (seq_len + 1)`` windows each, the short tail of a file unused. ``window(w)`` is therefore
``DatatroveFolderDataset(...)[w]`` (tests check this).

Order: one infinite stream of samples. Global sample ``g`` is window ``perm_e[g % W]`` of epoch ``e = g // W``
(``W`` windows, ``perm_e`` a permutation seeded by ``(seed, e)``), and data-parallel rank ``r`` of ``n`` reads
global samples ``r, r + n, r + 2n, …``. Every sample is a pure function of its index, so resuming is
starting at an index: mid-epoch, on another machine, or with another number of ranks, as long as the
samples consumed so far divide evenly among them. The shards' manifest fingerprint is part of the saved
state; ``resume`` refuses a state written for other shards.

The core is numpy over memory-mapped files; ``TorchWindows`` adapts it to ``torch.utils.data.DataLoader``.
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Iterator
from pathlib import Path
from typing import Any, Literal

import numpy as np

from pipeline.errors import TokenmillError
from pipeline.shards.format import ShardError, ShardManifest, check_shard, open_tokens, read_index

STATE_VERSION = 1
PERMUTATIONS_CACHED = 4


class ResumeError(TokenmillError, ValueError):
    """A saved reader state that does not belong to these shards or this reader's settings."""


class ShardWindows:
    """Windows of ``seq_len + 1`` tokens over one split of a tokenmill shards folder, for one data-parallel rank.

    ``split`` is ``"train"``, ``"heldout"`` (every source's held-out shards) or ``"heldout/<source>"``.
    ``check``: ``"index"`` verifies sizes against the manifest, the index against the shard and that every
    document ends in EOS (reads the index and one token per document); ``"full"`` also checks every id
    against the vocabulary (reads everything); ``"none"`` only sizes.
    """

    def __init__(
        self,
        shards_dir: str | Path,
        seq_len: int,
        *,
        split: str = "train",
        seed: int = 0,
        rank: int = 0,
        world_size: int = 1,
        shuffle: bool = True,
        check: Literal["none", "index", "full"] = "index",
    ):
        if seq_len < 1:
            raise ValueError("seq_len must be at least 1")
        if not 0 <= rank < world_size:
            raise ValueError(f"rank {rank} is outside world_size {world_size}")
        self.root = Path(shards_dir)
        self.manifest = ShardManifest.load(self.root)
        self.fingerprint: str = self.manifest.fingerprint
        self.seq_len, self.window_len = seq_len, seq_len + 1
        self.split, self.seed, self.shuffle = split, seed, shuffle
        self.rank, self.world_size = rank, world_size
        self.dtype = self.manifest.token_dtype
        vocab_size = self.manifest.tokenizer_info.vocab_size
        if not isinstance(vocab_size, int):
            raise ShardError(f"{self.manifest.path}: the tokenizer entry records no vocab_size")
        self.vocab_size = vocab_size
        self.eos_id = self.manifest.eos_id

        self.files: list[Path] = []
        self._tokens: list[np.ndarray] = []
        starts = [0]
        for entry in self.manifest.split_files(split, self.root):
            path = self.root / entry.path
            tokens = open_tokens(path, self.dtype, entry.tokens)
            if check != "none":
                ends = read_index(path, entry.documents)
                check_shard(tokens, ends, path, self.eos_id)
            if check == "full" and len(tokens) and int(tokens.max()) >= self.vocab_size:
                raise ShardError(f"{path}: token id {int(tokens.max())} is outside the vocabulary ({self.vocab_size})")
            self.files.append(path)
            self._tokens.append(tokens)
            starts.append(starts[-1] + len(tokens) // self.window_len)
        self._starts = starts  # first window number of each file, plus the total at the end
        self.num_windows = starts[-1]
        if self.num_windows == 0:
            raise ShardError(f"{self.root}: split {split!r} holds no complete window of {self.window_len} tokens")
        self._perms: dict[int, np.ndarray] = {}  # a few recent epochs: ranks straddle an epoch boundary

    def __getstate__(self) -> dict[str, Any]:
        """Pickle without the mapped files (DataLoader workers started by spawn would copy every token)."""
        state = self.__dict__.copy()
        state["_tokens"], state["_perms"] = None, {}
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        self._tokens = [open_tokens(path, self.dtype) for path in self.files]

    # ------------------------------------------------------------------------------------------ windows

    def window(self, number: int) -> np.ndarray:
        """Window ``number`` in file order (no shuffling, no rank): a read-only view into the shard."""
        if not 0 <= number < self.num_windows:
            raise IndexError(f"window {number} outside 0..{self.num_windows - 1}")
        file = bisect_right(self._starts, number) - 1
        offset = (number - self._starts[file]) * self.window_len
        return self._tokens[file][offset : offset + self.window_len]

    def _permutation(self, epoch: int) -> np.ndarray | None:
        if not self.shuffle:
            return None
        perm = self._perms.get(epoch)
        if perm is None:
            if len(self._perms) >= PERMUTATIONS_CACHED:
                self._perms.pop(next(iter(self._perms)))
            perm = self._perms[epoch] = np.random.default_rng([self.seed, epoch]).permutation(self.num_windows)
        return perm

    def global_window(self, global_sample: int) -> int:
        """The window read at position ``global_sample`` of the (infinite, all-ranks) stream."""
        epoch, position = divmod(global_sample, self.num_windows)
        perm = self._permutation(epoch)
        return position if perm is None else int(perm[position])

    def __getitem__(self, sample: int) -> np.ndarray:
        """This rank's ``sample``-th window (a copy, in the shard dtype); any index ≥ 0 is valid (epochs repeat)."""
        if sample < 0:
            raise IndexError("sample index must be ≥ 0")
        return np.array(self.window(self.global_window(sample * self.world_size + self.rank)))

    def __len__(self) -> int:
        """Samples per rank in one epoch (the stream itself goes on: epochs repeat with a new order)."""
        return self.num_windows // self.world_size

    def iter_from(self, start: int = 0, stop: int | None = None) -> Iterator[np.ndarray]:
        """This rank's samples ``start, start + 1, …`` (up to ``stop``, exclusive, or forever)."""
        sample = start
        while stop is None or sample < stop:
            yield self[sample]
            sample += 1

    # -------------------------------------------------------------------------------------------- resume

    def state_dict(self, next_sample: int) -> dict[str, Any]:
        """What a checkpoint stores: ``next_sample`` is the index of this rank's next unread sample."""
        return {
            "version": STATE_VERSION,
            "fingerprint": self.fingerprint,
            "split": self.split,
            "seq_len": self.seq_len,
            "seed": self.seed,
            "shuffle": self.shuffle,
            "world_size": self.world_size,
            "consumed_samples": next_sample * self.world_size,  # over all ranks
        }

    def resume(self, state: dict[str, Any]) -> int:
        """This rank's next sample index for a saved ``state_dict``; refuses a state from other shards/settings."""
        if state.get("fingerprint") != self.fingerprint:
            raise ResumeError(
                f"{self.root}: shards changed since the checkpoint (manifest fingerprint {self.fingerprint}, "
                f"checkpoint {state.get('fingerprint')}); resuming would not replay the same data"
            )
        for key in ("split", "seq_len", "seed", "shuffle"):
            if state.get(key) != getattr(self, key):
                raise ResumeError(f"checkpoint has {key}={state.get(key)!r}, this reader {getattr(self, key)!r}")
        consumed = int(state["consumed_samples"])
        if consumed % self.world_size:
            raise ResumeError(
                f"{consumed} samples consumed do not divide among {self.world_size} ranks; "
                f"resume with a world size that divides it (checkpoint had {state.get('world_size')})"
            )
        return consumed // self.world_size


class TorchWindows:
    """Map-style dataset for ``torch.utils.data.DataLoader``: item ``i`` is this rank's sample ``start + i``.

    Length ``epochs × len(windows) - start``; items are ``{"input_ids": LongTensor[seq_len + 1]}``. Use a
    sequential sampler (the order is already shuffled and sharded); worker processes keep the order.
    """

    def __init__(self, windows: ShardWindows, start: int = 0, epochs: int = 1):
        self.windows, self.start = windows, start
        self.length = max(0, epochs * len(windows) - start)

    def __len__(self) -> int:
        return self.length

    def __getitem__(self, index: int) -> dict[str, Any]:
        import torch

        if not 0 <= index < self.length:
            raise IndexError(index)
        return {"input_ids": torch.from_numpy(self.windows[self.start + index].astype(np.int64))}
