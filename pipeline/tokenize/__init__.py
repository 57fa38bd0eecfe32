"""Tokenize stage: tokenizer (trained or reused), encoding in datatrove ranks, held-out split, source mix,
shuffled token shards in datatrove's layout and their manifest. Entry point: ``run_tokenize``.

Importing the package loads only the config models (``pipeline.config`` imports them); ``run_tokenize``
and its numpy/datatrove dependencies load on first use.
"""

from typing import Any

from pipeline.tokenize.config import SourceMix, TokenizeConfig

__all__ = ["SourceMix", "TokenizeConfig", "run_tokenize"]


def __getattr__(name: str) -> Any:
    if name == "run_tokenize":
        from pipeline.tokenize.run import run_tokenize

        return run_tokenize
    raise AttributeError(f"module 'pipeline.tokenize' has no attribute {name!r}")
