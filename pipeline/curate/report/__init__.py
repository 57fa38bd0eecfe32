"""Curation's sections of the run report, beside the stages that produce them (as ``pipeline.dedup.result`` is
dedup's): the curation section itself (``section``: warnings, the per-source table, input files, the funnel, PII,
kept documents, example drops) from its parts (``funnel``, ``inputs``, ``warn``, ``kept``, ``plots``), and the
classify, toxicity and decontaminate stages' sections. ``pipeline.report`` assembles them into report.md/json.
"""
