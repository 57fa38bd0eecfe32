"""Shingling, MinHash signatures (numpy, datasketch-compatible) and the exact-copy hash.

Why numpy instead of calling datasketch per document: measured on the 2-core development machine
(docs/reference.md, ``benchmarks/dedup_bench.py``), datasketch's per-shingle ``MinHash.update`` signs ~100–400
two-KB documents per CPU-second and ``update_batch`` ~2.7k; the target is 5k incl. shingling. Two hand-written
parts close that gap, and nothing else is re-implemented:

* shingling is vectorised: the text becomes an array of code points (``str.encode("utf-32-le")``), words are
  runs of ``\\w`` characters (a lookup table built from Python's own ``re``), each word's hash comes from one
  prefix sum of a polynomial hash, and a shingle's hash combines its words' hashes — no Python loop per word;
* the permutation step is datasketch's own "affine32" scheme (MurmurHash3 ``fmix32`` pre-mix, then
  ``a * h + b mod 2**32`` with datasketch's ``a, b`` drawn from ``RandomState(seed)``), applied to all shingles
  of a document at once.

Measured on the benchmark's 20k documents (2.9 KB mean): 5.9k documents per CPU-second with the exact hash,
on a machine shared with other jobs (7.0k when quiet), against 175 for datasketch's per-shingle ``update``.

The result is bit-for-bit what ``datasketch.MinHash(num_perm, seed, hashfunc=shingle_value)`` gives when fed
the same shingles (``word_shingles``/``char_shingles`` + ``shingle_value``; a test checks it), so
``to_lean_minhash`` yields ``LeanMinHash`` objects that datasketch's ``MinHashLSH`` and its storage backends
(Redis) accept and compare with their own sketches.

Normalisation for near-dup: Unicode NFKC, case folding, words = maximal runs of word characters (punctuation
and whitespace separate words and are otherwise ignored). Exact hash: xxh3-128 of the same NFKC + case-folded
text with every whitespace run collapsed to one space and the ends stripped ("whitespace and case folded");
punctuation still counts there. ``document_hashes`` computes both from one normalisation pass.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Sequence
from functools import lru_cache
from typing import TYPE_CHECKING

import numpy as np
import xxhash

if TYPE_CHECKING:
    from datasketch import LeanMinHash

_U64 = np.uint64
_MASK64 = (1 << 64) - 1
# polynomial hash of a word over its code points (odd multiplier: invertible mod 2**64)
_CHAR_MULT = 0x100000001B3
_CHAR_MULT_INV = pow(_CHAR_MULT, -1, 1 << 64)
# combines the word hashes of one shingle
_SHINGLE_MULT = 0x9E3779B97F4A7C15
_UNICODE_SIZE = 0x110000
_LAST_SPACE = 0x3000  # IDEOGRAPHIC SPACE: no code point above it is whitespace
_EXACT_CHUNK = 1 << 20

# kinds of document, as the signature step records them
KIND_NORMAL = 0  # at least one shingle: exact + near dedup
KIND_SHORT = 1  # words but fewer than one shingle: exact dedup only (Jaccard of one shingle is 0 or 1)
KIND_EMPTY = 2  # no word at all: kept untouched, never clustered (all empty texts would collide)
KIND_INVALID = 3  # a reader placeholder (``read_error``): dropped with stage "read"

# scripts written without spaces between words (CJK ideographs, kana, Thai, Lao, Khmer, Myanmar, Tibetan)
_UNSPACED_RANGES = [
    (0x3040, 0x30FF),
    (0x3400, 0x4DBF),
    (0x4E00, 0x9FFF),
    (0xF900, 0xFAFF),
    (0x20000, 0x2FA1F),
    (0x0E00, 0x0EFF),
    (0x1780, 0x17FF),
    (0x1000, 0x109F),
    (0x0F00, 0x0FFF),
]


@lru_cache(maxsize=1)
def _tables() -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per code point: word character (Python's ``\\w``)? in an unspaced script? whitespace (``str.split``)?

    Built once per process (~0.1 s)."""
    code_points = np.arange(_UNICODE_SIZE, dtype="<u4")
    code_points[0xD800:0xE000] = 0x20  # lone surrogates cannot be decoded; they are not word characters
    chars = code_points.tobytes().decode("utf-32-le")
    is_word = np.zeros(_UNICODE_SIZE, dtype=bool)
    for match in re.finditer(r"\w+", chars):
        is_word[match.start() : match.end()] = True
    unspaced = np.zeros(_UNICODE_SIZE, dtype=bool)
    for lo, hi in _UNSPACED_RANGES:
        unspaced[lo : hi + 1] = True
    is_space = np.zeros(_UNICODE_SIZE, dtype=bool)
    is_space[: _LAST_SPACE + 1] = [chr(cp).isspace() for cp in range(_LAST_SPACE + 1)]
    return is_word, unspaced & is_word, is_space


class _Powers:
    """Powers of the character multiplier and of its inverse, grown on demand."""

    def __init__(self) -> None:
        self.pow = np.ones(1, dtype=_U64)
        self.inv = np.ones(1, dtype=_U64)

    def ensure(self, n: int) -> None:
        if len(self.pow) >= n:
            return
        size = max(n, 2 * len(self.pow), 4096)
        with np.errstate(over="ignore"):
            self.pow = np.concatenate([[_U64(1)], np.cumprod(np.full(size - 1, _CHAR_MULT, dtype=_U64))])
            self.inv = np.concatenate([[_U64(1)], np.cumprod(np.full(size - 1, _CHAR_MULT_INV, dtype=_U64))])


_POWERS = _Powers()


_S33, _M64A, _M64B = _U64(33), _U64(0xFF51AFD7ED558CCD), _U64(0xC4CEB9FE1A85EC53)
_S16, _S13, _M32A, _M32B = np.uint32(16), np.uint32(13), np.uint32(0x85EBCA6B), np.uint32(0xC2B2AE35)
_SHINGLE_MULT_U64, _SHIFT32 = _U64(_SHINGLE_MULT), _U64(32)


def _fmix64(h: np.ndarray) -> np.ndarray:
    """MurmurHash3's 64-bit finalizer, in place."""
    h ^= h >> _S33
    h *= _M64A
    h ^= h >> _S33
    h *= _M64B
    h ^= h >> _S33
    return h


def _fmix32(h: np.ndarray) -> np.ndarray:
    """MurmurHash3's 32-bit finalizer, in place — exactly datasketch's affine32 pre-mix."""
    h ^= h >> _S16
    h *= _M32A
    h ^= h >> _S13
    h *= _M32B
    h ^= h >> _S16
    return h


def _py_fmix64(h: int) -> int:
    h ^= h >> 33
    h = (h * 0xFF51AFD7ED558CCD) & _MASK64
    h ^= h >> 33
    h = (h * 0xC4CEB9FE1A85EC53) & _MASK64
    return h ^ (h >> 33)


def normalize_near(text: str) -> str:
    """The text as near-dup shingling sees it (before splitting into words)."""
    return unicodedata.normalize("NFKC", text).casefold()


def normalize_exact(text: str) -> str:
    """NFKC, case folded, whitespace runs collapsed to one space: texts with equal forms are exact copies."""
    return " ".join(normalize_near(text).split())


def exact_hash(text: str) -> tuple[int, int]:
    """xxh3-128 of ``normalize_exact(text)`` (as UTF-32-LE), as (high, low) 64-bit halves."""
    return _exact_from_normalized(normalize_near(text))


def _exact_from_normalized(normalized: str) -> tuple[int, int]:
    if len(normalized) > _EXACT_CHUNK:  # bounded memory: no list of every word of a huge document
        return _exact_from_code_points(np.frombuffer(normalized.encode("utf-32-le", "surrogatepass"), np.uint32))

    value = xxhash.xxh3_128_intdigest(" ".join(normalized.split()).encode("utf-32-le", "surrogatepass"))
    return value >> 64, value & _MASK64


def _exact_from_code_points(cp: np.ndarray) -> tuple[int, int]:
    """The exact hash from normalised code points, in chunks (bounded memory on huge documents).

    Whitespace runs become one space; leading and trailing whitespace is dropped: a space is written only
    when the next non-space character arrives, so chunk borders do not matter.
    """
    is_space = _tables()[2]
    digest = xxhash.xxh3_128()
    previous_space, pending_space = True, False
    for start in range(0, len(cp), _EXACT_CHUNK):
        part = cp[start : start + _EXACT_CHUNK]
        space = is_space[part]
        before = np.empty(len(part), dtype=bool)
        before[0] = previous_space
        before[1:] = space[:-1]
        keep = ~space | ~before  # non-space characters and the first space of each run
        kept = np.where(space, np.uint32(0x20), part)[keep]
        kept_space = space[keep]
        if len(kept) and pending_space and not kept_space[0]:
            digest.update(b" \x00\x00\x00")
        if len(kept):
            trailing = bool(kept_space[-1])
            body = kept[:-1] if trailing else kept
            digest.update(body.astype("<u4", copy=False).tobytes())
            pending_space = trailing or (pending_space and len(body) == 0)
        previous_space = bool(space[-1]) if len(space) else previous_space
    value = digest.intdigest()
    return value >> 64, value & _MASK64


# --- pure-Python reference (slow; the definition the numpy path must match, and datasketch's hashfunc) ---


def word_hash(word: str) -> int:
    """64-bit hash of one normalised word (or character window)."""
    h, power = 0, 1
    for ch in word:
        h = (h + ord(ch) * power) & _MASK64
        power = (power * _CHAR_MULT) & _MASK64
    return _py_fmix64(h)


def shingle_value(shingle: Sequence[str]) -> int:
    """32-bit hash of a shingle given as its words (or characters); pass as ``hashfunc`` to datasketch."""
    h = 0
    for part in shingle:
        h = (h * _SHINGLE_MULT + word_hash(part)) & _MASK64
    return h >> 32


def word_shingles(text: str, k: int) -> list[tuple[str, ...]]:
    """Word k-grams of the normalised text (reference implementation)."""
    words = re.findall(r"\w+", normalize_near(text))
    return [tuple(words[i : i + k]) for i in range(len(words) - k + 1)]


def char_shingles(text: str, k: int) -> list[tuple[str, ...]]:
    """Character k-grams over the word characters of the normalised text (reference implementation)."""
    chars = [ch for ch in normalize_near(text) if re.match(r"\w", ch)]
    return [tuple(chars[i : i + k]) for i in range(len(chars) - k + 1)]


# --- vectorised path ---


def _code_points(text: str) -> np.ndarray:
    return np.frombuffer(normalize_near(text).encode("utf-32-le", "surrogatepass"), dtype=np.uint32)


def _window_hashes(cp: np.ndarray, starts: np.ndarray, ends: np.ndarray) -> np.ndarray:
    """Hashes of the substrings ``cp[s:e]`` from one prefix sum: (S[e] - S[s]) * mult**-s, then fmix64."""
    _POWERS.ensure(len(cp) + 1)
    prefix = np.empty(len(cp) + 1, dtype=_U64)
    prefix[0] = 0
    # array arithmetic wraps modulo 2**64 silently, which is the intended arithmetic
    np.cumsum(cp.astype(_U64) * _POWERS.pow[: len(cp)], out=prefix[1:])
    return _fmix64((prefix[ends] - prefix[starts]) * _POWERS.inv[starts])


def _combine(parts: np.ndarray, k: int) -> np.ndarray:
    """32-bit shingle hashes from k consecutive part hashes (same arithmetic as ``shingle_value``)."""
    n = len(parts) - k + 1
    h = parts[:n].copy()
    for j in range(1, k):
        h *= _SHINGLE_MULT_U64
        h += parts[j : j + n]
    return (h >> _SHIFT32).astype(np.uint32)


def document_hashes(
    text: str, k_words: int = 5, k_chars: int = 5, mode: str = "auto", max_chars: int | None = None
) -> tuple[np.ndarray, int, tuple[int, int]]:
    """Shingle hashes, kind and exact hash of one document, from one pass of normalisation."""
    normalized = normalize_near(text)
    cp = np.frombuffer(normalized.encode("utf-32-le", "surrogatepass"), dtype=np.uint32)
    exact = _exact_from_normalized(normalized)
    if mode == "auto" and text.isascii():
        mode = "word"  # no unspaced script in ASCII; skips the script count
    hashes, kind = _shingles_from_code_points(cp[:max_chars] if max_chars else cp, k_words, k_chars, mode)
    return hashes, kind, exact


def shingle_hashes(
    text: str, k_words: int = 5, k_chars: int = 5, mode: str = "word", max_chars: int | None = None
) -> tuple[np.ndarray, int]:
    """32-bit shingle hashes of a document and its kind (``KIND_NORMAL``/``KIND_SHORT``/``KIND_EMPTY``).

    ``mode`` is ``word``, ``char`` or ``auto`` (char when more than half of the word characters belong to
    unspaced scripts). A document with fewer words than ``k_words`` gets one hash of all its words
    and kind ``KIND_SHORT``.
    """
    cp = _code_points(text)
    return _shingles_from_code_points(cp[:max_chars] if max_chars else cp, k_words, k_chars, mode)


def _shingles_from_code_points(cp: np.ndarray, k_words: int, k_chars: int, mode: str) -> tuple[np.ndarray, int]:
    is_word, unspaced, _ = _tables()
    word = is_word[cp]
    if mode == "auto":
        n_word = int(np.count_nonzero(word))
        mode = "char" if n_word and np.count_nonzero(unspaced[cp]) * 2 > n_word else "word"
    if mode == "char":
        chars = cp[word]
        if len(chars) == 0:
            return np.empty(0, np.uint32), KIND_EMPTY
        positions = np.arange(len(chars) + 1)
        parts = _window_hashes(chars, positions[:-1], positions[1:])
        k = k_chars
    else:
        edges = np.zeros(len(cp) + 2, dtype=np.int8)
        edges[1:-1] = word
        bounds = np.flatnonzero(edges[1:] != edges[:-1])
        if len(bounds) == 0:
            return np.empty(0, np.uint32), KIND_EMPTY
        parts = _window_hashes(cp, bounds[0::2], bounds[1::2])
        k = k_words
    if len(parts) < k:
        return _combine(parts, len(parts)), KIND_SHORT
    return _combine(parts, k), KIND_NORMAL


def affine32_permutations(num_perm: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """datasketch's affine32 permutation parameters for (num_perm, seed), drawn the way ``MinHash`` draws them.

    Drawn here rather than read from ``datasketch.MinHash(...).permutations`` because importing datasketch
    imports scipy.integrate (~1 s per rank); ``tests/pipeline/test_dedup_minhash.py`` checks both give the same values.
    """
    gen = np.random.RandomState(seed)
    a = gen.randint(0, 1 << 31, num_perm, dtype=np.uint32) * np.uint32(2) + np.uint32(1)
    b = gen.randint(0, 1 << 32, num_perm, dtype=np.uint32)
    return np.ascontiguousarray(a), np.ascontiguousarray(b)


class MinHasher:
    """datasketch "affine32" MinHash over precomputed 32-bit shingle hashes, vectorised per document."""

    def __init__(self, num_perm: int = 128, seed: int = 1, chunk: int = 4096):
        self.num_perm, self.seed, self.chunk = num_perm, seed, chunk
        self.a, self.b = affine32_permutations(num_perm, seed)
        self._buffer = np.empty(num_perm * chunk, dtype=np.uint32)  # viewed as a contiguous (num_perm, n)
        self.a_col, self.b_col = self.a[:, None].copy(), self.b[:, None].copy()
        self.empty = np.full(num_perm, np.iinfo(np.uint32).max, dtype=np.uint32)

    def signature(self, hashes: np.ndarray) -> np.ndarray:
        """The MinHash signature (``num_perm`` uint32) of a set given as its 32-bit element hashes."""
        if len(hashes) == 0:
            return self.empty.copy()
        out: np.ndarray | None = None
        for start in range(0, len(hashes), self.chunk):  # chunks bound memory on huge documents
            hv = _fmix32(hashes[start : start + self.chunk].astype(np.uint32, copy=True))
            # permutations along rows, shingles along the contiguous axis (the row-wise min is the fast
            # reduction), in a reused buffer: a fresh 200 KB array per document costs page faults
            values = self._buffer[: self.num_perm * len(hv)].reshape(self.num_perm, len(hv))
            np.multiply(self.a_col, hv, out=values)
            values += self.b_col
            part = values.min(axis=1)
            out = part if out is None else np.minimum(out, part)
        assert out is not None  # hashes is not empty: the loop ran
        return out

    def to_lean_minhash(self, signature: np.ndarray) -> LeanMinHash:
        """A datasketch ``LeanMinHash`` with these values (for ``MinHashLSH`` and its storage)."""
        from datasketch import LeanMinHash

        return LeanMinHash(seed=self.seed, hashvalues=signature, scheme="affine32")
