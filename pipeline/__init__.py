"""tokenmill's data path, raw sources -> token shards, one sub-package per step in the order data flows:

``read/``     1. sources (WARC/WET, JSONL, Parquet, datasets, folders) -> datatrove Documents; counted placeholders
``curate/``   2. per-source text stages in pipeline order (extract, language, quality, classify, toxicity,
              decontaminate, pii), then routing of mined documents into their domain source
``classify/``    the fastText models the classify stage scores with, trained from a team's own documents
``dedup/``    3. across sources: exact and MinHash near-duplicates, verified, optionally against earlier runs
``tokenize/`` 4. deduplicated documents -> tokenizer, source mix, held-out split, shuffled token shards
``shards/``   5. the shard format and manifest: the contract ``training/`` reads

The modules beside them are shared by every step (the recipe, the run-directory layout, fingerprints,
the accounting of every document read, the report). Stages never import Prefect; flows in ``flows/``
build executors from a recipe and run them. The demo/test data generator lives outside, in ``sample/``.
"""

from pipeline.hub_deferred import defer

# before any module of the package imports datatrove, whose io module would import the Hub client (hub_deferred.py)
defer()
