"""The bundled demo sample: a seeded crawl (WARC), a domain folder and the ground truth behind them.

``generate_sample`` feeds ``tokenmill demo``, the tests and the benchmarks; ``generate_crawl`` makes a
crawl of any size for benchmarks. See ``generator.py`` for the layout and the keys of ``truth.json``.
"""

from sample.generator import KINDS, LANGUAGES, SampleInfo, generate_crawl, generate_sample, plan_counts
from sample.pii import DECOY_TYPES, PII_TYPES

__all__ = [
    "DECOY_TYPES",
    "KINDS",
    "LANGUAGES",
    "PII_TYPES",
    "SampleInfo",
    "generate_crawl",
    "generate_sample",
    "plan_counts",
]
