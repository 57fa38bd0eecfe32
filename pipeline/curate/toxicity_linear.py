"""alt-profanity-check's linear model (TF-IDF → calibrated LinearSVC) scored without importing scikit-learn.

Why hand-written: importing scikit-learn costs 1.0-1.5 CPU-s per process (``import sklearn`` pulls in
``scipy.stats``, pandas, pyarrow and narwhals; ``python -X importtime`` and ``/usr/bin/time python -c "import
sklearn"`` on the 2-core VM), which was a third of a 20-document ``tokenmill curate configs/web.yaml`` run. What
the bundled model needs at scoring time is small: a vocabulary, idf weights, five linear SVMs and five sigmoids.

The two pickles are read with joblib's own unpickler, with every ``sklearn.*`` class replaced by ``_Fitted``, a
plain attribute holder (no scikit-learn code runs); the state is then checked for exactly the configuration
``score_units`` reproduces (word analyzer, unigrams, ``english`` stop words, l2 norm, sigmoid calibration,
binary classes) and the pickle's scikit-learn version against the installed one. Anything else raises
``UnsupportedModel`` and ``pipeline.curate.toxicity`` falls back to scikit-learn itself.

The scores equal scikit-learn's bit for bit: the same token regex, lower-casing and stop-word list (read from
scikit-learn's ``_stop_words.py`` source, not imported), counts as ``CountVectorizer.transform`` makes them,
each row's values in the order ``BundledScorer.score_units``'s scipy products store them (``score_units``), the
l2 norm and every SVM's decision summed one value after the other in that order (as
``inplace_csr_row_normalize_l2`` and scipy's ``csr_matvec`` add; ``sequential_row_sums``), and the sigmoid
``expit(-(a·f + b))`` as ``1 / (1 + exp(a·f + b))`` per value (scipy's ``expit`` formula, the same libm ``exp``).
Neither scipy is imported (``scipy.sparse`` alone costs ~0.35 CPU-s: it clones NumPy's namespace, which loads
``numpy.f2py`` and ``numpy.testing``). ``tests/pipeline/test_toxicity_linear.py`` compares both on man pages
and generated documents; on 6,817 documents and 38,810 paragraphs of curated and dropped crawl text every score
was equal, and scoring took 0.93 CPU-s against scikit-learn's 1.38.
"""

from __future__ import annotations

import ast
import importlib.util
import math
import re
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from typing import Any


class UnsupportedModel(Exception):
    """The pickles are not the configuration this module reproduces (or cannot be read without scikit-learn)."""


class _Fitted:
    """Stands in for every scikit-learn class in the pickles: ``pickle`` sets its ``__dict__`` from the state."""

    def __init__(self, module: str = "", name: str = "") -> None:
        self._class = f"{module}.{name}"


def _stub_class(module: str, name: str) -> type:
    return type(name, (_Fitted,), {"_class": f"{module}.{name}"})


def _load_stubbed(path: Path) -> Any:
    """One joblib pickle with scikit-learn's classes replaced by ``_Fitted`` subclasses."""
    try:
        from joblib.numpy_pickle import NumpyUnpickler
    except ImportError as error:  # pragma: no cover - joblib is scikit-learn's dependency
        raise UnsupportedModel(f"joblib: {error}") from None

    class StubUnpickler(NumpyUnpickler):
        def find_class(self, module: str, name: str) -> Any:
            if module == "sklearn" or module.startswith("sklearn."):
                return _stub_class(module, name)
            return super().find_class(module, name)

    try:
        with open(path, "rb") as handle:
            return StubUnpickler(str(path), handle, True).load()
    except Exception as error:  # noqa: BLE001 - any failure: scikit-learn reads it instead
        raise UnsupportedModel(f"{path.name}: {type(error).__name__}: {error}") from None


def english_stop_words() -> frozenset[str]:
    """scikit-learn's ``ENGLISH_STOP_WORDS``, read from its source file (importing it would import scikit-learn)."""
    spec = importlib.util.find_spec("sklearn")  # the top-level package is found, not imported
    if spec is None or not spec.submodule_search_locations:
        raise UnsupportedModel("scikit-learn is not installed")
    source = Path(list(spec.submodule_search_locations)[0]) / "feature_extraction" / "_stop_words.py"
    try:
        tree = ast.parse(source.read_text(encoding="utf-8"))
    except (OSError, SyntaxError) as error:
        raise UnsupportedModel(f"{source}: {error}") from None
    for node in tree.body:
        if (
            isinstance(node, ast.Assign)
            and [getattr(t, "id", None) for t in node.targets] == ["ENGLISH_STOP_WORDS"]
            and isinstance(node.value, ast.Call)
            and getattr(node.value.func, "id", None) == "frozenset"
            and len(node.value.args) == 1
        ):
            return frozenset(ast.literal_eval(node.value.args[0]))
    raise UnsupportedModel(f"{source}: no ENGLISH_STOP_WORDS = frozenset([...])")


def _installed_sklearn() -> str:
    try:
        return version("scikit-learn")
    except PackageNotFoundError:
        raise UnsupportedModel("scikit-learn is not installed") from None


def _check(condition: bool, what: str) -> None:
    if not condition:
        raise UnsupportedModel(what)


#: scikit-learn's default ``token_pattern``, and the same tokens found ~20 % faster: a match of ``\w\w+`` can
#: only start where a run of word characters starts (a one-character run fails there, and the next position is
#: not a word character) and takes the whole run, which is what ``\b…\b`` asks for
DEFAULT_TOKEN_PATTERN = r"(?u)\b\w\w+\b"
RUNS_OF_TWO_OR_MORE = re.compile(r"\w\w+")


class LinearToxicityScorer:
    """``BundledScorer``'s ``scores``/``score_units`` on the same pickles, without scikit-learn (module docstring)."""

    def __init__(self, data: Path) -> None:
        import numpy as np

        vectorizer = _load_stubbed(data / "vectorizer.joblib")
        model = _load_stubbed(data / "model.joblib")
        installed = _installed_sklearn()
        for obj in (vectorizer, model):
            made = getattr(obj, "_sklearn_version", None)
            if made != installed:  # scikit-learn itself raises the clear error (InconsistentVersionWarning)
                raise UnsupportedModel(f"pickled with scikit-learn {made}, {installed} installed")
        v = vectorizer.__dict__
        _check(vectorizer._class.endswith(".TfidfVectorizer"), f"vectorizer is {vectorizer._class}")
        expected = {"input": "content", "analyzer": "word", "lowercase": True, "strip_accents": None}
        expected |= {"preprocessor": None, "tokenizer": None, "ngram_range": (1, 1), "stop_words": "english"}
        expected |= {"binary": False, "dtype": np.float64, "norm": "l2", "use_idf": True, "sublinear_tf": False}
        for key, value in expected.items():
            _check(v.get(key) == value, f"vectorizer.{key} = {v.get(key)!r}")
        token_pattern = re.compile(v["token_pattern"])
        _check(token_pattern.groups <= 1, "token_pattern has groups")
        if v["token_pattern"] == DEFAULT_TOKEN_PATTERN:
            token_pattern = RUNS_OF_TWO_OR_MORE
        self.findall = token_pattern.findall
        self.vocabulary: dict[str, int] = v["vocabulary_"]
        self.idf = np.asarray(v["_tfidf"].idf_, dtype=np.float64)
        self.stop_words = english_stop_words()
        # what a token counts as: scikit-learn builds its vocabulary after removing stop words, so for its own
        # pickles this is the vocabulary itself; one that holds stop words anyway has them left out here, as
        # ``CountVectorizer.transform`` removes them before the lookup
        self.lookup = (
            self.vocabulary
            if self.stop_words.isdisjoint(self.vocabulary)
            else {token: i for token, i in self.vocabulary.items() if token not in self.stop_words}
        )

        m = model.__dict__
        _check(model._class.endswith(".CalibratedClassifierCV"), f"model is {model._class}")
        classes = list(np.asarray(m["classes_"]))
        _check(len(classes) == 2 and 1 in classes, f"classes {classes}")
        self.toxic_column = classes.index(1)
        coefs, self.sigmoids = [], []
        for calibrated in m["calibrated_classifiers_"]:
            c = calibrated.__dict__
            svm = c["estimator"].__dict__
            _check(c["method"] == "sigmoid" and len(c["calibrators"]) == 1, "calibration is not one sigmoid")
            _check(list(np.asarray(svm["classes_"])) == classes, "estimator classes differ")
            coef = np.asarray(svm["coef_"], dtype=np.float64)
            _check(coef.shape == (1, len(self.vocabulary)), f"coef shape {coef.shape}")
            sigmoid = c["calibrators"][0].__dict__
            intercept = np.asarray(svm["intercept_"], dtype=np.float64)
            _check(intercept.shape == (1,), f"intercept shape {intercept.shape}")
            coefs.append(coef[0])
            self.sigmoids.append((float(intercept[0]), float(sigmoid["a_"]), float(sigmoid["b_"])))
        _check(bool(coefs), "no calibrated classifiers")
        self.coef = np.ascontiguousarray(np.stack(coefs, axis=1))  # (vocabulary, members)

    def counts(self, texts: list[str]) -> list[dict[int, int]]:
        """``CountVectorizer.transform`` of each text: ``{vocabulary index: count}`` in first-occurrence order."""
        # the lookup done by ``map`` in C, the Python step only for tokens in the vocabulary (a step per token was
        # ~3 % of a web curation's CPU on generated crawls)
        get, findall = self.lookup.get, self.findall
        rows = []
        for text in texts:
            counter: dict[int, int] = {}
            for index in map(get, findall(text.lower())):
                if index is not None:
                    counter[index] = counter.get(index, 0) + 1
            rows.append(counter)
        return rows

    def sorted_rows(self, texts: list[str]):
        """``(indices, counts, lengths)``: the texts' count rows concatenated, each row's indices ascending (the
        CSR matrix ``CountVectorizer.transform`` returns, after its ``sort_indices``)."""
        import numpy as np

        rows = self.counts(texts)
        lengths = np.array([len(r) for r in rows], dtype=np.int64)
        indices = np.fromiter((i for r in rows for i in r), dtype=np.int64, count=int(lengths.sum()))
        counts = np.fromiter((c for r in rows for c in r.values()), dtype=np.float64, count=len(indices))
        order = np.lexsort((indices, np.repeat(np.arange(len(rows)), lengths)))
        return indices[order], counts[order], lengths

    def probabilities(self, indices, counts, lengths) -> list[float]:
        """P(toxic) of each row (consecutive ``(indices, counts)`` of ``lengths``, in scipy's stored order): the
        idf products, the l2 norm and each SVM's decision summed in that order (module docstring), then the mean
        of the calibrated sigmoids (``CalibratedClassifierCV.predict_proba``'s toxic column)."""
        import numpy as np

        data = counts * self.idf[indices]
        sums = sequential_row_sums(data * data, lengths)
        norms = np.sqrt(sums)
        norms[sums == 0.0] = 1.0
        data /= np.repeat(norms, lengths)
        decisions = sequential_row_sums(data[:, None] * self.coef[indices], lengths)  # (rows, members)
        total = np.zeros(len(lengths))
        for m, (intercept, a, b) in enumerate(self.sigmoids):
            decision = decisions[:, m] + intercept
            proba = np.array([1.0 / (1.0 + math.exp(a * t + b)) for t in decision.tolist()])  # expit(-(aT + b))
            proba[(proba > 1.0) & (proba <= 1.0 + 1e-5)] = 1.0  # as scikit-learn clips
            if self.toxic_column == 0:  # binary: the other column is 1 - p
                proba = 1.0 - proba
            total += proba
        total /= len(self.sigmoids)
        return total.tolist()

    def scores(self, texts: list[str]) -> list[float]:
        """P(toxic) of each text, as ``TfidfVectorizer.transform`` + ``predict_proba`` (sorted indices)."""
        if not texts:
            return []
        return self.probabilities(*self.sorted_rows(texts))

    def score_units(self, texts: list[str], units: list[list[str]]) -> tuple[list[float], list[float]]:
        """``(document scores, paragraph scores)`` as ``pipeline.curate.toxicity.BundledScorer.score_units``.

        That one sums each document's paragraph counts (``members @ counts``) and multiplies every row by the
        idf diagonal, two scipy ``csr_matmat`` products, each of which stores a row's columns in the reverse
        order of their first appearance: a document row ends in first-appearance order over its paragraphs'
        sorted rows, a paragraph row in descending index order. The sums below run in those orders."""
        import numpy as np

        flat = [p for ps in units for p in ps]
        if not flat:
            return [0.0] * len(texts), []
        indices, counts, lengths = self.sorted_rows(flat)
        # documents: each distinct index once, at its first appearance, with the sum of its (integer) counts
        entry_doc = np.repeat(np.repeat(np.arange(len(units)), [len(ps) for ps in units]), lengths)
        keys = entry_doc * len(self.vocabulary) + indices
        unique, first, inverse = np.unique(keys, return_index=True, return_inverse=True)
        totals = np.bincount(inverse.reshape(-1), weights=counts)
        order = np.argsort(first)
        doc_keys = unique[order]
        doc_lengths = np.bincount(doc_keys // len(self.vocabulary), minlength=len(units))
        # paragraphs: each row reversed
        ends = np.cumsum(lengths)
        reverse = np.repeat(ends + ends - lengths - 1, lengths) - np.arange(len(indices))
        values = self.probabilities(
            np.concatenate([doc_keys % len(self.vocabulary), indices[reverse]]),
            np.concatenate([totals[order], counts[reverse]]),
            np.concatenate([doc_lengths, lengths]),
        )
        docs = [v if ps and t.strip() else 0.0 for v, ps, t in zip(values[: len(units)], units, texts, strict=True)]
        return docs, values[len(units) :]


def sequential_row_sums(values, lengths):
    """Per row, the sum of its consecutive ``values`` (1-D, or 2-D: one sum per column) added one after the
    other from the first, as scipy's ``csr_matvec`` and scikit-learn's row norms add them (NumPy's ``sum``
    adds pairwise, which rounds differently). Rows are padded with zeros to a power-of-two width and summed
    with ``cumsum`` (sequential by definition); a row without values sums to 0."""
    import numpy as np

    out = np.zeros((len(lengths), *values.shape[1:]))
    if not len(values):
        return out
    starts = np.concatenate([[0], np.cumsum(lengths)[:-1]])
    width = 1
    while True:
        rows = np.flatnonzero((lengths > width // 2) & (lengths <= width))
        if len(rows):
            offsets = np.arange(width)
            inside = offsets[None, :] < lengths[rows, None]
            gathered = values[np.where(inside, starts[rows, None] + offsets[None, :], 0)]
            gathered[~inside] = 0.0
            out[rows] = np.cumsum(gathered, axis=1)[:, -1]
        if width >= lengths.max():
            return out
        width *= 2


def bundled_data_dir() -> Path:
    """alt-profanity-check's ``data`` folder (found, not imported: its ``__init__`` unpickles with scikit-learn)."""
    spec = importlib.util.find_spec("profanity_check")
    if spec is None or not spec.submodule_search_locations:
        raise UnsupportedModel("alt-profanity-check is not installed")
    return Path(list(spec.submodule_search_locations)[0]) / "data"


__all__ = [
    "LinearToxicityScorer",
    "UnsupportedModel",
    "bundled_data_dir",
    "english_stop_words",
    "sequential_row_sums",
]
