"""The English template grammar: sentences and headlines from ``text_en``'s topic word lists.

Slots are drawn lazily (a sentence pays only for the slots its template has). Subjects and verbs agree
(plural subjects get "their" and base-form headline verbs), and a per-page ``used`` set keeps templates
and verb phrases from repeating on one page, because repeated phrases read as Gopher n-gram duplicates
and would make good pages fail the repetition filter.
"""

from __future__ import annotations

import random

import sample.text_en as text_en


class Slots(dict):
    """English grammar slots, drawn on first use (a sentence only pays for the slots it has)."""

    def __init__(self, rng: random.Random, topic: str, used: set[str] | None = None):
        super().__init__()
        self.rng, self.topic = rng, text_en.TOPICS[topic]
        self.used = set() if used is None else used  # verb phrases already on this page

    def _fresh(self, options: tuple[str, ...]) -> str:
        """A phrase not yet used on the page when one is left: repeated phrases are Gopher n-gram duplicates."""
        unused = [o for o in options if o not in self.used]
        value = self.rng.choice(unused or options)
        self.used.add(value)
        return value

    def __missing__(self, key: str) -> str:
        rng, t = self.rng, self.topic
        base = key.lower()
        if base in ("s", "s2"):
            value = rng.choice(t["subjects"])
        elif base in ("vp", "vp2"):
            value = self._fresh(t["vp"])
            if _plural(self._subject("s2" if base == "vp2" else "s")):
                value = value.replace(" its ", " their ").replace("said it would", "said they would")
        elif base == "headline":
            value = rng.choice(t["headline"])
            if _plural(self._subject("s")):
                verb, _, rest = value.partition(" ")
                value = f"{_base_form(verb)} {rest}"
        elif base == "pct":
            value = str(rng.randint(12, 87))
        elif base == "name":
            value = f"{rng.choice(text_en.FIRST_NAMES)} {rng.choice(text_en.LAST_NAMES)}"
        else:
            pools = {
                "vi": t["vi"],
                "thing": t["things"],
                "time": text_en.TIMES,
                "tf": text_en.TIMES_FUTURE,
                "reason": text_en.REASONS,
                "source": text_en.SOURCES,
                "people": text_en.PEOPLE,
                "opinion": text_en.OPINION,
                "comment": text_en.COMMENTS,
                "habit": text_en.HABITS,
                "role": text_en.ROLES,
                "feeling": text_en.FEELINGS,
                "place": text_en.PLACES,
            }
            value = rng.choice(pools[base])
        if key[0].isupper():
            value = value[0].upper() + value[1:]
        self[key] = value
        return value

    def _subject(self, key: str) -> str:
        """The subject already drawn for this sentence (capitalised or not), or an empty string."""
        return self.get(key) or self.get(key.upper()) or ""


def _plural(subject: str) -> bool:
    """Whether a subject phrase is plural, judged by its head noun ("a team of researchers" → team)."""
    head = subject
    for preposition in (" of ", " at ", " in ", " from "):
        head = head.split(preposition)[0]
    words = head.split()
    return bool(words) and words[-1].endswith("s") and not words[-1].endswith("'s")


def _base_form(verb: str) -> str:
    """'raises' → 'raise', 'launches' → 'launch', 'carries' → 'carry' (headline verbs for plural subjects)."""
    if verb.endswith("ies"):
        return verb[:-3] + "y"
    if verb.endswith(("shes", "ches", "xes", "sses")):
        return verb[:-2]
    return verb[:-1] if verb.endswith("s") else verb


def sentence(rng: random.Random, topic: str, used: set[str] | None = None) -> str:
    """One sentence on ``topic``; pass the page's ``used`` set to avoid repeats within a page."""
    slots = Slots(rng, topic, used)
    return slots._fresh(text_en.TEMPLATES).format_map(slots)


def title(rng: random.Random, topic: str) -> str:
    text = rng.choice(text_en.TITLE_TEMPLATES).format_map(Slots(rng, topic))
    return text[0].upper() + text[1:]
