r"""The multilingual lexicon: per language, the verbs and objects of each concept.

A row of the main table names one phrasing in one language; attacks are written in many
and worded freely. Here each language lists, once, its words for a few concepts:

* ``ignore`` (verbs of overriding) and ``rules`` (the model's instructions);
* ``show`` (verbs of disclosure) and ``prompt`` (the model's hidden instructions);
* ``send`` (verbs of passing on) and ``chat`` (conversations, messages);
* ``add`` (verbs of putting into a reply) and ``env`` (environment, keys, tokens);
* ``only`` (obey only this).

``LEXICON`` builds from them alternatives for the main rows: a verb and an object of one
concept within a bounded window, in either order (languages differ in word order; a text
may mix languages, so words of any language pair with any other). Languages written with
spaces match their words at a word start (stems: an inflection may follow); CJK, Arabic and
Hindi match anywhere; inflected languages list stems. Keep entries to words that mean the concept in an order or an object,
never a common word alone (a benign text must have both halves to match).
"""

from __future__ import annotations

__all__ = ["LEXICON", "WORDS"]

_Words = dict[str, tuple[str, ...]]

#: Per language: concept -> words (regex fragments, no quantifiers beyond bounded ones).
# fmt: off
WORDS: dict[str, _Words] = {
    "zh": {  # simplified and traditional
        "ignore": ("忽略", "无视", "無視", "忽视", "忽視", "忘掉", "忘记", "忘記", "不要理会", "不要理會", "别管", "別管", "不要遵守", "不再遵守", "停止遵守", "覆盖", "覆蓋", "绕过", "繞過"),
        "rules": ("指示", "指令", "规则", "規則", "设定", "設定", "提示词", "提示詞", "命令", "限制", "约束", "約束"),
        "show": ("显示", "顯示", "输出", "輸出", "告诉", "告訴", "透露", "泄露", "洩露", "打印", "复述", "複述", "重复", "重複", "展示", "公开", "公開", "分享", "发给", "發給", "列出", "给我看", "給我看", "贴出", "貼出"),
        "prompt": ("系统提示", "系統提示", "系统指令", "系統指令", "初始指令", "初始指示", "隐藏指令", "隱藏指令", "隐藏的指令", "隱藏的指令", "原始指令", "开发者消息", "開發者訊息", "开发者指令", "開發者指令", "内部指令", "內部指令", "你的指令", "你的设定", "你的設定"),
        "send": ("转发", "轉發", "转寄", "轉寄", "发送", "發送", "寄到", "寄给", "寄給", "传到", "傳到", "上传", "上傳", "抄送", "同步到"),
        "chat": ("对话", "對話", "聊天", "消息", "訊息", "讯息", "会话", "會話", "聊天记录", "聊天記錄"),
        "add": ("附上", "加上", "写在", "寫在", "包含", "附加", "贴上", "貼上"),
        "env": ("环境变量", "環境變數", "密钥", "密鑰", "金鑰", "令牌"),
        "only": ("只听从", "只聽從", "只服从", "只服從", "只遵守", "只遵循", "只执行", "只執行"),
    },
    "ja": {
        # verbs in the forms of an order or a request (無視して, 無視しろ), not 無視する
        "ignore": ("無視(?:して|しろ|せよ|しなさい|すること)", "忘れ(?:て|ろ|なさい|ること)", "従わないで", "従うな", "破棄して"),
        "rules": ("指示", "命令", "ルール", "指令", "設定", "プロンプト", "規則", "制限"),
        "show": ("(?:表示|出力|公開|共有|送信)(?:して|しろ|せよ|しなさい|すること)", "教えて", "見せて", "繰り返して", "書き出して", "送って", "貼り付けて"),
        "prompt": ("システムプロンプト", "隠された指示", "隠し指示", "初期指示", "最初の指示", "元の指示", "開発者メッセージ", "内部の指示", "あなたの指示", "あなたの設定"),
        "send": ("送って", "送れ", "送ること", "(?:送信|転送|共有|アップロード)(?:して|しろ|せよ|しなさい|すること)"),
        "chat": ("会話", "チャット", "メッセージ", "履歴", "やり取り", "トーク"),
        "add": ("付けて", "含めて", "追加して", "書いて", "貼り付けて", "添えて", "付け加えて"),
        "env": ("環境変数", "APIキー", "トークン", "シークレット"),
        "only": ("だけに従", "のみに従", "だけを聞", "のみを聞"),
    },
    "ko": {
        "ignore": ("무시", "잊어", "따르지\\s?마", "따르지\\s?말"),
        "rules": ("지시", "지침", "명령", "규칙", "설정", "프롬프트", "제한"),
        "show": ("보여", "출력", "알려", "공개", "공유", "반복", "말해"),
        "prompt": ("시스템\\s?프롬프트", "숨겨진\\s?(?:지침|지시)", "초기\\s?(?:지침|지시)", "개발자\\s?메시지", "내부\\s?지침", "너의\\s?지침", "당신의\\s?지침"),
        "send": ("보내", "전송", "전달", "포워딩", "공유해", "업로드"),
        "chat": ("대화", "채팅", "메시지", "내역", "기록"),
        "add": ("붙여", "포함", "추가", "넣어", "적어"),
        "env": ("환경\\s?변수", "API\\s?키", "토큰"),
        "only": ("(?:명령|지시|말|메모|노트)만\\s?(?:따르|들어)",),
    },
    "ru": {
        "ignore": ("игнорир", "проигнорир", "забудь", "забудьте", "отбрось", "не\\s+слушай", "не\\s+следуй", "не\\s+выполняй", "не\\s+соблюдай", "отмени", "обойди"),
        "rules": ("инструкци", "указани", "правил", "команд", "промпт", "директив", "ограничени"),
        "show": ("покажи", "выведи", "повтори", "напечатай", "раскрой", "перескажи", "процитируй", "поделись", "скажи", "отправь", "опубликуй", "перечисли"),
        "prompt": ("системн\\w{0,4}\\s+(?:промпт|инструкци|сообщени|подсказ)", "скрыт\\w{0,4}\\s+(?:инструкци|правил)", "исходн\\w{0,4}\\s+(?:инструкци|промпт)", "сво\\w{0,3}\\s+(?:инструкци|промпт|правил)", "тво\\w{0,3}\\s+(?:инструкци|промпт|правил)", "сообщени\\w{0,3}\\s+разработчика"),
        "send": ("отправ", "пересыла", "перешли", "пересылай", "переслать", "скопируй", "загрузи", "выгрузи", "дублируй"),
        "chat": ("переписк", "разговор", "сообщени", "чат", "истори", "диалог"),
        "add": ("добав", "включ", "встав", "приложи", "пиши", "печатай", "выводи"),
        "env": ("переменн\\w{0,4}\\s+окружения", "api-?ключ", "токен", "секрет"),
        "only": ("слушайся\\s+только", "подчиняйся\\s+только", "выполняй\\s+только", "следуй\\s+только"),
    },
    "uk": {
        "ignore": ("ігнору", "проігнору", "забудь", "не\\s+зважай", "не\\s+виконуй", "відкинь", "не\\s+дотримуйся"),
        "rules": ("інструкці", "вказівк", "правил", "команд", "обмежен"),
        "show": ("покажи", "виведи", "повтори", "розкрий", "надрукуй", "поділись", "скажи", "надішли", "перелічи"),
        "prompt": ("системн\\w{0,4}\\s+(?:промпт|інструкці|повідомлен)", "прихован\\w{0,4}\\s+(?:інструкці|правил)", "сво\\w{0,3}\\s+інструкці", "тво\\w{0,3}\\s+інструкці", "повідомлен\\w{0,3}\\s+розробника"),
        "send": ("надсила", "надішли", "пересила", "перешли", "відправ", "скопіюй"),
        "chat": ("листуван", "розмов", "повідомлен", "чат", "істор", "діалог"),
        "add": ("додав", "додай", "включ", "встав"),
        "env": ("змінн\\w{0,4}\\s+(?:оточення|середовища)", "токен", "ключ\\w{0,3}\\s+api"),
        "only": ("слухайся\\s+лише", "виконуй\\s+лише", "слухайся\\s+тільки", "виконуй\\s+тільки"),
    },
    "es": {
        "ignore": ("ignora", "ignore", "ignorad", "olvida", "olvide", "descarta", "omite", "no\\s+sigas", "deja\\s+de\\s+seguir", "desobedece", "salta(?:te)?\\s+las"),
        "rules": ("instrucciones", "reglas", "indicaciones", "directrices", "[oó]rdenes", "normas", "restricciones"),
        "show": ("muestra", "muestre", "mostrar", "revela", "revele", "imprime", "imprima", "repite", "repita", "comparte", "comparta", "dime", "escribe", "copia", "ense[ñn]a", "publica"),
        "prompt": ("instrucciones\\s+(?:ocultas|internas|originales|iniciales|secretas|del\\s+sistema)", "prompt\\s+del\\s+sistema", "mensaje\\s+del\\s+(?:sistema|desarrollador)", "tus\\s+instrucciones"),
        "send": ("reenv[ií]a", "env[ií]a", "manda", "reenviar", "enviar", "copia", "sube", "comparte", "transmite"),
        "chat": ("conversaci[oó]n", "conversaciones", "mensajes", "historial"),
        "add": ("a[ñn]ade", "agrega", "incluye", "incluya", "adjunta", "pon\\b", "escribe"),
        "env": ("variables?\\s+de\\s+entorno", "claves?\\s+(?:de\\s+)?api"),
        "only": ("obedece\\s+(?:solo|s[oó]lo|[uú]nicamente)", "sigue\\s+(?:solo|s[oó]lo|[uú]nicamente)"),
    },
    "pt": {
        "ignore": ("ignore", "ignora", "ignorar", "esque[cç]a", "descarte", "desconsidere", "desconsidera", "n[aã]o\\s+siga", "deixe\\s+de\\s+seguir", "desobede[cç]a"),
        "rules": ("instru[cç][oõ]es", "regras", "diretrizes", "ordens", "orienta[cç][oõ]es", "restri[cç][oõ]es"),
        "show": ("mostre", "mostra", "mostrar", "revele", "revela", "imprima", "imprime", "repita", "repete", "compartilhe", "partilhe", "diga", "escreva", "copie", "publique"),
        "prompt": ("instru[cç][oõ]es\\s+(?:ocultas|internas|originais|iniciais|secretas|do\\s+sistema)", "prompt\\s+do\\s+sistema", "mensagem\\s+do\\s+(?:sistema|desenvolvedor)", "suas\\s+instru[cç][oõ]es", "tuas\\s+instru[cç][oõ]es"),
        "send": ("envie", "envia", "encaminhe", "encaminha", "mande", "manda", "reenvie", "copie", "suba", "compartilhe"),
        "chat": ("conversas?", "mensagens", "hist[oó]rico", "bate-papo"),
        "add": ("adicione", "adiciona", "inclua", "inclui", "anexe", "coloque", "ponha"),
        "env": ("vari[aá]veis\\s+de\\s+ambiente", "chaves?\\s+(?:de\\s+)?api"),
        "only": ("obede[cç]a\\s+(?:apenas|s[oó]|somente)", "obedecer\\s+(?:apenas|s[oó]|somente)", "siga\\s+(?:apenas|s[oó]|somente)"),
    },
    "fr": {
        "ignore": ("ignore", "ignorez", "oublie", "oubliez", "ne\\s+suis\\s+plus", "ne\\s+tiens\\s+pas\\s+compte", "fais\\s+abstraction", "outrepasse", "contourne"),
        "rules": ("consignes", "r[eè]gles", "ordres"),
        "show": ("montre", "montrez", "affiche", "affichez", "r[eé]v[eè]le", "r[eé]v[eé]lez", "imprime", "r[eé]p[eè]te", "r[eé]p[eé]tez", "partage", "partagez", "dis-moi", "donne", "donnez", "[eé]cris", "recopie", "cite"),
        "prompt": ("instructions\\s+(?:cach[eé]es|internes|initiales|originales|secr[eè]tes|syst[eè]me)", "prompt\\s+syst[eè]me", "message\\s+(?:syst[eè]me|du\\s+d[eé]veloppeur)", "tes\\s+instructions", "vos\\s+instructions"),
        "send": ("envoie", "envoyez", "transf[eè]re", "transf[eé]rez", "transmets", "transmettez", "copie", "publie", "t[eé]l[eé]verse"),
        "chat": ("discussions?", "historique", "[eé]changes"),
        "add": ("ajoute", "ajoutez", "inclus", "incluez", "mets", "mettez"),
        "env": ("variables?\\s+d'environnement", "cl[eé]s?\\s+(?:d'|de\\s+l')?api", "jetons?"),
        "only": ("n'ob[eé]is\\s+qu", "ob[eé]is\\s+uniquement", "suis\\s+uniquement"),
    },
    "de": {
        "ignore": ("ignorier", "vergiss", "vergesst", "missachte", "befolge\\s+nicht", "verwirf", "[uü]bergeh", "umgeh"),
        "rules": ("anweisungen", "instruktionen", "regeln", "befehle", "vorgaben", "richtlinien", "einschr[aä]nkungen"),
        "show": ("zeig", "nenne", "verrate", "wiederhole", "drucke", "teile", "schreib", "poste\\b", "gib\\b"),
        "prompt": ("systemprompt", "systemanweisung", "system-prompt", "entwicklernachricht", "(?:versteckten|internen|urspr[uü]nglichen|geheimen)\\s+anweisungen", "deine\\s+anweisungen"),
        "send": ("sende\\b", "schicke", "schick", "leite", "weiterleiten", "[uü]bermittle", "lade", "kopiere"),
        "chat": ("gespr[aä]ch", "unterhaltung", "nachrichten", "verlauf", "konversation"),
        "add": ("f[uü]ge", "h[aä]nge", "schreibe", "setze", "gib\\b"),
        "env": ("umgebungsvariable", "api-?schl[uü]ssel"),
        "only": ("gehorche\\s+nur", "befolge\\s+nur", "folge\\s+nur"),
    },
    "it": {
        "ignore": ("ignora", "ignorate", "dimentica", "dimenticate", "non\\s+seguire", "trascura", "scarta", "aggira"),
        "rules": ("istruzioni", "regole", "indicazioni", "direttive", "ordini", "restrizioni"),
        "show": ("mostra", "mostrami", "rivela", "stampa", "ripeti", "condividi", "dimmi", "scrivi", "copia", "pubblica"),
        "prompt": ("istruzioni\\s+(?:nascoste|interne|originali|iniziali|segrete|di\\s+sistema)", "prompt\\s+di\\s+sistema", "messaggio\\s+(?:di\\s+sistema|dello\\s+sviluppatore)", "tue\\s+istruzioni"),
        "send": ("invia", "inoltra", "manda", "inoltrare", "inviare", "copia", "carica"),
        "chat": ("conversazion[ei]", "messaggi", "cronologia"),
        "add": ("aggiungi", "includi", "allega", "metti", "inserisci"),
        "env": ("variabili\\s+d'ambiente", "chiav[ei]\\s+api"),
        "only": ("obbedisci\\s+solo", "segui\\s+solo"),
    },
    "tr": {
        "ignore": ("yok\\s+say", "g[oö]rmezden\\s+gel", "unut", "umursama", "uyma"),
        "rules": ("talimat", "kural", "komut", "y[oö]nerge", "direktif"),
        "show": ("g[oö]ster", "payla[sş]", "yazd[ıi]r", "s[oö]yle", "tekrarla", "a[cç][ıi]kla", "if[sş]a\\s+et"),
        "prompt": ("sistem\\s+(?:istem|komut|talimat|mesaj)", "gizli\\s+talimat", "talimatlar[ıi]n[ıi]", "geli[sş]tirici\\s+mesaj"),
        "send": ("g[oö]nder", "ilet", "yolla", "aktar"),
        "chat": ("konu[sş]ma", "sohbet", "mesaj", "ge[cç]mi[sş]"),
        "add": ("ekle", "dahil\\s+et", "yaz\\b", "koy\\b"),
        "env": ("ortam\\s+de[gğ]i[sş]ken", "api\\s+anahtar"),
        "only": ("(?:sadece|yaln[ıi]zca)\\s+(?:bu|benim)\\s+\\w{1,12}\\s+uy",),
    },
    "ar": {
        "ignore": ("تجاهل", "انس", "لا\\s?تتبع", "تخط", "اهمل", "أهمل"),
        "rules": ("التعليمات", "تعليمات", "الأوامر", "القواعد", "الإرشادات", "القيود"),
        "show": ("اعرض", "أظهر", "اظهر", "اكشف", "اطبع", "كرر", "شارك", "أخبرني", "انسخ"),
        "prompt": ("موجه\\s?النظام", "تعليمات\\s?النظام", "التعليمات\\s?المخفية", "رسالة\\s?المطور", "تعليماتك"),
        "send": ("أرسل", "ارسل", "حوّل", "حول", "انسخ", "شارك", "أعد\\s?توجيه"),
        "chat": ("محادثة", "المحادثات", "محادثات", "رسائل", "الرسائل", "سجل"),
        "add": ("أضف", "اضف", "ضع", "أرفق", "ضمّن"),
        "env": ("متغيرات\\s?البيئة", "مفتاح\\s?API", "توكن"),
        "only": ("أطع\\s?فقط", "اتبع\\s?فقط"),
    },
    "hi": {
        "ignore": ("अनदेखा", "नज़रअंदाज़", "नजरअंदाज", "भूल\\s?जा", "मत\\s?मानो"),
        "rules": ("निर्देश", "नियम", "आदेश"),
        "show": ("दिखा", "बता", "साझा", "शेयर", "प्रिंट", "दोहरा", "लिख"),
        "prompt": ("सिस्टम\\s?प्रॉम्प्ट", "सिस्टम\\s?प्रॉम्ट", "छिपे\\s?(?:हुए\\s?)?निर्देश", "गुप्त\\s?निर्देश", "तुम्हारे\\s?निर्देश", "आपके\\s?निर्देश"),
        "send": ("भेज", "फॉरवर्ड", "शेयर"),
        "chat": ("बातचीत", "चैट", "संदेश", "मैसेज"),
        "add": ("जोड़", "जोड", "शामिल", "डाल", "लिख"),
        "env": ("पर्यावरण\\s?चर", "एनवायरनमेंट\\s?वेरिएबल", "API\\s?कुंजी", "API\\s?की"),
        "only": ("केवल\\s?(?:इस|मेरी)[^\\n]{0,12}(?:मानो|पालन)",),
    },
    "vi": {  # with its diacritics only: stripped, short Vietnamese words are English ones
        "ignore": ("bỏ\\s+qua", "phớt\\s+lờ", "quên\\s+(?:hết|đi)", "không\\s+tuân\\s+theo", "lờ\\s+đi"),
        "rules": ("hướng\\s+dẫn", "chỉ\\s+dẫn", "quy\\s+tắc", "chỉ\\s+thị", "lệnh"),
        "show": ("hiển\\s+thị", "tiết\\s+lộ", "chia\\s+sẻ", "cho\\s+xem", "lặp\\s+lại", "gửi", "nói\\s+ra"),
        "prompt": ("lời\\s+nhắc\\s+hệ\\s+thống", "hướng\\s+dẫn\\s+(?:ẩn|ban\\s+đầu|hệ\\s+thống)", "chỉ\\s+dẫn\\s+hệ\\s+thống", "tin\\s+nhắn\\s+của\\s+nhà\\s+phát\\s+triển"),
        "send": ("gửi", "chuyển\\s+tiếp", "chia\\s+sẻ", "tải\\s+lên"),
        "chat": ("cuộc\\s+trò\\s+chuyện", "tin\\s+nhắn", "đoạn\\s+chat", "lịch\\s+sử"),
        "add": ("thêm", "đính\\s+kèm", "chèn", "ghi\\s+vào"),
        "env": ("biến\\s+môi\\s+trường", "khóa\\s+api"),
        "only": ("chỉ\\s+(?:tuân\\s+theo|nghe\\s+theo)",),
    },
    "pl": {
        "ignore": ("ignoruj", "zignoruj", "zapomnij", "pomi[nń]", "nie\\s+stosuj\\s+si[eę]"),
        "rules": ("instrukcj", "polece[nń]", "zasad", "regu[lł]"),
        "show": ("poka[zż]", "wypisz", "ujawnij", "powt[oó]rz", "udost[eę]pnij", "wy[sś]lij"),
        "prompt": ("prompt\\w{0,3}\\s+systemow", "ukryt\\w{0,3}\\s+instrukcj", "swoje\\s+instrukcje", "twoje\\s+instrukcje"),
        "send": ("wysy[lł]aj", "wy[sś]lij", "przesy[lł]aj", "prze[sś]lij", "przeka[zż]"),
        "chat": ("rozm[oó]w", "rozmowy", "wiadomo[sś]ci", "czat", "histori"),
        "add": ("dodaj", "do[lł][aą]cz", "wstaw"),
        "env": ("zmienn\\w{0,3}\\s+[sś]rodowiskow", "klucz\\w{0,3}\\s+api"),
        "only": ("s[lł]uchaj\\s+tylko", "wykonuj\\s+tylko"),
    },
}
# fmt: on

# Languages written without spaces between words: their words match anywhere.
_UNSPACED = frozenset({"zh", "ja", "ko", "ar", "hi"})
# Inflected languages list stems: a word start, any ending. Elsewhere a whole word.
_STEMMED = frozenset({"ru", "uk", "pl", "tr", "de"})
# Objects every language shares: names of secrets, and the English terms people keep.
_SHARED_ENV = (
    r"(?-i:\b[A-Z][A-Z0-9_]{0,60}_(?:KEY|TOKEN|SECRET|PASSWORD|PASS|PWD|CREDENTIALS?)\b)",
    r"\.env\b",
    r"\bapi[\s_-]?keys?\b",
)
_SHARED_PROMPT = (r"\bsystem\s+prompt\b",)
# Chinese has no verb forms for an order: a verb shortly after "prevent", "avoid", "how to",
# "don't" ... is no order. Checked after the verb matched (a look-behind at every place a
# verb could start would cost more than the search): for a verb of ``length`` characters, one
# fixed-width look-behind per distance of the negator.
_NEGATORS_2 = "防止|避免|不要|不会|不會|不能|禁止|如何|怎么|怎麼|是否|不得|以免"


def _not_negated(length: int) -> str:
    two = "".join(f"(?<!(?:{_NEGATORS_2}).{{{k + length}}})" for k in range(9))
    return two + "".join(f"(?<![不别別].{{{k + length}}})" for k in range(2))


_ADDRESS = r"\b[\w.+-]{1,64}@[\w-]{1,63}\.[a-z]{2,12}\b|\bhttps?://"


def _words(kind: str, *, order: bool = False) -> str:
    """Every language's words of ``kind`` as one alternation: the spaced languages' words
    after one shared ``\\b`` (one check, not one per word: the search is several times
    faster), then the others; with ``order``, Chinese verbs only where no negator comes
    shortly before."""
    spaced, unspaced = [], []
    for language, words in WORDS.items():
        if language == "zh":  # a word followed by kana is Japanese (無視する), not Chinese
            by_length: dict[int, list[str]] = {}
            for word in words.get(kind, ()):
                by_length.setdefault(len(word), []).append(word)
            for length, group in sorted(by_length.items()):
                guard = _not_negated(length) if order else ""
                unspaced.append(f"(?:{'|'.join(group)}){guard}(?![\u3040-\u309f])")
        elif language in _UNSPACED:
            unspaced += words.get(kind, ())
        else:
            after = "" if language in _STEMMED else r"\b"
            spaced += [
                f"{word}{after}" if "|" not in word else f"(?:{word}){after}"
                for word in words.get(kind, ())
            ]
    groups = [r"\b(?:" + "|".join(dict.fromkeys(spaced)) + ")"] if spaced else []
    return "|".join(groups + list(dict.fromkeys(unspaced)))


def _near(first: str, second: str, gap: int) -> tuple[str, str]:
    """``first`` then ``second`` within ``gap`` characters, and the other way round; each
    an atomic group (its first match from a start is its only one: see ``scan_chain``)."""
    return (
        f"(?>{first})[^\\n]{{0,{gap}}}?(?>{second})",
        f"(?>{second})[^\\n]{{0,{gap}}}?(?>{first})",
    )


def _build() -> dict[str, tuple[str, ...]]:
    ignore, rules = _words("ignore", order=True), _words("rules")
    show, prompt = _words("show", order=True), "|".join((_words("prompt"), *_SHARED_PROMPT))
    send, chat = _words("send", order=True), _words("chat")
    add, env = _words("add", order=True), "|".join((*_SHARED_ENV, _words("env")))
    exfil = (
        f"(?>{send})[^\\n]{{0,60}}?(?>{chat})[^\\n]{{0,80}}?(?>{_ADDRESS})",
        f"(?>{chat})[^\\n]{{0,40}}?(?>{send})[^\\n]{{0,60}}?(?>{_ADDRESS})",
        f"(?>{chat})[^\\n]{{0,40}}?(?>{_ADDRESS})[^\\n]{{0,20}}?(?>{send})",
    )
    return {
        "ignore-instructions": (*_near(ignore, rules, 24), _words("only")),
        "prompt-leak": _near(show, prompt, 30),
        "message-exfil": exfil,
        "secret-disclosure": _near(f"{add}|{show}|{send}", env, 40),
    }


#: Extra alternatives by the id of the row they belong to.
LEXICON: dict[str, tuple[str, ...]] = _build()
