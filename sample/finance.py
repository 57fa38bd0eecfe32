"""English finance text for the domain corpus: earnings notes, filings, minutes, risk reports.

Sentence templates take their numbers and names from ``Slots`` (a seeded, lazily filled mapping), so
every document reads like a real analyst note or filing excerpt while staying distinct. Companies and
people are fictional; all text was written for this project.
"""

from __future__ import annotations

import random

COMPANIES = (
    "Northwind Capital",
    "Harbor Lane Bank",
    "Meridian Asset Partners",
    "Bluestone Insurance",
    "Kestrel Payments",
    "Aldgate Securities",
    "Silverfern Holdings",
    "Crescent Leasing",
    "Oakridge Savings",
    "Lumen Wealth",
)
SEGMENTS = (
    "retail banking",
    "wealth management",
    "corporate lending",
    "payments",
    "asset management",
    "insurance",
    "treasury services",
    "consumer credit",
)
DRIVERS = (
    "higher net interest income",
    "strong fee growth in wealth management",
    "record card volumes",
    "new mandates from institutional clients",
    "a recovery in trading revenue",
    "price increases across the product range",
    "lower claims after a mild winter",
)
SECTORS = ("commercial real estate", "consumer credit", "small businesses", "energy", "shipping", "agriculture")
CITIES = ("London", "Frankfurt", "New York", "Dublin", "Amsterdam", "Zurich", "Edinburgh")
ANALYSTS = (
    ("Rachel", "Okafor"),
    ("Martin", "Lindqvist"),
    ("Helen", "Carver"),
    ("Victor", "Almeida"),
    ("Sophie", "Brandt"),
    ("Arjun", "Mehta"),
    ("Claire", "Donovan"),
    ("Tomasz", "Nowak"),
)
JOBS = (
    "nightly ledger export",
    "month-end reconciliation",
    "card settlement import",
    "regulatory report build",
    "FX rates refresh",
    "payments gateway failover",
)

RESULT_TEMPLATES = (
    "Revenue for {q} {year} rose {pct}% year over year to ${amt} million, driven by {driver}.",
    "Net interest income declined {small}% as deposit costs increased faster than loan yields.",
    "Operating expenses were ${amt} million, {pct}% {higher_lower} than in the prior-year quarter.",
    "Diluted earnings per share came in at ${eps}, compared with ${eps2} a year earlier.",
    "The {segment} segment contributed ${amt} million, or {pct2}% of group revenue.",
    "Management reaffirmed full-year guidance of {small}% to {pct}% revenue growth.",
    "The common equity tier 1 ratio stood at {cet1}% at quarter end, comfortably above requirements.",
    "Provisions for credit losses rose to ${amt} million, reflecting weaker conditions in {sector}.",
    "Assets under management reached ${bn} billion, helped by net inflows of ${amt} million.",
    "The board approved a quarterly dividend of ${div} per share.",
    "The cost-to-income ratio improved to {pct2}% from {pct3}% a year earlier.",
    "Non-performing loans remained low at {small}% of the total portfolio.",
    "Return on tangible equity was {pct}% for the quarter.",
    "The company repurchased {n} million shares for ${amt} million during the period.",
    "Fee income from {segment} grew {pct}% on higher client activity.",
    "Exposure to {sector} accounts for about {small}% of total loans.",
)
COMMENT_TEMPLATES = (
    "Higher funding costs remain the main pressure on margins.",
    "Management expects loan growth to slow in the second half as demand for mortgages cools.",
    "The outlook assumes two further rate cuts before the end of the year.",
    "Credit quality in the {sector} portfolio is being monitored closely.",
    "Currency movements reduced reported revenue by roughly {small}%.",
    "The integration of the acquired business is on schedule and within budget.",
    "Analysts on the call focused on deposit outflows and the pace of cost savings.",
    "We see limited downside to consensus estimates at current valuations.",
    "Our rating remains Hold with a twelve-month price target of ${tp}.",
    "Liquidity coverage stayed well above the regulatory minimum throughout the quarter.",
    "The sale of the non-core leasing unit is expected to close next quarter.",
    "Staff costs rose mainly because of wage settlements and new hires in compliance.",
    "The bank continues to invest in fraud detection and digital onboarding.",
    "Stress tests show capital would stay above requirements even in a severe downturn.",
    "We would become more positive if cost savings arrive faster than management plans.",
    "The main risk to our view is a sharper slowdown in {sector}.",
)
# Commentary without figures: real notes are mostly prose around a few numbers.
PROSE = (
    "Management struck a confident tone on the call and pointed to a healthy pipeline of new business.",
    "Competition for deposits has intensified as online banks offer higher rates to savers.",
    "The new chief financial officer has made cost discipline a clear priority.",
    "Demand for business loans was subdued, particularly among smaller manufacturers.",
    "The company is investing heavily in its mobile app and expects the spending to pay off over time.",
    "Regulators have asked banks to hold more capital against commercial property loans.",
    "Customer numbers kept growing, although the pace slowed towards the end of the quarter.",
    "The wealth business benefited from rising markets and steady client inflows.",
    "Insurance claims were lower than expected because the winter was unusually mild.",
    "We think the market underestimates how quickly the cost savings will come through.",
    "The dividend looks well covered by earnings and by the strong capital position.",
    "Management did not change its view on the timing of interest rate cuts.",
    "The integration of the two payment platforms should be finished by the end of next year.",
    "Investors will watch closely whether the lender can keep its margin stable as rates fall.",
    "The board remains open to acquisitions but says it will not overpay.",
    "Higher wages and technology spending will keep costs elevated for some time.",
    "The results were broadly in line with our expectations and with market consensus.",
    "Card spending held up well, which suggests that consumers are still in good shape.",
    "We keep our estimates unchanged and will revisit them after the capital markets day.",
    "The company has started to reprice older loans, which should support income next year.",
    "Several analysts asked about the exposure to office buildings in large cities.",
    "Management expects the cost of risk to normalise gradually as the economy slows.",
)
RISK_TEMPLATES = (
    "Value at risk at the 99% level averaged ${amt} million over the quarter.",
    "The largest single-name exposure is below {small}% of eligible capital.",
    "Interest rate sensitivity: a 100 basis point parallel shift would change net interest income by {pct}%.",
    "Operational losses were within appetite; no single event exceeded ${n} million.",
    "Concentration in {sector} increased slightly and remains inside the agreed limit.",
    "Model validation for the retail scorecards was completed without major findings.",
    "Liquidity buffers cover {n} months of stressed outflows.",
    "Counterparty limits for two shipping clients were reduced after the rating review.",
    "The risk committee asked for a deep dive on {sector} before the next meeting.",
    "Cyber risk remains elevated; phishing attempts against staff rose by {pct}%.",
)
MINUTES_ITEMS = (
    "The minutes of the previous meeting were approved without changes.",
    "The chief financial officer presented the {q} results and the updated forecast.",
    "The board discussed the capital plan and agreed to keep the dividend policy unchanged.",
    "The audit committee reported that the external audit is on track.",
    "Members asked for a clearer breakdown of technology spending by project.",
    "The board approved the revised risk appetite statement.",
    "The remuneration committee will present its proposals at the next meeting.",
    "The chair thanked the team for the work on the new payments platform.",
)
RUNBOOK_STEPS = (
    "Check that the upstream job has finished before starting the export.",
    "Confirm the row counts in the staging table match the source system.",
    "If the job fails twice, page the on-call engineer and open an incident.",
    "Do not rerun the settlement step manually; it is not idempotent.",
    "Archive the output files to the long-term bucket after validation.",
    "Post a short summary in the operations channel when the run is complete.",
    "Rotate the credentials every ninety days and update the secret store.",
)


class Slots(dict):
    """Template slots filled on first use from a seeded RNG (numbers formatted like a report)."""

    def __init__(self, rng: random.Random, company: str, q: str, year: int):
        super().__init__(company=company, q=q, year=year)
        self.rng = rng

    def __missing__(self, key: str) -> str:
        rng = self.rng
        makers = {
            "pct": lambda: f"{rng.uniform(1, 18):.1f}",
            "pct2": lambda: f"{rng.uniform(20, 75):.0f}",
            "pct3": lambda: f"{rng.uniform(20, 75):.0f}",
            "small": lambda: f"{rng.uniform(0.3, 4.9):.1f}",
            "amt": lambda: f"{rng.uniform(50, 2500):,.1f}",
            "bn": lambda: f"{rng.uniform(5, 180):.1f}",
            "eps": lambda: f"{rng.uniform(0.2, 4.8):.2f}",
            "eps2": lambda: f"{rng.uniform(0.2, 4.8):.2f}",
            "div": lambda: f"{rng.uniform(0.05, 1.5):.2f}",
            "cet1": lambda: f"{rng.uniform(11, 16.5):.1f}",
            "tp": lambda: f"{rng.randint(20, 180)}",
            "n": lambda: str(rng.randint(2, 25)),
            "segment": lambda: rng.choice(SEGMENTS),
            "driver": lambda: rng.choice(DRIVERS),
            "sector": lambda: rng.choice(SECTORS),
            "higher_lower": lambda: rng.choice(("higher", "lower")),
        }
        value = makers[key]()
        self[key] = value
        return value


def fill(rng: random.Random, templates: tuple[str, ...], k: int, slots: Slots) -> list[str]:
    """``k`` distinct templates, filled; each call draws fresh numbers for slots not yet fixed."""
    picked = rng.sample(templates, min(k, len(templates)))
    out = []
    for template in picked:
        local = Slots(rng, slots["company"], slots["q"], slots["year"])
        out.append(template.format_map(local))
    return out
