"""Sample text from an exported model (``<run>/train/final``) with plain transformers: the demo's proof that
the folder is a standard Hugging Face model, loadable with ``AutoModelForCausalLM`` and ``AutoTokenizer``."""

from __future__ import annotations

from pathlib import Path


def generate_sample(
    model_dir: str | Path,
    prompt: str,
    max_new_tokens: int = 40,
    *,
    top_k: int | None = None,
    temperature: float = 1.0,
    seed: int = 0,
) -> str:
    """The prompt followed by up to ``max_new_tokens`` generated tokens: greedy, or top-k sampling when
    ``top_k`` is given (seeded). Stops early at the tokenizer's EOS."""
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer
    from transformers.utils import logging as hf_logging

    hf_logging.disable_progress_bar()  # "Loading weights" bars would mix with the sample on the console
    folder = Path(model_dir)
    if not (folder / "config.json").is_file():
        raise FileNotFoundError(f"{folder}: no config.json (expected an exported model folder such as <run>/final)")
    tokenizer = AutoTokenizer.from_pretrained(folder)
    model = AutoModelForCausalLM.from_pretrained(folder)
    model.eval()
    encoded = tokenizer(prompt, return_tensors="pt", add_special_tokens=False)
    if encoded["input_ids"].shape[1] == 0:
        raise ValueError("prompt: empty after tokenization; give some text to continue")
    torch.manual_seed(seed)
    sampling = {"do_sample": True, "top_k": top_k, "temperature": temperature} if top_k else {"do_sample": False}
    with torch.no_grad():
        output = model.generate(
            **encoded,
            max_new_tokens=max_new_tokens,
            pad_token_id=tokenizer.eos_token_id,
            eos_token_id=tokenizer.eos_token_id,
            **sampling,
        )
    return str(tokenizer.decode(output[0], skip_special_tokens=True))  # one sequence: a str (typed str | list)
