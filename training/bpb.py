"""Bits per byte of an exported model on reference texts: the tokenizer-independent loss of a language model.

bpb = Σ token negative log-likelihood (nats) / ln 2 / Σ UTF-8 bytes of the texts (Gao et al. 2020, The Pile).
Each text is encoded with the model's own tokenizer after an EOS (the document separator the shards put
between documents, so the first token is predicted as a document start), and cut into windows of at most
``seq_len`` predicted tokens; every token is predicted exactly once, with the context of its own window
(non-overlapping windows: cheaper than a sliding window and the same for every model compared).

Written by hand because the training loop's held-out loss is per token of the shards' tokenizer and per
window of the shards; the texts here are documents the shards never held. Labels use -100 for padding, the
value transformers' loss ignores; the sum is taken here from the log-softmax (transformers only returns means).
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any


@dataclass(frozen=True)
class BitsPerByte:
    """What ``bits_per_byte`` measured on a set of texts."""

    bpb: float  # bits per UTF-8 byte over all the texts
    nll_nats: float  # the summed token negative log-likelihood
    tokens: int  # tokens predicted
    bytes: int  # UTF-8 bytes of the texts
    documents: int  # texts measured
    doc_bits: list[float]  # document j's bits (the ablation's document-sampling variance, training/ablate_stats.py)
    doc_bytes: list[int]  # document j's bytes


def bits_per_byte(model_dir: str | Path, texts: Iterable[str], seq_len: int = 512, batch_size: int = 8) -> BitsPerByte:
    """Bits per byte of the model in ``model_dir`` on ``texts``, with each document's bits and bytes."""
    import torch

    folder = Path(model_dir)
    tokenizer, model, device = _load(folder)
    positions = int(getattr(model.config, "max_position_embeddings", seq_len) or seq_len)
    seq_len = max(1, min(seq_len, positions - 1))
    eos = tokenizer.eos_token_id
    if eos is None:
        raise ValueError(f"{folder}: the tokenizer has no EOS token to start each document with")
    windows, doc_bytes = _windows(texts, tokenizer, eos, seq_len)
    n_bytes, documents = sum(doc_bytes), len(doc_bytes)
    if not n_bytes:
        raise ValueError("no text to evaluate (every reference document is empty)")

    nll, tokens = 0.0, 0
    doc_nll = [0.0] * documents
    windows.sort(key=lambda item: len(item[1]))  # similar lengths together: less padding
    with torch.no_grad():
        for b in range(0, len(windows), batch_size):
            batch = windows[b : b + batch_size]
            per_row, batch_nll, batch_tokens = _batch_nll(model, [w for _doc, w in batch], eos, device)
            for row, (doc, _window) in enumerate(batch):
                doc_nll[doc] -= float(per_row[row])
            nll -= batch_nll
            tokens += batch_tokens
    return BitsPerByte(
        bpb=nll / math.log(2) / n_bytes,
        nll_nats=nll,
        tokens=tokens,
        bytes=n_bytes,
        documents=documents,
        doc_bits=[v / math.log(2) for v in doc_nll],
        doc_bytes=doc_bytes,
    )


def _load(folder: Path) -> tuple[Any, Any, Any]:
    """The exported model folder's tokenizer and model (float32, eval mode) and the device it was moved to."""
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer
    from transformers.utils import logging as hf_logging

    hf_logging.disable_progress_bar()
    if not (folder / "config.json").is_file():
        raise FileNotFoundError(f"{folder}: no config.json (expected an exported model folder such as <run>/final)")
    tokenizer = AutoTokenizer.from_pretrained(folder)
    model = AutoModelForCausalLM.from_pretrained(folder, dtype=torch.float32)
    model.eval()
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    model.to(device)  # type: ignore[arg-type]  # transformers' functools.wraps on PreTrainedModel.to reads unbound to mypy
    return tokenizer, model, device


Windows = list[tuple[int, list[int]]]  # (document, window of token ids)


def _windows(texts: Iterable[str], tokenizer: Any, eos: int, seq_len: int) -> tuple[Windows, list[int]]:
    """Each non-empty document as EOS + its tokens, cut into windows of ``seq_len + 1`` ids (every token but the
    first is predicted once), as ``(document, window)``; and each document's UTF-8 bytes."""
    windows: Windows = []
    doc_bytes: list[int] = []
    for text in texts:
        if not text:
            continue
        doc_bytes.append(len(text.encode("utf-8")))
        ids = [eos, *tokenizer.encode(text, add_special_tokens=False)]
        for start in range(0, len(ids) - 1, seq_len):
            windows.append((len(doc_bytes) - 1, ids[start : start + seq_len + 1]))
    return windows, doc_bytes


def _batch_nll(model: Any, chunk: list[list[int]], eos: int, device: Any) -> tuple[Any, float, int]:
    """One padded batch of windows: each row's summed log-probability of its next tokens, the batch's (the
    negative log-likelihood's contribution, summed over its real tokens) and how many tokens were predicted."""
    import torch

    width = max(len(w) for w in chunk)
    inputs = torch.full((len(chunk), width - 1), eos, dtype=torch.long)
    labels = torch.full((len(chunk), width - 1), -100, dtype=torch.long)
    for row, window in enumerate(chunk):
        inputs[row, : len(window) - 1] = torch.tensor(window[:-1])
        labels[row, : len(window) - 1] = torch.tensor(window[1:])
    logits = model(input_ids=inputs.to(device)).logits.float()
    logp = torch.log_softmax(logits, dim=-1)
    labels = labels.to(device)
    mask = labels != -100
    picked = logp.gather(-1, labels.clamp(min=0).unsqueeze(-1)).squeeze(-1)
    per_row = (picked * mask).sum(dim=-1)
    return per_row, float(picked[mask].sum()), int(mask.sum())


def describe(result: dict[str, Any]) -> str:
    return f"{result['bpb']:.4f} bpb over {result['bytes']:,} bytes ({result['documents']} documents)"
