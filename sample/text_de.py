"""German text resources: natural sentences on everyday, finance, science and news topics (written for
this project), headlines, page chrome, and sentences that carry planted PII or decoys."""

from __future__ import annotations

LANG = "de"
DIRECTION = "ltr"

SENTENCES = (
    "Die Europäische Zentralbank hat den Leitzins in diesem Jahr bereits zweimal angehoben.",
    "Viele Sparer fragen sich, ob sich ein Festgeldkonto jetzt wieder lohnt.",
    "Die Mieten in den großen Städten sind im vergangenen Jahr erneut deutlich gestiegen.",
    "Am Wochenende soll es im Süden des Landes kräftig regnen, im Norden bleibt es meist trocken.",
    "Forscher der Universität haben eine neue Methode entwickelt, um Mikroplastik im Wasser nachzuweisen.",
    "Der Stadtrat hat am Dienstagabend beschlossen, die Buslinien in den Außenbezirken auszubauen.",
    "Wer früh bucht, bekommt für die Sommerferien oft noch günstige Angebote.",
    "Die Zahl der Fahrgäste im Nahverkehr hat sich nach der Pandemie fast vollständig erholt.",
    "Das Unternehmen meldete für das dritte Quartal einen Umsatzrückgang von vier Prozent.",
    "Experten raten dazu, regelmäßig einen Teil des Einkommens zurückzulegen.",
    "In vielen Schulen fehlen Lehrkräfte, vor allem in den naturwissenschaftlichen Fächern.",
    "Die Ausstellung im Stadtmuseum zeigt Fotografien aus dem Alltag der Nachkriegszeit.",
    "Nach Angaben der Polizei wurde bei dem Unfall niemand schwer verletzt.",
    "Der Verein sucht noch ehrenamtliche Helfer für das Sommerfest im Juli.",
    "Die Preise für Lebensmittel sind zuletzt langsamer gestiegen als im Vorjahr.",
    "Ein ausgewogenes Frühstück hilft vielen Menschen, konzentriert in den Tag zu starten.",
    "Die Bauarbeiten an der Brücke werden voraussichtlich bis zum Herbst dauern.",
    "Immer mehr Haushalte installieren Solaranlagen auf dem eigenen Dach.",
    "Die Mannschaft gewann das Heimspiel nach einer starken zweiten Halbzeit mit zwei zu eins.",
    "Wissenschaftler warnen, dass die Gletscher in den Alpen schneller schmelzen als erwartet.",
    "Die Bank will in den kommenden Jahren mehrere Filialen in ländlichen Regionen schließen.",
    "Für den Kuchen braucht man Mehl, Zucker, drei Eier und etwas Butter.",
    "Der Bürgermeister versprach, sich persönlich um die Probleme der Anwohner zu kümmern.",
    "Die Aktie verlor nach der Veröffentlichung der Zahlen fast acht Prozent an Wert.",
    "Viele Arbeitnehmer wünschen sich, auch nach der Krise teilweise von zu Hause zu arbeiten.",
    "Die Bibliothek bietet ab nächster Woche längere Öffnungszeiten am Samstag an.",
    "Das neue Medikament wird derzeit in einer größeren klinischen Studie getestet.",
    "Im Herbst beginnt die Ernte, und auf den Märkten gibt es wieder frische Äpfel aus der Region.",
    "Die Regierung plant, die Förderung für energieeffiziente Sanierungen zu erhöhen.",
    "Kinder sollten beim Radfahren immer einen Helm tragen, empfehlen die Verkehrsexperten.",
    "Der Bericht zeigt, dass kleine und mittlere Unternehmen besonders unter den hohen Energiekosten leiden.",
    "Wer seine Steuererklärung rechtzeitig abgibt, bekommt die Erstattung meist schneller.",
    "Die Ärztin erklärte, dass ausreichend Schlaf für das Immunsystem sehr wichtig ist.",
    "Am Flughafen kam es wegen eines Streiks zu zahlreichen Verspätungen und Ausfällen.",
    "Das Orchester spielt in diesem Jahr zum ersten Mal unter freiem Himmel im Schlosspark.",
    "Die Inflation ist im Februar auf den niedrigsten Stand seit zwei Jahren gesunken.",
    "Mit einem Haushaltsbuch behält man leichter den Überblick über die eigenen Ausgaben.",
    "Der Zug nach Hamburg fällt heute wegen einer Signalstörung aus.",
    "Die Studie wurde in einer angesehenen Fachzeitschrift veröffentlicht und hat viel Aufmerksamkeit erregt.",
    "Immer mehr junge Menschen entscheiden sich für eine Ausbildung im Handwerk.",
    "Der Wald hat unter den trockenen Sommern der letzten Jahre stark gelitten.",
    "Die Gewerkschaft fordert für die Beschäftigten eine Lohnerhöhung von sechs Prozent.",
    "Nach dem Essen machten wir noch einen langen Spaziergang am Fluss entlang.",
    "Die Verbraucherzentrale warnt vor gefälschten Nachrichten, die angeblich von Banken stammen.",
    "Das Rathaus ist wegen eines Feiertags am Montag geschlossen.",
    "Die Forscher konnten zeigen, dass Bienen sich an Farben und Formen erinnern können.",
    "Ein Großteil der Befragten gab an, im Urlaub lieber in Deutschland zu bleiben.",
    "Die Digitalisierung der Verwaltung kommt nach Ansicht vieler Bürger viel zu langsam voran.",
    "Das Restaurant am Marktplatz bietet mittags ein günstiges Tagesgericht an.",
    "Die Fondsgesellschaft rechnet für das kommende Jahr mit leicht steigenden Kursen.",
    "Nach dem Sturm waren mehrere Straßen stundenlang gesperrt.",
    "Auch im Alter kann man mit regelmäßiger Bewegung viel für die Gesundheit tun.",
    "Die Teilnehmer des Kurses lernen, wie man eine einfache Webseite programmiert.",
    "Der Verkauf von Elektroautos ist im ersten Halbjahr deutlich gestiegen.",
    "Die Nachbarn haben gemeinsam einen kleinen Garten im Hinterhof angelegt.",
    "Die Versicherung übernimmt die Kosten nur, wenn der Schaden sofort gemeldet wird.",
    "In der Nacht sanken die Temperaturen in einigen Regionen unter den Gefrierpunkt.",
    "Das Theater zeigt in der neuen Spielzeit mehrere Stücke junger Autorinnen.",
    "Die Kommission will bis Ende des Jahres einen Vorschlag für neue Regeln vorlegen.",
    "Wer Fragen zu seinem Vertrag hat, sollte sich direkt an den Kundenservice wenden.",
)

TITLES = (
    "Leitzins: Was Sparer jetzt wissen müssen",
    "Mieten in Großstädten steigen weiter",
    "Forscher entwickeln neuen Test für Mikroplastik",
    "Stadt baut Busverbindungen aus",
    "So gelingt der Einstieg ins Sparen",
    "Gletscher schmelzen schneller als erwartet",
    "Lehrermangel: Schulen suchen dringend Personal",
    "Energiekosten belasten kleine Betriebe",
    "Elektroautos verkaufen sich besser",
    "Tipps für den Urlaub in der Nebensaison",
    "Inflation sinkt auf Zweijahrestief",
    "Neue Ausstellung im Stadtmuseum",
    "Streik legt den Flughafen lahm",
    "Warum Schlaf das Immunsystem stärkt",
    "Handwerk gewinnt bei jungen Menschen an Beliebtheit",
)

CHROME = {
    "nav": ("Startseite", "Politik", "Wirtschaft", "Wissen", "Kultur", "Sport", "Reisen", "Kontakt"),
    "cookie": (
        "Wir verwenden Cookies, um Ihnen die bestmögliche Nutzung unserer Webseite zu ermöglichen. "
        "Mit der weiteren Nutzung stimmen Sie der Verwendung von Cookies zu.",
    ),
    "accept": "Alle akzeptieren",
    "settings": "Einstellungen",
    "footer": ("Impressum", "Datenschutz", "AGB", "Kontakt", "Karriere", "Werbung"),
    "rights": "Alle Rechte vorbehalten.",
    "related": "Das könnte Sie auch interessieren",
    "most_read": "Meistgelesen",
    "newsletter": "Jetzt den Newsletter abonnieren",
    "subscribe": "Abonnieren",
    "share": "Artikel teilen",
    "byline": "Von {author}",
    "tags": "Schlagwörter",
    "search": "Suche",
    "login": "Anmelden",
    "read_more": "Weiterlesen",
}
AUTHORS = ("Anna Becker", "Jonas Weber", "Lena Hoffmann", "Felix Schulz", "Miriam Wagner", "Tobias Krüger")
SITES = ("tagesblick.de", "stadtanzeiger-online.de", "wirtschaftsecho.de", "wissen-kompakt.de", "rheinkurier.de")
SECTIONS = ("politik", "wirtschaft", "wissen", "kultur", "lokales", "reise")

PII_TEMPLATES = {
    "email": (
        "Fragen zum Artikel beantwortet die Redaktion unter {v}.",
        "Wer mitmachen möchte, kann sich per E-Mail an {v} melden.",
    ),
    "phone": (
        "Telefonisch ist das Bürgerbüro unter {v} erreichbar.",
        "Anmeldungen nimmt der Verein unter der Nummer {v} entgegen.",
    ),
    "iban": (
        "Spenden bitte auf das Konto mit der IBAN {v} überweisen.",
        "Der Betrag ist auf das Vereinskonto {v} zu überweisen.",
    ),
    "ipv4": ("Laut Protokoll kamen die verdächtigen Zugriffe von der Adresse {v}.",),
}
DECOY_TEMPLATES = {
    "date": ("Die Frist für Anträge endet am {v}.",),
    "price": ("Eine Eintrittskarte kostet {v}.",),
    "version": ("Die Version {v} der App behebt mehrere Fehler.",),
    "order_number": ("Bitte geben Sie bei Rückfragen die Bestellnummer {v} an.",),
}
PHONE_FORMATS = ("de_intl", "de_national")
IBAN_COUNTRIES = ("DE",)
DATE_STYLE = "dotted"
PRICE_STYLE = "eur_comma"
