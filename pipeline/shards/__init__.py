"""Step 5: token shards, the contract ``training/`` reads.

``format``: the binary layout of ``NAME.ds`` / ``NAME.ds.index`` (datatrove's), the manifest and its fingerprint.
``pipeline.tokenize`` writes shards in this format; ``training.data`` and the planners read them through it.
"""
