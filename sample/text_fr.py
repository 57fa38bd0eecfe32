"""French text resources: natural sentences on everyday, finance, science and news topics (written for
this project), headlines, page chrome, and sentences that carry planted PII or decoys."""

from __future__ import annotations

LANG = "fr"
DIRECTION = "ltr"

SENTENCES = (
    "La Banque centrale européenne a relevé ses taux directeurs pour la troisième fois cette année.",
    "Beaucoup de ménages ont du mal à boucler leurs fins de mois à cause de la hausse des prix.",
    "Les loyers ont encore augmenté dans la plupart des grandes villes du pays.",
    "Ce week-end, de fortes pluies sont attendues dans le sud-ouest, tandis que le nord restera ensoleillé.",
    "Des chercheurs de l'université ont mis au point une nouvelle méthode pour détecter la pollution de l'eau.",
    "Le conseil municipal a voté mardi soir la création de deux nouvelles lignes de bus.",
    "Pour les vacances d'été, il vaut mieux réserver son billet de train plusieurs mois à l'avance.",
    "L'entreprise a annoncé une baisse de son chiffre d'affaires au troisième trimestre.",
    "Les experts conseillent de mettre de côté une partie de son salaire chaque mois.",
    "Dans de nombreux collèges, il manque encore des professeurs de mathématiques.",
    "L'exposition présente des photographies de la vie quotidienne dans les années cinquante.",
    "Selon la police, personne n'a été grièvement blessé dans l'accident.",
    "L'association cherche des bénévoles pour organiser la fête du quartier en juillet.",
    "Les prix de l'alimentation augmentent moins vite qu'au début de l'année.",
    "Un petit-déjeuner équilibré aide à rester concentré toute la matinée.",
    "Les travaux sur le pont devraient durer jusqu'à la fin de l'automne.",
    "De plus en plus de familles installent des panneaux solaires sur leur toit.",
    "L'équipe a remporté le match à domicile grâce à une excellente deuxième mi-temps.",
    "Les scientifiques observent que les glaciers des Alpes fondent plus vite que prévu.",
    "La banque prévoit de fermer plusieurs agences dans les zones rurales.",
    "Pour réussir ce gâteau, il faut de la farine, du sucre, trois œufs et un peu de beurre.",
    "Le maire a promis de rencontrer les habitants pour discuter de leurs inquiétudes.",
    "L'action a perdu près de huit pour cent après la publication des résultats.",
    "Beaucoup de salariés souhaitent continuer à travailler depuis chez eux deux jours par semaine.",
    "La médiathèque sera ouverte plus tard le samedi à partir de la semaine prochaine.",
    "Le nouveau médicament est actuellement testé dans le cadre d'un essai clinique.",
    "En automne, les marchés proposent de nouveau des pommes et des poires de la région.",
    "Le gouvernement souhaite augmenter les aides pour la rénovation énergétique des logements.",
    "Les spécialistes rappellent que les enfants doivent toujours porter un casque à vélo.",
    "Le rapport montre que les petites entreprises souffrent particulièrement du coût de l'énergie.",
    "Si vous déclarez vos revenus en ligne, le remboursement arrive généralement plus vite.",
    "Le médecin explique qu'un bon sommeil renforce le système immunitaire.",
    "Une grève a provoqué de nombreux retards et annulations à l'aéroport ce matin.",
    "L'orchestre jouera cet été pour la première fois en plein air dans le parc du château.",
    "L'inflation est tombée en février à son plus bas niveau depuis deux ans.",
    "Tenir un carnet de dépenses permet de mieux contrôler son budget.",
    "Le train pour Lyon est supprimé aujourd'hui en raison d'un problème de signalisation.",
    "L'étude a été publiée dans une revue scientifique reconnue et a suscité beaucoup d'intérêt.",
    "De plus en plus de jeunes choisissent l'apprentissage dans les métiers de l'artisanat.",
    "La forêt a beaucoup souffert des étés secs de ces dernières années.",
    "Les syndicats réclament une hausse des salaires de six pour cent.",
    "Après le repas, nous avons fait une longue promenade le long de la rivière.",
    "Les associations de consommateurs mettent en garde contre les faux messages envoyés au nom des banques.",
    "La mairie sera fermée lundi en raison du jour férié.",
    "Les chercheurs ont montré que les abeilles peuvent se souvenir des couleurs et des formes.",
    "La majorité des personnes interrogées préfèrent passer leurs vacances en France cette année.",
    "Selon de nombreux usagers, la numérisation des services publics avance trop lentement.",
    "Le restaurant de la place du marché propose un plat du jour à prix raisonnable.",
    "La société de gestion s'attend à une légère hausse des marchés l'année prochaine.",
    "Après la tempête, plusieurs routes sont restées fermées pendant des heures.",
    "Même à un âge avancé, une activité physique régulière est très bénéfique pour la santé.",
    "Les participants à l'atelier apprennent à créer un site internet simple.",
    "Les ventes de voitures électriques ont nettement progressé au premier semestre.",
    "Les voisins ont aménagé ensemble un petit jardin dans la cour de l'immeuble.",
    "L'assurance ne rembourse les frais que si le sinistre est déclaré rapidement.",
    "Cette nuit, les températures sont descendues sous zéro dans plusieurs régions.",
    "Le théâtre présente cette saison plusieurs pièces écrites par de jeunes autrices.",
    "La Commission veut présenter une proposition de nouvelles règles d'ici la fin de l'année.",
    "Pour toute question sur votre contrat, adressez-vous directement au service client.",
    "Le musée est gratuit pour les moins de dix-huit ans le premier dimanche du mois.",
)

TITLES = (
    "Taux d'intérêt : ce que les épargnants doivent savoir",
    "Les loyers continuent de grimper dans les grandes villes",
    "Une nouvelle méthode pour détecter la pollution de l'eau",
    "La ville crée deux nouvelles lignes de bus",
    "Comment commencer à épargner",
    "Les glaciers fondent plus vite que prévu",
    "Pénurie de professeurs dans les collèges",
    "Le coût de l'énergie pèse sur les petites entreprises",
    "Les voitures électriques séduisent de plus en plus",
    "Nos conseils pour voyager hors saison",
    "L'inflation au plus bas depuis deux ans",
    "Une exposition sur la vie quotidienne d'après-guerre",
    "Grève à l'aéroport : de nombreux vols annulés",
    "Pourquoi le sommeil renforce nos défenses",
    "L'artisanat attire de plus en plus de jeunes",
)

CHROME = {
    "nav": ("Accueil", "Politique", "Économie", "Sciences", "Culture", "Sport", "Voyages", "Contact"),
    "cookie": (
        "Nous utilisons des cookies pour améliorer votre expérience sur notre site. "
        "En poursuivant votre navigation, vous acceptez leur utilisation.",
    ),
    "accept": "Tout accepter",
    "settings": "Paramètres",
    "footer": ("Mentions légales", "Confidentialité", "Conditions générales", "Contact", "Recrutement", "Publicité"),
    "rights": "Tous droits réservés.",
    "related": "À lire aussi",
    "most_read": "Les plus lus",
    "newsletter": "Inscrivez-vous à notre lettre d'information",
    "subscribe": "S'abonner",
    "share": "Partager cet article",
    "byline": "Par {author}",
    "tags": "Mots-clés",
    "search": "Rechercher",
    "login": "Se connecter",
    "read_more": "Lire la suite",
}
AUTHORS = ("Claire Martin", "Julien Bernard", "Sophie Lefèvre", "Nicolas Moreau", "Camille Dubois", "Hugo Laurent")
SITES = ("lequotidien-regional.fr", "economie-matin.fr", "sciences-pratiques.fr", "paris-actu.fr", "infolocale.fr")
SECTIONS = ("actualite", "economie", "sciences", "culture", "societe", "voyages")

PII_TEMPLATES = {
    "email": (
        "Pour toute question, la rédaction répond à l'adresse {v}.",
        "Les inscriptions se font par courriel à {v}.",
    ),
    "phone": (
        "Le secrétariat de la mairie est joignable au {v} du lundi au vendredi.",
        "Pour réserver, appelez le {v}.",
    ),
    "iban": ("Les dons peuvent être versés sur le compte {v}.",),
    "ipv4": ("D'après les journaux du serveur, les connexions suspectes venaient de l'adresse {v}.",),
}
DECOY_TEMPLATES = {
    "date": ("La date limite d'inscription est fixée au {v}.",),
    "price": ("Le billet d'entrée coûte {v}.",),
    "version": ("La version {v} de l'application corrige plusieurs erreurs.",),
    "order_number": ("Merci d'indiquer votre numéro de commande {v} dans votre message.",),
}
PHONE_FORMATS = ("fr_national", "fr_intl")
IBAN_COUNTRIES = ("FR",)
DATE_STYLE = "slashed"
PRICE_STYLE = "eur_comma"
