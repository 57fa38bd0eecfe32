"""HTML page templates: the site chrome (navigation, cookie banners, sidebars, share bars, footers)
that main-content extraction has to strip from around an article.

Three layouts mimic common site builds: a semantic news page (``<header>/<nav>/<article>/<aside>/
<footer>``), a div-soup blog theme (ids and classes only), and a portal with breadcrumbs and ad slots.
The article itself is passed in already rendered; chrome strings come from the page's language module.
"""

from __future__ import annotations

import random
from html import escape

LAYOUTS = ("news", "blog", "portal")


def site_name(site: str) -> str:
    """``rheinkurier.de`` → ``Rheinkurier``; readable enough for a logo."""
    return site.split(".")[0].replace("-", " ").title()


def _links(rng: random.Random, labels: list[str] | tuple[str, ...], prefix: str = "/") -> str:
    return "".join(f'<li><a href="{prefix}{rng.randint(100, 99999)}">{escape(label)}</a></li>' for label in labels)


def _head(lang: str, direction: str, title: str, site: str, url: str, rng: random.Random) -> str:
    return (
        f'<!DOCTYPE html>\n<html lang="{lang}" dir="{direction}">\n<head>\n<meta charset="utf-8">\n'
        '<meta name="viewport" content="width=device-width, initial-scale=1">\n'
        f"<title>{escape(title)} | {escape(site_name(site))}</title>\n"
        f'<link rel="canonical" href="{escape(url)}">\n'
        f'<link rel="stylesheet" href="/static/css/site.{rng.getrandbits(32):08x}.css">\n'
        '<script async src="/static/js/analytics.js"></script>\n'
        "<script>window.dataLayer=window.dataLayer||[];function gtag(){dataLayer.push(arguments);}"
        "gtag('js',new Date());</script>\n</head>\n"
    )


def _cookie_banner(chrome: dict, rng: random.Random) -> str:
    return (
        '<div id="cookie-banner" class="cookie-consent" role="dialog">'
        f"<p>{escape(rng.choice(chrome['cookie']))}</p>"
        f'<button class="accept">{escape(chrome["accept"])}</button>'
        f'<button class="settings">{escape(chrome["settings"])}</button></div>\n'
    )


def render_page(
    layout: str,
    *,
    lang: str,
    direction: str,
    title: str,
    site: str,
    url: str,
    chrome: dict,
    article_html: str,
    related: list[str],
    year: int,
    rng: random.Random,
    cookie_banner: bool = True,
) -> str:
    """One full HTML document: ``article_html`` wrapped in the chosen layout's chrome."""
    name = escape(site_name(site))
    nav_labels = list(chrome["nav"])
    nav = _links(rng, nav_labels[: rng.randint(max(4, len(nav_labels) - 4), len(nav_labels))])
    footer = _links(rng, chrome["footer"], "/info/")
    related_html = _links(rng, related, "/article/")
    cookie = _cookie_banner(chrome, rng) if cookie_banner else ""
    head = _head(lang, direction, title, site, url, rng)
    if layout == "news":
        body = (
            f"<body>\n{cookie}"
            f'<header class="site-header"><div class="logo"><a href="/">{name}</a></div>\n'
            f'<nav class="main-nav"><ul>{nav}</ul></nav>\n'
            f'<form class="search" action="/search"><input type="text" name="q" '
            f'placeholder="{escape(chrome["search"])}"><button>{escape(chrome["search"])}</button></form>'
            "</header>\n"
            f'<main class="content">\n<article class="story">\n{article_html}</article>\n'
            f'<div class="share-bar"><span>{escape(chrome["share"])}</span> <a href="#">Facebook</a> '
            '<a href="#">X</a> <a href="#">LinkedIn</a></div>\n'
            f'<aside class="sidebar"><section class="most-read"><h3>{escape(chrome["most_read"])}</h3>'
            f"<ol>{related_html}</ol></section>\n"
            f'<section class="newsletter"><h3>{escape(chrome["newsletter"])}</h3><form><input type="email" '
            f'name="email"><button>{escape(chrome["subscribe"])}</button></form></section></aside>\n</main>\n'
            f'<footer class="site-footer"><ul>{footer}</ul><p>© {year} {name}. {escape(chrome["rights"])}</p>'
            "</footer>\n</body>\n</html>\n"
        )
    elif layout == "blog":
        tags = ", ".join(f'<a href="/tag/{rng.randint(1, 500)}">{escape(t)}</a>' for t in rng.sample(nav_labels, 3))
        body = (
            '<body>\n<div id="wrapper">\n'
            f'<div id="topbar"><a href="/login">{escape(chrome["login"])}</a> | '
            f'<a href="/search">{escape(chrome["search"])}</a></div>\n'
            f'<div id="header"><div class="site-title"><a href="/">{name}</a></div>'
            f'<div class="menu"><ul>{nav}</ul></div></div>\n'
            f'<div id="content"><div class="post">\n<div class="post-body entry-content">\n{article_html}</div>\n'
            f'<div class="post-tags">{escape(chrome["tags"])}: {tags}</div></div>\n'
            f'<div class="related-posts"><h4>{escape(chrome["related"])}</h4><ul>{related_html}</ul></div></div>\n'
            f'<div id="sidebar" class="widget-area"><div class="widget"><h4>{escape(chrome["most_read"])}</h4>'
            f"<ul>{_links(rng, related[::-1], '/p/')}</ul></div>"
            f'<div class="widget newsletter"><h4>{escape(chrome["newsletter"])}</h4></div></div>\n'
            f'<div id="footer"><ul>{footer}</ul><p>© {year} {name}</p></div>\n'
            f"{cookie}</div>\n</body>\n</html>\n"
        )
    elif layout == "portal":
        section = rng.choice(nav_labels[1:])
        body = (
            f'<body>\n<div class="topnav" role="navigation"><ul>{nav}</ul></div>\n'
            f'<ol class="breadcrumb"><li><a href="/">{escape(nav_labels[0])}</a></li>'
            f'<li><a href="/section/{rng.randint(1, 40)}">{escape(section)}</a></li></ol>\n'
            f'<div class="layout"><div class="col-main" id="main">\n<article>\n{article_html}</article>\n'
            f'<div class="read-more"><h3>{escape(chrome["related"])}</h3><ul>{related_html}</ul></div></div>\n'
            '<div class="col-side"><div class="ad-slot" data-ad="sidebar-1"></div>'
            f'<div class="box"><h3>{escape(chrome["most_read"])}</h3><ul>{_links(rng, related[:3], "/p/")}</ul>'
            "</div></div></div>\n"
            f'<div class="footer"><div class="footer-links"><ul>{footer}</ul></div>'
            f'<div class="copyright">© {year} {name}. {escape(chrome["rights"])}</div></div>\n'
            f"{cookie}</body>\n</html>\n"
        )
    else:
        raise ValueError(f"unknown layout {layout!r}; expected one of {LAYOUTS}")
    return head + body
