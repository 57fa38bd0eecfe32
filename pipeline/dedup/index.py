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
import json
import os
import re
import time
from collections.abc import Iterator
from typing import Any

import numpy as np
import xxhash

from pipeline.atomic import atomic_open, write_json_atomic
from pipeline.dedup import store
from pipeline.dedup.config import IndexConfig, is_loopback
from pipeline.dedup.index_view import (
    Chunk,
    IndexView,
    SegmentView,
    segment_chunks,
    sorted_runs,
    write_segment,
)
from pipeline.dedup.minhash import KIND_NORMAL, KIND_SHORT
from pipeline.errors import TokenmillError

INDEX_FORMAT = "tokenmill-dedup-index"
INDEX_VERSION = 1
MANIFEST = "index.json"
DERIVED_ROLES = ("bands", "exact_sorted")  # sorted runs rebuilt from sig/exact: checked by size only


class DedupIndexError(TokenmillError, RuntimeError):
    """The index cannot be used; the message names the file (or server) and how to recover."""


REBUILD_HINT = "rerun with --rebuild-index (index.rebuild: true) to set it aside and start a new index"


def _file_digest(path: str) -> str:
    digest = xxhash.xxh64()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 22), b""):
            digest.update(block)
    return digest.hexdigest()


def _safe_name(name: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]", "_", name)[:100] or "run"


class DiskIndex:
    kind = "disk"

    def __init__(self, path: str, fingerprint: dict, run_name: str, run_id: str | None = None, verify: bool = True):
        self.path = os.path.abspath(path)
        self.fingerprint = fingerprint
        self.run_name = run_name
        self.run_id = run_id or run_name
        self.segments: list[dict] = []
        self._load_manifest(verify)

    @property
    def manifest_path(self) -> str:
        return os.path.join(self.path, MANIFEST)

    def _load_manifest(self, verify: bool = True) -> None:
        """Read ``index.json``; with ``verify`` (once per run, when the run plans) also check every file's
        checksum — the derived sorted files only by size, so a run reads each of them once, in the ranks."""
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
                if os.path.getsize(file_path) != info["bytes"] or (
                    verify and role not in DERIVED_ROLES and _file_digest(file_path) != info["xxh64"]
                ):
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

    def view(self, stage_dir: str, bands: int, rows: int) -> IndexView:
        """The entries of earlier runs as files (``index_view.py``); a segment without sorted runs for these
        ``bands``/``rows`` (older index, other banding) is sorted once into ``<stage_dir>/index/``."""
        num_perm = int(self.fingerprint["num_perm"])
        view = IndexView(num_perm, bands)
        # a run is not compared with its own earlier entries (a rerun or --restart of the same run replaces them)
        for segment in self.segments:
            if segment["run"] == self.run_name or int(segment["count"]) == 0:
                continue
            files = {role: os.path.join(self.path, "segments", info["name"]) for role, info in segment["files"].items()}
            try:
                header = store.npy_header_size(files["sig"])
            except (OSError, ValueError) as error:
                raise DedupIndexError(
                    f"{files['sig']}: cannot load segment {segment['run']!r} ({error}); {REBUILD_HINT}"
                ) from None
            expected = header + int(segment["count"]) * num_perm * 4
            if os.path.getsize(files["sig"]) != expected:
                raise DedupIndexError(f"{files['sig']}: segment {segment['run']!r} has wrong shapes; {REBUILD_HINT}")
            runs = segment.get("runs")
            if runs is None or "bands" not in files or segment.get("banding") != [bands, rows]:
                folder = os.path.join(stage_dir, "index")
                os.makedirs(folder, exist_ok=True)
                stem = os.path.join(folder, _safe_name(segment["run"]) + f"-{len(view.segments)}")
                files["bands"], files["exact_sorted"] = stem + ".bands.bin", stem + ".exact.bin"
                with atomic_open(files["bands"], "wb") as b_out, atomic_open(files["exact_sorted"], "wb") as e_out:
                    chunks = segment_chunks(files["sig"], files["exact"], int(segment["count"]), num_perm)
                    runs = sorted_runs(chunks, bands, rows, b_out, e_out)
            view.segments.append(
                SegmentView(
                    segment["run"],
                    int(segment["count"]),
                    view.total,
                    files["sig"],
                    files["meta"],
                    files["bands"],
                    runs,
                    files["exact_sorted"],
                    runs,
                )
            )
        return view

    def add(self, count: int, chunks: Iterator[Chunk], bands: int, rows: int) -> int:
        """Add this run's kept documents as one segment, streamed from ``chunks`` (one chunk in memory).

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
                self._load_manifest(verify=False)  # another run may have added a segment since this one opened it
            if self.run_id in self.run_ids():
                return 0
            taken = {s["files"]["sig"]["name"].split(".")[0] for s in self.segments}
            stem = _safe_name(self.run_name)
            while stem in taken:
                stem += "_"
            paths, runs = write_segment(os.path.join(self.path, "segments"), stem, count, chunks, bands, rows)
            files = {
                role: {"name": os.path.basename(path), "bytes": os.path.getsize(path), "xxh64": _file_digest(path)}
                for role, path in paths.items()
            }
            replaced = [seg for seg in self.segments if seg["run"] == self.run_name]
            self.segments = [seg for seg in self.segments if seg["run"] != self.run_name]
            self.segments.append(
                {
                    "run": self.run_name,
                    "run_id": self.run_id,
                    "count": count,
                    "files": files,
                    "banding": [bands, rows],
                    "runs": runs,
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
            return count
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

    def view(self, stage_dir: str, bands: int, rows: int, signatures, batch: int = 20_000) -> IndexView:
        """A local snapshot of the entries sharing a band or the exact hash with one of the run's documents
        (``signatures``: the run's ``SignatureSet``, read one chunk at a time), as one segment."""
        keys: set[bytes] = set()
        for rank, count in enumerate(signatures.counts):
            for start in range(0, count, batch):
                rows_ = np.arange(start, min(count, start + batch)) + signatures.offsets[rank]
                cols = signatures.cols(rows_)
                eligible = (cols["kind"] == KIND_NORMAL) | (cols["kind"] == KIND_SHORT)
                fields = [_exact_field(e) for e in zip(cols["hi"][eligible], cols["lo"][eligible], strict=True)]
                if fields:
                    keys.update(k for k in self.client.hmget(f"{self.base}:exact", fields) if k is not None)
                normal = rows_[cols["kind"] == KIND_NORMAL]
                if len(normal):
                    chunk = signatures.sigs(normal)
                    for band in range(self.bands):
                        for bucket in self.lsh.hashtables[band].getmany(*self._band_keys(chunk, band)):
                            keys.update(bucket)
        keys_list = sorted(keys)
        num_perm = int(self.fingerprint["num_perm"])
        kept: list[bytes] = []
        for start in range(0, len(keys_list), batch):  # names first: drop this run's own entries, find gaps
            part = keys_list[start : start + batch]
            for key, meta in zip(part, self.client.hmget(f"{self.base}:meta", part), strict=True):
                if meta is None:
                    raise DedupIndexError(
                        f"redis {self._where()} index {self.base!r}: entry {key!r} has no name (partial write?); "
                        f"{REBUILD_HINT}"
                    )
                if json.loads(meta)[0] != self.run_name:  # never compared with its own (earlier) entries
                    kept.append(key)
        view = IndexView(num_perm, bands)
        if not kept:
            return view

        def chunks() -> Iterator[Chunk]:
            for start in range(0, len(kept), batch):
                part = kept[start : start + batch]
                sig_rows = self.client.hmget(f"{self.base}:sig", part)
                metas = [json.loads(m) for m in self.client.hmget(f"{self.base}:meta", part)]
                if any(sig is None for sig in sig_rows):
                    raise DedupIndexError(
                        f"redis {self._where()} index {self.base!r}: an entry has no signature (partial write?); "
                        f"{REBUILD_HINT}"
                    )
                sigs = np.frombuffer(b"".join(sig_rows), dtype="<u4").reshape(len(part), num_perm)
                exact = np.array([[int(m[4], 16), int(m[5], 16)] for m in metas], dtype=np.uint64).reshape(-1, 2)
                yield sigs, exact, [tuple(m[:4]) for m in metas]

        folder = os.path.join(stage_dir, "index")
        os.makedirs(folder, exist_ok=True)
        paths, runs = write_segment(folder, "redis-snapshot", len(kept), chunks(), bands, rows)
        view.segments.append(
            SegmentView(
                "redis", len(kept), 0, paths["sig"], paths["meta"], paths["bands"], runs, paths["exact_sorted"], runs
            )
        )
        return view

    def add(self, count: int, chunks: Iterator[Chunk], bands: int, rows: int, batch: int = 10_000) -> int:
        """Add this run's kept documents, streamed from ``chunks`` (``bands``/``rows``: the LSH's own)."""
        from datasketch import LeanMinHash

        if self.client.sismember(f"{self.base}:runs", self.run_id):
            return 0
        self.client.set(f"{self.base}:params", json.dumps(self.fingerprint))
        earlier = self.client.hget(f"{self.base}:run_names", self.run_name)
        if earlier is not None:  # a restarted run replaces the entries of its earlier attempt
            self._remove_run(earlier.decode())
        seed = int(self.fingerprint["seed"])
        prefix = _safe_name(self.run_id).encode()
        i = 0
        with self.lsh.insertion_session(buffer_size=batch) as session:
            for sigs, exact, metas in chunks:
                pipe = self.client.pipeline(transaction=False)
                for sig, (hi, lo), (_, source, doc_id, url) in zip(sigs, exact.tolist(), metas, strict=True):
                    key = prefix + b"/" + str(i).encode()
                    i += 1
                    sig = np.ascontiguousarray(sig, dtype=np.uint32)
                    session.insert(
                        key, LeanMinHash(seed=seed, hashvalues=sig, scheme="affine32"), check_duplication=False
                    )
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
        return i

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
    password = config.password()
    if password is not None:
        params["password"] = password
    elif not is_loopback(config.host):  # the environment changed since the config was validated
        raise DedupIndexError(
            f"index.redis: host {config.host} is not a loopback address and {config.password_env} is not set; "
            "nothing was done"
        )
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
    except redis.exceptions.AuthenticationError as error:
        given = "the password" if "password" in params else "no password"
        raise DedupIndexError(
            f"Redis at {config.host}:{config.port} (db {config.db}) given in index.redis refused {given} from "
            f"{config.password_env} ({error}); export {config.password_env} with the server's requirepass "
            "(index.redis.password_env names another variable); nothing was done."
        ) from None
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
    verify: bool = True,
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
    assert config.path is not None  # IndexConfig holds exactly one of path and redis
    if config.rebuild and allow_rebuild:
        moved = DiskIndex.set_aside(config.path)
    return DiskIndex(config.path, fingerprint, run_name, run_id, verify=verify), moved
