"""Link text read from serialised HTML equals the DOM's count, on every construct where the two could part."""

from __future__ import annotations

import random

import pytest
from resiliparse.parse.html import HTMLTree

import pipeline.curate.link_text as link_text
from pipeline.curate.link_text import link_chars, link_chars_dom, mostly_links

#: fragments that change what serialised HTML looks like: entities (in text and attributes), ">" and quotes in
#: attributes, raw-text elements holding "<a>", comments, templates, SVG links nested in links, inline tags and
#: images inside links, whitespace at a link's edges, names that start with "a"
FRAGMENTS = [
    '<a href="/x">Home</a>',
    '<a href="/a?b=1&amp;c=2" title="x>y">Search &amp; replace</a>',
    "<a>caf&eacute; &nbsp;menu</a>",
    '<a href="#"> <b>bold</b> and <i>italic</i> </a>',
    '<a href="#"><img alt="logo" src="l.png"></a>',
    "<a>\n\t spaced \n</a>",
    '<abbr title="a">abbr</abbr> <address>addr</address> <aside>side</aside>',
    "<a-b>custom element</a-b>",
    '<script>var s = "<a>not a link</a>";</script>',
    "<style>a > b { color: red }</style>",
    "<!-- <a href='x'>commented</a> -->",
    "<template><a>in a template</a></template>",
    "<a>outer <svg><a>inner</a></svg> tail</a>",
    "<svg><a>svg link</a></svg>",
    "plain text between links, with a > sign and a < sign",
    "<textarea><a>typed</a></textarea>",
    "<a></a>",
    '<a href="x"><span>nested <em>deep</em></span></a>',
    "<noscript><a>no script</a></noscript>",
    "<a>unclosed",
]


def _nodes(html: str) -> list:
    tree = HTMLTree.parse(html)
    return list(tree.body.query_selector_all("ul, li, div").values())


@pytest.mark.parametrize("fragment", FRAGMENTS)
def test_each_construct_gives_the_doms_count(fragment: str) -> None:
    for node in _nodes(f"<div><ul><li>before {fragment} after</li><li>{fragment}</li></ul></div>"):
        assert link_chars(node) == link_chars_dom(node), node.html


def test_random_mixtures_of_the_constructs_give_the_doms_count() -> None:
    rng = random.Random(7)
    compared = 0
    for _ in range(300):
        items = "".join(
            "<li>" + " ".join(rng.choices(FRAGMENTS, k=rng.randint(1, 4))) + "</li>" for _ in range(rng.randint(1, 5))
        )
        for node in _nodes(f"<div><ul>{items}</ul><p>{rng.choice(FRAGMENTS)}</p></div>"):
            assert link_chars(node) == link_chars_dom(node), node.html
            compared += 1
    assert compared > 600


def test_a_plain_list_is_read_from_its_html_without_asking_the_dom(monkeypatch: pytest.MonkeyPatch) -> None:
    (ul,) = (
        HTMLTree.parse(
            '<ul><li><a href="/a">Getting started</a></li><li><a href="/b"> <b>Reference</b> </a> and notes</li></ul>'
        )
        .body.query_selector_all("ul")
        .values()
    )
    expected = link_chars_dom(ul)

    def refuse(node) -> int:
        raise AssertionError("the DOM was asked")

    monkeypatch.setattr(link_text, "link_chars_dom", refuse)
    assert link_chars(ul) == expected == len("Getting started") + len("Reference")


def test_mostly_links_is_half_the_text_or_more() -> None:
    (menu,) = HTMLTree.parse("<ul><li><a>One</a></li><li><a>Two</a></li></ul>").body.query_selector_all("ul").values()
    (prose,) = (
        HTMLTree.parse("<ul><li>Install the package first, then run <a>setup</a> once.</li></ul>")
        .body.query_selector_all("ul")
        .values()
    )
    assert mostly_links(menu, len(menu.text.strip()))
    assert not mostly_links(prose, len(prose.text.strip()))
