"""Spanish text resources: natural sentences on everyday, finance, science and news topics (written for
this project), headlines, page chrome, and sentences that carry planted PII or decoys."""

from __future__ import annotations

LANG = "es"
DIRECTION = "ltr"

SENTENCES = (
    "El Banco Central Europeo ha subido los tipos de interés por tercera vez este año.",
    "Muchas familias tienen dificultades para llegar a fin de mes por la subida de los precios.",
    "El precio del alquiler volvió a aumentar en las principales ciudades del país.",
    "Este fin de semana se esperan lluvias intensas en el norte, mientras que en el sur hará calor.",
    "Un equipo de la universidad ha desarrollado un nuevo método para medir la contaminación del agua.",
    "El ayuntamiento aprobó el martes la ampliación de varias líneas de autobús.",
    "Para las vacaciones de verano conviene reservar los billetes con varios meses de antelación.",
    "La empresa anunció una caída de sus ventas en el tercer trimestre.",
    "Los expertos recomiendan ahorrar una parte del sueldo todos los meses.",
    "En muchos colegios todavía faltan profesores de matemáticas y de ciencias.",
    "La exposición muestra fotografías de la vida cotidiana en los años cincuenta.",
    "Según la policía, nadie resultó herido de gravedad en el accidente.",
    "La asociación busca voluntarios para organizar las fiestas del barrio en julio.",
    "Los precios de los alimentos suben ahora más despacio que a principios de año.",
    "Un desayuno equilibrado ayuda a mantener la concentración durante toda la mañana.",
    "Las obras del puente durarán previsiblemente hasta el otoño.",
    "Cada vez más hogares instalan placas solares en sus tejados.",
    "El equipo ganó el partido en casa gracias a una gran segunda parte.",
    "Los científicos advierten de que los glaciares de los Pirineos se derriten más rápido de lo previsto.",
    "El banco tiene previsto cerrar varias oficinas en zonas rurales.",
    "Para hacer este bizcocho necesitas harina, azúcar, tres huevos y un poco de mantequilla.",
    "La alcaldesa prometió reunirse con los vecinos para escuchar sus quejas.",
    "Las acciones cayeron casi un ocho por ciento tras la publicación de los resultados.",
    "Muchos trabajadores quieren seguir teletrabajando al menos dos días a la semana.",
    "La biblioteca abrirá también los sábados por la tarde a partir de la próxima semana.",
    "El nuevo medicamento se está probando en un ensayo clínico con cientos de pacientes.",
    "En otoño, los mercados vuelven a llenarse de manzanas y castañas de la zona.",
    "El Gobierno quiere aumentar las ayudas para mejorar la eficiencia energética de las viviendas.",
    "Los expertos en tráfico recuerdan que los niños deben llevar siempre casco en la bicicleta.",
    "El informe señala que las pequeñas empresas son las más afectadas por el coste de la energía.",
    "Si presentas la declaración de la renta pronto, la devolución suele llegar antes.",
    "La doctora explicó que dormir bien es fundamental para el sistema inmunitario.",
    "Una huelga provocó numerosos retrasos y cancelaciones en el aeropuerto.",
    "La orquesta tocará este verano por primera vez al aire libre en el parque.",
    "La inflación bajó en febrero a su nivel más bajo en dos años.",
    "Apuntar los gastos en una libreta ayuda a controlar mejor el presupuesto familiar.",
    "El tren a Valencia ha sido cancelado hoy por una avería en la señalización.",
    "El estudio se publicó en una revista científica de prestigio y ha despertado mucho interés.",
    "Cada vez más jóvenes eligen la formación profesional como alternativa a la universidad.",
    "Los bosques han sufrido mucho por los veranos secos de los últimos años.",
    "Los sindicatos piden una subida salarial del seis por ciento.",
    "Después de comer dimos un largo paseo por la orilla del río.",
    "Las organizaciones de consumidores alertan de mensajes falsos que se hacen pasar por bancos.",
    "El ayuntamiento permanecerá cerrado el lunes por ser día festivo.",
    "Los investigadores demostraron que las abejas pueden recordar colores y formas.",
    "La mayoría de los encuestados prefiere pasar las vacaciones en España este año.",
    "Muchos ciudadanos creen que la digitalización de la administración avanza demasiado despacio.",
    "El restaurante de la plaza ofrece un menú del día a buen precio.",
    "La gestora espera una ligera subida de la bolsa el año que viene.",
    "Tras la tormenta, varias carreteras estuvieron cortadas durante horas.",
    "También en la vejez, hacer ejercicio con regularidad es muy bueno para la salud.",
    "Los participantes del taller aprenden a crear una página web sencilla.",
    "Las ventas de coches eléctricos crecieron con fuerza en el primer semestre.",
    "Los vecinos han creado juntos un pequeño huerto en el patio del edificio.",
    "El seguro solo cubre los gastos si el daño se comunica de inmediato.",
    "Esta noche las temperaturas bajaron de cero grados en varias provincias.",
    "El teatro estrena esta temporada varias obras de jóvenes autoras.",
    "La Comisión quiere presentar una propuesta de nuevas normas antes de final de año.",
    "Si tienes dudas sobre tu contrato, ponte en contacto directamente con el servicio de atención al cliente.",
    "El museo es gratuito para los menores de dieciocho años el primer domingo de cada mes.",
)

TITLES = (
    "Tipos de interés: lo que deben saber los ahorradores",
    "El alquiler sigue subiendo en las grandes ciudades",
    "Un nuevo método para medir la contaminación del agua",
    "La ciudad amplía sus líneas de autobús",
    "Cómo empezar a ahorrar",
    "Los glaciares se derriten más rápido de lo previsto",
    "Faltan profesores en los colegios",
    "El coste de la energía asfixia a las pequeñas empresas",
    "Los coches eléctricos ganan terreno",
    "Consejos para viajar fuera de temporada",
    "La inflación cae a su nivel más bajo en dos años",
    "Una exposición sobre la vida cotidiana de la posguerra",
    "Huelga en el aeropuerto: numerosos vuelos cancelados",
    "Por qué dormir bien refuerza las defensas",
    "La formación profesional atrae a más jóvenes",
)

CHROME = {
    "nav": ("Inicio", "Política", "Economía", "Ciencia", "Cultura", "Deportes", "Viajes", "Contacto"),
    "cookie": (
        "Utilizamos cookies propias y de terceros para mejorar nuestros servicios. "
        "Si continúa navegando, consideramos que acepta su uso.",
    ),
    "accept": "Aceptar todo",
    "settings": "Configuración",
    "footer": ("Aviso legal", "Privacidad", "Condiciones de uso", "Contacto", "Trabaja con nosotros", "Publicidad"),
    "rights": "Todos los derechos reservados.",
    "related": "También te puede interesar",
    "most_read": "Lo más leído",
    "newsletter": "Suscríbete a nuestro boletín",
    "subscribe": "Suscribirse",
    "share": "Compartir este artículo",
    "byline": "Por {author}",
    "tags": "Etiquetas",
    "search": "Buscar",
    "login": "Iniciar sesión",
    "read_more": "Leer más",
}
AUTHORS = ("Lucía Fernández", "Javier Romero", "Carmen Ruiz", "Pablo Navarro", "Elena Torres", "Diego Morales")
SITES = ("diariodelsur.es", "economia-hoy.es", "cienciaparatodos.es", "noticiasmadrid.es", "elmirador-digital.es")
SECTIONS = ("actualidad", "economia", "ciencia", "cultura", "sociedad", "viajes")

PII_TEMPLATES = {
    "email": (
        "Para cualquier consulta, puede escribir a la redacción a {v}.",
        "Las inscripciones se realizan por correo electrónico en {v}.",
    ),
    "phone": (
        "La oficina de atención al ciudadano atiende en el teléfono {v}.",
        "Para reservar mesa, llame al {v}.",
    ),
    "iban": ("Los donativos pueden ingresarse en la cuenta {v}.",),
    "ipv4": ("Según los registros, los accesos sospechosos procedían de la dirección {v}.",),
}
DECOY_TEMPLATES = {
    "date": ("El plazo de inscripción termina el {v}.",),
    "price": ("La entrada cuesta {v}.",),
    "version": ("La versión {v} de la aplicación corrige varios errores.",),
    "order_number": ("Indique su número de pedido {v} en cualquier consulta.",),
}
PHONE_FORMATS = ("es_intl",)
IBAN_COUNTRIES = ("ES",)
DATE_STYLE = "slashed"
PRICE_STYLE = "eur_comma"
