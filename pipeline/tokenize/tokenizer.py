"""Train a byte-level BPE tokenizer with HF ``tokenizers``, or reuse an existing one, and save it twice over.

A byte-level BPE encodes any text, whitespace and emoji included, and decodes it back byte for byte: there
is no normalizer (NFC/NFKC or lower-casing would change the text) and no prefix space. Documents are
encoded with ``encode_special_tokens`` on, so a document that happens to contain the literal text
``<|endoftext|>`` is encoded as text and cannot plant an EOS in the middle of itself.

The saved folder holds ``tokenizer.json`` (what ``tokenizers`` and datatrove load) and
``tokenizer_config.json`` (what ``transformers.AutoTokenizer`` needs, offline).
"""

from __future__ import annotations

import json
import os
import re
import shutil
import tempfile
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING

from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers

from pipeline.errors import TokenmillError
from pipeline.ownership import RunRecord, remove_owned

if TYPE_CHECKING:
    from pipeline.tokenize.config import TokenizeConfig

TOKENIZER_FILE = "tokenizer.json"
# files of a Hugging Face tokenizer folder worth carrying along when a tokenizer is reused
HF_TOKENIZER_FILES = ("tokenizer.json", "tokenizer_config.json", "special_tokens_map.json")
# EOS names tried, in order, when a reused tokenizer does not know the configured eos_token
KNOWN_EOS = ("<|endoftext|>", "</s>", "<|end_of_text|>", "<eos>", "<|im_end|>")


class TokenizerError(TokenmillError, ValueError):
    """A tokenizer that cannot be used; the message names the path."""


def token_dtype(vocab_size: int) -> str:
    """datatrove's rule: ids fit in uint16 while the vocabulary has at most 65,536 entries."""
    return "uint16" if vocab_size <= 1 << 16 else "uint32"


def vocab_size(tokenizer: Tokenizer) -> int:
    return tokenizer.get_vocab_size(with_added_tokens=True)


def train_tokenizer(texts: Iterable[str], config: TokenizeConfig) -> Tokenizer:
    """Train a byte-level BPE on ``texts``; special tokens get the first ids (EOS is id 0 by default)."""
    tokenizer = Tokenizer(models.BPE())
    tokenizer.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=True)
    tokenizer.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=config.vocab_size,
        min_frequency=config.min_frequency,
        special_tokens=list(config.special_tokens),
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        show_progress=False,
    )
    tokenizer.train_from_iterator(texts, trainer)
    # a pre-token that is itself in the vocabulary is emitted directly instead of replaying the merges
    # (as Llama 3's tokenizer does): 15-25 % more tokens per CPU-second in benchmarks/tokenize_bench.py,
    # still an exact round trip; it is saved in tokenizer.json, so every loader tokenizes the same way
    tokenizer.model.ignore_merges = True
    return tokenizer


def resolve_tokenizer_path(path: str) -> Path:
    """The ``tokenizer.json`` that ``path`` names (the file itself or a folder holding it)."""
    candidate = Path(path)
    if candidate.is_dir():
        candidate = candidate / TOKENIZER_FILE
        if not candidate.is_file():
            raise TokenizerError(f"{path}: folder has no {TOKENIZER_FILE} (tokenmill needs a fast tokenizer)")
        return candidate
    if candidate.is_file():
        return candidate
    if looks_like_hub_id(path):
        hub_file = _from_hub(path)
        if hub_file is not None:
            return hub_file
    raise TokenizerError(
        f"{path}: tokenizer path does not exist (give a tokenizer.json or a folder holding one; a hub id "
        "works only where the network or the local Hugging Face cache has it)"
    )


def _from_hub(repo_id: str) -> Path | None:
    """A hub tokenizer's local folder: from the cache when offline (tokenmill's default), else downloaded."""
    try:
        from huggingface_hub import snapshot_download

        folder = snapshot_download(repo_id, allow_patterns=list(HF_TOKENIZER_FILES))
    except Exception:  # noqa: BLE001 - offline, unknown repo, no access: all mean "not available"
        return None
    candidate = Path(folder) / TOKENIZER_FILE
    return candidate if candidate.is_file() else None


def load_tokenizer(path: str) -> Tokenizer:
    """Load a tokenizer from a ``tokenizer.json`` or a folder; errors name the path."""
    resolved = resolve_tokenizer_path(path)
    try:
        return Tokenizer.from_file(str(resolved))
    except Exception as error:  # noqa: BLE001 - tokenizers raises plain Exception on a bad file
        raise TokenizerError(f"{resolved}: not a tokenizers file: {error}") from None


def pick_eos(tokenizer: Tokenizer, wanted: str, folder: Path | None = None) -> str:
    """The EOS token of a reused tokenizer: the configured one if known, else what its folder or vocab says."""
    if tokenizer.token_to_id(wanted) is not None:
        return wanted
    candidates: list[str] = []
    config_file = folder / "tokenizer_config.json" if folder else None
    if config_file and config_file.is_file():
        eos = json.loads(config_file.read_text(encoding="utf-8")).get("eos_token")
        if isinstance(eos, dict):  # older transformers stored AddedToken dicts
            eos = eos.get("content")
        if isinstance(eos, str):
            candidates.append(eos)
    candidates.extend(KNOWN_EOS)
    for token in candidates:
        if tokenizer.token_to_id(token) is not None:
            return token
    raise TokenizerError(
        f"tokenizer has no EOS token {wanted!r} (nor any of {', '.join(KNOWN_EOS)}); set tokenize.eos_token"
    )


def save_tokenizer(
    tokenizer: Tokenizer, folder: Path, eos_token: str, record: RunRecord, source: Path | None = None
) -> Path:
    """Write ``folder/tokenizer.json`` plus the files ``AutoTokenizer`` loads; return the tokenizer.json path.

    A reused tokenizer.json is copied byte for byte (its sha256 stays the base model's), with the
    ``tokenizer_config.json``/``special_tokens_map.json`` beside it when there are any (they may carry a chat
    template or BOS settings); otherwise a ``tokenizer_config.json`` is written by transformers. ``record``: the
    shard folder's (``pipeline.ownership``); an earlier run's files are removed only through it.
    """
    folder.mkdir(parents=True, exist_ok=True)
    target = folder / TOKENIZER_FILE
    in_place = source is not None and source.resolve() == target.resolve()
    if not in_place:
        for name in HF_TOKENIZER_FILES:  # no file of an earlier run may survive next to a new tokenizer
            remove_owned(folder / name, record)
        if source is None:
            tokenizer.save(str(target))
        else:
            shutil.copyfile(source, target)
            if source.name == TOKENIZER_FILE:  # a Hugging Face folder: bring its companion files along
                for name in HF_TOKENIZER_FILES[1:]:
                    if (source.parent / name).is_file():
                        shutil.copyfile(source.parent / name, folder / name)
    if not (folder / "tokenizer_config.json").is_file():
        _write_transformers_config(tokenizer, target, folder, eos_token)
    return target


def _write_transformers_config(tokenizer: Tokenizer, target: Path, folder: Path, eos_token: str) -> None:
    """``tokenizer_config.json`` (+ special tokens map) from transformers, leaving tokenizer.json untouched
    (``save_pretrained`` would re-serialise it and change its hash)."""

    from transformers import PreTrainedTokenizerFast

    specials = [token.content for token in tokenizer.get_added_tokens_decoder().values() if token.special]
    pad = next((t for t in specials if "pad" in t.lower()), None)
    hf_tokenizer = PreTrainedTokenizerFast(
        tokenizer_file=str(target),
        eos_token=eos_token,
        pad_token=pad,
        clean_up_tokenization_spaces=False,  # the default would rewrite " ." to "." on decode
    )
    with tempfile.TemporaryDirectory() as scratch:
        hf_tokenizer.save_pretrained(scratch)
        config = json.loads((Path(scratch) / "tokenizer_config.json").read_text(encoding="utf-8"))
        # a class name every transformers version knows (v5 writes its own backend name)
        config["tokenizer_class"] = "PreTrainedTokenizerFast"
        (folder / "tokenizer_config.json").write_text(
            json.dumps(config, indent=2, ensure_ascii=False) + "\n", encoding="utf-8"
        )
        if (Path(scratch) / "special_tokens_map.json").is_file():
            shutil.copyfile(Path(scratch) / "special_tokens_map.json", folder / "special_tokens_map.json")


def looks_like_hub_id(path: str) -> bool:
    """``org/name`` that is not a local path."""
    return bool(re.fullmatch(r"[\w][\w.-]*/[\w][\w.-]*", path)) and not os.path.exists(path)
