"""Text for the junk pages a curation pipeline must filter (all English, written for this project).

Each list feeds one junk kind in ``generator.py``: keyword-stuffed spam, all-caps shouting, pages with
almost no words, pages that are mostly link lists, pages built from one repeated line, and the three
page types C4's rules target (lorem ipsum, "enable JavaScript" notices, cookie-policy-only pages).
"""

from __future__ import annotations

SPAM_KEYWORDS = (
    "cheap",
    "loans",
    "casino",
    "bonus",
    "free",
    "pills",
    "crypto",
    "win",
    "deal",
    "discount",
    "viagra",
    "replica",
    "watches",
    "slots",
    "betting",
    "followers",
    "instant",
    "cash",
)
SPAM_TITLES = (
    "cheap loans casino bonus free",
    "best crypto deal win cash instant",
    "replica watches discount free shipping",
    "buy followers instant cheap",
)
SPAM_SITES = ("best-cheap-deals-online.biz", "casino-bonus-free.win", "instant-cash-now.top", "replica-shop24.xyz")

SHORT_TEXTS = (
    "Coming soon.",
    "Page under construction. Check back later!",
    "Thank you for your message.",
    "No results found.",
    "Hello world!",
    "Welcome to my homepage.",
    "Redirecting...",
    "Nothing here yet.",
)

LINK_LIST_HEADINGS = ("Categories", "Archives", "Popular tags", "Browse by topic", "Useful links", "Partners")
LINK_WORDS = (
    "Home",
    "Deals",
    "Reviews",
    "Guides",
    "Gadgets",
    "Finance",
    "Insurance",
    "Travel",
    "Recipes",
    "Garden",
    "Fashion",
    "Fitness",
    "Games",
    "Movies",
    "Music",
    "Cars",
    "Pets",
    "Jobs",
    "Events",
    "Photos",
)
MONTHS = (
    "January",
    "February",
    "March",
    "April",
    "May",
    "June",
    "July",
    "August",
    "September",
    "October",
    "November",
    "December",
)

LOREM_OPENING = "Lorem ipsum dolor sit amet, consectetur adipiscing elit, sed do eiusmod tempor incididunt."
LOREM_WORDS = (
    # the classic printer's placeholder text, as words
    "lorem",
    "ipsum",
    "dolor",
    "sit",
    "amet",
    "consectetur",
    "adipiscing",
    "elit",
    "sed",
    "do",
    "eiusmod",
    "tempor",
    "incididunt",
    "ut",
    "labore",
    "et",
    "dolore",
    "magna",
    "aliqua",
    "ut",
    "enim",
    "ad",
    "minim",
    "veniam",
    "quis",
    "nostrud",
    "exercitation",
    "ullamco",
    "laboris",
    "nisi",
    "ut",
    "aliquip",
    "ex",
    "ea",
    "commodo",
    "consequat",
    "duis",
    "aute",
    "irure",
    "dolor",
    "in",
    "reprehenderit",
    "in",
    "voluptate",
    "velit",
    "esse",
    "cillum",
    "dolore",
    "eu",
    "fugiat",
    "nulla",
    "pariatur",
    "excepteur",
    "sint",
    "occaecat",
    "cupidatat",
    "non",
    "proident",
    "sunt",
    "in",
    "culpa",
    "qui",
    "officia",
    "deserunt",
    "mollit",
    "anim",
    "id",
    "est",
    "laborum",
)

JAVASCRIPT_NOTICES = (
    "JavaScript is disabled in your browser. Please enable JavaScript to view this site.",
    "You need to enable JavaScript to run this app.",
    "This website requires JavaScript. Please turn on JavaScript in your browser settings and reload the page.",
    "Sorry, this page does not work properly without JavaScript enabled.",
)

COOKIE_POLICY_LINES = (
    "This website uses cookies to improve your experience while you navigate through the website.",
    "Please read our cookie policy and our privacy policy before you continue.",
    "By clicking accept, you consent to the use of cookies for analytics and advertising.",
    "You can change your cookie preferences at any time in the settings of your browser.",
    "Necessary cookies are essential for the website to function and cannot be switched off.",
    "For more information about how we use cookies, see our cookie policy and terms of use.",
    "We also use third-party cookies that help us analyse and understand how you use this website.",
)

CAPS_EXTRAS = (
    "LIMITED TIME OFFER!!!",
    "ACT NOW BEFORE IT IS TOO LATE!!!",
    "CLICK HERE TO CLAIM YOUR PRIZE!!!",
    "THIS IS NOT A DRILL!!!",
    "SHARE THIS WITH EVERYONE YOU KNOW!!!",
)

HTTP_ERROR_PAGES = {
    301: ("Moved Permanently", "The document has moved to a new address."),
    404: ("Page not found", "Sorry, the page you are looking for does not exist or has been moved."),
    500: ("Internal Server Error", "The server encountered an unexpected condition. Please try again later."),
}
