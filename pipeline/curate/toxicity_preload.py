"""Imported by datatrove's forkserver (``pipeline.executor.preload_forkserver``) when a pipeline runs the
bundled toxicity scorer: it loads the scorer once there, and every rank forked from the forkserver inherits it.

Only for that list: importing this module loads the model (``pipeline.curate.toxicity_linear``; scikit-learn only
where that cannot read the pickles). A scorer that cannot load (a
scikit-learn the pickles were not made for) is left to each rank's ``setup``, which raises the clear
``ToxicityError``; an exception here would only break the forkserver.
"""

from __future__ import annotations

from contextlib import suppress

from pipeline.curate.toxicity import bundled_scorer
from pipeline.errors import TokenmillError

with suppress(TokenmillError):  # reported by the ranks' setup instead
    bundled_scorer()
