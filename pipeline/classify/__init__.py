"""Model-based curation: fastText classifiers trained from a team's own documents (``tokenmill classifier``).

* ``pipeline.classify.data``: documents of any path the readers accept, as flat text lines (with counted skips);
* ``pipeline.classify.model``: DCLM's fastText recipe (train, score, held-out metrics, ``MODEL.json``).

The ``classify`` and ``decontaminate`` stages live in ``pipeline.curate``.
"""
