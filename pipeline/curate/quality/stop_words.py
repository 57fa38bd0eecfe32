"""Gopher's stop-word lists, one per language, and the matcher that counts them in a text."""

from __future__ import annotations

import unicodedata

import regex

from pipeline.text import NO_SPACE_LANGUAGES

#: The most frequent function words of each language; a normal page holds at least two of them.
#: Gopher's English list is the paper's (and datatrove's) eight; the others are written for tokenmill
#: from the commonest words of each language. Matched lower-cased, as whole words (with punctuation
#: around them allowed) in the paper mode; as substrings for languages written without spaces.
STOP_WORDS: dict[str, list[str]] = {
    "en": ["the", "be", "to", "of", "and", "that", "have", "with"],  # Gopher / datatrove
    "de": ["der", "die", "das", "und", "ist", "nicht", "mit", "den", "von", "zu", "sich", "ein", "eine", "auf"],
    "fr": ["le", "la", "les", "de", "des", "et", "est", "un", "une", "que", "dans", "pour", "pas", "du", "en"],
    "es": ["el", "la", "los", "las", "de", "que", "y", "en", "un", "una", "es", "por", "con", "para", "del"],
    "it": ["il", "la", "di", "che", "e", "è", "un", "una", "per", "non", "con", "del", "sono", "della"],
    "pt": ["o", "a", "os", "as", "de", "que", "e", "do", "da", "em", "um", "uma", "para", "com", "não", "é"],
    "nl": ["de", "het", "een", "en", "van", "is", "dat", "niet", "op", "te", "met", "zijn", "voor"],
    "ru": ["и", "в", "не", "на", "что", "с", "по", "это", "как", "он", "к", "из", "а", "для", "от"],
    "uk": ["і", "в", "на", "що", "з", "не", "до", "це", "та", "як", "у", "для", "від"],
    "pl": ["i", "w", "nie", "na", "się", "z", "do", "że", "jest", "to", "jak", "o", "od"],
    "cs": ["a", "v", "se", "na", "je", "že", "s", "z", "do", "to", "o", "i", "pro"],
    "sv": ["och", "i", "att", "det", "som", "en", "på", "är", "av", "för", "med", "till"],
    "tr": ["ve", "bir", "bu", "da", "de", "için", "ile", "olarak", "çok", "daha", "gibi"],
    "ar": ["في", "من", "على", "إلى", "أن", "عن", "هذا", "هذه", "التي", "الذي", "مع", "كان", "ما", "لا"],
    "hi": ["का", "की", "के", "है", "में", "और", "से", "को", "यह", "पर", "हैं", "एक"],
    # Korean glues words with particles and endings, so its commonest function morphemes are matched as
    # substrings (는 를 에서 으로 하는 …), as for Chinese and Japanese; a list of nouns has none of them
    "ko": ["는", "를", "에서", "으로", "에게", "하는", "있는", "한다", "합니다", "니다", "하고", "및", "또는", "것"],
    "da": ["og", "i", "at", "er", "det", "en", "til", "af", "på", "med", "for", "som", "den", "de", "ikke", "har"],
    "no": ["og", "i", "er", "det", "på", "til", "en", "av", "for", "som", "med", "at", "ikke", "har", "den", "å"],
    "nn": ["og", "i", "er", "det", "på", "til", "ein", "av", "for", "som", "med", "ikkje", "har", "den", "å"],
    "fi": ["ja", "on", "ei", "se", "että", "oli", "ovat", "tai", "kun", "myös", "mutta", "sen", "jos", "voi"],
    "et": ["ja", "on", "ei", "et", "see", "ka", "oli", "kui", "mis", "või", "aga", "ning", "oma"],
    "hu": ["a", "az", "és", "hogy", "nem", "is", "egy", "van", "meg", "de", "ez", "csak", "már", "mint"],
    "ro": ["și", "şi", "de", "în", "la", "cu", "a", "nu", "că", "pe", "este", "din", "o", "un", "care", "pentru"],
    "ca": ["i", "de", "la", "el", "que", "en", "a", "és", "per", "els", "les", "amb", "no", "un", "una", "del"],
    "gl": ["e", "de", "o", "a", "que", "en", "non", "do", "da", "os", "un", "unha", "con", "para", "é"],
    "hr": ["i", "je", "u", "na", "da", "se", "za", "su", "od", "s", "a", "ne", "koji", "kao", "što", "to"],
    "bs": ["i", "je", "u", "na", "da", "se", "za", "su", "od", "s", "a", "ne", "koji", "kao", "što", "to"],
    # Serbian and Serbo-Croatian are written in Latin and Cyrillic script
    "sr": ["i", "je", "u", "na", "da", "se", "za", "su", "od", "и", "је", "у", "на", "да", "се", "за", "су", "од"],
    "sh": ["i", "je", "u", "na", "da", "se", "za", "su", "od", "и", "је", "у", "на", "да", "се", "за", "су", "од"],
    "sl": ["in", "je", "v", "na", "da", "se", "za", "so", "ki", "z", "pa", "ne", "tudi", "od", "po", "s"],
    "sk": ["a", "v", "na", "je", "sa", "že", "to", "s", "z", "do", "o", "aj", "ako", "pre", "sú", "nie"],
    "bg": ["и", "на", "в", "да", "е", "за", "се", "от", "с", "не", "че", "по", "са", "а", "като", "това"],
    "mk": ["и", "на", "во", "да", "е", "за", "се", "од", "со", "не", "што", "ги", "го", "а", "ќе", "тоа"],
    "be": ["і", "у", "ў", "на", "не", "з", "што", "да", "гэта", "а", "як", "па", "для", "ад"],
    "el": ["και", "το", "η", "της", "του", "να", "σε", "την", "με", "που", "για", "τα", "ο", "οι", "από", "είναι"],
    "lt": ["ir", "yra", "kad", "į", "su", "o", "iš", "bet", "ne", "tai", "jo", "kaip", "buvo", "per"],
    "lv": ["un", "ir", "ar", "par", "no", "uz", "kas", "ka", "lai", "arī", "bet", "nav", "tā", "kā"],
    "he": ["של", "את", "על", "לא", "הוא", "זה", "עם", "גם", "כי", "אם", "היא", "או", "יש", "אבל", "מה", "כל"],
    "fa": ["و", "در", "به", "از", "که", "این", "را", "با", "است", "برای", "آن", "می", "یک", "هم", "تا"],
    "ur": ["کے", "کی", "میں", "ہے", "اور", "سے", "کو", "کا", "نے", "پر", "یہ", "ہیں", "بھی", "کہ"],
    "mr": ["आणि", "आहे", "या", "हे", "की", "ते", "व", "ला", "त्या", "एक", "होते", "मध्ये", "नाही"],
    "ne": ["र", "छ", "को", "मा", "ले", "पनि", "यो", "गर्न", "हो", "भएको", "थियो", "एक", "छन्"],
    "bn": ["এবং", "ও", "এই", "করে", "থেকে", "না", "যে", "একটি", "জন্য", "তার", "ছিল", "করা"],
    "id": ["yang", "dan", "di", "dengan", "untuk", "dari", "ini", "itu", "dalam", "tidak", "akan", "pada", "ke"],
    "ms": ["yang", "dan", "di", "untuk", "dengan", "dari", "ini", "itu", "dalam", "tidak", "akan", "adalah"],
    "tl": ["ang", "ng", "sa", "na", "mga", "at", "ay", "si", "para", "hindi", "ito", "kung", "may"],
    "vi": ["và", "của", "là", "có", "được", "trong", "cho", "không", "những", "một", "các", "với", "này"],
    "sw": ["na", "ya", "wa", "kwa", "ni", "za", "katika", "la", "kuwa", "hii", "cha", "au", "lakini"],
    "af": ["die", "en", "van", "in", "is", "het", "nie", "wat", "om", "te", "dat", "op", "vir", "met"],
    "is": ["og", "að", "í", "á", "er", "sem", "um", "það", "til", "en", "með", "var", "ekki", "af"],
    "ga": ["agus", "an", "na", "ar", "is", "i", "le", "go", "a", "sé", "bhí", "ní", "do", "seo"],
    "cy": ["a", "y", "yn", "i", "ar", "o", "yr", "ac", "mae", "wedi", "bod", "ei", "gan", "ond"],
    "eo": ["la", "kaj", "de", "en", "estas", "al", "ke", "por", "kun", "ne", "ĝi", "sed", "el"],
    "la": ["et", "in", "est", "non", "ad", "cum", "ut", "quod", "sed", "qui", "quae", "ab", "de", "sunt"],
    "sq": ["të", "e", "në", "dhe", "një", "me", "për", "që", "nga", "është", "i", "se", "u", "ka"],
    "az": ["və", "bu", "bir", "üçün", "ilə", "da", "də", "ki", "olan", "olaraq", "çox", "isə"],
    "uz": ["va", "bu", "bir", "uchun", "bilan", "ham", "u", "deb", "edi", "emas", "lekin", "esa"],
    # written without spaces: matched as substrings of the text (simplified and traditional forms)
    # the commonest function characters of simplified and traditional text, with those of reference prose
    # (将 如果 或 可以 为 以 对 从 时: "if", "or", "can", "for", "with", "when"), which the first ones miss
    "zh": [
        "的",
        "了",
        "是",
        "在",
        "和",
        "有",
        "不",
        "这",
        "這",
        "也",
        "就",
        "都",
        "与",
        "與",
        "一个",
        "一個",
        "将",
        "將",
        "如果",
        "或",
        "可以",
        "为",
        "為",
        "以",
        "对",
        "對",
        "从",
        "從",
        "时",
        "時",
    ],  # fmt: skip
    "ja": ["の", "に", "は", "を", "が", "で", "て", "と", "た", "し", "です", "ます", "こと"],
    "yue": ["嘅", "係", "唔", "喺", "咗", "佢", "啲", "的", "是", "有", "就", "都", "了"],
}
#: languages whose stop words are looked for as substrings: no spaces between words, or particles glued on
SUBSTRING_STOP_WORD_LANGUAGES = NO_SPACE_LANGUAGES | {"ko"}


class _StopWords:
    """Counts the distinct stop words of one language in a text: whole words, any case, punctuation around
    them allowed ("The", "(and", "that's"); for languages written without spaces, substrings."""

    def __init__(self, language: str, words: list[str]):
        self.words = sorted({unicodedata.normalize("NFC", w).lower() for w in words})
        self.substring = language in SUBSTRING_STOP_WORD_LANGUAGES
        edge = r"[\p{L}\p{M}\p{N}]"
        self.patterns = [regex.compile(rf"(?<!{edge}){regex.escape(w)}(?!{edge})") for w in self.words]

    def __bool__(self) -> bool:
        return bool(self.words)

    def __call__(self, text: str) -> int:
        if self.substring:
            return sum(1 for w in self.words if w in text)
        lowered = text.lower()
        # the substring test (C speed) settles absent words; the regex only confirms word boundaries
        pairs = zip(self.words, self.patterns, strict=True)
        return sum(1 for w, pattern in pairs if w in lowered and pattern.search(lowered))


_STOP_WORD_CACHE: dict[tuple[str, tuple[str, ...]], _StopWords] = {}


def stop_word_matcher(language: str, overrides: dict[str, list[str]]) -> _StopWords | None:
    """The language's matcher; None when no list exists (the rule is skipped with a note); an empty matcher
    when the recipe switched the rule off for the language with ``[]`` (``overrides``: the recipe's lists)."""
    words = overrides.get(language, STOP_WORDS.get(language))
    if words is None:
        return None
    key = (language, tuple(words))
    if key not in _STOP_WORD_CACHE:
        _STOP_WORD_CACHE[key] = _StopWords(language, words)
    return _STOP_WORD_CACHE[key]
