"""Dedup configuration (``stages.dedup`` in a recipe).

Defaults come from measurement (``benchmarks/dedup_bench.py``, numbers in ``docs/dedup.md``): with word
5-gram shingles, 3–5 % word edits leave a Jaccard similarity of ~0.6–0.8, which datasketch's default
``MinHashLSH(threshold=0.8)`` (9 bands × 13 rows) mostly misses. 32 bands × 4 rows of a 128-permutation
signature turn a pair at Jaccard 0.6 into an LSH candidate with probability 0.99, and every candidate is then
verified: it only counts when its estimated Jaccard reaches ``threshold``.
"""

from __future__ import annotations

import ipaddress
import os
from typing import Any, Literal

from pydantic import Field, field_validator, model_validator

from pipeline.config_base import StrictModel

CHAR_SHINGLE_LANGUAGES = ["zh", "ja", "th", "lo", "km", "my", "bo"]


#: the environment variable ``index.redis`` reads the password from unless ``password_env`` names another
REDIS_PASSWORD_ENV = "TOKENMILL_REDIS_PASSWORD"


def is_loopback(host: str) -> bool:
    """``localhost`` or a loopback address (``127.0.0.0/8``, ``::1``); a host name is not resolved."""
    if host.lower() in ("localhost", "localhost.localdomain", "ip6-localhost"):
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


class RedisConfig(StrictModel):
    """Where a shared index lives when it is kept in Redis (datasketch's ``storage_config``).

    The password is never in the recipe: it is read from the environment variable ``password_env``
    (``TOKENMILL_REDIS_PASSWORD`` by default). A server on another machine without a password is an open
    index anyone on the network can read and rewrite, so a host that is not loopback is refused unless that
    variable holds a password; on loopback an unset variable means no password."""

    host: str = "localhost"
    port: int = Field(default=6379, gt=0, lt=65536)
    db: int = Field(default=0, ge=0)
    password_env: str = Field(
        default=REDIS_PASSWORD_ENV,
        min_length=1,
        description="name of the environment variable holding the password (Redis requirepass)",
    )
    basename: str = Field(default="tokenmill", description="key prefix; one index per basename")
    timeout_s: float = Field(default=5.0, gt=0, description="connect/read timeout")

    @field_validator("basename")
    @classmethod
    def _basename_plain(cls, value: str) -> str:
        if not value or any(ch.isspace() for ch in value):
            raise ValueError("basename must be non-empty and without whitespace")
        return value

    @model_validator(mode="after")
    def _password_off_loopback(self) -> RedisConfig:
        if not is_loopback(self.host) and not self.password():
            raise ValueError(
                f"host {self.host} is not a loopback address and no password is set: export {self.password_env} "
                "(index.redis.password_env) with the server's requirepass, or use a Redis on 127.0.0.1"
            )
        return self

    def password(self) -> str | None:
        """The password from the environment (``None``: the variable is unset or empty)."""
        return os.environ.get(self.password_env) or None


class IndexConfig(StrictModel):
    """A persistent index of documents kept by earlier runs (one of ``path`` or ``redis``)."""

    path: str | None = Field(default=None, description="index folder on local disk (created on first use)")
    redis: RedisConfig | None = Field(default=None, description="keep the index in Redis instead of on disk")
    update: bool = Field(default=True, description="add this run's kept documents to the index")
    rebuild: bool = Field(
        default=False,
        description="set aside an existing (possibly corrupt) index and start a new one from this run",
    )
    run_name: str | None = Field(default=None, description="name recorded for this run's entries (default: run folder)")

    @model_validator(mode="after")
    def _one_backend(self) -> IndexConfig:
        if (self.path is None) == (self.redis is None):
            raise ValueError("set exactly one of index.path (local disk) or index.redis")
        return self


class DedupConfig(StrictModel):
    """Exact + MinHash near-duplicate removal over all sources of a run."""

    exact: bool = Field(default=True, description="drop copies whose normalized text (case, whitespace) is identical")
    near: bool = Field(default=True, description="drop MinHash near-duplicates (verified LSH candidates)")
    num_perm: int = Field(default=128, ge=8, le=1024, description="MinHash permutations (signature length)")
    bands: int = Field(default=32, ge=2, description="LSH bands; bands x rows <= num_perm")
    rows: int = Field(default=4, ge=1, description="signature values per band")
    threshold: float = Field(
        default=0.5, gt=0, le=1, description="least estimated Jaccard for a candidate pair to count as near-duplicate"
    )
    shingle_size: int = Field(default=5, ge=1, le=32, description="words per shingle")
    char_shingle_size: int = Field(default=5, ge=1, le=64, description="characters per shingle (unspaced scripts)")
    shingles: Literal["auto", "word", "char"] = Field(
        default="auto",
        description="auto: character shingles for the char_languages or text mostly in unspaced scripts",
    )
    char_languages: list[str] = Field(default=CHAR_SHINGLE_LANGUAGES, description="language codes shingled by char")
    seed: int = Field(default=1, ge=0, description="datasketch MinHash seed (permutations)")
    max_chars: int = Field(default=1_000_000, gt=0, description="characters signed per document (exact hash: all)")
    tasks: int | None = Field(default=None, gt=0, description="signature/filter ranks (default: one per input file)")
    top_clusters: int = Field(default=10, ge=0, description="largest clusters shown in the report")
    index: IndexConfig | None = None

    @model_validator(mode="after")
    def _bands_fit(self) -> DedupConfig:
        if self.bands * self.rows > self.num_perm:
            raise ValueError(f"bands x rows = {self.bands * self.rows} exceeds num_perm = {self.num_perm}")
        return self

    def signature_fingerprint(self) -> dict:
        """Parameters that make signatures comparable; an index records them and refuses a mismatch."""
        return {
            "scheme": "datasketch-affine32/tokenmill-shingle-v1",
            "num_perm": self.num_perm,
            "seed": self.seed,
            "shingle_size": self.shingle_size,
            "char_shingle_size": self.char_shingle_size,
            "shingles": self.shingles,
            "char_languages": sorted(self.char_languages),
            "max_chars": self.max_chars,
        }


def recipe_dedup_settings(
    recipe: Any, config: dict[str, Any] | None = None, priority: dict[str, int] | None = None
) -> tuple[dict[str, Any], dict[str, int]]:
    """A recipe's dedup settings and survivor priorities, with the caller's overrides on top.

    ``recipe``: a ``pipeline.config.Recipe`` or ``None`` (typed ``Any``: ``pipeline.config`` imports this module).
    Returns ``(settings, priorities)``: ``stages.dedup`` as a dict (``{}`` when the recipe has no dedup stage)
    updated with ``config``, and each source's ``priority`` updated with ``priority``. ``tokenmill dedup --recipe``
    and the ``dedup`` flow both merge this way; the result still goes through ``DedupConfig.model_validate``.
    """
    settings: dict[str, Any] = {}
    priorities: dict[str, int] = {}
    if recipe is not None:
        stage = getattr(recipe.stages, "dedup", None)
        settings = stage.model_dump() if stage is not None else {}
        priorities = {s.name: s.priority for s in recipe.sources}
    return {**settings, **(config or {})}, {**priorities, **(priority or {})}
