"""Offline early-signal evaluations of an exported model (``tokenmill eval``): bits per byte on reference text and
multiple-choice tasks scored from the model's likelihoods (docs/evals.md)."""
