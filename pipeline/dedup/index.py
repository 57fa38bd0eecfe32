"""The persistent index of documents kept by earlier runs: local disk (default) or Redis.

An entry is what a later run needs to drop a copy *and name what it copies*: the MinHash signature, the
exact hash, and ``(run, source, id, url)``. A new run's clustering treats entries as documents that always
survive (they are already published), so a run document in the same cluster is dropped with
``duplicate_of`` = the entry's id and ``matched_run`` = its run. A run is known by its name (default: the run
folder's name): its own entries are never compared with it, a resumed run does not add them twice, and a
restarted run (``--restart``, same name, new ``run_id``) replaces the entries of its earlier attempt.

Local disk (``index.path``): a folder with ``index.json`` (format, signature parameters, one segment per run
with file sizes and xxh64 checksums) and ``segments/<run>.{sig.npy,exact.npy,meta.jsonl.gz}``. Signatures are
memory-mapped, so an index costs the clustering step ~80 B of RAM per entry (exact hash and one band's key and
sort arrays at a time), not its 4·num_perm bytes. Candidate pairs are found by the same band bucketing as
inside the run.

Redis (``index.redis``): the LSH buckets are datasketch's ``MinHashLSH`` with its Redis ``storage_config``
(keys without pickling), filled through ``insertion_session`` with ``LeanMinHash`` objects; signatures,
names and exact hashes sit in three Redis hashes under the same basename. A run asks Redis only for the
entries that share a band with one of its documents (``getmany`` per band, one round trip per band and
batch) or its exact hash, so the run's memory does not grow with the index. The connection is checked
before any work starts.

Any unreadable, missing or mismatched index file is a ``DedupIndexError`` naming the file; ``rebuild``
(CLI ``--rebuild-index``) moves the old index aside (``<path>.broken-<time>``; Redis keys are renamed the same
way) and starts a new one from this run.
"""

from __future__ import annotations

import contextlib
import gzip
import json
import os
import re
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from pipeline.atomic import atomic_open, write_json_atomic
from pipeline.dedup.config import IndexConfig
from pipeline.errors import TokenmillError

INDEX_FORMAT = "tokenmill-dedup-index"
INDEX_VERSION = 1
MANIFEST = "index.json"


class DedupIndexError(TokenmillError, RuntimeError):
    """The index cannot be used; the message names the file (or server) and how to recover."""


REBUILD_HINT = "rerun with --rebuild-index (index.rebuild: true) to set it aside and start a new index"


@dataclass
class IndexEntries:
    """Index entries a run is compared with: signatures (possibly memory-mapped), exact hashes, names."""

    sigs: np.ndarray
    exact: np.ndarray
    describe_rows: Callable[[list[int]], list[dict[str, Any]]]
    extra: dict[str, Any] = field(default_factory=dict)

    def __len__(self) -> int:
        return len(self.exact)


def _empty_entries(num_perm: int) -> IndexEntries:
    return IndexEntries(np.empty((0, num_perm), np.uint32), np.empty((0, 2), np.uint64), lambda rows: [])


def _file_digest(path: str) -> str:
    import xxhash

    digest = xxhash.xxh64()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 22), b""):
            digest.update(block)
    return digest.hexdigest()


def _safe_name(name: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]", "_", name)[:100] or "run"


class DiskIndex:
    kind = "disk"

    def __init__(self, path: str, fingerprint: dict, run_name: str, run_id: str | None = None):
        self.path = os.path.abspath(path)
        self.fingerprint = fingerprint
        self.run_name = run_name
        self.run_id = run_id or run_name
        self.segments: list[dict] = []
        self._load_manifest()

    @property
    def manifest_path(self) -> str:
        return os.path.join(self.path, MANIFEST)

    def _load_manifest(self) -> None:
        if self._is_new():
            return  # a new index: created by the first ``add``
        if not os.path.isdir(self.path):
            raise DedupIndexError(f"{self.path}: index path exists but is not a folder; {REBUILD_HINT}")
        if not os.path.exists(self.manifest_path):
            raise DedupIndexError(
                f"{self.manifest_path}: index manifest is missing (folder is not empty); {REBUILD_HINT}"
            )
        try:
            with open(self.manifest_path, encoding="utf-8") as handle:
                manifest = json.load(handle)
            if manifest.get("format") != INDEX_FORMAT:
                raise ValueError(f"format is {manifest.get('format')!r}, expected {INDEX_FORMAT!r}")
            if manifest.get("version") != INDEX_VERSION:
                raise ValueError(f"version {manifest.get('version')!r} is not {INDEX_VERSION}")
            segments = manifest["segments"]
            for segment in segments:
                _ = segment["run"], segment["count"], segment["files"]
        except (OSError, ValueError, KeyError, TypeError) as error:
            raise DedupIndexError(
                f"{self.manifest_path}: unreadable index manifest ({error}); {REBUILD_HINT}"
            ) from None
        if manifest.get("fingerprint") != self.fingerprint:
            raise DedupIndexError(
                f"{self.manifest_path}: index was built with other signature parameters "
                f"({manifest.get('fingerprint')}) than this run ({self.fingerprint}); use another index path "
                f"or {REBUILD_HINT}"
            )
        self.segments = segments
        for segment in self.segments:
            for role, info in segment["files"].items():
                file_path = os.path.join(self.path, "segments", info["name"])
                if not os.path.exists(file_path):
                    raise DedupIndexError(f"{file_path}: index file ({role}) is missing; {REBUILD_HINT}")
                if os.path.getsize(file_path) != info["bytes"] or _file_digest(file_path) != info["xxh64"]:
                    raise DedupIndexError(
                        f"{file_path}: index file ({role}) is corrupt (size/checksum); {REBUILD_HINT}"
                    )

    def _is_new(self) -> bool:
        """Nothing there yet (or only the empty folders a first ``add`` that never wrote a file leaves)."""
        if not os.path.exists(self.path):
            return True
        if not os.path.isdir(self.path) or os.path.exists(self.manifest_path):
            return False
        entries = set(os.listdir(self.path))
        segments = os.path.join(self.path, "segments")
        return entries <= {"segments"} and (not os.path.isdir(segments) or not os.listdir(segments))

    def count(self) -> int:
        return sum(int(s["count"]) for s in self.segments)

    def runs(self) -> list[str]:
        return [s["run"] for s in self.segments]

    def run_ids(self) -> list[str]:
        return [s.get("run_id", s["run"]) for s in self.segments]

    def describe(self) -> dict[str, Any]:
        return {"kind": self.kind, "path": self.path, "entries": self.count(), "runs": self.runs()}

    def entries(self, run_sigs: np.ndarray | None = None, run_exact: np.ndarray | None = None) -> IndexEntries:
        """Every entry of earlier runs (signatures memory-mapped)."""
        num_perm = int(self.fingerprint["num_perm"])
        # a run is not compared with its own earlier entries (a rerun or --restart of the same run replaces them)
        parts = [s for s in self.segments if s["run"] != self.run_name and int(s["count"]) > 0]
        if not parts:
            return _empty_entries(num_perm)
        sigs, exact, offsets = [], [], [0]
        for segment in parts:
            files = segment["files"]
            try:
                sig = np.load(os.path.join(self.path, "segments", files["sig"]["name"]), mmap_mode="r")
                ex = np.load(os.path.join(self.path, "segments", files["exact"]["name"]))
            except (OSError, ValueError) as error:
                raise DedupIndexError(
                    f"{self.path}/segments: cannot load segment {segment['run']!r} ({error}); {REBUILD_HINT}"
                ) from None
            if sig.shape != (segment["count"], num_perm) or ex.shape != (segment["count"], 2):
                raise DedupIndexError(
                    f"{self.path}/segments: segment {segment['run']!r} has wrong shapes; {REBUILD_HINT}"
                )
            sigs.append(sig)
            exact.append(ex)
            offsets.append(offsets[-1] + int(segment["count"]))
        # several segments are read through one virtual array without copying them into RAM
        all_sigs = sigs[0] if len(sigs) == 1 else _StackedRows(sigs, offsets)

        def describe_rows(rows: list[int]) -> list[dict[str, Any]]:
            wanted: dict[int, list[int]] = {}
            for position, row in enumerate(rows):
                seg = int(np.searchsorted(offsets, row, side="right") - 1)
                wanted.setdefault(seg, []).append(position)
            out: list[dict[str, Any]] = [{} for _ in rows]
            for seg, positions in wanted.items():
                local = {rows[p] - offsets[seg]: p for p in positions}
                meta_path = os.path.join(self.path, "segments", parts[seg]["files"]["meta"]["name"])
                with gzip.open(meta_path, "rt", encoding="utf-8") as handle:
                    for line_no, line in enumerate(handle):
                        if line_no in local:
                            run, source, doc_id, url = json.loads(line)
                            out[local[line_no]] = {"run": run, "source": source, "id": doc_id, "url": url}
            return out

        return IndexEntries(all_sigs, np.concatenate(exact), describe_rows)

    def add(self, sigs: np.ndarray, exact: np.ndarray, metas: list[tuple[str, str, str | None]]) -> int:
        """Add this run's kept documents as one segment.

        The same run (same ``run_id``: a resumed run) is not added twice; an earlier run of the same name (a
        restarted run) is replaced by this one.
        """
        if self.run_id in self.run_ids():
            return 0
        os.makedirs(os.path.join(self.path, "segments"), exist_ok=True)
        lock = os.path.join(self.path, ".lock")
        try:
            fd = os.open(lock, os.O_CREAT | os.O_EXCL | os.O_WRONLY)
        except FileExistsError:
            raise DedupIndexError(
                f"{lock}: index is locked by another run (delete the file if none is running)"
            ) from None
        try:
            os.write(fd, str(os.getpid()).encode())
            os.close(fd)
            if os.path.exists(self.manifest_path):
                self._load_manifest()  # another run may have added a segment since this one opened the index
            if self.run_id in self.run_ids():
                return 0
            taken = {s["files"]["sig"]["name"].split(".")[0] for s in self.segments}
            stem = _safe_name(self.run_name)
            while stem in taken:
                stem += "_"
            files = {}
            for role, suffix, writer in (
                ("sig", ".sig.npy", lambda p: np.save(p, np.ascontiguousarray(sigs, dtype=np.uint32))),
                ("exact", ".exact.npy", lambda p: np.save(p, np.ascontiguousarray(exact, dtype=np.uint64))),
                ("meta", ".meta.jsonl.gz", lambda p: _write_meta(p, self.run_name, metas)),
            ):
                name = stem + suffix
                final = os.path.join(self.path, "segments", name)
                with atomic_open(final, "wb") as handle:
                    writer(handle)
                files[role] = {"name": name, "bytes": os.path.getsize(final), "xxh64": _file_digest(final)}
            replaced = [seg for seg in self.segments if seg["run"] == self.run_name]
            self.segments = [seg for seg in self.segments if seg["run"] != self.run_name]
            self.segments.append(
                {
                    "run": self.run_name,
                    "run_id": self.run_id,
                    "count": len(metas),
                    "files": files,
                    "added": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
                }
            )
            manifest = {
                "format": INDEX_FORMAT,
                "version": INDEX_VERSION,
                "fingerprint": self.fingerprint,
                "segments": self.segments,
            }
            write_json_atomic(self.manifest_path, manifest, indent=1)
            for seg in replaced:  # only after the manifest no longer names them
                for info in seg["files"].values():
                    with contextlib.suppress(FileNotFoundError):
                        os.remove(os.path.join(self.path, "segments", info["name"]))
            return len(metas)
        finally:
            if os.path.exists(lock):
                os.remove(lock)

    @staticmethod
    def set_aside(path: str) -> str | None:
        """Move an existing index folder out of the way; returns where it went."""
        path = os.path.abspath(path)
        if not os.path.exists(path):
            return None
        target = f"{path}.broken-{time.strftime('%Y%m%dT%H%M%S')}"
        os.replace(path, target)
        return target


def _write_meta(handle, run_name: str, metas: list[tuple[str, str, str | None]]) -> None:
    with gzip.open(handle, "wt", encoding="utf-8", compresslevel=3) as out:
        for source, doc_id, url in metas:
            out.write(json.dumps([run_name, source, doc_id, url], ensure_ascii=False) + "\n")


class _StackedRows:
    """Row access across several memory-mapped arrays, as if concatenated (only what clustering uses)."""

    def __init__(self, parts: list[np.ndarray], offsets: list[int]):
        self.parts, self.offsets = parts, np.asarray(offsets)
        self.shape = (int(offsets[-1]), parts[0].shape[1])

    def __len__(self) -> int:
        return self.shape[0]

    def __getitem__(self, key):
        if isinstance(key, tuple):  # [:, a:b] column slices, used for band keys
            rows, cols = key
            assert rows == slice(None)
            return np.concatenate([p[:, cols] for p in self.parts])
        rows = np.asarray(key)
        seg = np.searchsorted(self.offsets, rows, side="right") - 1
        out = np.empty((len(rows), self.shape[1]), np.uint32)
        for s in np.unique(seg):
            mask = seg == s
            out[mask] = self.parts[s][rows[mask] - self.offsets[s]]
        return out


class RedisIndex:
    kind = "redis"

    def __init__(self, config, fingerprint: dict, run_name: str, bands: int, rows: int, run_id: str | None = None):
        self.config = config
        self.fingerprint = {**fingerprint, "bands": bands, "rows": rows}
        self.run_name = run_name
        self.run_id = run_id or run_name
        self.bands, self.rows = bands, rows
        self.base = config.basename
        self.client = _connect(config)
        stored = self.client.get(f"{self.base}:params")
        if stored is not None:
            try:
                stored_params = json.loads(stored)
            except ValueError:
                raise DedupIndexError(
                    f"redis {self._where()} key {self.base}:params is corrupt; {REBUILD_HINT}"
                ) from None
            if stored_params != self.fingerprint:
                raise DedupIndexError(
                    f"redis {self._where()} index {self.base!r} was built with other parameters ({stored_params}) "
                    f"than this run ({self.fingerprint}); use another basename or {REBUILD_HINT}"
                )
        self._lsh = None

    def _where(self) -> str:
        return f"{self.config.host}:{self.config.port}/{self.config.db}"

    @property
    def lsh(self):
        if self._lsh is None:
            from datasketch import MinHashLSH

            self._lsh = MinHashLSH(
                num_perm=int(self.fingerprint["num_perm"]),
                params=(self.bands, self.rows),
                storage_config={
                    "type": "redis",
                    "basename": f"{self.base}:lsh".encode(),
                    "redis": _redis_params(self.config),
                },
                prepickle=False,
            )
        return self._lsh

    def count(self) -> int:
        return int(self.client.hlen(f"{self.base}:meta"))

    def runs(self) -> list[str]:
        return sorted(r.decode() for r in self.client.smembers(f"{self.base}:runs"))

    def describe(self) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "redis": self._where(),
            "basename": self.base,
            "entries": self.count(),
            "runs": self.runs(),
        }

    def _band_keys(self, sigs: np.ndarray, band: int) -> list[bytes]:
        # the bytes datasketch's MinHashLSH uses as bucket key for this band (``MinHashLSH._byteswap``)
        part = np.ascontiguousarray(sigs[:, band * self.rows : (band + 1) * self.rows]).byteswap()
        return [bytes(row.data) for row in part]

    def entries(self, run_sigs: np.ndarray, run_exact: np.ndarray, batch: int = 20_000) -> IndexEntries:
        """Only the entries sharing a band or the exact hash with one of ``run_sigs`` / ``run_exact``."""
        keys: set[bytes] = set()
        for start in range(0, len(run_exact), batch):
            fields = [_exact_field(e) for e in run_exact[start : start + batch]]
            keys.update(k for k in self.client.hmget(f"{self.base}:exact", fields) if k is not None)
        for start in range(0, len(run_sigs), batch):
            chunk = run_sigs[start : start + batch]
            for band in range(self.bands):
                for bucket in self.lsh.hashtables[band].getmany(*self._band_keys(chunk, band)):
                    keys.update(bucket)
        keys_list = sorted(keys)
        num_perm = int(self.fingerprint["num_perm"])
        if not keys_list:
            return _empty_entries(num_perm)
        sig_rows, metas = [], []
        for start in range(0, len(keys_list), batch):
            part = keys_list[start : start + batch]
            sig_rows.extend(self.client.hmget(f"{self.base}:sig", part))
            metas.extend(self.client.hmget(f"{self.base}:meta", part))
        keep = []
        for i, (sig, meta) in enumerate(zip(sig_rows, metas, strict=True)):
            if sig is None or meta is None:
                raise DedupIndexError(
                    f"redis {self._where()} index {self.base!r}: entry {keys_list[i]!r} has no "
                    f"signature or name (partial write?); {REBUILD_HINT}"
                )
            if json.loads(meta)[0] != self.run_name:  # never compared with its own (earlier) entries
                keep.append(i)
        sigs = np.frombuffer(b"".join(sig_rows[i] for i in keep), dtype="<u4").reshape(len(keep), num_perm)
        decoded = [json.loads(metas[i]) for i in keep]
        exact = np.array([[int(m[4], 16), int(m[5], 16)] for m in decoded], dtype=np.uint64).reshape(len(keep), 2)

        def describe_rows(rows: list[int]) -> list[dict[str, Any]]:
            return [dict(zip(("run", "source", "id", "url"), decoded[r][:4], strict=True)) for r in rows]

        return IndexEntries(sigs, exact, describe_rows, extra={"fetched": len(keep)})

    def add(
        self, sigs: np.ndarray, exact: np.ndarray, metas: list[tuple[str, str, str | None]], batch: int = 10_000
    ) -> int:
        from datasketch import LeanMinHash

        if self.client.sismember(f"{self.base}:runs", self.run_id):
            return 0
        self.client.set(f"{self.base}:params", json.dumps(self.fingerprint))
        earlier = self.client.hget(f"{self.base}:run_names", self.run_name)
        if earlier is not None:  # a restarted run replaces the entries of its earlier attempt
            self._remove_run(earlier.decode())
        seed = int(self.fingerprint["seed"])
        prefix = _safe_name(self.run_id).encode()
        with self.lsh.insertion_session(buffer_size=batch) as session:
            for start in range(0, len(metas), batch):
                pipe = self.client.pipeline(transaction=False)
                for i in range(start, min(start + batch, len(metas))):
                    key = prefix + b"/" + str(i).encode()
                    sig = np.ascontiguousarray(sigs[i], dtype=np.uint32)
                    session.insert(
                        key, LeanMinHash(seed=seed, hashvalues=sig, scheme="affine32"), check_duplication=False
                    )
                    source, doc_id, url = metas[i]
                    hi, lo = int(exact[i][0]), int(exact[i][1])
                    pipe.hset(f"{self.base}:sig", key, sig.astype("<u4").tobytes())
                    pipe.hset(
                        f"{self.base}:meta",
                        key,
                        json.dumps([self.run_name, source, doc_id, url, f"{hi:x}", f"{lo:x}", self.run_id]),
                    )
                    pipe.hsetnx(f"{self.base}:exact", _exact_field((hi, lo)), key)
                pipe.execute()
        self.client.sadd(f"{self.base}:runs", self.run_id)
        self.client.hset(f"{self.base}:run_names", self.run_name, self.run_id)
        return len(metas)

    def _remove_run(self, run_id: str, batch: int = 10_000) -> None:
        prefix = _safe_name(run_id).encode() + b"/"
        keys = [k for k, _ in self.client.hscan_iter(f"{self.base}:meta", match=prefix + b"*", count=batch)]
        with self.lsh.deletion_session(buffer_size=batch) as session:
            for key in keys:
                session.remove(key)
        for start in range(0, len(keys), batch):
            part = keys[start : start + batch]
            metas = self.client.hmget(f"{self.base}:meta", part)
            pipe = self.client.pipeline(transaction=False)
            for key, meta in zip(part, metas, strict=True):
                if meta is not None:
                    decoded = json.loads(meta)
                    field = _exact_field((int(decoded[4], 16), int(decoded[5], 16)))
                    if self.client.hget(f"{self.base}:exact", field) == key:
                        pipe.hdel(f"{self.base}:exact", field)
            pipe.hdel(f"{self.base}:sig", *part)
            pipe.hdel(f"{self.base}:meta", *part)
            pipe.execute()
        self.client.srem(f"{self.base}:runs", run_id)

    def set_aside(self) -> str:
        """Rename every key of this index to ``<basename>.broken-<time>…`` (nothing is deleted)."""
        target = f"{self.base}.broken-{time.strftime('%Y%m%dT%H%M%S')}"
        for key in list(self.client.scan_iter(match=f"{self.base}:*".encode())):
            self.client.rename(key, target.encode() + key[len(self.base) :])
        return target


def _exact_field(exact) -> bytes:
    hi, lo = int(exact[0]), int(exact[1])
    return hi.to_bytes(8, "big") + lo.to_bytes(8, "big")


def _redis_params(config) -> dict[str, Any]:
    params: dict[str, Any] = {
        "host": config.host,
        "port": config.port,
        "db": config.db,
        "socket_connect_timeout": config.timeout_s,
        "socket_timeout": config.timeout_s,
    }
    if config.password_env:
        password = os.environ.get(config.password_env)
        if password is None:
            raise DedupIndexError(f"index.redis.password_env: environment variable {config.password_env} is not set")
        params["password"] = password
    return params


def _connect(config):
    try:
        import redis
    except ImportError:
        raise DedupIndexError("index.redis needs the `redis` package (pip install redis)") from None
    params = _redis_params(config)
    client = redis.Redis(**params)
    try:
        client.ping()
    except redis.exceptions.RedisError as error:
        raise DedupIndexError(
            f"cannot reach Redis at {config.host}:{config.port} (db {config.db}) given in index.redis: {error}. "
            f"Start one (e.g. `redis-server --port {config.port} --dir /var/lib/tokenmill-index --appendonly yes`) "
            "or fix index.redis; nothing was done."
        ) from None
    return client


def open_index(
    config: IndexConfig,
    fingerprint: dict,
    run_name: str,
    bands: int,
    rows: int,
    allow_rebuild: bool = True,
    run_id: str | None = None,
) -> tuple[DiskIndex | RedisIndex, str | None]:
    """Open (and, with ``rebuild``, first set aside) the configured index; returns it and where the old one went."""
    moved = None
    if config.redis is not None:
        if config.rebuild and allow_rebuild:
            client = _connect(config.redis)
            probe = object.__new__(RedisIndex)
            probe.client, probe.base = client, config.redis.basename
            moved = probe.set_aside() if client.exists(f"{config.redis.basename}:params") else None
        return RedisIndex(config.redis, fingerprint, run_name, bands, rows, run_id), moved
    if config.rebuild and allow_rebuild:
        moved = DiskIndex.set_aside(config.path)
    return DiskIndex(config.path, fingerprint, run_name, run_id), moved
