"""On-disk layouts shared by the dedup steps: fixed-width per-document rows and sorted runs of band keys.

Why files and not arrays: no dedup process may hold per-document state for the whole corpus. The signature
ranks write what the later steps need in two shapes:

* **fixed-width rows** (``.sig``: ``num_perm`` uint32 per document; ``.cols``: exact hash, length, kind,
  source; ``.ids`` + ``.idoff``: the id strings) that the clustering step reads *only for the documents in a
  pair* — with ``os.pread`` over sorted rows, so nothing is memory-mapped and a process's RSS does not grow
  with the file;
* **sorted runs** (``.bands``, ``.exact``): every ``CHUNK`` documents, each band's 64-bit keys (and the exact
  hashes) sorted, with what the survivor rule needs to order a bucket (source, length, position). A bucket
  rank reads, from every run of every rank, only the slice of its band and key range (two binary searches
  and one read per run) — datatrove's ``MinhashDedupBuckets`` does the same with a ``heapq`` merge record by
  record in Python; here the slices are concatenated and sorted with numpy.

Every read of these files goes through ``read_span`` (a test counts the bytes read per file).
"""

from __future__ import annotations

import os
from collections.abc import Iterator

import numpy as np

from pipeline.errors import TokenmillError

CHUNK = 32_768  # documents per sorted run (and per write in a signature rank: 16 MiB of signatures at 128)
LENGTH_CLAMP = 2**32 - 1  # a band record holds the length as uint32; ties at the clamp are settled from .cols

COLS = np.dtype([("hi", "<u8"), ("lo", "<u8"), ("length", "<i8"), ("kind", "u1"), ("source", "<u2")])
BAND = np.dtype([("key", "<u8"), ("length", "<u4"), ("pos", "<u4"), ("source", "<u2")])
EXACT = np.dtype([("hi", "<u8"), ("lo", "<u8"), ("length", "<u4"), ("pos", "<u4"), ("source", "<u2")])
INDEX_BAND = np.dtype([("key", "<u8"), ("entry", "<u4")])
INDEX_EXACT = np.dtype([("hi", "<u8"), ("lo", "<u8"), ("entry", "<u4")])

_U64 = np.uint64
_SPAN = 1 << 14  # rows closer than this many bytes are read with one pread…
_MAX_SPAN = 1 << 20  # …of at most this many bytes: what a read holds beyond its rows does not grow with the file


class DedupStateError(TokenmillError, RuntimeError):
    """Intermediate files of the dedup stage are missing or were made with other settings."""


def read_span(path: str, offset: int, nbytes: int, fd: int | None = None) -> bytes:
    """Read ``nbytes`` at ``offset`` of ``path`` (through ``fd`` when open): the one place these files are read."""
    if nbytes <= 0:
        return b""
    if fd is not None:
        out = os.pread(fd, nbytes, offset)
    else:
        with open(path, "rb", buffering=0) as handle:
            out = os.pread(handle.fileno(), nbytes, offset)
    if len(out) != nbytes:
        raise OSError(f"{path}: short read ({len(out)} of {nbytes} bytes at {offset})")
    return out


def read_rows(path: str, dtype: np.dtype, rows: np.ndarray, header: int = 0, width: int = 1) -> np.ndarray:
    """Rows ``rows`` (any order, repeats allowed) of a fixed-width file of ``dtype`` × ``width`` items."""
    dtype = np.dtype(dtype)
    item = dtype.itemsize * width
    rows = np.asarray(rows, dtype=np.int64)
    shape = (len(rows),) if width == 1 else (len(rows), width)
    out = np.empty(shape, dtype=dtype)
    if len(rows) == 0:
        return out
    order = np.argsort(rows, kind="stable")
    sorted_rows = rows[order]
    starts, ends = _spans(sorted_rows * item, sorted_rows * item + item)
    with open(path, "rb", buffering=0) as handle:
        for s, e in zip(starts, ends, strict=True):
            first, last = int(sorted_rows[s]), int(sorted_rows[e - 1])
            raw = read_span(path, header + first * item, (last - first + 1) * item, handle.fileno())
            block = np.frombuffer(raw, dtype=dtype)
            if width > 1:
                block = block.reshape(-1, width)
            out[order[s:e]] = block[sorted_rows[s:e] - first]
    return out


def _spans(begin: np.ndarray, end: np.ndarray) -> tuple[list[int], list[int]]:
    """Group sorted byte ranges into reads: a new read where the gap exceeds ``_SPAN`` or the read would pass
    ``_MAX_SPAN`` bytes (a read of neighbours saves system calls; the cap keeps a read small)."""
    gap_breaks = np.flatnonzero(begin[1:] - end[:-1] > _SPAN) + 1
    starts, ends = [], []
    for a, b in zip([0, *gap_breaks.tolist()], [*gap_breaks.tolist(), len(begin)], strict=True):
        s = a
        while s < b:  # split a run of close rows into reads of at most _MAX_SPAN bytes
            e = s + 1 + int(np.searchsorted(end[s + 1 : b], begin[s] + _MAX_SPAN, side="right"))
            starts.append(s)
            ends.append(e)
            s = e
    return starts, ends


def npy_header_size(path: str) -> int:
    """Bytes before the data of a ``.npy`` file (its rows are then read with ``read_rows``)."""
    with open(path, "rb") as handle:
        major, _ = np.lib.format.read_magic(handle)
        reader = np.lib.format.read_array_header_1_0 if major == 1 else np.lib.format.read_array_header_2_0
        reader(handle)
        return handle.tell()


def write_npy_header(handle, dtype, shape: tuple[int, ...]) -> None:
    """A ``.npy`` header for data streamed after it (the row count is known before the rows)."""
    header = {"descr": np.lib.format.dtype_to_descr(np.dtype(dtype)), "fortran_order": False, "shape": shape}
    np.lib.format.write_array_header_2_0(handle, header)


def band_keys(block: np.ndarray) -> np.ndarray:
    """One 64-bit key per row for a (n, rows) uint32 band: equal bands give equal keys."""
    h = np.zeros(len(block), dtype=_U64)
    for col in range(block.shape[1]):
        h *= _U64(0x9E3779B97F4A7C15)
        h += block[:, col].astype(_U64)
    h ^= h >> _U64(33)
    h *= _U64(0xFF51AFD7ED558CCD)
    h ^= h >> _U64(33)
    return h


def sorted_band_runs(sigs: np.ndarray, bands: int, rows: int, fill) -> Iterator[np.ndarray]:
    """For one chunk of signatures: per band, the records (``fill(records, keys)`` sets the other fields)
    sorted by key — appended to a ``.bands`` file band after band."""
    for band in range(bands):
        keys = band_keys(sigs[:, band * rows : (band + 1) * rows])
        order = np.argsort(keys, kind="stable")
        yield fill(keys[order], order)


def key_slice(path: str, dtype: np.dtype, start: int, count: int, lo: int, hi: int, field: str = "key") -> np.ndarray:
    """Records of the sorted run ``[start, start + count)`` whose ``field`` lies in ``[lo, hi)`` (``hi`` may be
    2**64): two binary searches by ``pread`` of single records, then one read."""
    dtype = np.dtype(dtype)
    if count == 0:
        return np.empty(0, dtype)
    with open(path, "rb", buffering=0) as handle:
        return _key_slice(path, handle.fileno(), dtype, start, count, lo, hi, field)


def _key_slice(path: str, fd: int, dtype: np.dtype, start: int, count: int, lo: int, hi: int, field: str):
    def first_at_least(bound: int) -> int:
        if bound <= 0:
            return 0
        if bound >= 2**64:
            return count
        low, high = 0, count
        while low < high:
            mid = (low + high) // 2
            raw = read_span(path, (start + mid) * dtype.itemsize, dtype.itemsize, fd)
            value = int(np.frombuffer(raw, dtype)[0][field])
            if value < bound:
                low = mid + 1
            else:
                high = mid
        return low

    a, b = first_at_least(lo), first_at_least(hi)
    return np.frombuffer(read_span(path, (start + a) * dtype.itemsize, (b - a) * dtype.itemsize, fd), dtype=dtype)


def key_ranges(parts: int) -> list[tuple[int, int]]:
    """``parts`` equal ranges of the 64-bit key space (band keys and exact hashes are uniform)."""
    bounds = [(i * 2**64) // parts for i in range(parts + 1)]
    return list(zip(bounds[:-1], bounds[1:], strict=True))


def run_starts(counts: list[int], per_run: int = 1) -> list[int]:
    """Record offset of each run in a file of runs of ``counts[i] * per_run`` records."""
    out, at = [], 0
    for count in counts:
        out.append(at)
        at += count * per_run
    return out


class IdStore:
    """Write side of ``.ids`` (UTF-8 ids back to back) and ``.idoff`` (uint64 offsets, one more than ids)."""

    def __init__(self, ids_handle, off_handle):
        self.ids, self.off, self.at = ids_handle, off_handle, 0
        self.off.write(np.array([0], dtype="<u8").tobytes())

    def write(self, ids: list[str]) -> None:
        encoded = [i.encode("utf-8") for i in ids]
        self.ids.write(b"".join(encoded))
        ends = self.at + np.cumsum([len(e) for e in encoded], dtype=np.int64)
        if len(ends):
            self.at = int(ends[-1])
        self.off.write(ends.astype("<u8").tobytes())


def read_ids(ids_path: str, off_path: str, rows: np.ndarray) -> list[str]:
    """The id strings of ``rows`` (any order), read in spans like ``read_rows``."""
    rows = np.asarray(rows, dtype=np.int64)
    if len(rows) == 0:
        return []
    starts = read_rows(off_path, np.dtype("<u8"), rows).astype(np.int64)
    ends = read_rows(off_path, np.dtype("<u8"), rows + 1).astype(np.int64)
    order = np.argsort(starts, kind="stable")
    out: list[str] = [""] * len(rows)
    s_sorted, e_sorted = starts[order], ends[order]
    with open(ids_path, "rb", buffering=0) as handle:
        for a, b in zip(*_spans(s_sorted, e_sorted), strict=True):
            base = int(s_sorted[a])
            block = read_span(ids_path, base, int(e_sorted[a:b].max()) - base, handle.fileno())
            for k in range(a, b):
                out[int(order[k])] = block[int(s_sorted[k]) - base : int(e_sorted[k]) - base].decode("utf-8")
    return out
