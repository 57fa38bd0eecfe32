"""Configuration of the tokenize stage: tokenizer, held-out split, shard size and the source mix.

The per-source mix itself (weight or epochs) lives on the recipe's ``SourceConfig``; ``SourceMix`` is the
small view of it that ``run_tokenize`` takes, so the stage can also run without a recipe (CLI on a folder).
"""

from __future__ import annotations

from pydantic import Field, model_validator

from pipeline.config_base import StrictModel

# 256 byte symbols are the base alphabet of a byte-level BPE; a smaller vocabulary cannot encode every text
BYTE_ALPHABET = 256


class SourceMix(StrictModel):
    """How much of one source goes into the training mix: a share of all training tokens, or a repeat count.

    With neither set the source keeps its natural size (``epochs`` 1).
    """

    weight: float | None = Field(default=None, gt=0, description="share of the training tokens (0.51 or 51)")
    epochs: float | None = Field(default=None, gt=0, description="times the source's training tokens are used")

    @model_validator(mode="after")
    def _one_of(self) -> SourceMix:
        if self.weight is not None and self.epochs is not None:
            raise ValueError("give a source either a weight or epochs, not both")
        return self


class TokenizeConfig(StrictModel):
    """Parameters of the tokenize stage (``stages.tokenize`` in a recipe)."""

    tokenizer: str | None = Field(
        default=None,
        description="reuse this tokenizer (a tokenizer.json, or a folder holding one) instead of training one",
    )
    vocab_size: int = Field(default=32_768, ge=BYTE_ALPHABET + 1, description="size of a trained tokenizer")
    special_tokens: list[str] = Field(default=["<|endoftext|>", "<|pad|>"], min_length=1)
    eos_token: str = Field(default="<|endoftext|>", description="written after every document")
    min_frequency: int = Field(default=2, ge=1, description="BPE: a pair must occur this often to be merged")
    train_max_bytes: int = Field(
        default=1 << 30, gt=0, description="text read to train the tokenizer, split evenly across sources"
    )
    heldout_share: float = Field(default=0.01, ge=0, lt=0.5, description="documents per source kept out of training")
    seed: int = Field(default=42, description="seed of the mix and the held-out split")
    text_key: str = Field(
        default="text", min_length=1, description="JSONL/Parquet input: the row field holding the text"
    )
    id_key: str = Field(default="id", min_length=1, description="JSONL/Parquet input: the row field holding the id")
    max_shard_tokens: int = Field(default=1 << 28, gt=0, description="a training shard file holds at most this many")
    target_tokens: int | None = Field(
        default=None, gt=0, description="training tokens when every source has a weight (default: the natural total)"
    )
    max_repeats_warning: float = Field(default=4.0, gt=0, description="warn when a source is repeated more often")
    batch_size: int = Field(default=1000, gt=0, description="documents encoded per call to the tokenizer")
    tasks: int = Field(default=2, gt=0, description="encoding ranks (default local executor)")
    workers: int = Field(default=-1, description="concurrent encoding ranks (-1: as many as tasks)")
    verify_docs: int = Field(
        default=50, ge=0, description="documents per rank decoded again to check the round trip (0: off)"
    )
    keep_work: bool = Field(default=False, description="keep the per-rank encoded files under <output>/.work")

    @model_validator(mode="after")
    def _eos_is_special(self) -> TokenizeConfig:
        if self.tokenizer is None and self.eos_token not in self.special_tokens:
            raise ValueError(f"eos_token {self.eos_token!r} must be one of special_tokens {self.special_tokens}")
        if len(set(self.special_tokens)) != len(self.special_tokens):
            raise ValueError("special_tokens has duplicates")
        return self
