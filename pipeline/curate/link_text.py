"""How much of an element's text is link text, read from its serialised HTML where that is exact.

Why not the DOM alone: resiliparse wraps each node it hands to Python (~2 µs a node), and a page's lists hold
many links (6.7 an ``<ul>`` on generated crawls): wrapping every ``<a>`` to read its text was ~0.07-0.12 ms a
page, a tenth of a web curation's marginal cost (docs/fixed_cost.md, fourth pass). The element's
HTML is one C call, and lexbor serialises it so that a regular expression reads the link texts exactly: tag
and attribute names lower-case, attribute values in double quotes with ``<``, ``>``, ``&`` and ``"`` escaped,
text with ``&``, ``<``, ``>`` and U+00A0 escaped. So the text between an ``<a …>`` and its ``</a>``, without the
tags inside it, is that link's ``text`` whenever it holds no ``&`` (an entity, which the DOM's text decodes).

Where the serialisation is not that plain text, the DOM answers (``link_chars_dom``): elements whose content is
written raw or is not in the DOM (script, style, template …), comments and CDATA, an entity in a link's text, or
an ``<a>`` start tag inside another link (nested through SVG) or not closed where the expression looks.
"""

from __future__ import annotations

import re

#: elements serialised without escaping (their text may hold "<a" or "</a>"), template contents (serialised but
#: not children in the DOM), comments, CDATA and doctype-like markup ("<!")
_NOT_PLAIN = re.compile(
    r"<(?:script|style|textarea|title|xmp|iframe|noembed|noframes|noscript|plaintext|template)[\s/>]|<!"
)
#: one link: its start tag (">" inside attribute values is escaped by the serialiser) and the HTML up to its end
_ANCHOR = re.compile(r"<a(?:\s[^>]*)?>(.*?)</a>", re.S)
_START = re.compile(r"<a[\s>]")
_TAG = re.compile(r"<[^>]*>")


def link_chars_dom(node) -> int:
    """The characters of the text of each ``<a>`` under ``node``, each stripped, summed (the DOM's answer)."""
    return sum(len(a.text.strip()) for a in node.query_selector_all("a").values())


def link_chars(node) -> int:
    """``link_chars_dom(node)``, read from ``node.html`` where that is exact (module docstring)."""
    html = node.html
    if node.tag != "a" and _NOT_PLAIN.search(html) is None:  # the DOM's query leaves the node itself out
        inners = _ANCHOR.findall(html)
        # joined with ">", which text never holds unescaped: one pass of each expression for all the links
        joined = ">".join(inners)
        # every start tag begins a match, and no match holds another start tag (an <a> nested in one, through SVG)
        if len(inners) == len(_START.findall(html)) and _START.search(joined) is None:
            texts = _TAG.sub("", joined)
            if "&" not in texts:
                return sum(map(len, map(str.strip, texts.split(">")))) if inners else 0
    return link_chars_dom(node)


def mostly_links(node, text_chars: int) -> bool:
    """Whether link text is at least half of the element's ``text_chars`` (a menu, an index, a site map)."""
    return link_chars(node) * 2 >= text_chars
