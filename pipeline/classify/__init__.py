"""Classifier scoring, below curation: ``pipeline.classify.scoring`` loads a model and its ``MODEL.json`` and
returns calibrated P(positive) for the ``classify`` and ``toxicity`` stages; ``pipeline.classify.top_percent`` is
the classify stage's whole-run pass.

Training and evaluation (``tokenmill classifier train|eval``) are ``pipeline.classifier``, above curation.
"""
