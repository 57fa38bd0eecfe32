"""Classifier training and evaluation (``tokenmill classifier train|eval``), above curation: ``data`` reads
documents through the readers and the extract stage; ``train`` searches, calibrates and measures
(``grid``, ``calibrate``, ``metrics``); ``evaluate`` measures a saved model on other documents.

Scoring -- what the ``classify`` and ``toxicity`` stages load -- is ``pipeline.classify.scoring``, below curation.
"""
