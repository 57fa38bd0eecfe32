"""tokenmill curation pipeline: datatrove steps, recipe models, accounting and the report.

Stages never import Prefect; flows in ``flows/`` build executors from a recipe and run them.
"""
