"""Stage ``toxicity``: score each document and each of its paragraphs for abusive language; drop the toxic ones.

```yaml
stages:
  toxicity:
    threshold: 0.99                  # drop when the whole document scores at or above this
    paragraph_threshold: 0.97        # a paragraph at or above this is toxic
    max_toxic_paragraph_share: 0.2   # drop when more than this share of the paragraphs is toxic
    min_toxic_paragraphs: 2          # ... and at least this many are (one line of a 3-line entry is not enough)
    min_paragraph_chars: 40          # shorter lines are merged with the next one (pipeline.text.lid_units)
    languages: null                  # null: [en] for the bundled scorer, every language for a fastText model
    model: null                      # a fastText .bin (tokenmill classifier train) replacing the bundled scorer
    label: null                      # its toxic label (default: from MODEL.json)
    batch_size: 64
```

The bundled scorer is the linear model shipped inside the ``alt-profanity-check`` wheel: scikit-learn's
``TfidfVectorizer`` (English stop words removed) feeding a ``LinearSVC`` calibrated to probabilities with
``CalibratedClassifierCV``, trained on the Davidson et al. (2017) hate-speech/offensive tweets and the Jigsaw
Toxic Comment Classification (Wikipedia talk pages) data, as the package's README says. It is English and
word-level; docs/toxicity.md lists its limits and how to replace it with a fastText model.

Paragraphs are the document's lines, short ones merged forward until ``min_paragraph_chars`` (the same
``lid_units`` the language stage votes over: extracted web text puts each block element on its own line).
Each batch of documents is scored in ONE ``predict_proba`` (or fastText) call over every document and every
paragraph, so the per-call overhead is paid once per batch; the bundled scorer also tokenises each paragraph
once and sums a document's counts from them (``BundledScorer.score_units``). The model is scored without
importing scikit-learn (``pipeline.curate.toxicity_linear``: the same scores, bit for bit, at a fifth of the
load cost).

Metadata written on every scored document: ``toxicity: {score, toxic_paragraph_share}``. Rules:
``toxic_document`` (score: the document score), then ``toxic_paragraphs`` (score: the toxic share; extra
``toxicity_score``) when more than ``max_toxic_paragraph_share`` of the paragraphs and at least
``min_toxic_paragraphs`` of them are toxic: on a three-line dictionary entry one line is a third of the document
(the GCIDE entry for "penis" was dropped so before ``min_toxic_paragraphs`` existed, benchmarks/toxicity_eval.py).
A document whose language (``metadata.language``, from the language stage) is not in
``languages`` is kept unscored and counted in the stat ``toxicity_skipped_<lang>``; a document with no
language (language stage off) is scored, counted in ``toxicity_language_unknown``, because skipping it would
let every document of a run through unchecked.
"""

from __future__ import annotations

import functools
import importlib.util
import warnings
from pathlib import Path
from typing import Any

import numpy as np
from datatrove.data import Document

from pipeline.base import AccountedStep, Drop
from pipeline.classify.scoring import Classifier
from pipeline.curate.config import ToxicityConfig
from pipeline.curate.toxicity_linear import LinearToxicityScorer, UnsupportedModel, bundled_data_dir
from pipeline.read.common import InputError
from pipeline.text import lid_units


class ToxicityError(InputError):
    """The toxicity scorer cannot be loaded as configured (missing package or model, mismatched pickle); an
    ``InputError``, so the CLI reports it as one ``error:`` line."""


class BundledScorer:
    """alt-profanity-check's vectorizer and calibrated linear SVM, loaded from the package's data files.

    The files are loaded here rather than through ``profanity_check.predict_prob``: that function wraps the
    result in ``np.apply_along_axis`` (a Python call per row) and the module loads at import with no control
    over warnings. The pickles are only valid for the scikit-learn they were made with (the package pins it
    exactly, ``alt-profanity-check==X`` needs ``scikit-learn==X``); if another scikit-learn is installed,
    unpickling warns ``InconsistentVersionWarning`` and may score wrongly, so that is an error, not a warning.
    """

    def __init__(self) -> None:
        try:
            import joblib
            from sklearn.exceptions import InconsistentVersionWarning
        except ImportError as error:  # pragma: no cover - a dependency of the project
            raise ToxicityError(
                f"stages.toxicity needs alt-profanity-check (pip install alt-profanity-check): {error}"
            ) from None
        # found, not imported: the package's __init__ unpickles both files at import, outside our warning filter
        spec = importlib.util.find_spec("profanity_check")
        if spec is None or not spec.submodule_search_locations:  # pragma: no cover - a dependency of the project
            raise ToxicityError("stages.toxicity needs alt-profanity-check (pip install alt-profanity-check)")
        data = Path(list(spec.submodule_search_locations)[0]) / "data"
        with warnings.catch_warnings():
            warnings.simplefilter("error", InconsistentVersionWarning)
            try:
                self.vectorizer = joblib.load(data / "vectorizer.joblib")
                self.model = joblib.load(data / "model.joblib")
            except InconsistentVersionWarning as warning:
                raise ToxicityError(
                    f"alt-profanity-check's model does not match the installed scikit-learn ({warning}); install the "
                    "alt-profanity-check release numbered like scikit-learn (it pins it) or give stages.toxicity.model"
                ) from None
        self.toxic_column = list(self.model.classes_).index(1)

    def scores(self, texts: list[str]) -> list[float]:
        """P(toxic) of each text, in one ``transform`` + ``predict_proba`` call."""
        if not texts:
            return []
        return self.model.predict_proba(self.vectorizer.transform(texts))[:, self.toxic_column].tolist()

    def score_units(self, texts: list[str], units: list[list[str]]) -> tuple[list[float], list[float]]:
        """``(document scores, paragraph scores)``: each document scored as a whole, each paragraph alone.

        The paragraphs are tokenised once (``CountVectorizer.transform``) and a document's counts are the sum of
        its paragraphs' counts -- the same bag of words as ``vectorizer.transform(text)``, since no token spans a
        line break (the token pattern is ``\\b\\w\\w+\\b``) -- then both go through the vectorizer's idf weights
        and norm and ONE ``predict_proba`` call. Tokenising is the stage's cost; this halves it (measured on
        ~3 KB GCIDE documents, benchmarks/toxicity_eval.py: 0.19 of 0.46 CPU-s per 1,000 went to the second pass).
        ``texts`` only says which documents are empty (they score 0).
        """
        from scipy import sparse
        from sklearn.feature_extraction.text import CountVectorizer
        from sklearn.preprocessing import normalize

        flat = [p for ps in units for p in ps]
        if not flat:
            return [0.0] * len(texts), []
        counts = CountVectorizer.transform(self.vectorizer, flat).astype(np.float64)
        owner = np.repeat(np.arange(len(units)), [len(ps) for ps in units])
        members = sparse.csr_matrix((np.ones(len(flat)), (owner, np.arange(len(flat)))), shape=(len(units), len(flat)))
        stacked = sparse.vstack([members @ counts, counts]).tocsr()
        if self.vectorizer.sublinear_tf:
            np.log(stacked.data, out=stacked.data)
            stacked.data += 1
        if self.vectorizer.use_idf:
            stacked = stacked @ sparse.diags(self.vectorizer.idf_)
        if self.vectorizer.norm:
            stacked = normalize(stacked, norm=self.vectorizer.norm, copy=False)
        values = self.model.predict_proba(stacked)[:, self.toxic_column].tolist()
        docs = [v if ps and t.strip() else 0.0 for v, ps, t in zip(values[: len(units)], units, texts, strict=True)]
        return docs, values[len(units) :]


@functools.cache
def bundled_scorer() -> Any:
    """The one scorer of the bundled model in this process: ``LinearToxicityScorer`` (the same pickles and the
    same scores without importing scikit-learn, ~0.3 CPU-s with joblib and scipy.sparse instead of 1.0-1.5;
    ``pipeline.curate.toxicity_linear``), or ``BundledScorer`` when the pickles are not the configuration that
    module reproduces. ``pipeline.curate.toxicity_preload`` loads it in datatrove's forkserver, so the ranks
    forked from there share it (``benchmarks/fixed_cost.py``: a 2,000-page crawl in 4 files)."""
    try:
        return LinearToxicityScorer(bundled_data_dir())
    except UnsupportedModel:
        return BundledScorer()  # scikit-learn itself: it also raises the clear error of a mismatched pickle


class FastTextScorer:
    """A fastText classifier (e.g. from ``tokenmill classifier train``) whose positive label is "toxic"."""

    def __init__(self, path: str, label: str | None) -> None:
        self.classifier = Classifier(path, label)

    def scores(self, texts: list[str]) -> list[float]:
        """Calibrated P(positive) of each text (flattened as training flattened it), in one batched fastText call."""
        return self.classifier.scores([" ".join(t.split()) for t in texts])

    def score_units(self, texts: list[str], units: list[list[str]]) -> tuple[list[float], list[float]]:
        """``(document scores, paragraph scores)`` in one fastText call over every text and paragraph."""
        values = self.scores(texts + [p for ps in units for p in ps])
        return [v if t.strip() else 0.0 for v, t in zip(values, texts, strict=False)], values[len(texts) :]


class ToxicityStage(AccountedStep):
    """Drop documents that score toxic as a whole or in too many of their paragraphs (module docstring)."""

    stage = "toxicity"
    name = "☣ Toxicity"

    def __init__(self, config: ToxicityConfig | None = None, drops_dir: str | None = None):
        super().__init__(drops_dir)
        self.config = config or ToxicityConfig()
        if self.config.model is not None and not Path(self.config.model).is_file():
            # before any rank starts: a wrong path is one clear error
            raise ToxicityError(f"{self.config.model}: toxicity model not found (stages.toxicity.model)")
        self.batch_size = self.config.batch_size
        self.languages = self.config.scored_languages()
        self._scorer: Any = None

    def __getstate__(self) -> dict[str, Any]:
        state = dict(self.__dict__)
        state["_scorer"] = None  # fastText models are not picklable; each rank loads its own scorer
        return state

    @property
    def forkserver_preload(self) -> tuple[str, ...]:
        """Modules datatrove's forkserver imports before forking the ranks (``pipeline.executor``)."""
        return () if self.config.model else ("pipeline.curate.toxicity_preload",)

    def setup(self) -> None:
        if self._scorer is None:
            cfg = self.config
            self._scorer = FastTextScorer(cfg.model, cfg.label) if cfg.model else bundled_scorer()

    def paragraphs(self, text: str) -> list[str]:
        """The units scored one by one (``lid_units``: lines, short ones merged with the next)."""
        return lid_units(text, self.config.min_paragraph_chars, self.config.max_chars)

    def score_texts(self, texts: list[str]) -> list[tuple[float, float, int]]:
        """``(document score, toxic paragraph share, toxic paragraphs)`` of each text: every text and paragraph
        in one call."""
        self.setup()
        cap = self.config.max_chars
        units = [self.paragraphs(t) for t in texts]
        doc_scores, para_scores = self._scorer.score_units([t[:cap] if cap else t for t in texts], units)
        out, at = [], 0
        for score, ps in zip(doc_scores, units, strict=True):
            toxic = sum(1 for v in para_scores[at : at + len(ps)] if v >= self.config.paragraph_threshold)
            at += len(ps)
            out.append((float(score), toxic / len(ps) if ps else 0.0, toxic))
        return out

    def process(self, doc: Document) -> Drop | None:
        return self.process_batch([doc])[0]

    def process_batch(self, docs: list[Document]) -> list[Drop | None]:
        verdicts: list[Drop | None] = [None] * len(docs)
        chosen = []
        for i, doc in enumerate(docs):
            language = doc.metadata.get("language")
            if language is None:
                self.stat_update("toxicity_language_unknown")
            elif self.languages is not None and language not in self.languages:
                self.stat_update(f"toxicity_skipped_{language}")
                continue
            chosen.append(i)
        if not chosen:
            return verdicts
        cfg = self.config
        for i, (score, share, toxic) in zip(
            chosen, self.score_texts([docs[i].text or "" for i in chosen]), strict=True
        ):
            docs[i].metadata["toxicity"] = {"score": round(score, 6), "toxic_paragraph_share": round(share, 6)}
            if score >= cfg.threshold:
                verdicts[i] = Drop(rule="toxic_document", score=score)
            elif share > cfg.max_toxic_paragraph_share and toxic >= cfg.min_toxic_paragraphs:
                verdicts[i] = Drop(rule="toxic_paragraphs", score=share, extra={"toxicity_score": round(score, 6)})
        return verdicts


__all__ = ["BundledScorer", "FastTextScorer", "ToxicityError", "ToxicityStage"]
