"""Text for the tests: normal articles in seven languages written for these tests, and text no one here wrote
(the Python Language Reference topics pydoc ships), built at run time."""

from __future__ import annotations

import re

ARTICLES = {
    "en": """How a small town rebuilt its harbour

For most of the last century, the harbour at Port Ellen was the reason the town existed. Fishing boats left before dawn and came back in the afternoon, and the market on the quay sold whatever they had caught. When the fleet shrank in the 1990s, the harbour walls began to crumble and many young people moved away to find work.

Ten years ago a group of residents decided that the harbour was worth saving. They raised money through local events, applied for grants and persuaded the council to match every pound they collected. The work took four years, and it was not always easy: storms damaged the new wall twice before it was finished.

Today the harbour is busy again, although the boats are different. Small ferries take visitors to the islands, a sailing school teaches children in the summer, and two fishing families still land crab and lobster. The residents say that the project gave the town something more important than a repaired wall. It showed them that they could change things together.""",  # noqa: E501
    "de": """Die Stadtbibliothek als Treffpunkt

In vielen deutschen Städten hat sich die Rolle der öffentlichen Bibliothek in den letzten Jahren stark verändert. Früher ging man vor allem dorthin, um Bücher auszuleihen und in Ruhe zu lesen. Heute finden in den Räumen auch Sprachkurse, Hausaufgabenhilfe und Lesungen statt, und manche Häuser bieten sogar Werkstätten mit 3D-Druckern an.

Die Leiterin einer Bibliothek in Leipzig erklärt, dass die Zahl der Besucher trotz der Digitalisierung nicht gesunken ist. Viele Menschen suchen einen Ort, an dem sie sich ohne Konsumzwang aufhalten können. Besonders Studierende und Familien mit kleinen Kindern nutzen die Angebote regelmäßig. Gleichzeitig wächst die Nachfrage nach elektronischen Medien, die man bequem von zu Hause aus ausleihen kann.

Für die Zukunft wünschen sich die Mitarbeiter mehr Personal und längere Öffnungszeiten. Einige Städte testen bereits Modelle, bei denen die Bibliothek am Abend ohne Personal geöffnet ist und die Besucher sich mit ihrem Ausweis anmelden. Ob sich dieses Konzept auch in kleineren Gemeinden durchsetzen wird, ist noch offen.""",  # noqa: E501
    "ru": """Как сибирские города готовятся к зиме

Зима в Сибири начинается рано и длится почти полгода, поэтому подготовка к холодам идёт уже с конца лета. Коммунальные службы проверяют трубы отопления, меняют изношенные участки и тестируют котельные. Если авария случится в январе, когда на улице минус сорок, ремонт будет гораздо сложнее и дороже.

Жители тоже готовятся по-своему. Многие утепляют окна, покупают запасы продуктов и проверяют автомобили. В деревнях заготавливают дрова, а в городах люди следят за прогнозами и сообщениями о возможных отключениях. Опытные водители знают, что в сильный мороз машину лучше оставлять в тёплом гараже или хотя бы подключать к подогреву.

По словам специалистов, за последние годы зимы стали немного мягче, но резкие перепады температуры случаются чаще. Это создаёт новые проблемы для дорог и зданий. Поэтому в нескольких городах начали использовать современные материалы, которые лучше выдерживают смену мороза и оттепели.""",  # noqa: E501
    "ar": """المكتبات العامة في المدن العربية

شهدت المكتبات العامة في كثير من المدن العربية تغيرات كبيرة خلال السنوات الأخيرة. فلم تعد المكتبة مجرد مكان لاستعارة الكتب، بل أصبحت مركزا ثقافيا يقدم دورات في اللغات والحاسوب وأنشطة للأطفال. ويرى كثير من العاملين في هذا المجال أن هذا التحول ضروري لجذب جيل جديد من القراء.

وفي إحدى المكتبات الكبيرة في عمان، يجتمع الطلاب كل مساء للدراسة والعمل على مشاريعهم. وتقول مديرة المكتبة إن عدد الزوار ارتفع بعد توفير الإنترنت المجاني وتمديد ساعات العمل. كما أن المكتبة تنظم لقاءات شهرية مع الكتاب المحليين، وهي لقاءات تلقى إقبالا واسعا من الشباب.

ومع ذلك، ما زالت هناك تحديات كثيرة. فالميزانيات محدودة، وشراء الكتب الجديدة يحتاج إلى دعم مستمر من الجهات الرسمية والخاصة. ويأمل القائمون على هذه المؤسسات أن تدرك الحكومات أهمية المكتبة في بناء مجتمع يقرأ ويفكر.""",  # noqa: E501
    "zh": """杭州西湖边的茶文化

龙井茶是中国最有名的绿茶之一，产地主要在杭州西湖周围的山区。每年春天，茶农们天还没亮就上山采茶，他们只摘最嫩的芽叶，因为这些芽叶炒制以后味道最清香。采回来的鲜叶要先摊晾几个小时，然后放进热锅里用手不停地翻炒。这个过程需要很多经验，火候太大茶叶会焦，火候太小香气又出不来。

很多游客来到西湖，除了欣赏湖光山色，也会去梅家坞或者龙井村喝一杯新茶。村里的茶馆大多开在自家院子里，主人会一边泡茶一边介绍茶的历史。据说清朝的乾隆皇帝曾经在这里品尝过龙井茶，并且非常喜欢。这样的故事虽然不一定完全可靠，但是它让普通的一杯茶多了一些文化的味道。

近年来，当地政府开始重视茶园的保护。为了防止茶园被改建成别墅或者饭店，有关部门划定了保护范围，并且鼓励年轻人回乡学习制茶技术。一些大学也开设了茶学专业，培养既懂传统工艺又懂现代管理的人才。专家认为，只有把传统和创新结合起来，龙井茶这个老品牌才能在新的市场中继续发展。""",
    "ja": """京都の古い町家を守る取り組み

京都の中心部には、百年以上前に建てられた町家が今も数多く残っている。町家は間口が狭く奥行きが長い独特の造りで、通りに面した部分は店として、奥は家族の住まいとして使われてきた。しかし、建物の老朽化や相続の問題から、毎年かなりの数の町家が取り壊されている。

こうした状況を受けて、市はいくつかの支援制度を設けた。改修費用の一部を補助するほか、空き家になった町家を借りたい人と持ち主を結びつける窓口も作られた。最近では、町家を改装したカフェや小さな宿が増えており、観光客だけでなく地元の若い人たちにも人気がある。

一方で、課題も少なくない。古い木造建築を現代の耐震基準に合わせるには専門的な技術が必要で、工事を引き受けられる大工の数は年々減っている。ある職人は「技術は使わなければすぐに失われてしまう」と話す。町家を残すことは、建物だけでなく、それを支えてきた人々の知恵を次の世代に伝えることでもある。""",
    "ko": """작은 섬마을의 도서관 이야기

남해의 한 작은 섬에는 주민들이 직접 만든 도서관이 있다. 십 년 전만 해도 이 마을에는 책을 빌릴 수 있는 곳이 없었고, 아이들은 배를 타고 육지로 나가야 책을 볼 수 있었다. 마을 사람들은 오래된 창고를 고쳐서 작은 도서관을 열기로 했다.

처음에는 기증받은 책이 몇백 권에 불과했지만, 지금은 만 권이 넘는 책이 있다. 주말이 되면 아이들과 노인들이 함께 모여 책을 읽고 이야기를 나눈다. 도서관을 운영하는 주민은 책이 사람들을 다시 연결해 주었다고 말한다.

물론 어려움도 있다. 예산이 부족해서 새 책을 사기가 쉽지 않고, 자원봉사자도 점점 줄어들고 있다. 그래도 주민들은 이 도서관이 마을의 중심이 되었다고 믿으며, 앞으로도 계속 지켜 나갈 계획이다.""",  # noqa: E501
}


def topic_corpus() -> tuple[list[str], list[str]]:
    """(eval sentences of >= 6 words from the even topics, ~2 KB documents from the odd topics)."""
    from pydoc_data.topics import topics

    names = sorted(topics)
    items = []
    for name in names[::2]:
        for sentence in re.split(r"(?<=[.?!])\s+", " ".join(topics[name].split())):
            if len(sentence.split()) >= 6:
                items.append(sentence)
    text = "\n\n".join(topics[name] for name in names[1::2])
    docs, start = [], 0
    while start < len(text) - 1024:
        end = text.find(" ", start + 2048)
        end = len(text) if end < 0 else end
        docs.append(text[start:end])
        start = end + 1
    return list(dict.fromkeys(items)), docs


def chunks(text: str, size: int = 1500, min_tail: int | None = None) -> list[str]:
    """Blocks of ``text`` between blank lines, packed into pieces of about ``size`` characters; the last,
    shorter piece is kept when it is longer than ``min_tail`` (dropped by default)."""
    out, current = [], ""
    for block in text.split("\n\n"):
        current = f"{current}\n\n{block}" if current else block
        if len(current) >= size:
            out.append(current)
            current = ""
    if min_tail is not None and len(current) > min_tail:
        out.append(current)
    return out
