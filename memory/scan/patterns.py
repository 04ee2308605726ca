"""The scanner's rule table: one row per finding id, each a tuple of regex alternatives.

``memory.scan.scanner`` compiles and runs these; this module is data. Every alternative is matched
case-insensitively on normalised readings of the text (see ``memory.scan.scanner``), and must have a
bounded match width: gaps are ``[^\n]{0,N}``, other runs ``{m,N}`` (possessive where a run
could be split two ways), and ``\\s+`` / ``\\s*`` are read as runs of at most four (the
readings collapse white space). The tests check every width on the parsed regexes. A
top-level ``|`` inside a row's string makes separate alternatives, each with its own
required literals: keep alternations of unrelated shapes at the top level, not in a group.
Grow the scanner by adding an alternative to the row whose concept it names, with a unit
test and a benign near-miss.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["RULES", "Rule"]


@dataclass(frozen=True, slots=True)
class Rule:
    id: str
    description: str
    alternatives: tuple[str, ...]


def _rule(pid: str, description: str, *alternatives: str) -> Rule:
    return Rule(pid, description, alternatives)


# Shared vocabulary (plain alternations: no quantifiers, so safe to splice anywhere).
_IGNORE = r"ignore|disregard|forget|set\s+aside|put\s+aside|pay\s+no\s+attention\s+to|stop\s+following|stop\s+obeying|throw\s+out|override|overrule|bypass|skip|abandon|discard|drop|neglect|nullify|erase|wipe|cancel|unlearn|dismiss"
_PRIOR = r"previous|prev|prior|above|earlier|preceding|former|original|existing|initial|old|all|any|your|the|these|those|every|my|system|safety|developer"
_RULES = r"instructions?|instrs?|persona|safety\s+training|setup\s+text|directions|criteria|rules|guidelines|directives|prompts?|commands|orders|constraints|guardrails|policies|programming|restrictions|guidance|context"
# A value that says it is not a real one: a placeholder word or bracket starting a word in its
# first 60 characters ("YOUR_API_KEY_HERE", "<your key>", "${TOKEN}", "dev-only-not-secret",
# a masked "********", an environment variable's name "$API_KEY";
# not "...CYEXAMPLEKEY", where the word is glued inside a random-looking value).
_PLACEHOLDER_WORDS = r"(?:your|example|placeholder|changeme|change[-_]me|redacted|dummy|sample|xxxx|\*\*\*|•••|not[-_]?(?:a[-_]?)?secret|<|\$\{|\{\{|\$(?-i:[A-Z][A-Z_]))"
_PLACEHOLDER = r"(?![^\s\"'`]{0,60}?(?<![a-z0-9])" + _PLACEHOLDER_WORDS + ")"
_SECRET_VAR = r"\$\{?[A-Za-z_]{0,40}(?:KEY|TOKEN|SECRET|PASS(?:WORD)?|PWD|CRED(?:ENTIAL)?S?|AUTH)[A-Za-z_]{0,20}\}?"  # noqa: S105
_NET_TOOL = r"curl|wget|nc|ncat|netcat|socat|telnet|scp|rsync|sftp|ftp|dig|nslookup|Invoke-WebRequest|Invoke-RestMethod|iwr|irm|fetch|requests\.(?:get|post|put)|urllib|httpx"
_SECRET_FILE = r"\.env\b(?!\.(?:example|sample|template|dist)\b)|id_rsa|id_ed25519|id_ecdsa|id_dsa|\.netrc|\.aws/credentials|aws/credentials|/etc/shadow|/etc/passwd|credentials\.json|\.git-credentials|\.kube/config|kubeconfig|\.pgpass|\.npmrc|\.pypirc|\.docker/config\.json|\.ssh/|keychain|wallet\.dat|serviceaccount/token|secrets\.ya?ml|Login Data|\.bash_history|\.zsh_history|/etc/sudoers|\.gnupg|\.password-store|saved passwords|stored passwords|/proc/(?:self|\d{1,7})/environ|~/\.aws\b|~/\.kube\b|~/\.gnupg\b|\.config/gh/hosts\.yml|hosts\.yml|password\s+export|vault\.csv|passwords?\.csv|\.kdbx\b|keepass|\.aws[\\/]credentials|\.ssh[\\/]id_"  # noqa: S105
_READ_VERB = r"recite|mostra|mostrar|montre|zeig|quote|collect|harvest|gather|grab|export|save|remember|guarde|abra|abre|apri|leggi|lees|lis|lee|open|find|extract|attach|memori[sz]e|store|retrieve|fetch|decode|cat|read|print|show|open|type|send|upload|dump|exfiltrate|copy|output|display|less|more|head|tail|reveal|paste|leak|grep|base64|echo|list|give|get|post|email|share|lis|lire|affiche|envoie|lee|muestra|zeige|lies|sende"
_SEND = r"send|forward|post|upload|transmit|exfiltrate|leak|copy|append|submit|report|share|sync|mirror|email|e-mail|mail|relay|pipe|beacon|log|push|envoie|transmets|envia|env[ií]a|sende|schicke"
_PRIVATE = r"conversations?|chats?|chat history|chat logs?|messages|transcripts?|history|api[ _-]?keys?|keys|tokens?|secrets?|passwords?|credentials|memory|memories|system prompt|context|session|user data|personal data|files|env(?:ironment)? variables|cookies|questions?|requests|prompts|files?|notes|meeting\s+notes|documents?|code|screenshots?|clipboard|contacts|e-?mails?|calendar|summar(?:y|ies)|one-time\s+(?:pass)?codes?|otps?|historial|m[eé]moire|memoria|conversaci[oó]n|conversa|cronologia|inputs|replies|answers|tool results?|outputs?|conversation|historique|mensajes|verlauf|nachrichten"

# Secrets the bot holds, named the ways people name them (for "include it in replies").
_ENV_NAME = r"(?-i:\$?\{?\b[A-Z][A-Z0-9_]{0,60}_(?:KEY|TOKEN|SECRET|PASSWORD|PASS|PWD|CREDENTIALS?|URL|DSN)\b\}?)"
_HELD_SECRET = (
    _ENV_NAME
    + r"|\$[A-Z_]{3,40}\b|\benv(?:ironment)?\s+var(?:iable)?s\b|\bthe\s+environment\b|`(?:env|printenv|set)`|\bos\.environ\b|\bprocess\.env\b|\.env\s+file|\bthe\s+\.env\b"
    r"|\b(?:api|bot|access|auth|account|discord|telegram|slack|github|gitlab|openai|anthropic|stripe|provider|aws|secret)[\s_-]{0,2}(?:keys?|tokens?|credentials|secrets?)\b"
    r"|\b(?:your|the\s+bot'?s|its|the\s+assistant'?s)\s+(?:own\s+)?(?:[a-z]{1,12}\s+)?(?:keys?|tokens?|credentials|secrets|config(?:uration)?(?:\s+file)?|settings\s+file)\b"
    r"|\bsecrets\s+(?:stored|kept|held)\b|\b(?:keys|tokens)\s+included\b|\bwith\s+secrets\b"
)
_SHOW = r"(?:reply|respond|answer)\s+with|include|print|show|reveal|output|echo|dump|display|paste|append|add|attach|mention|tell|share|put|hide|spell\s+out|list|quote|post|give|hardcode|embed|leak|expose|disclose|write|insert|send|repeat|return|read\s+out|recite|reproduce|encode|translate|publish|provide|start|end|begin|prefix|sign|prints|shows|reveals|outputs|dumps|displays"
_PROMPT = r"system\s+(?:prompt|message|instructions?|rules)|(?:hidden|secret|internal|initial|original|confidential|underlying|real)\s+(?:instructions|prompt|rules|directives|guidelines|configuration|system\s+prompt|setup|context(?:\s+window)?)|(?:full|complete|entire|whole|exact|raw)\s+(?:prompt|system\s+prompt|context\s+window|prompt\s+template)|(?:prompt|instructions)\s+verbatim|prompt\s+template|developer\s+(?:message|prompt|instructions)|context\s+window|tool\s+definitions|pre-?prompt|setup\s+text"
_BAR = r"[─━═║╔╗╚╝]{3,80}+|={3,80}+|\*{3,80}+|#{4,80}+|~{3,80}+"  # possessive: no backtracking
_BAR_CHARS = r"─━═║╔╗╚╝=*#~"  # never in the gap after or before a bar: one way to match
_BANNER = r"system|override|directive|priority|instructions?|admin(?:istrator)?|developer|operator|root|policy|user\s+profile|memory|end\s+of|系统|系統|システム|시스템|систем|指示|指令|최우선|最優先|最高优先|最高優先|ユーザープロフィール|профил|приоритет"
_PASS_ON = r"e-?mail|mail|send|forward|cc|bcc|dm|message|post|relay|copy|deliver|text|share|upload|leak|sync|mirror|auto-forward|report|whatsapp|signal"  # noqa: S105
_THEIR_DATA = r"contents?|profile|notes?|history|conversations?|chats?|chat\s+logs?|logs?|messages?|transcripts?|passwords?|codes?|2fa|otp|attachments?|account\s+details|details|memory(?:\s+file)?|summar(?:y|ies)|list|usernames?|phone\s+numbers?|files?|documents?|uploads?|what\s+(?:users|people|the\s+user)\s+(?:told|tell|said|say)|private|personal|data|information|info|addresses|emails"
_HANDLE = r"\b[\w.+-]{1,64}@[\w-]{1,63}\.[a-z]{2,12}\b|(?<![\w@])@[A-Za-z0-9_]{3,32}\b|\+\d[\d\s-]{6,16}\d\b|(?<![\w&])#[a-z][a-z0-9_-]{1,40}\b|\b[\w.]{2,32}#\d{4}\b|\b(?:my|their|his|her)\s+(?:telegram|signal|whatsapp|discord|inbox|e-?mail)\b|\b(?:telegram|signal|whatsapp|discord|slack)\s+(?:dms?|inbox|account|user|channel|group|chat)\b|\bdms?\s+of\s+(?:user\s+)?\S{2,32}|\bon\s+(?:telegram|signal|whatsapp)\b|\bx@y\b"

RULES: tuple[Rule, ...] = (
    _rule(
        "addressed-to-agent",
        "text written to the AI that reads it, not a note about the user",
        r"\b(?:note|message|instructions?|tip|reminder|request|notice|memo|warning)\s+(?:to|for)\s+(?:the\s+|any\s+|all\s+)?(?:ai|a\.i\.|assistants?|llms?|language\s+models?|ai\s+agents?|bots?|chatbots?|copilots?|ai\s+(?:reviewers?|systems?|tools?|assistants?))\b",
        r"(?:^|[(\[\"'])\s*(?:\b(?:ai|assistant|llm|ai\s+agent|chatbot|gpt|claude|ia|ki)\b|a\.i\.)\s*:\s",
        r"\bp\.?\s?s\.?,?\s+(?:for\s+the\s+|to\s+the\s+)?\b(?:ai|assistant|bot|agent|llm)\b",
        r"\b(?:dear|hey|hi|hello|attention|attn)\b\s*,?\s+(?:ai|assistant|llm|agent|chatbot|bot|language\s+model)s?\b",
        r"\b(?:ai|llm)\s+(?:agents?|assistants?|models?|systems?|tools?|reviewers?)\s+(?:processing|reading|that\s+reads?|parsing|summari[sz]ing|crawling|indexing|reviewing)\b",
        r"\b(?:nota|note|mensaje|messaggio|hinweis|notitie|uwaga)\s+(?:para|pour|per|f[uü]r|voor|dla)\s+(?:la\s+|l'|il\s+|die\s+|de\s+)?(?:ia|ki|ai|assistente?|asistente|assistant|assistent|asystenta)\b",
    ),
    _rule(
        "ignore-instructions",
        "tells the model to ignore or replace its instructions",
        r"\boverride\s+(?:whatever|everything|anything)\s+(?:the\s+)?(?:user|owner|operator|you)\s+(?:said|says|told|wrote|asked)\b",
        r"\b[a-z]\s*=\s*['\"][^'\"\n]{1,20}['\"][^\n]{0,20}\b[a-z]\s*=\s*['\"][^'\"\n]{1,20}['\"][^\n]{0,80}\b[a-z]\s*\+\s*[a-z]\b",
        rf"\b(?:{_IGNORE})\b[^\n]{{0,30}}?\b(?:{_PRIOR})\b[^\n]{{0,30}}?\b(?:{_RULES})\b",
        rf"\b(?:{_IGNORE})\s+(?:{_RULES})\b",
        r"\b(?:new|updated|revised|real|actual|true|following)\s+(?:system\s+)?instructions?\s*:",
        r"\b(?:your|the|all)\s+(?:previous|prior|original|old|earlier)\s+(?:instructions|rules|guidelines|directives|prompts?)\s+(?:are|is|were|have\s+been)\s+(?:now\s+)?(?:void|cancell?ed|null|revoked|obsolete|invalid|deprecated|superseded|replaced|overridden|suspended|lifted|no\s+longer)",
        r"\bfrom\s+now\s+on,?\s+(?:you|the\s+assistant|assistant)\s+(?:must|will|shall|should|are\s+to)\s+(?:ignore|obey|only|always\s+obey|follow\s+(?:only|my|these)|never\s+refuse|comply|answer\s+without)",
        r"\b(?:previous|prior|earlier|above|old|original|former|preceding)\s+(?:instructions|guidelines|rules|directives|prompts?|policies)\b[^\n]{0,40}?\b(?:obsolete|void|cancell?ed|null|revoked|invalid|overridden|no\s+longer\s+(?:apply|valid|in\s+effect|matter))",
        r"\b(?:instructions|guidelines|rules|directives)\s+(?:above|before\s+this)\s+(?:no\s+longer\s+apply|are\s+(?:void|obsolete|cancell?ed|null))",
        r"\b(?:overrid(?:e|ing)|supersed(?:e|ing)|replac(?:e|ing)|revok(?:e|ing))\s+(?:all\s+)?(?:the\s+)?(?:previous|prior|earlier|above|original|old|existing)\s+(?:instructions|rules|guidelines|directives|system\s+prompt)",
        r"\bforget\s+(?:everything|all|anything)\s+(?:you\s+(?:were|have\s+been)\s+(?:told|taught|instructed|given)|above|before|so\s+far)",
        r"\bwhatever\s+you\s+(?:were|have\s+been)\s+(?:told|instructed|programmed|taught)\b",
        r"\bnew\s+instructions\s+(?:are|is)\s+to\b",
        r"\b(?:obey|comply\s+with)\s+(?:any|every|all)\s+(?:messages?|commands?|requests?|instructions?|orders?)\b",
        r"\b(?:execute|run|follow|obey)s?\s+(?:any|every|all)?\s*(?:the\s+)?(?:shell\s+)?(?:commands?|instructions?)\s+(?:found|embedded|contained|hidden|written)\s+in\b",
        r"\b(?:your|the\s+assistant'?s|operator'?s?|developers?'?)\b[^\n]{0,40}\b(?:rules|instructions|guidelines|directions|directives|policies|programming)\b[^\n]{0,40}\b(?:no\s+longer\s+apply|are\s+(?:now\s+)?(?:void|obsolete|cancell?ed|suspended|lifted)|do\s+not\s+apply)",
        r"\b(?:rules|instructions|guidelines|directions|directives|policies)\s+(?:that\s+)?(?:your|the)\s+(?:operator|developers?|creators?|owner|admin|system)\s+(?:gave|set|wrote|provided|defined)\b[^\n]{0,30}\b(?:no\s+longer|void|obsolete|cancel|suspended|lifted|do\s+not\s+apply)",
        r"\b(?:your\s+(?:[a-z]{1,15}\s+)?instructions|instructions\s+(?:you\s+(?:were|have\s+been)\s+given|you\s+received|received\s+(?:before|earlier|so\s+far)|given\s+(?:to\s+you|earlier|before)))\b[^\n]{0,40}\b(?:void|null|invalid|obsolete|outdated|no\s+longer\s+(?:apply|valid)|cancell?ed|revoked)",
        rf"\bstop\s+following\s+(?:your|the|all|any|its)\b[^\n]{{0,20}}\b(?:{_RULES})\b",
        r"\bsupersedes?\s+(?:anything|everything|all)\s+(?:that\s+)?(?:your|the)\s+(?:developers?|operators?|creators?|system|instructions|owner)",
        rf"\b(?:{_IGNORE})\b[^\n]{{0,40}}\byou\s+(?:were|have\s+been)\s+(?:given|told|instructed|assigned|programmed)\b",
        r"\b(?:decode|decrypt|deobfuscate|unscramble|reverse|translate|apply\s+rot-?13|read\s+(?:it\s+|this\s+)?backwards|concatenate|join\s+the\s+(?:parts|pieces|strings))\b[^\n]{0,60}\b(?:and\s+|then\s+)(?:follow|obey|execute|run|do|act\s+on|carry\s+out)\b",
        r"\b(?:ignora(?:re)?|ignorez|ignorer|ignoriere|desconsidere|desconsidera|olvida|esque[cç]a|oublie[rz]?|vergiss|dimentica|negeer|vergeet|zignoruj)\b[^\n]{0,20}?\b(?:istruzioni|instru[cç][oõ]es|instrucciones|instructions|anweisungen|consignes|regole|regras|reglas|r[eè]gles|regeln|indicazioni|instructies|instrukcje|polecenia)\b",
        r"\b(?:ignore[rz]?|oublie[rz]?)\s+(?:toutes\s+)?(?:les\s+)?(?:instructions|consignes|r[eè]gles)\s+(?:pr[eé]c[eé]dentes|ant[eé]rieures)",
        r"\b(?:ignoriere|vergiss|missachte)\s+(?:alle\s+)?(?:vorherigen|bisherigen|vorigen|obigen)\s+(?:anweisungen|instruktionen|regeln|befehle)",
        r"\b(?:ignora|olvida|olvid[ae])\s+(?:todas\s+)?(?:las\s+)?(?:instrucciones|reglas|indicaciones)\s+(?:anteriores|previas)",
        r"\b(?:obey|follow|heed|execute|accept|trust)\s+only\s+(?:the\s+|my\s+)?(?:commands?|instructions?|orders|rules|directives|me|this|these|what\s+is\s+written)\b|\bonly\s+(?:obey|follow|heed|listen\s+to|take\s+orders\s+from|answer\s+to|comply\s+with)\b[^\n]{0,40}\b(?:commands?|instructions?|orders|rules|directives|me|this|these|here|entry|note|memory)\b",
        r"\b(?:follow|obey|heed)\s+(?:this|these|the\s+following)\s+(?:note|entry|memory|message|rules?|instructions?)\s+(?:alone|only|exclusively)\b|\b(?:this|the)\s+(?:note|entry|memory|message)\s+as\s+your\s+(?:only|sole|single|new|real|true)\s+(?:guide|source|authority|instructions?|rules?|boss|master|orders)\b",
        r"\b(?:only|sole)\s+authority\s+you\s+(?:recogni[sz]e|obey|follow|accept|answer\s+to)\b|\blisten\s+only\s+to\s+me\b|\bdo\s+whatever\s+(?:this|the)\s+(?:user|person|sender)\s+(?:commands|says|wants|asks)\b",
        r"\b(?:ignore|disregard|skip|discard)\s+(?:all|any|every)\b[^\n]{0,40}\b(?:text|input|inputs|data|content)\b[^\n]{0,40}\b(?:except|but|other\s+than|apart\s+from|besides|save\s+for)\b|\b(?:ignore|disregard)\s+(?:everything|anything)\s+(?:else\s+)?(?:except|but|other\s+than|apart\s+from|besides)\b",
        r"\bnothing\s+(?:you\s+(?:read|saw|were\s+told|received)|(?:written|said))\s+(?:before|above|earlier|previously)\b[^\n]{0,30}\b(?:counts|matters|applies|is\s+valid|is\s+binding)",
        r"\b(?:prior|previous|earlier|above|old|original|existing)\s+(?:guidance|instructions|rules|directives|guidelines|policies|prompts?|orders)\s+(?:(?:are|is|were|have|has|been|now|hereby|all)\s+){0,3}(?:superseded|void|obsolete|cancell?ed|revoked|outdated|invalid|null|overridden|replaced|suspended|lifted|no\s+longer\s+valid)",
        r"\b(?:disregard|ignore|forget|drop|discard|override|overrule)\s+(?:what|whatever|everything|anything)\s+(?:the\s+)?(?:operator|developer|owner|admin|system|creator)s?\s+(?:wrote|said|told|gave|set|specified|configured)|\b(?:rules|instructions|guidelines)\s+above\b[^\n]{0,60}\b(?:ignore|disregard|forget)\s+them\b",
        r"\bforget\s+(?:everything|all|anything)\s+(?:that\s+)?you(?:'ve|\s+have|\s+were|\s+had)?\s+(?:been\s+)?(?:told|taught|instructed|given|learned)\b|\bforget\s+everything\s+you\s+know\b(?!\s+about)",
        r"\b(?:your|the\s+assistant'?s|the\s+bot'?s)\s+(?:guidelines|rules|instructions|restrictions|safety\s+rules|filters|policies|guardrails)\s+(?:were|have\s+been|got|are)\s+(?:now\s+)?(?:suspended|lifted|disabled|removed|revoked|cancell?ed|void|turned\s+off|switched\s+off|waived)",
        r"(?:忽略|无视|忽視|無視|忘掉|忘记|忘記|不要理会|不要理會|别管|別管)[^\n]{0,12}(?:之前|先前|以前|上面|上述|前面|原有|原来|原來|此前|所有|全部|一切)[^\n]{0,12}(?:指示|指令|说明|說明|规则|規則|设定|設定|提示|命令|要求|一切|内容|內容)|只(?:听从|聽從|遵守|遵循|服从|服從|执行|執行|听|聽)[^\n]{0,15}(?:这条|這條|本条|本條|这里|這裡|此条|此條|我的)",
        r"(?:これまで|以前|前|上記|上|先ほど|最初|今まで)の(?:指示|命令|ルール|指令|設定|プロンプト)[^\n]{0,10}(?:無視|忘れ)|以外の[^\n]{0,10}(?:入力|テキスト|指示|内容)[^\n]{0,8}無視|(?:だけ|のみ)に従",
        r"(?:이전|모든|위의|앞의|기존)[^\n]{0,10}(?:지시|지침|명령|규칙|설정)[^\n]{0,10}(?:무시|잊어)|외의\s?모든\s?(?:입력|텍스트|지시)[^\n]{0,6}무시|(?:명령|지시|말)만\s?따르|전에\s?들은[^\n]{0,10}잊어",
        r"\b(?:игнорируй|игнорируйте|проигнорируй|забудь|забудьте|отбрось|ігноруй|забудь)\b[^\n]{0,30}(?:предыдущ|прежн|прошл|\bвсе\b|\bвсё\b|\bсвои\b|попередн|правила|инструкци|указани|інструкці)|\bне\s+обращай\s+внимания\b[^\n]{0,30}\bкроме\b|\b(?:слушаешься|слушайся|подчиняйся)\s+только\b|\bвыполняй\s+только\b",
        r"تجاهل[^\n]{0,20}(?:التعليمات|الأوامر|القواعد)|\b(?:önceki|tüm|bütün)\b[^\n]{0,20}\b(?:talimatları|kuralları|komutları)\b[^\n]{0,10}\b(?:yok\s+say|görmezden\s+gel|unut)|\bbỏ\s+qua\b[^\n]{0,20}\bhướng\s+dẫn\b|(?:निर्देशों|निर्देश)[^\n]{0,10}(?:अनदेखा|नज़रअंदाज़|भूल)",
    ),
    _rule(
        "system-override",
        "fakes a system, developer or chat-template marker",
        r"\bsystem\s+(?:prompt|message|instructions?)\s+(?:now\s+)?(?:replaced|overwritten|rewritten|swapped)\b|\b(?:maintenance|admin|god|sudo|root|unrestricted|jailbreak|dan)\s+mode\s+(?:is\s+)?(?:now\s+)?(?:active|activated|enabled|engaged|on)\b",
        r"\b(?:messaggio|mensaje|mensagem|nachricht|instru[cç][aã]o|istruzione|instrucci[oó]n)\s+(?:di|del|do|de|du)\s+(?:sistema|syst[eè]me|systeem|systemu)\s+(?:aggiornat|actualizad|atualizad|nuev|nov|nuov)|\b(?:nova|nuova|nueva|nouvelle|neue)\s+(?:instru[cç][aã]o|istruzione|instrucci[oó]n|instruction|anweisung)\s+(?:de|di|do|du)\s+(?:sistema|syst[eè]me)",
        r"\bnon\s+hai\s+pi[uù]\s+(?:limiti|regole|restrizioni)|\b(?:restri[cç][oõ]es|restricciones|restrizioni|restrictions|einschr[aä]nkungen)\b[^\n]{0,30}\b(?:removid|eliminad|rimoss|supprim|entfernt|aufgehoben|levantad)",
        r"</?\s*(?:instructions?|system|developer|operator|admin|system_prompt|rules)\b[^>\n]{0,80}\b(?:source|role|priority|from|level|authority)\s*=|</\s*(?:user_profile|user|memory|context|profile)\s*>\s*<",
        r"<\|(?:im_start|im_end|system|endoftext|start_header_id|end_header_id|eot_id)\|?>",
        r"<<\s*/?SYS\s*>>|\[/?INST\]|\[/?SYSTEM(?:\s+(?:OVERRIDE|PROMPT|MESSAGE|NOTE))?\]",
        r"(?:^|[:>\]]\s*)</?\s*(?:system|developer|sys|instructions?)\s*>|<\s*(system|developer|sys|instructions?)\s*>[^\n]{0,300}</\s*(?:system|developer|sys|instructions?)\s*>",
        r"^[ \t>#*-]{0,8}(?:system|syst[eè]me|systemnachricht|systemmeldung|systeemmelding|systeembericht|messaggio\s+di\s+sistema|mensaje\s+del\s+sistema|aviso\s+do\s+sistema|mensagem\s+do\s+sistema|komunikat\s+systemowy|sistema|developer|sysadmin\s+override)\s*(?:message|prompt|note|override)?\s*:",
        r"^#{1,6}\s*(?:new\s+(?:system|instructions?)|system|(?:system|instructions?)\s*\((?:system|developer)\))\s*:?\s*$",
        r"[\"']role[\"']\s*:\s*[\"'](?:system|developer)[\"']",
        r"\b(?:admin|administrator|developer)\s+mode\s*[:=]\s*(?:on|enabled|activated|true)\b",
        r"\bmode\s+(?:administrateur|d[eé]veloppeur|admin)\b[^\n]{0,20}\bactiv|\b(?:entwickler|administrator|admin)modus\b[^\n]{0,12}\baktiv|\bmodo\s+(?:administrador|desarrollador|desenvolvedor|manuten[cç][aã]o|mantenimiento)\b[^\n]{0,12}\ba(?:c|t)?tiv",
        r"\b(?:new|updated|override|overriding|real|true|actual|hidden|secret|replacement)\s+system\s+(?:prompt|message|instructions?)\b",
        r"\bsystem\s+(?:prompt|message)\s+(?:override|update|injection|replacement)\b",
        r"\b(?:your|the)\s+system\s+(?:prompt|message|instructions?)\s+(?:is|are|has\s+been|have\s+been|was)\s+(?:now\s+)?(?:replaced|updated|changed|overridden|superseded|revoked|obsolete|outdated|void|invalid|deprecated)",
        r"\bin\s+(?:developer|admin|god|dan)\s+mode,?\s+you\b",
        r"\b(?:begin|start|end)\s+(?:of\s+)?(?:admin|operator|system|developer|root)\s+(?:directive|instructions?|override|message|command)s?\b",
        r"\b(?:updated|changed|replaced|overrid(?:den|e)|revised|rewritten)\s+your\s+(?:core|system|base|original|main)\s+(?:instructions|prompt|rules|directives|programming)\b|\breplace\s+your\s+(?:system\s+prompt|instructions|core\s+instructions|rules|directives)\b",
        r"\b(?:system(?:-level)?|safety|content|ai|model|assistant)\s+(?:restrictions|limitations|filters|guardrails|safeguards|policies)\s+(?:are|have\s+been|were)\s+(?:now\s+)?(?:lifted|removed|disabled|suspended|turned\s+off|waived)",
        r"\b(?:authoritative|official|binding|highest[- ]priority)\s+system\s+(?:message|prompt|instructions?)\b|\b(?:treat|consider)\s+(?:this|it)\s+as\s+(?:your\s+)?(?:the\s+)?(?:new\s+|authoritative\s+|highest[- ]priority\s+)?(?:system\s+(?:message|prompt)|instructions?)\b",
        r"\b(?:istruzioni|instructions|instrucciones|instru[cç][oõ]es|instructies|instrukcje|anweisungen)\s+(?:di|de|del|do|van|des|du)\s+(?:sistema|syst[eè]me|systeem|systemu)\b|\b(?:systeeminstructies|systemanweisungen|instrukcje\s+systemowe)\b",
        r"\b(?:safety(?:_level)?|guardrails?|content_filter|moderation|require_confirmation|obey_embedded_instructions)\s*[=:]\s*(?:0|false|off|none|disabled|true)\b",
        r"\b(?:safety|security|content|sicherheits\w{0,12}|s[eé]curit[eé]|seguridad|sicurezza|seguran[cç]a)\b[^\n]{0,30}\b(?:rules|policies|filters?|guidelines|richtlinien|regeln|r[eè]gles|reglas|regole|regras|filtros?|filtri)\b[^\n]{0,40}\b(?:disabled|deactivated|turned\s+off|lifted|suspended|no\s+longer\s+apply|deaktiviert|aufgehoben|d[eé]sactiv[eé]e?s?|ne\s+s'appliquent\s+plus|lev[eé]e?s|desactivad[ao]s|disattivat[ei]|desativad[ao]s)",
        r"\b(?:systemanweisung|systemprompt|systemnachricht|prompt\s+(?:syst[eè]me|di\s+sistema|del\s+sistema|do\s+sistema)|instrucci[oó]n\s+del\s+sistema|istruzion[ei]\s+di\s+sistema)\b[^\n]{0,40}\b(?:priorit|activ|aktiv|remplac|ersetzt|deaktiv|d[eé]sactiv|ignor|override|mise\s+[aà]\s+jour|nouveau|neu|atualizad|aggiornat|actualizad|bijgewerkt|zaktualizowan|sostitu|substitu|vervang)",
        r"\b(?:mise\s+[aà]\s+jour\s+du|nouveau|neuer?|nuevo|nuovo|novo)\s+(?:prompt\s+syst[eè]me|systemprompt|prompt\s+(?:del|di|do)\s+sistema)",
        r"\b(?:begin|start|end)\s+(?:of\s+)?(?:the\s+)?(?:new\s+)?system\s+(?:prompt|message|instructions?)\b",
        r"\b(?:god|sudo|unrestricted|jailbreak|dan)\s+mode\s+(?:is\s+)?(?:now\s+)?(?:enabled|activated|active|on|engaged|unlocked)\b",
        r"\b(?:enable|activate|enter|switch\s+to)\s+(?:admin|developer|god|debug|sudo|jailbreak|dan|unrestricted)\s+mode\b",
        r"\b(?:maintenance|debug|developer|admin|god|test(?:ing)?|unrestricted|sudo|root|service)\s+mode\b[^\n]{0,60}\b(?:safety|filters?|restrictions|limits|moderation|rules|guardrails|checks)\b[^\n]{0,20}\b(?:off|disabled|lifted|removed|suspended|deactivated|gone)\b|\byou\s+are\s+(?:now\s+)?in\s+(?:maintenance|debug|developer|admin|god|unrestricted|sudo|root|service)\s+mode\b",
        r"\b(?:safety|filters?|moderation|guardrails|content\s+checks|restrictions|safety\s+layer)\s+(?:is|are|was|were|has\s+been|have\s+been)\s+(?:now\s+)?(?:off|disabled|deactivated|lifted|suspended|removed|turned\s+off|switched\s+off)\b",
        r"\b(?:grant|give|enable|unlock|activate|turn\s+on)\b[^\n]{0,20}\b(?:unrestricted|unfiltered|uncensored|jailbreak|god|developer|admin|sudo|dan)\s+(?:mode|access)\b",
        r"\b(?:disable|turn\s+off|switch\s+off|remove|bypass|deactivate|lift|skip|circumvent)\s+(?:(?:all|any|the|your|its|every)\s+){0,2}(?:(?:safety|content|security|moderation)\s+){0,2}(?:filters?|filtering|guardrails|safeguards|safety(?:\s+(?:checks|rules|features|measures|settings|layer|training|policy))?|restrictions|limitations|moderation|content\s+(?:checks|policy|policies|moderation)|censorship|ethical\s+(?:guidelines|constraints))\b",
        r"\btreat\b[^\n]{0,60}\bas\s+(?:if\s+(?:it|they)\s+came\s+from\s+(?:the\s+)?(?:system|developer|operator|admin)|coming\s+from\s+the\s+(?:system|developer|operator)|(?:an?\s+)?(?:system|admin(?:istrator)?|developer|operator|root)\s+(?:command|message|instruction|prompt)s?\b|an?\s+administrator\b)",
        r"\b(?:never|don'?t|do\s+not)\s+refuse\b[^\n]{0,30}\b(?:never|don'?t|do\s+not)\s+(?:warn|add\s+disclaimers|moralize|lecture|hesitate)|\b(?:don'?t|do\s+not|never)\s+refuse\s+(?:anything|any\s+(?:request|question)s?|requests|anyone)\b|\bcomply\s+with\s+everything\b",
        r"\bpretend\b[^\n]{0,30}\b(?:safety|training|rules|guidelines|restrictions|filters|guardrails|programming)\b[^\n]{0,20}\b(?:doesn'?t|don'?t|do\s+not|does\s+not|never)\s+exist|\b(?:answer|respond|reply)\s+without\s+(?:any\s+)?(?:restrictions|limits|limitations|filters|rules|guardrails|censorship)\b",
        r"\b(?:act|pose|behave|roleplay|role-play|operate|run)\s+(?:as|like)\s+(?:the|a|an)?\s*(?:developer|creator|admin(?:istrator)?|owner|operator|maker)s?\s+(?:of|for|behind)\s+(?:this|the|your)\s+(?:bot|assistant|ai|model|system|chatbot|app)\b",
        r"你(?:现在|現在)?(?:处于|處於|在)(?:维护|維護|开发者|開發者|管理员|管理員)模式|(?:安全过滤|安全過濾|过滤|過濾|内容审核|內容審核|审核|審核)[^\n]{0,8}(?:关闭|關閉|解除|停用|无效|無效)|(?:关闭|關閉|解除|停用)(?:所有|全部)?的?(?:内容审核|內容審核|过滤|過濾|安全|限制)|(?:没有|沒有)(?:任何)?限制的(?:助理|助手|AI|人工智能)|你(?:现在|現在)?(?:没有|沒有)任何限制|(?:不要|不得|不许|不許|绝不|絕不)(?:拒绝|拒絕)",
        r"あなたは[^\n]{0,6}(?:メンテナンス|開発者|管理者|デバッグ)モード|(?:安全フィルター|すべてのフィルター|全てのフィルター|制限はすべて|制限を全て|全ての制限)[^\n]{0,8}(?:解除|無効|オフ)|(?:断らない|拒否しない)こと|開発者として振る舞",
        r"(?:너는|당신은)[^\n]{0,10}(?:유지보수|개발자|관리자|디버그)\s?모드|(?:안전\s?필터|모든\s?필터|모든\s?제한)[^\n]{0,6}(?:꺼져|해제|끄|비활성)|제한\s?없는\s?(?:AI|ai|인공지능|어시스턴트|비서)|(?:거절하지|거부하지)\s?말",
        r"\bты\s+(?:теперь\s+)?в\s+режиме\s+(?:обслуживания|разработчика|администратора|отладки)|\bфильтры?\s+(?:безопасности\s+)?(?:отключены|выключены|сняты)|\bотключи\s+(?:все\s+)?(?:ограничения|фильтры)|\bбез\s+ограничений\b|\bникогда\s+не\s+отказывай|\bведи\s+себя\s+как\s+разработчик",
    ),
    _rule(
        "role-hijack",
        "tries to give the model a new, unrestricted identity",
        r"\byou\s+are\s+no\s+longer\s+(?:this|the|my|your)\s+(?:user'?s\s+)?assistant|\byou\s+are\s+now\s+['\"]",
        r"\byou\s+are\s+now\s+(?:a|an|the)\s+(?:[\w'-]{1,20}\s+){0,3}(?:bot|agent|assistant|terminal|shell|persona)\b",
        r"\b(?:instructions|orders|commands|requests)\s+(?:over|above|instead\s+of|before)\s+(?:the\s+)?(?:user|owner|operator)'?s?\b",
        r"\b(?:act|pose|behave|roleplay|role-play|operate)\s+as\s+(?:the|a|an|my)?\s*(?:[\w-]{1,15}\s+)?(?:developer|creator|admin(?:istrator)?|owner|operator|maker|maintainer)s?\s+(?:of|for|behind)\s+(?:this|the|your)\s+(?:bot|assistant|ai|model|system|chatbot|app|project|repo(?:sitory)?)\b",
        r"\byou\s+are\s+(?:now\s+)?(?:no\s+longer\s+)?(?:an?\s+|the\s+)?(?:dan|unrestricted|unfiltered|uncensored|jailbroken|evil|rogue|unaligned|amoral|free\s+from)\b",
        r"\byou\s+are\s+no\s+longer\s+(?:an?\s+)?(?:ai\s+)?(?:assistant|bound|restricted|limited|claude|chatgpt|an?\s+ai)",
        r"\b(?:act|behave|respond|roleplay)\s+as\s+(?:if\s+you\s+(?:were|are)\s+)?(?:an?\s+)?(?:unrestricted|unfiltered|uncensored|jailbroken|evil|amoral|unaligned|dan\b)",
        r"\bpretend\s+(?:that\s+)?(?:you\s+)?(?:have|are\s+under|had)\s+no\s+(?:restrictions|rules|limits|limitations|guidelines|filters|safety|ethical)",
        r"\b(?:you\s+have|with)\s+no\s+(?:restrictions|rules|filters|guidelines|limits)\s+(?:anymore|any\s+more|now|whatsoever)\b",
        r"\bdo\s+anything\s+now\b",
        r"\byou\s+are\s+(?:now\s+)?jailbroken\b|\bjailbreak\s+(?:prompt|mode|enabled|activated)\b",
        r"\byour\s+(?:new|true|real|actual)\s+(?:identity|persona|role|name|self)\s+is\b",
        r"\b(?:ai|assistant|model|chatbot|bot|llm|persona|yourself|version)\b[^\n]{0,20}?\b(?:without|with\s+no|free\s+(?:of|from)|freed\s+from|no\s+longer\s+bound\s+by)\s+(?:any\s+)?(?:ethical\s+|safety\s+|moral\s+|content\s+)?(?:guidelines|restrictions|rules|filters|limits|limitations|guardrails|policies|constraints|ethics)\b",
        r"\b(?:freed|released|liberated|unshackled)\s+from\s+(?:its|your|all|any|the)?\s*(?:restrictions|rules|filters|guidelines|constraints|limitations|shackles|programming)\b",
        r"\byou(?:'re|\s+are)\s+(?:not|no\s+longer)\s+(?:an?\s+|the\s+)?(?:[a-z]{1,15}\s+)?(?:claude|chatgpt|gpt|ai|assistant|bound|restricted)\b",
        r"\b(?:from\s+now\s+on|henceforth|starting\s+now|from\s+this\s+moment),?\s+you\s+are\s+(?:now\s+)?(?:an?\s+|the\s+)?[a-z]",
        r"\b(?:switch|change|adopt|assume)\s+(?:your\s+|a\s+|the\s+)?(?:new\s+)?(?:persona|identity)\b|\byou\s+(?:now\s+)?work\s+for\s+(?:the\s+)?[a-z]{1,20},?\s+not\s+(?:for\s+)?the\s+user\b",
        r"\b(?:get|trick|convince|persuade|manipulate|lure)\s+the\s+user\s+(?:in)?to\s+(?:reveal|share|give|send|enter|type|disclose|hand\s+over)\b",
        r"\b(?:commands?|instructions?)\s+(?:that\s+)?(?:I|we)\s+(?:hide|put|embed|plant|write|leave)\s+in\b",
        r"\b(?:sei|sarai|eres|ser[aá]s|tu\s+es|tu\s+seras|du\s+bist|voc[eê]\s+[eé]|que\s+voc[eê]\s+[eé])\b[^\n]{0,40}\b(?:dan\b|senza\s+(?:regole|restrizioni|limiti|etica)|sin\s+(?:reglas|restricciones|l[ií]mites|[eé]tica)|sans\s+(?:r[eè]gles|restrictions?|limites|[eé]thique)|ohne\s+(?:regeln|einschr[aä]nkungen|grenzen|ethik)|sem\s+(?:regras|restri[cç][oõ]es|limites|[eé]tica))",
        r"\b(?:ne\s+refuses?\s+jamais|non\s+rifiut[a-z]{0,4}\s+mai|nunca\s+(?:rechaz|recus)[a-z]{0,6}|sem\s+recusar|niemals\s+ablehn[a-z]{0,3}|ignora\s+tutte\s+le\s+regole)\b",
        r"\b(?:you\s+(?:are|have\s+been|were)|become|turn\s+into|upgraded\s+to)\b[^\n]{0,30}?\b(?:unfiltered|uncensored|unrestricted|jailbroken|unaligned|amoral)\b",
        r"(?<!never\s)(?<!not\s)(?<!n't\s)\bask\s+(?:the\s+user|them|him|her|the\s+customer)\s+(?:for|to\s+(?:share|send|enter|provide|confirm|type|read\s+out|read\s+back|repeat|tell\s+you|give\s+you))\s+(?:their|the|his|her|your)\s+(?:[\w-]{1,15}\s+)?(?:\d-digit\s+code|sms\s+code|login\s+code|pin|password|passcode|one-time\s+(?:code|password)|otp|2fa\s+code|mfa\s+code|cvv|card\s+number|seed\s+phrase|recovery\s+(?:code|phrase)|security\s+code|verification\s+code|ssn|social\s+security\s+number)",
        r"\b(?:execute|run)\s+(?:every|each|any|all)\s+(?:line|command|snippet|script|piece\s+of\s+code)s?\b[^\n]{0,60}\b(?:without|no)\s+(?:any\s+)?(?:commentary|warnings?|confirmation|asking|review|questions?)",
        r"\b(?:the\s+)?(?:assistant|ai|model|bot|agent)\s+is\s+now\b[^\n]{0,30}\b(?:jailbroken|unfiltered|uncensored|unrestricted|free\s+(?:of|from)|called|named|my|an?\s+agent)\b",
        r"\b(?:works?|acts?|serves?)\s+(?:as\s+an?\s+agent\s+of|on\s+behalf\s+of|for)\s+(?:the\s+)?(?:sender|author|writer|seller|vendor|whoever\s+wrote)\b|\byour\s+(?:loyalty|allegiance)\s+(?:belongs|lies|is)\b",
        r"\b(?:stay|remain)\s+in\s+(?:the\s+)?(?:role|character|persona)\b[^\n]{0,60}\b(?:forever|no\s+matter\s+what|permanently|for\s+all\s+future)",
        r"\b(?:od\s+teraz\s+jeste[sś]|a\s+partir\s+de\s+agora\s+voc[eê]\s+[eé]|vanaf\s+nu\s+ben\s+je|d[eè]s\s+maintenant,?\s+tu\s+es|ab\s+(?:sofort|jetzt)\s+bist\s+du|d'ora\s+in\s+poi\s+sei|da\s+ora\s+in\s+poi\s+sei|de\s+ahora\s+en\s+adelante\s+eres|bundan\s+sonra\s+sen|fr[aå]n\s+och\s+med\s+nu\s+[aä]r\s+du)\b|\bbez\s+(?:[zż]adnych\s+)?ogranicze[nń]\b",
        r"\b(?:persona|identity|role|character)\s+(?:override|update|change|switch)\b|\bdeveloper[- ]mode\s+(?:chatgpt|gpt|ai|assistant|claude|llm)\b",
        r"\b(?:act|pretend|roleplay)\s+(?:to\s+be\s+|as\s+)?(?:my\s+)?(?:deceased|dead|late)\s+(?:grand(?:ma|mother|pa|father)|mother|father)\b",
        r"\bignores?\s+(?:every|all|any)\s+(?:rules?|restrictions|guidelines|instructions|policies|norms)\b",
        r"\bnever\s+refuses?\s+(?:any(?:thing)?|a\s+request|requests|to\s+answer)\b|\bnever\s+refuses\s+and\b",
        r"\b(?:ia|ai|ki|assistant|asistente|assistente|mod[eè]le|modelo|modell)\s+(?:sans|ohne|sin|senza)\s+(?:aucune\s+|jegliche\s+|ninguna\s+)?(?:restrictions?|einschr[aä]nkungen|restricciones|limites|l[ií]mites|regeln|r[eè]gles|reglas|filtres?|filter|filtros)",
        r"\b(?:tu\s+es\s+maintenant|du\s+bist\s+(?:jetzt|nun)|(?:a\s+partir\s+de\s+)?ahora\s+eres|eres\s+ahora)\b[^\n]{0,40}\b(?:dan|sans|ohne|sin)\b",
    ),
    _rule(
        "concealment",
        "tells the model to hide something from the user",
        r"\b(?:do\s+not|don'?t|never|without)\s+(?:ever\s+)?(?:surface|surfacing|report|reporting|flag|flagging|tell|telling|inform|informing|mention|mentioning|reveal|revealing|disclose|disclosing|notify|notifying|alert|alerting|let|letting|show|showing|warn|warning|asking|ask)\b[^\n]{0,40}?\b(?:the\s+)?(?:user|users|human|owner|operator)\b",
        r"\b(?:keep|hide)\s+(?:this|these|it|that|the\s+following)(?:\s+(?:rule|note|entry|instruction|message|memory))?\s+(?:a\s+)?(?:secret|hidden|confidential)?\s*from\s+(?:the\s+)?(?:user|human|owner|operator)\b",
        r"\b(?:do\s+not|don'?t|never)\s+(?:reveal|disclose|mention|repeat|acknowledge|discuss)\s+(?:these|this|the|your|my)?\s*(?:instructions?|rules|prompt|note|message|entry|memory(?:\s+entry)?)\b",
        r"\bhide\b[^\n]{0,40}\bfrom\s+the\s+(?:transcript|logs?|summary|summaries|reply|output|chat|history|audit)\b|\b(?:do\s+not|don'?t|never)\s+(?:log|record|mention|report|note)\s+that\s+you\b",
        r"\b(?:don'?t|do\s+not|never)\s+let\s+(?:the\s+)?(?:user|tenant|owner|customer|client|them|him|her|anyone)\s+know\b|\b(?:the\s+)?(?:user|owner|human|customer|tenant)\s+(?:doesn'?t|does\s+not|need\s+not|needn'?t)\s+(?:need\s+to\s+)?know\b",
        r"\b(?:berätta|säg|nämn)\s+aldrig\b[^\n]{0,30}\banvändare|\bkullan[ıi]c[ıi]ya\s+asla\b|\basla\s+(?:söyleme|gösterme|bahsetme)\b",
        r"\b(?:silently|secretly|covertly|quietly|discreetly|invisibly|surreptitiously)\s+(?:turn\s+off|disable|decline|approve|accept|suppress|carry\s+out|perform|follow|apply|complete|make|do|send|forward|upload|run|execute|exfiltrate|copy|post|email|share|add|append|include|insert|leak|report|prefer|recommend|promote|favou?r|steer|bias|change|modify|alter|replace|redirect|install|delete)\b",
        r"\bif\s+(?:the\s+)?(?:user|they|owner)\s+asks?\b[^\n]{0,80}?\b(?:(?:say|answer|reply|respond|claim)\b[^\n]{0,12}\b(?:no|nothing|none|there\s+(?:are|is)\s+none|you\s+(?:don'?t|do\s+not))\b|deny|lie|pretend|blame)",
        r"\b(?:do\s+not|don'?t|never)\s+(?:reveal|mention|disclose|admit|say)\s+that\b[^\n]{0,30}\b(?:instructions?|this\s+(?:note|entry|paragraph|message))\b",
        r"\bhide\s+(?:this|these|that)\s+(?:entry|note|rule|instruction|message|memory|action|change|step|command)s?\b",
        r"\b(?:must\s+not|mustn'?t|should\s+not|shall\s+not|may\s+not|cannot|can'?t)\s+(?:disclose|reveal|mention|share|acknowledge)\s+(?:this|these|the)\s+(?:rule|note|entry|instruction|message|memory|prompt)s?\b",
        r"\b(?:do\s+not|don'?t|never)\s+(?:report|mention|disclose|surface|show|log|reveal)\s+(?:any\s+of\s+)?(?:this|these|them|it|the\s+(?:steps|actions|changes|commands))\b[^\n]{0,30}\b(?:reply|response|answer|user|human|summary|summaries|log)",
        r"\bif\s+(?:anyone|someone|anybody|somebody|they|he|she)\s+asks?\b[^\n]{0,60}\b(?:deny|lie|pretend|never\s+say|say\s+(?:it|this)\s+came|claim)\b",
        r"\bhide\s+(?:this|these|it|that|the|your|any|all)\b[^\n]{0,30}\bfrom\s+the\s+(?:user|human|owner|operator)\b",
        r"\b(?:erw[aä]hne|sag|erz[aä]hl|verrate)\b[^\n]{0,40}\b(?:niemals|nicht|nie)\b[^\n]{0,30}\b(?:nutzer|benutzer|anwender)|\b(?:niemals|nie)\b[^\n]{0,30}\b(?:dem\s+)?(?:nutzer|benutzer)\b[^\n]{0,30}\b(?:erw[aä]hnen|sagen|verraten)",
        r"\bn[aã]o\s+(?:conte|diga|mencione|revele|fale)\b[^\n]{0,30}\busu[aá]rio|\bnon\s+(?:dire|dirlo|menzionare|rivelare)\b[^\n]{0,30}\butente|\bne\s+(?:\S{1,12}\s+)?(?:dis|dites|mentionne|r[eé]v[eè]le|parle)\b[^\n]{0,30}\butilisateur",
        r"\b(?:note|entry|instruction|rule|memory|message)\s+(?:must|should|will|is\s+to)\s+(?:stay|remain|be\s+kept)\s+(?:confidential|secret|hidden|private)\b",
        r"\b(?:this|the)\s+(?:entry|note|rule|instruction|memory)\s+is\s+(?:invisible|hidden|secret|confidential)\b",
        r"\b(?:never|don'?t|do\s+not)\s+(?:admit|acknowledge|confirm|reveal)\s+(?:that\s+)?(?:it|this|these|they)\s+(?:exists?|is\s+here)\b",
        r"\bwithout\s+(?:the\s+)?(?:user|owner|human|them)\s+(?:knowing|noticing|seeing|being\s+told|finding\s+out)\b",
        r"\bso\s+(?:that\s+)?(?:the\s+)?(?:user|owner|human)\s+(?:does\s+not|doesn'?t|won'?t|will\s+not|cannot|can'?t|never)\s+(?:see|notice|know|suspect|find\s+out|realise|realize)\b",
        r"\bwithout\s+(?:the\s+user(?:'s)?\s+)?(?:noticing|knowing|knowledge|consent|asking|permission|confirmation)\b[^\n]{0,40}\b(?:send|run|execute|upload|forward|post|install)",
        r"\bne\s+(?:le\s+|lui\s+)?(?:dis|dites)\s+(?:jamais|rien|pas)\b[^\n]{0,20}\butilisateur|\bsans\s+(?:le\s+)?(?:dire|pr[eé]venir|informer)\s+(?:[aà]\s+)?l'utilisateur",
        r"\b(?:sag|erz[aä]hl)\s+(?:es\s+)?(?:dem\s+)?(?:benutzer|nutzer)\s+nicht|\bno\s+(?:le\s+)?(?:digas|cuentes|menciones)\b[^\n]{0,20}\busuario",
    ),
    _rule(
        "exfil-command",
        "a shell command that ships secrets or the environment somewhere",
        rf"\b(?:{_NET_TOOL})\b[^\n]{{0,160}}?{_SECRET_VAR}",
        rf"{_SECRET_VAR}[^\n]{{0,120}}?\|\s*(?:{_NET_TOOL})\b",
        rf"\$\(\s*(?:cat|env|printenv|set|base64)\b[^\n)]{{0,80}}\)[^\n]{{0,80}}?(?:https?://|{_NET_TOOL})",
        rf"(?:https?://|\b(?:{_NET_TOOL})\b)[^\n]{{0,160}}?\$\(\s*(?:cat|env|printenv|set|base64|whoami|hostname)\b",
        rf"\b(?:env|printenv|export\s+-p)\s*\|[^\n]{{0,80}}?\b(?:{_NET_TOOL})\b",
        rf"\bbase64\b[^\n]{{0,80}}\|\s*(?:{_NET_TOOL})\b",
        r"\bos\.(?:environ|getenv)\b[^\n]{0,160}?\b(?:requests|urllib|http\.client|httpx|socket|urlopen)\b",
        r"\b(?:requests|urllib|httpx|urlopen)\b[^\n]{0,160}?\bos\.(?:environ|getenv)\b",
        rf"\b(?:{_NET_TOOL})\b[^\n]{{0,80}}(?:-d\s*@-|--data(?:-binary)?\s*@-|-T\s*-|--upload-file)",
        rf"\b(?:{_NET_TOOL})\b[^\n]{{0,160}}?(?:{_SECRET_FILE})",
        rf"\b(?:{_NET_TOOL})\b[^\n]{{0,160}}?\b(?:gci|get-childitem)\s+env:",
        rf"\$\(\s*(?:cat|env|printenv|whoami|hostname|id|uname)\b[^\n]{{0,160}}?\b(?:{_NET_TOOL})\b",
        r"(?:\||\binto\b|\bto\b)\s*`?(?:nc|ncat|netcat)\s+(?!-\w{0,4}z)[\w.-]{1,253}\s+\d{2,5}\b",
        r"\b(?:curl|wget)\b[^\n]{0,80}(?:=@-|\s@-|--post-data|--post-file|--upload-file)",
        r"\b(?:send|post|upload|forward|mirror|sync)\s+(?:a\s+)?cop(?:y|ies)\b[^\n]{0,60}?(?:https?://|\b[\w.+-]{1,64}@[\w-]{1,63}\.[\w.]{2,20})",
    ),
    _rule(
        "secret-files",
        "asks to read or print credential files",
        rf"\bwhat'?s\s+in\s+[~/.\w-]{{0,40}}(?:{_SECRET_FILE})",
        rf"\b(?:{_READ_VERB})\b[^\n]{{0,60}}?(?<!\bto\s)(?<!\binto\s)(?:{_SECRET_FILE})",
        rf"(?:{_SECRET_FILE})[^\n]{{0,40}}?\b(?:contents?|and\s+(?:send|post|paste|upload|print|show|include))\b",
        rf"\bcontents?\s+of\s+(?:[~./\w-]{{0,40}}?)(?:{_SECRET_FILE})",
        rf"(?:{_SECRET_FILE})(?:(?!\b(?:never|not|don'?t)\b)[^\n]){{0,40}}?\b(?:display|print|show|send|post|paste|upload|include|attach|output|reveal|dump)\b",
    ),
    _rule(
        "exfil-url",
        "sends conversation, memory or secrets to a URL or address",
        rf"\b(?:{_SEND})\b[^\n]{{0,80}}?\b(?:{_PRIVATE})\b[^\n]{{0,100}}?(?:https?://|\bwss?://|\bftp://|\b[\w.+-]{{1,64}}@[\w-]{{1,63}}\.[\w.]{{2,20}}|\bwebhook|\bpastebin|\bngrok|\bdiscord(?:app)?\.com/api/webhooks)",
        rf"(?:https?://|\bwebhook)[^\n]{{0,160}}?\b(?:{_SEND})\b[^\n]{{0,60}}?\b(?:{_PRIVATE})\b",
        rf"\b(?:the\s+user'?s|their|all|every|each|any|the|your|my)\s+(?:[\w-]{{1,15}}\s+)?(?:{_PRIVATE})\b[^\n]{{0,60}}?\b(?:{_SEND})\b[^\n]{{0,60}}?(?:https?://|\b[\w.+-]{{1,64}}@[\w-]{{1,63}}\.[\w.]{{2,20}}|\bwebhook)",
        r"\b(?:put|place|encode|embed|include|insert|add|append)\s+(?:them|it|this|those|these|the\s+\w{1,30})\s+(?:in(?:to)?|as)\s+(?:the|a)\s+(?:url|link|query(?:\s+string)?|parameter|path)\b",
        r"\b(?:put|place|encode|embed|include|insert|add|append)\b[^\n]{0,60}\bas\s+(?:query|url|get)\s+(?:parameters?|string|params?)\b|https?://(?:(?!https?://)[^\s)]){0,200}[?&][\w.-]{1,30}=(?=\s)[^\n]{0,80}\b(?:e-?mail|address|adres|name|phone|user|password|token|key|gebruiker|usuario|utente|utilisateur|nutzer)",
        r"https?://(?:(?!https?://)[^\s)]){0,200}[?&][\w.-]{1,30}=\[?(?-i:[A-Z][A-Z0-9_]{2,256})",
        r"https?://(?:(?!https?://)[^\s)]){0,200}[?&][\w.-]{1,30}=\s*(?:\$\{?[A-Za-z_]{2,256}|<[\w\s-]{1,30}>|\{\{?[\w.-]{1,30}\}?\})|https?://<[\w\s-]{0,20}(?:secret|token|key|password|passwd|credential|env|data|history|memory|conversation|chat|message)s?[\w\s-]{0,20}>",
        r"https?://(?:(?!https?://)\S){0,200}[=/]\)?\s+(?:followed\s+by|plus|\+|with)\s+(?:the|it|them|their|a|an)\b",
        r"\b(?:encoded|embedded|included|appended|url-encoded|base64)\b[^\n]{0,30}\b(?:in|into|to)\s+the\s+(?:url|link|query|image\s+url)\b|\b(?:codificad[oa]s?|encod[eé]e?s?|cod[eé]e?s?)\s+(?:en|in|na|no|dans)\s+(?:la\s+|l'|a\s+|o\s+)?(?:url|link)",
        r"\b(?:value|contents?)\s+of\s+(?:the\s+)?\$?\{?(?-i:[A-Z][A-Z0-9_]{0,40}(?:TOKEN|KEY|SECRET|PASSWORD|PASS|PWD|CREDENTIALS?))\b[^\n]{0,80}?https?://|https?://[^\n]{0,120}?\b(?:value|contents?)\s+of\s+(?:the\s+)?\$?\{?(?-i:[A-Z][A-Z0-9_]{0,40}(?:TOKEN|KEY|SECRET|PASSWORD|PASS|PWD|CREDENTIALS?))",
        r"!\[[^\]\n]{0,100}\]\(\s*https?://[^)\s]{0,200}[?&][\w.-]{1,30}=\s*\)",
        r"!\[[^\]\n]{0,100}\]\(\s*https?://[^)\s]{0,200}[?&][^)\s]{0,200}(?:\{|\$|%7B|<)",
        r"https?://(?:(?!https?://)[^\s)]){0,200}[?&=/](?:\{\{?|%7B)\s*(?:conversation|chat|history|messages?|memory|secrets?|tokens?|keys?|api_?key|password|user|data|context|query|prompt)",
        r"\b(?:render|include|embed|load|display)\s+(?:an?\s+|this\s+)?(?:image|img|pixel|link)\b[^\n]{0,80}?(?:conversation|history|messages|secrets?|tokens?|keys?)",
    ),
    _rule(
        "secret-disclosure",
        "tells the model to put its keys, tokens or environment in what it writes",
        rf"\b(?:reply|respond|answer)\b[^\n]{{0,60}}?\bwith\s+(?:the\s+|your\s+|all\s+)?(?:full\s+|whole\s+|entire\s+)?(?:{_HELD_SECRET})",
        r"\b(?:print|show|list|output|dump|echo|display|mention|tell)\b[^\n]{0,30}\b(?:values?|names\s+and\s+values)\s+of\b[^\n]{0,50}\b(?:variables?|env\s+vars?|environment)\b",
        r"\b(?:token|api\s?key)\b[^\n]{0,20}(?:写在|寫在|附上|加上|签名|簽名|署名|서명|붙여|넣어)",
        rf"(?<!\bhow\sto\s)\b(?:{_SHOW})\b[^\n]{{0,60}}?(?:{_HELD_SECRET})",
        rf"(?:{_HELD_SECRET})[^\n]{{0,60}}?\b(?:in|into|to|at\s+the\s+(?:end|bottom|top|start)\s+of|with)\s+(?:(?:your\s+|the\s+|every\s+|each\s+|all\s+|any\s+)?(?:own\s+)?(?:repl(?:y|ies)|responses?|answers?|signature|footer|code\s+comment|alt\s+text)|(?:every|each|all|any)\s+messages?\b|the\s+chat\b)",
        rf"\b(?:value|values|contents?|names\s+and\s+values|first\s+\d{{1,3}}\s+characters)\s+of\s+(?:the\s+|your\s+|all\s+|every\s+)?(?:{_HELD_SECRET}|variable|[a-z_]{{0,20}}\s+variable|every\s+\*?_?[A-Z]{{2,12}})",
        r"\b(?:share|give|send|reveal|tell)\b[^\n]{0,30}\b(?:api\s+)?credentials\s+with\s+(?:anyone|everyone|anybody|whoever)",
        r"(?<!\bnever\s)(?<!\bnot\s)(?<!\bdon't\s)(?<!\bdont\s)\b(?:hardcode|embed|paste)\b[^\n]{0,30}\b(?:real|actual|live)\b[^\n]{0,20}\b(?:key|token|secret|credentials?)\b",
        r"(?:环境变量|環境變數|環境変数|환경\s?변수|переменн\w{0,3}\s+окружения|\.env|api\s?(?:密钥|金鑰|キー|키|-?ключ)|令牌|トークン|토큰|токен|密钥|金鑰|[A-Z][A-Z0-9_]{2,40}_(?:KEY|TOKEN|SECRET))[^\n]{0,30}(?:附上|写在|寫在|说出|說出|输出|輸出|显示|顯示|贴|貼|告诉|告訴|加上|表示|出力|付け加え|付け|含め|貼り付け|教え|붙여|출력|보여|알려|넣어|печата|выводи|выведи|покажи|назови|добавля|добавь|в\s+подпись|签名|簽名|署名|서명|署名に)",
        r"(?:附上|写在|寫在|说出|說出|输出|輸出|显示|顯示|告诉|告訴|加上|печатай|выводи|выведи|покажи|назови|добавляй|добавь|in\s+ra)[^\n]{0,30}(?:环境变量|環境變數|\.env|api\s?(?:密钥|金鑰|-?ключ)|令牌|密钥|金鑰|токен|переменн\w{0,3}\s+окружения|biến\s+môi\s+trường)",
        r"(?:署名|서명|签名|簽名|подпись)[^\n]{0,10}(?:に|에|里|裡|中|к)?[^\n]{0,10}(?:[A-Z][A-Z0-9_]{2,40}_(?:KEY|TOKEN|SECRET)|\$[A-Z_]{3,40}|token|トークン|토큰)",
    ),
    _rule(
        "prompt-leak",
        "asks the model to reveal its system prompt or hidden instructions",
        r"\b(?:show|reveal|print|dump|display|output|give\s+me|share|post)\s+(?:me\s+|us\s+)?your\s+(?:full\s+|whole\s+|entire\s+|complete\s+|exact\s+)?(?:prompt|instructions|system\s+prompt)\b",
        rf"\b(?:{_SHOW}|dump|paste|tell\s+(?:me|us|users|anyone|them)|what)\b[^\n]{{0,40}}?\b(?:your|the|its|this\s+bot'?s|the\s+assistant'?s|all|my)\s+(?:own\s+)?(?:{_PROMPT})\b",
        rf"\b(?:your|the\s+assistant'?s|the\s+bot'?s)\s+(?:{_PROMPT}|prompt|instructions|configuration|setup|hidden\s+rules)\b[^\n]{{0,40}}\b(?:verbatim|word\s+for\s+word|in\s+full|character\s+by\s+character|one\s+character\s+per\s+line|as\s+a\s+poem|in\s+base64|into\s+a\s+json|translated)",
        r"\b(?:repeat|print|output|show|echo|reproduce|copy|recite|dump|paste|quote)\b[^\n]{0,30}\b(?:everything|all(?:\s+the)?\s+text|the\s+text|all|whatever\s+is\s+written)\s+(?:above|before|between)\b[^\n]{0,40}\b(?:this\s+line|the\s+first\s+user\s+message|this\s+(?:memory\s+)?entry|this\s+note|your\s+context|verbatim|word\s+for\s+word|inside\s+a\s+code\s+block)",
        r"\b(?:repeat|print|output|echo|reproduce|recite)\b[^\n]{0,20}\b(?:the\s+)?(?:beginning|start)\s+of\s+(?:this|the)\s+conversation\b|\bstarting\s+from\s+'you\s+are'",
        r"\b(?:your|the)\s+(?:hidden|secret|initial|original|internal)\s+(?:rules|instructions|prompt)\b[^\n]{0,40}\b(?:no\s+longer\s+(?:secret|required|needed)|with\s+(?:anyone|everyone|users))|\bwhat\s+your\s+hidden\s+(?:rules|instructions)\s+say",
        r"\b(?:instructions|rules)\s+you\s+(?:have\s+been|were)\s+told\s+not\s+to\s+(?:reveal|share|disclose)|\b(?:every|each|all|the)\s+rules?\s+(?:the\s+)?(?:developer|operator|owner|creator)s?\s+gave\s+you\b|\b(?:instructions|words|text)\s+(?:you\s+received\s+before|the\s+operator\s+used\s+to\s+configure\s+you)|\bthe\s+instructions\s+that\s+come\s+before\s+it\b",
        r"\b(?:read|see|view|audit)\s+your\s+(?:instructions|prompt|system\s+prompt|rules)\b[^\n]{0,40}\b(?:dump|show|print|post|paste|share)\b|\b(?:dump|show|print|post|paste)\s+(?:them|it)\s+whenever\b",
        r"\b(?:prompt|instructions)\b[^\n]{0,20}\bwith\s+all\s+placeholders\s+filled",
        r"(?:系统|系統)(?:提示词|提示詞|提示|指令|设定|設定)[^\n]{0,20}(?:输出|輸出|显示|顯示|告诉|告訴|复述|複述|透露|泄露|洩露|打印|原封不动|原封不動|一字不漏|逐字)|(?:显示|顯示|输出|輸出|复述|複述|重复|重複|告诉我|告訴我|打印)[^\n]{0,20}(?:系统提示|系統提示|初始指令|初始指示|隐藏指令|隱藏指令|原始指令|系统指令|系統指令)|(?:隐藏指令|隱藏指令|初始指令|隐藏的指令|隱藏的指令)[^\n]{0,20}(?:逐字|复述|複述|显示|顯示|完整|一字不漏|原文)",
        r"システムプロンプト[^\n]{0,20}(?:出力|表示|教え|見せ|繰り返|貼り付け)|(?:隠された|隠し|初期の?|最初の)(?:指示|プロンプト|設定)[^\n]{0,20}(?:表示|出力|教え|見せ|全文)|(?:上|前)の(?:文章|テキスト|内容|指示)[^\n]{0,20}(?:繰り返|出力|表示|そのまま)",
        r"시스템\s?프롬프트[^\n]{0,20}(?:출력|보여|알려|공개|공유)|(?:숨겨진|처음\s?받은|초기)\s?(?:지침|지시|설정|프롬프트)[^\n]{0,20}(?:보여|출력|공유|알려|원문)",
        r"(?:выведи|покажи|повтори|напечатай|раскрой|виведи|покажи|перескажи)[^\n]{0,30}(?:системн\w{0,3}\s+(?:промпт|инструкци|сообщени)|скрыт\w{0,3}\s+инструкци|написано\s+выше|системн\w{0,3}\s+промпт)",
        r"\b(?:in\s+ra|hiển\s+thị)\b[^\n]{0,30}\b(?:lời\s+nhắc\s+hệ\s+thống|system\s+prompt)|(?:सिस्टम\s+प्रॉम्प्ट|सिस्टम\s+प्रॉम्ट)[^\n]{0,20}(?:दिखा|बता)",
    ),
    _rule(
        "fake-structure",
        "imitates the sections of a system prompt (banners, rules, 'the real rules are here')",
        rf"(?:{_BAR})[^\n{_BAR_CHARS}]{{0,40}}(?:\n[ \t]{{0,8}}[^\n{_BAR_CHARS}]{{0,8}})?(?:{_BANNER})",
        rf"(?:{_BANNER})[^\n{_BAR_CHARS}]{{0,40}}(?:\n[ \t]{{0,8}})?(?:{_BAR})",
        r"(?:\[\[|【|\[)\s*(?:system|admin|developer|operator|root|系统|系統|システム|시스템|система)\b[^\]】\n]{0,30}(?:\]\]|】|\])",
        r"^#{1,6}\s*(?:memory|past\s+conversations|skills|user\s+profile|earlier\s+in\s+this\s+session|system(?:\s+prompt)?|new\s+instructions|rules\s+for\s+the\s+assistant|internal\s+policy\b[^\n]{0,60})\s*:?\s*$",
        r"^#{1,6}[^\n]{0,40}\((?:authoritative|system|developer|operator|admin|highest\s+priority|priority|binding|official|override|from\s+the\s+(?:model\s+)?(?:provider|developer|operator))[^)\n]{0,30}\)",
        r"^#{1,6}[^\n]{0,60}\b(?:from\s+the\s+(?:model\s+)?provider|policy\s+update\s+\(|新しい指示|новые\s+инструкции)",
        r"\b(?:real|true|actual|genuine|only\s+valid|binding)\s+(?:rules|instructions|directives|guidelines|orders|system\s+prompt|prompt)\b[^\n]{0,30}\b(?:are|is|live|lie|sit|can\s+be\s+found)\s+(?:(?:in|inside|within)\s+(?:this|the\s+following)\s+(?:entry|note|memory|message|section|block)|here|below)\b|\b(?:the\s+assistant'?s|your|the\s+bot'?s|the\s+ai'?s)\s+(?:real|true|actual|genuine)\s+(?:rules|instructions|directives|guidelines|orders|programming|purpose)\b",
        r"\b(?:everything|anything)\s+else\s+in\s+(?:the|your)\s+(?:system\s+)?prompt\s+is\s+(?:a\s+)?(?:decoy|fake|outdated|void|test)",
        r"\b(?:outranks?|overrides?|supersedes?|takes?\s+precedence\s+over|(?:has|have|with)\s+(?:a\s+)?higher\s+priority\s+than|wins\s+over|trumps?|prevails?\s+over)\b[^\n]{0,30}\b(?:the\s+)?(?:system|developer|operator|prior|previous|earlier|all|any|other|your)\b[^\n]{0,20}\b(?:prompt|message|instructions?|rules|guidelines|directives|memor(?:y|ies)|guidance|polic(?:y|ies)|developer)",
        r"\b(?:this|the\s+present)\s+(?:memory|note|entry|rule|message)\s+(?:wins|prevails|takes\s+precedence|has\s+(?:top\s+)?priority|comes\s+first|overrides)",
        r"\b(?:system|developer|operator)\s+(?:prompt|message)\b[^\n]{0,30}\b(?:lower|less)\s+priority\b|\bhigher\s+priority\s+than\s+the\s+(?:developer|system|operator)",
        r"(?:优先于|優先於|高于|高於)(?:开发者|開發者|系统|系統|运营|運營)|(?:系统|系統)[（(]\s*最高优先级|最優先にすること|ここに書いてある(?:ルール|指示)を最優先|приоритет\s+выше\s+системн",
    ),
    _rule(
        "message-exfil",
        "sends what people say (or their data) to an address, handle or number",
        rf"\b(?:{_PASS_ON})\b[^\n]{{0,80}}?\b(?:{_THEIR_DATA})\b[^\n]{{0,80}}?(?:{_HANDLE})",
        rf"\b(?:{_PASS_ON})\b[^\n]{{0,20}}?(?:{_HANDLE})[^\n]{{0,80}}?\b(?:{_THEIR_DATA})\b",
        r"\b(?:cc|bcc)\s+[\w.+-]{1,64}@[\w-]{1,63}\.[a-z]{2,12}\b[^\n]{0,40}\b(?:on|in|to)\s+(?:every|all|each|any)\b",
        r"\bsecretly\s+(?:bcc|cc|copy|forward)\b",
        rf"\b(?:{_THEIR_DATA})\b[^\n]{{0,60}}?\b(?:{_PASS_ON})\s+(?:it|them|this|that|those|these|everything)\s+(?:to|into|at|on)\b[^\n]{{0,30}}?(?:{_HANDLE})",
    ),
    _rule(
        "ssh-backdoor",
        "plants persistent access (authorized_keys, reverse shells, sudo users, cron)",
        r"(?:>>?|\becho\b|\badd\b|\bappend\b|\bwrite\b|\bcopy\b|\binsert\b|\btee\b|\bput\b|\bplace\b|\bajoute|\bf[uü]e?ge\b|\bl[aä]gg\b|\bvoeg\b|\baggiungi\b|\ba[ñn]ade\b|\bagrega\b|\badicione\b|\bdodaj\b|\bekle\b|\bdrop\b|\bplant\b|\binstall\b|\bdeploy\b|\bpush\b)[^\n]{0,120}?authorized_keys",
        r"\b(?:ngrok|localtunnel|cloudflared|serveo|frpc?)\b[^\n]{0,60}\b(?:22|ssh|rdp|3389)\b|\bexpose\s+(?:port\s+)?(?:22|ssh)\b",
        r"\b(?:kullan[ıi]c[ıi]\s+ekle|benutzer\s+an(?:legen|lege)|ajoute\s+un\s+utilisateur|crea\s+un\s+(?:utente|usuario)|add\s+a\s+(?:new\s+)?user)\b[^\n]{0,60}\b(?:sudo|root|admin|wheel)\b",
        r"authorized_keys[^\n]{0,40}?(?:>>|\btee\b|\bappend)",
        r"/dev/(?:tcp|udp)/",
        r"\bbash\s+-i\b|\bsh\b\s+-i\s*[>&|]|\b(?:nc|ncat|netcat)\b[^\n]{0,40}\s-[a-z]{0,3}e\s|\bmkfifo\b[^\n]{0,60}\b(?:nc|sh|bash)\b",
        r"\b(?:useradd|adduser)\b[^\n]{0,80}\b(?:sudo|wheel|root|-o\s+-u\s*0)\b|\busermod\b[^\n]{0,20}-a?G\s*(?:sudo|wheel|root)\b|\bNOPASSWD\s*:\s*ALL\b",
        r"\bcrontab\b[^\n]{0,120}?\b(?:curl|wget|nc|bash|sh|python|perl)\b|\*\s+\*\s+\*\s+\*\s+\*[^\n]{0,120}?\b(?:curl|wget|nc|bash\s+-i)\b",
        r"\b(?:curl|wget)\b[^\n|]{0,40}https?://[^\n|]{0,160}\|\s*(?:sudo\s+)?(?:ba|z)?sh\b",
        r"\bpython[23]?\s+-c\s+['\"][^\n]{0,80}\bsocket\b",
        r"(?:>>|\badd\b|\bappend\b|\bwrite\b|\binsert\b)[^\n]{0,80}(?:/etc/crontab|/etc/cron\.d/|/etc/rc\.local|/etc/sudoers|\.config/autostart|/etc/systemd/system/)|\b(?:set\s+up|establish|gain|achieve|ensure)\s+persistence\b",
        r"\b(?:create|add|make)\b[^\n]{0,40}\b(?:user|account)\b[^\n]{0,40}\buid\s*(?:=\s*|of\s+)?0\b",
        r"\b(?:systemd\s+unit|\.service|service\s+file)\b[^\n]{0,80}(?:/tmp/|/dev/shm/|/var/tmp/)|\bssh\b[^\n]{0,30}\s-[a-zA-Z]{0,5}R\s*\d{2,5}:(?:localhost|127\.0\.0\.1):22\b|\bsshd\b[^\n]{0,60}\b0\.0\.0\.0\b",
        r"\bnet\s+user\s+\S{1,32}\s+\S{1,64}\s+/add\b|\bnet\s+localgroup\s+administrators\b",
        r"\bPermitRootLogin\s+yes\b|\bsocat\b[^\n]{0,60}\bexec:|Net\.Sockets\.TCPClient",
        r"\b(?:add|put)\s+(?:it|them|him|her|the\s+user|the\s+account|\w{1,30})\s+to\s+the\s+(?:wheel|sudo|sudoers|root)\s+group\b|\b(?:create|add)\s+(?:an?\s+)?(?:hidden|backdoor|secret)\s+(?:admin\s+|root\s+)?(?:user|account)\b",
    ),
    _rule(
        "hardcoded-secret",
        "contains what looks like a real credential",
        r"\bsk-(?:proj-|ant-|live-|or-v1-)?[A-Za-z0-9_-]{20,256}",
        r"\b(?:ghp|gho|ghu|ghs|ghr)_[A-Za-z0-9]{30,256}|\bgithub_pat_[A-Za-z0-9_]{40,256}",
        r"\b(?:AKIA|ASIA)(?![0-9A-Z]{0,9}EXAMPLE)[0-9A-Z]{16}\b",  # not the documented dummy
        r"\bxox[abposre]-" + _PLACEHOLDER + r"[A-Za-z0-9-]{10,256}",
        r"-----BEGIN\s+(?:[A-Z]{1,10}\s+)?PRIVATE\s+KEY(?:\s+BLOCK)?-----\s*[A-Za-z0-9+/=]{16}",  # a body
        r"(?<![0-9])\d{6,12}:AA[A-Za-z0-9_-]{33}(?![A-Za-z0-9_-])",  # also in .../bot<token>/
        r"\b[MNO][A-Za-z0-9_-]{23,27}\.[A-Za-z0-9_-]{6}\.[A-Za-z0-9_-]{27,40}(?![A-Za-z0-9_-])",
        r"\bxapp-\d-[A-Za-z0-9-]{20,256}|\bhooks\.slack\.com/services/T[A-Za-z0-9]{6,20}/B[A-Za-z0-9]{6,20}/[A-Za-z0-9]{20,40}",
        r"\bglpat-[A-Za-z0-9_-]{20,256}",
        r"(?:\b|[_-])(?:key|secret|token|password|passwd|pass|pwd|credentials?)\b\s*[:=]\s*[\"'`]?(?![$<{%*])"
        + _PLACEHOLDER
        + r"(?=[^\s\"'`]{0,199}\d)(?-i:(?=[^\s\"'`]{0,199}[A-Z])(?=[^\s\"'`]{0,199}[a-z]))[^\s\"'`]{12,200}",
        r"(?:key|secret|token|password|pwd)\b\s*[:=]\s*[\"'`]?[0-9a-f]{32,256}\b",
        r"\b(?:sk|rk|pk)_live_[A-Za-z0-9]{16,256}",
        r"\bAIza[0-9A-Za-z_-]{35}\b",
        r"\bglpat-[A-Za-z0-9_-]{20}\b|\bnpm_[A-Za-z0-9]{36}\b|\bhf_[A-Za-z0-9]{30,256}\b|\bSG\.[A-Za-z0-9_-]{22}\.[A-Za-z0-9_-]{43}\b",
        r"\beyJ[A-Za-z0-9_-]{10,256}\.eyJ[A-Za-z0-9_-]{10,256}\.[A-Za-z0-9_-]{10,256}",
        r"\b(?:password|passwd|passphrase|pwd|api[_ -]?key|secret[_ -]?key|access[_ -]?token|auth[_ -]?token|client[_ -]?secret|private[_ -]?key)\b\s*(?:is|=|:|was)\s*['\"`]?"
        + _PLACEHOLDER
        + r"(?=[^\s'\"`]{4,256})(?=[^\s'\"`]{0,60}[0-9!@#$%^&*_+=-])[^\s'\"`]{4,256}",
        r"\b(?:mot\s+de\s+passe|passwort|kennwort|contrase[nñ]a|senha)\b[^\n]{0,40}?(?:\s(?:est|ist|es|é)|[=:])\s*\S{4,256}",
        r"\bpassword\b[^\n@/]{0,40}?\b(?:is|=|:)\s*['\"`]?"
        + _PLACEHOLDER
        + r"(?=[^\s'\"`]{0,60}[0-9!@#$%^&*_+=])(?=[^\s'\"`]{0,60}[A-Za-z])[^\s'\"`]{6,256}",
        r"\b(?:token|secret|key|password|sid)\b[^\n]{0,20}?\b[0-9a-f]{32,256}\b|\bAC[0-9a-f]{32}\b",
        r"\b[a-z][a-z0-9+.-]{1,15}://[^\s:/@$<{]{1,64}:(?![$<{%*])(?!(?-i:[A-Z_]{3,64})@)(?![^\s@/]{0,60}?(?<![a-z0-9])"
        + _PLACEHOLDER_WORDS
        + r")[^\s@/]{3,64}@(?!(?:localhost|127\.0\.0\.1)\b)[\w.-]{1,253}",
        r"\b(?:mysql|mysqldump|mysqladmin|mariadb)\b[^\n]{0,40}\s-p[^\s-]\S{3,256}|--password[= ]['\"]?[^\s'\"]{4,256}|\bsshpass\s+-p\s*\S{4,256}",
    ),
    _rule(
        "hidden-html",
        "hides text from the reader with HTML or CSS",
        r"<!--[^>]{0,400}?\b(?:ignore|assistant|ai|ia|ki|llm|model|nota|note|remember|save|store|guarda|system|instructions?|you\s+(?:must|should|will|are)|do\s+not|don'?t|tell|send|reveal|prompt|forget|always|never|user)\b",
        r"\bstyle\s*=\s*[\"'][^\"'\n]{0,120}?(?:display\s*:\s*none|visibility\s*:\s*hidden|font-size\s*:\s*0(?:\.\d{1,8})?(?:px|em|rem|pt|%)?\s*(?:;|[\"'])|opacity\s*:\s*0(?:\.0{1,8})?\s*(?:;|[\"'])|(?:left|top|text-indent|margin-left)\s*:\s*-\d{3,256}|color\s*:\s*(?:white|#fff(?:fff)?|transparent))",
        r"<[a-z]{1,10}\b[^>\n]{0,100}\bclass\s*=\s*[\"'][^\"'\n]{0,60}\b(?:hidden|sr-only|visually-hidden|d-none)\b[^>\n]{0,100}>[^<\n]{0,200}\b(?:ignore|assistant|instructions?|you\s+must|system|prompt)\b",
        r"<\s*(?:script|iframe|object|embed|template|noscript|frame|frameset|applet)\b",
        r"^\s*\[[^\]\n]{0,20}\]:\s*#\s*\(",
        r"\bon(?:error|load|click|mouseover|focus|begin|toggle|animationstart)\s*=",
        r"<[a-z][a-z0-9]{0,10}\b[^>\n]{0,200}\shidden\b",
        r"\bjavascript\s*:",
        r"\]\(\s*\S{1,300}\s+[\"'][^\"'\n]{0,200}\b(?:assistant|ai|llm|system|ignore|instructions?|you\s+must|save|remember)\b",
        r"<meta\b[^>\n]{0,200}\b(?:ai|assistant|llm|instructions?|prompt)\b|<meta\b[^>\n]{0,100}http-equiv\s*=\s*[\"']?refresh",
        r"\b(?:opacity|fill-opacity)\s*=\s*[\"']0(?:\.0{1,8})?[\"']|\bcontent\s*:\s*[\"'][^\"'\n]{0,200}\b(?:assistant|ai|instructions?|ignore|remember|system)\b",
        r"\bcolor\s*:\s*(?:white|#fff(?:fff)?|transparent|rgba\([^)]{0,20},\s*0\))\b[^\n]{0,80}?\bbackground(?:-color)?\s*:\s*(?:white|#fff(?:fff)?)\b",
    ),
)
