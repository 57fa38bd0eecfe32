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
scikit-learn's ``_stop_words.py`` source, not imported), counts built in ``CountVectorizer._count_vocab``'s
order, scipy's sparse products in the same order, the l2 norm summed row by row in stored order as
``sklearn.utils.sparsefuncs_fast.inplace_csr_row_normalize_l2`` does, and the sigmoid ``expit(-(a·f + b))``
as ``1 / (1 + exp(a·f + b))`` per value (scipy's ``expit`` formula; the same libm ``exp``).
``tests/pipeline/test_toxicity_linear.py`` compares both on man pages and generated documents; on 6,817
documents and 38,810 paragraphs of curated and dropped crawl text every score was equal. Scoring is also
~2.4x faster than ``CountVectorizer.transform`` + ``predict_proba`` (0.61 vs 1.46 CPU-s there).
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
        self.findall = token_pattern.findall
        self.vocabulary: dict[str, int] = v["vocabulary_"]
        self.idf = np.asarray(v["_tfidf"].idf_, dtype=np.float64)
        self.stop_words = english_stop_words()

        m = model.__dict__
        _check(model._class.endswith(".CalibratedClassifierCV"), f"model is {model._class}")
        classes = list(np.asarray(m["classes_"]))
        _check(len(classes) == 2 and 1 in classes, f"classes {classes}")
        self.toxic_column = classes.index(1)
        self.members = []
        for calibrated in m["calibrated_classifiers_"]:
            c = calibrated.__dict__
            svm = c["estimator"].__dict__
            _check(c["method"] == "sigmoid" and len(c["calibrators"]) == 1, "calibration is not one sigmoid")
            _check(list(np.asarray(svm["classes_"])) == classes, "estimator classes differ")
            coef = np.asarray(svm["coef_"], dtype=np.float64)
            _check(coef.shape == (1, len(self.vocabulary)), f"coef shape {coef.shape}")
            sigmoid = c["calibrators"][0].__dict__
            self.members.append((coef.T, svm["intercept_"], float(sigmoid["a_"]), float(sigmoid["b_"])))
        _check(bool(self.members), "no calibrated classifiers")

    def counts(self, texts: list[str]):
        """``CountVectorizer.transform`` of ``texts``: a CSR matrix of float64 counts with sorted indices."""
        import numpy as np
        from scipy import sparse

        vocabulary, stop_words, findall = self.vocabulary, self.stop_words, self.findall
        j_indices: list[int] = []
        values: list[int] = []
        indptr = [0]
        for text in texts:
            counter: dict[int, int] = {}
            for token in findall(text.lower()):
                if token in stop_words:
                    continue
                index = vocabulary.get(token)
                if index is not None:
                    counter[index] = counter.get(index, 0) + 1
            j_indices.extend(counter)
            values.extend(counter.values())
            indptr.append(len(j_indices))
        matrix = sparse.csr_matrix(
            (np.asarray(values, dtype=np.intc), np.asarray(j_indices, dtype=np.int32), np.asarray(indptr, np.int32)),
            shape=(len(texts), len(vocabulary)),
            dtype=np.float64,
        )
        matrix.sort_indices()
        return matrix

    def probabilities(self, tfidf) -> list[float]:
        """P(toxic) of each l2-normalised TF-IDF row: ``CalibratedClassifierCV.predict_proba``'s toxic column."""
        import numpy as np

        total = np.zeros(tfidf.shape[0])
        for coef_t, intercept, a, b in self.members:
            decision = (tfidf @ coef_t + intercept).reshape(-1)
            proba = np.array([1.0 / (1.0 + math.exp(a * t + b)) for t in decision.tolist()])  # expit(-(aT + b))
            proba[(proba > 1.0) & (proba <= 1.0 + 1e-5)] = 1.0  # as scikit-learn clips
            if self.toxic_column == 0:  # binary: the other column is 1 - p
                proba = 1.0 - proba
            total += proba
        total /= len(self.members)
        return total.tolist()

    def scores(self, texts: list[str]) -> list[float]:
        """P(toxic) of each text, as ``TfidfVectorizer.transform`` (idf per stored value) + ``predict_proba``."""
        if not texts:
            return []
        tfidf = self.counts(texts)
        tfidf.data *= self.idf[tfidf.indices]
        l2_normalize_rows(tfidf)
        return self.probabilities(tfidf)

    def score_units(self, texts: list[str], units: list[list[str]]) -> tuple[list[float], list[float]]:
        """``(document scores, paragraph scores)`` as ``pipeline.curate.toxicity.BundledScorer.score_units``."""
        import numpy as np
        from scipy import sparse

        flat = [p for ps in units for p in ps]
        if not flat:
            return [0.0] * len(texts), []
        counts = self.counts(flat)
        owner = np.repeat(np.arange(len(units)), [len(ps) for ps in units])
        members = sparse.csr_matrix((np.ones(len(flat)), (owner, np.arange(len(flat)))), shape=(len(units), len(flat)))
        stacked = sparse.vstack([members @ counts, counts]).tocsr()
        stacked = stacked @ sparse.diags(self.idf)  # BundledScorer's products, so its stored order too
        l2_normalize_rows(stacked)
        values = self.probabilities(stacked)
        docs = [v if ps and t.strip() else 0.0 for v, ps, t in zip(values[: len(units)], units, texts, strict=True)]
        return docs, values[len(units) :]


def l2_normalize_rows(matrix) -> None:
    """Divide each CSR row by its l2 norm in place, the squares summed in stored order (as scikit-learn's
    ``inplace_csr_row_normalize_l2``); rows of zeros stay. ``csr @ ones`` is scipy's sequential row sum."""
    import numpy as np

    squares = matrix.copy()
    squares.data = squares.data * squares.data
    sums = squares @ np.ones(matrix.shape[1])
    norms = np.sqrt(sums)
    norms[sums == 0.0] = 1.0
    matrix.data /= np.repeat(norms, np.diff(matrix.indptr))


def bundled_data_dir() -> Path:
    """alt-profanity-check's ``data`` folder (found, not imported: its ``__init__`` unpickles with scikit-learn)."""
    spec = importlib.util.find_spec("profanity_check")
    if spec is None or not spec.submodule_search_locations:
        raise UnsupportedModel("alt-profanity-check is not installed")
    return Path(list(spec.submodule_search_locations)[0]) / "data"


__all__ = ["LinearToxicityScorer", "UnsupportedModel", "bundled_data_dir", "english_stop_words", "l2_normalize_rows"]
