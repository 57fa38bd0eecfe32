"""Stage ``classify``: score documents with fastText classifiers (``tokenmill classifier train``) and act on it.

```yaml
stages:
  classify:
    - name: finance             # metadata classify.finance = P(positive)
      model: models/finance.bin
      mode: threshold           # annotate | threshold | top_percent | pareto | route
      threshold: 0.5            # threshold / route
      top_percent: 10           # top_percent: keep the run's top 10 % by score (a whole-run pass)
      route_to: finance-mined   # route: documents at or above threshold join this source
      alpha: 9                  # pareto
      route_to: finance-mined   # route: documents at or above threshold join this source
```

Several classifiers may be listed; each scores every document that reaches it, in order, and writes
``metadata["classify"][name]``. ``annotate`` keeps every document (the score is there for later stages or
analysis); ``threshold`` drops a document scoring below ``threshold`` with rule ``<name>_below_threshold``
and its score, and later classifiers do not see it. ``pareto`` is GPT-3's sampling (Brown et al. 2020,
appendix A; NeMo Curator's ``pareto`` mode): a document is kept when ``np.random.pareto(alpha) > 1 - score``,
so high scores are nearly always kept and low ones sometimes, which keeps some diversity; the draw is derived
from a hash of ``seed`` and the document id instead of a random stream, so a rerun or a resumed rank keeps
exactly the same documents. Its drops are ``<name>_pareto_sampled`` with the score. ``top_percent`` keeps
every document here (scored, like ``annotate``); once every source is curated (and deduped), the whole-run pass
``pipeline.classify.top_percent`` keeps the top ``top_percent`` % of the run's documents by that score and drops
the rest with rule ``<name>_below_top_percent`` and their score. ``route`` (domain mining)
drops nothing: a document scoring at or above ``threshold`` is marked ``routed_to: <route_to>`` and leaves the
remaining classifiers; it goes on through this source's later stages and the writer end of the pipeline sends it
to the target source (``pipeline.curate.routing``, docs/classify.md).

The stage runs after ``quality`` and before ``decontaminate`` and ``pii``, on the text the quality rules kept.

A document is scored as ``tokenmill classifier train`` trained on it: newlines and runs of whitespace
flattened to one space (``pipeline.classify.scoring.flatten``). Scoring is batched (``batch_size`` documents
per fastText call). The positive label comes from the model's ``MODEL.json``, or ``label``. Scores are the
calibrated P(positive) of ``pipeline.classify.scoring.Classifier`` (the calibration ``MODEL.json`` holds), so a
``threshold`` reads against the card's ``heldout_thresholds``.

Why not datatrove's ``FastTextClassifierFilter`` (the same fastText call underneath): its drops carry no
score, where every drop here needs (rule, score); it writes every label's mean score at the top level of the
metadata, so two classifiers with the same label names overwrite each other; it scores one document per call.
``benchmarks/classify_bench.py`` measures both on the same documents and model.
"""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

from datatrove.data import Document

from pipeline.base import AccountedStep, Drop
from pipeline.classify.scoring import Classifier, ClassifierError
from pipeline.curate.config import ClassifierConfig, ClassifyConfig

#: metadata a ``route`` classifier sets on a document at or above its threshold (read by pipeline.curate.routing)
ROUTED_TO, ROUTED_BY = "routed_to", "routed_by"


def pareto_draw(seed: int, doc_id: str, alpha: float) -> float:
    """A Pareto (Lomax) variate as ``numpy.random.pareto(alpha)`` draws it, ``(1 - U) ** (-1 / alpha) - 1``, with
    U uniform in [0, 1) taken from a BLAKE2 hash of (seed, document id): the same document always gets the same
    draw, whichever rank or rerun scores it."""
    digest = hashlib.blake2b(f"{seed}\0{doc_id}".encode(), digest_size=8).digest()
    uniform = int.from_bytes(digest, "big") / 2**64
    return (1.0 - uniform) ** (-1.0 / alpha) - 1.0


def _flat(text: str) -> str:
    # str.split + join: the same words as flatten()'s regex, in a third of the time on 2 KB
    return " ".join(text.split())


class ClassifyStage(AccountedStep):
    """Score with each classifier in order; ``threshold`` classifiers drop below their threshold."""

    stage = "classify"
    name = "🏷 Classify (fastText)"
    batch_size = 256

    def __init__(self, classifiers: list[ClassifierConfig], drops_dir: str | None = None):
        super().__init__(drops_dir)
        self.classifiers = ClassifyConfig(classifiers=list(classifiers)).classifiers
        for cfg in self.classifiers:  # before any rank starts: a wrong path is one clear error
            if not Path(cfg.model).is_file():
                raise ClassifierError(f"{cfg.model}: classifier model not found (stages.classify, {cfg.name})")
        self._models: list[tuple[ClassifierConfig, Classifier]] | None = None

    def __getstate__(self) -> dict[str, Any]:
        state = dict(self.__dict__)
        state["_models"] = None  # fastText models are not picklable; each rank loads its own
        return state

    def setup(self) -> None:
        if self._models is not None:
            return
        self._models = [(cfg, Classifier(cfg.model, cfg.label)) for cfg in self.classifiers]

    def scores(self, texts: list[str]) -> dict[str, list[float]]:
        """P(positive) of each classifier for each text (all classifiers, all texts: for benchmarks and eval)."""
        self.setup()
        assert self._models is not None
        flat = [_flat(t) for t in texts]
        return {cfg.name: classifier.scores(flat) for cfg, classifier in self._models}

    def process(self, doc: Document) -> Drop | None:
        return self.process_batch([doc])[0]

    def process_batch(self, docs: list[Document]) -> list[Drop | None]:
        self.setup()
        assert self._models is not None
        verdicts: list[Drop | None] = [None] * len(docs)
        alive = list(range(len(docs)))
        flat = {i: _flat(docs[i].text or "") for i in alive}
        for cfg, classifier in self._models:
            if not alive:
                break
            values = classifier.scores([flat[i] for i in alive])
            still = []
            for i, score in zip(alive, values, strict=True):
                doc = docs[i]
                doc.metadata.setdefault("classify", {})[cfg.name] = round(score, 6)
                if cfg.mode == "threshold" and score < cfg.threshold:
                    verdicts[i] = Drop(rule=f"{cfg.name}_below_threshold", score=score)
                elif cfg.mode == "pareto" and not pareto_draw(cfg.seed, str(doc.id), cfg.alpha) > 1 - score:
                    verdicts[i] = Drop(rule=f"{cfg.name}_pareto_sampled", score=score)
                elif cfg.mode == "route" and score >= cfg.threshold:
                    # only marked here: the document still passes this source's later stages (decontaminate,
                    # pii, ...); the route writer at the end of the pipeline moves it (pipeline.curate.routing)
                    doc.metadata[ROUTED_TO] = cfg.route_to
                    doc.metadata[ROUTED_BY] = cfg.name
                else:
                    still.append(i)
            alive = still
        return verdicts


__all__ = ["ClassifyStage", "ROUTED_BY", "ROUTED_TO", "pareto_draw"]
