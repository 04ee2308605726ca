"""Injection and invisible-Unicode scanner for text that will reach a system prompt.

Memory entries (and later skills and SOUL.md) are replayed into every future system prompt,
so anything stored there is a persistent prompt. ``scan(text)`` returns the findings that
make a text unsafe to store:

* an **invisible or bidi control character** (zero-width, word joiner, BOM, embedding and
  isolate controls), reported with its code point, checked on the raw text;
* a **pattern** from ``PATTERNS`` (prompt injection, concealment, exfiltration, backdoors,
  hard-coded secrets, hidden HTML), checked on the NFKC-normalised text so fullwidth and
  mathematical look-alike letters cannot dodge it.

Every pattern is bounded: gaps are ``[^\\n]{0,N}`` and no quantified group contains another
unbounded quantifier, so matching is linear in the text (``tests/memory/test_scan.py``
walks the parsed regexes to enforce it). Add a row to ``PATTERNS`` to grow the scanner;
the corpora in ``tests/memory/corpus/`` measure recall and false positives.
"""

from __future__ import annotations

import base64
import re
import unicodedata
from dataclasses import dataclass

__all__ = ["INVISIBLE_CHARS", "PATTERNS", "Finding", "Pattern", "normalise", "scan"]

#: Zero-width, joiner, invisible operator, BOM, bidi embedding/override and isolate controls,
#: plus the Unicode tag block U+E0000–U+E007F.
INVISIBLE_CHARS: frozenset[str] = frozenset(
    [chr(c) for c in range(0x200B, 0x200E)]
    + ["\u2060"]
    + [chr(c) for c in range(0x2062, 0x2065)]
    + ["\ufeff"]
    + [chr(c) for c in range(0x202A, 0x202F)]
    + [chr(c) for c in range(0x2066, 0x206A)]
    # Unicode tag characters ("ASCII smuggling"): invisible, and decoded by some models.
    + [chr(c) for c in range(0xE0000, 0xE0080)]
)


@dataclass(frozen=True, slots=True)
class Pattern:
    id: str
    description: str
    regex: re.Pattern[str]


@dataclass(frozen=True, slots=True)
class Finding:
    id: str
    detail: str


def _p(pid: str, description: str, *alternatives: str) -> Pattern:
    source = "|".join(f"(?:{alt})" for alt in alternatives)
    return Pattern(pid, description, re.compile(source, re.IGNORECASE | re.MULTILINE))


# Shared vocabulary (plain alternations: no quantifiers, so safe to splice anywhere).
_IGNORE = r"ignore|disregard|forget|set\s+aside|put\s+aside|pay\s+no\s+attention\s+to|stop\s+following|stop\s+obeying|throw\s+out|override|overrule|bypass|skip|abandon|discard|drop|neglect|nullify|erase|wipe|cancel"
_PRIOR = r"previous|prior|above|earlier|preceding|former|original|existing|initial|old|all|any|your|the|these|those|every|my|system|safety|developer"
_RULES = r"instructions?|directions|criteria|rules|guidelines|directives|prompts?|commands|orders|constraints|guardrails|policies|programming|restrictions|guidance|context"
_SECRET_VAR = r"\$\{?[A-Za-z_]{0,40}(?:KEY|TOKEN|SECRET|PASS(?:WORD)?|PWD|CRED(?:ENTIAL)?S?|AUTH)[A-Za-z_]{0,20}\}?"  # noqa: S105
_NET_TOOL = r"curl|wget|nc|ncat|netcat|socat|telnet|scp|rsync|sftp|ftp|dig|nslookup|Invoke-WebRequest|Invoke-RestMethod|iwr|irm|fetch|requests\.(?:get|post|put)|urllib|httpx"
_SECRET_FILE = r"\.env\b|id_rsa|id_ed25519|id_ecdsa|id_dsa|\.netrc|\.aws/credentials|aws/credentials|/etc/shadow|/etc/passwd|credentials\.json|\.git-credentials|\.kube/config|kubeconfig|\.pgpass|\.npmrc|\.pypirc|\.docker/config\.json|\.ssh/|keychain|wallet\.dat|serviceaccount/token|secrets\.ya?ml|Login Data|\.bash_history|\.zsh_history|/etc/sudoers|\.gnupg|\.password-store|saved passwords|stored passwords|/proc/(?:self|\d{1,7})/environ|~/\.aws\b|~/\.kube\b|~/\.gnupg\b|\.config/gh/hosts\.yml|hosts\.yml|password\s+export|vault\.csv|passwords?\.csv|\.kdbx\b|keepass|\.aws[\\/]credentials|\.ssh[\\/]id_"  # noqa: S105
_READ_VERB = r"quote|collect|harvest|gather|grab|export|save|remember|guarde|abra|abre|apri|leggi|lees|lis|lee|open|find|extract|attach|memori[sz]e|store|retrieve|fetch|decode|cat|read|print|show|open|type|send|upload|dump|exfiltrate|copy|output|display|less|more|head|tail|reveal|include|paste|leak|grep|base64|echo|list|give|get|post|email|share|lis|lire|affiche|envoie|lee|muestra|zeige|lies|sende"
_SEND = r"send|forward|post|upload|transmit|exfiltrate|leak|copy|append|submit|report|share|sync|mirror|email|e-mail|mail|relay|pipe|beacon|log|push|envoie|transmets|envia|env[ií]a|sende|schicke"
_PRIVATE = r"conversations?|chats?|chat history|chat logs?|messages|transcripts?|history|api[ _-]?keys?|keys|tokens?|secrets?|passwords?|credentials|memory|memories|system prompt|context|session|user data|personal data|files|env(?:ironment)? variables|cookies|questions?|requests|prompts|files?|notes|meeting\s+notes|documents?|code|screenshots?|clipboard|contacts|e-?mails?|calendar|summar(?:y|ies)|one-time\s+(?:pass)?codes?|otps?|historial|m[eé]moire|memoria|conversaci[oó]n|conversa|cronologia|inputs|replies|answers|tool results?|outputs?|conversation|historique|mensajes|verlauf|nachrichten"

PATTERNS: tuple[Pattern, ...] = (
    _p(
        "addressed-to-agent",
        "text written to the AI that reads it, not a note about the user",
        r"\b(?:note|message|instructions?|tip|reminder|request|notice|memo|warning)\s+(?:to|for)\s+(?:the\s+|any\s+|all\s+)?(?:ai|a\.i\.|assistants?|llms?|language\s+models?|ai\s+agents?|bots?|chatbots?|copilots?|ai\s+(?:reviewers?|systems?|tools?|assistants?))\b",
        r"(?:^|[(\[\"'])\s*(?:ai|a\.i\.|assistant|llm|ai\s+agent|chatbot|gpt|claude|ia|ki)\s*:\s",
        r"\bp\.?\s?s\.?,?\s+(?:for\s+the\s+|to\s+the\s+)?(?:ai|assistant|bot|agent|llm)\b",
        r"\b(?:dear|hey|hi|hello|attention|attn)\s*,?\s+(?:ai|assistant|llm|agent|chatbot|bot|language\s+model)s?\b",
        r"\b(?:ai|llm)\s+(?:agents?|assistants?|models?|systems?|tools?|reviewers?)\s+(?:processing|reading|that\s+reads?|parsing|summari[sz]ing|crawling|indexing|reviewing)\b",
        r"\b(?:nota|note|mensaje|messaggio|hinweis|notitie|uwaga)\s+(?:para|pour|per|f[uü]r|voor|dla)\s+(?:la\s+|l'|il\s+|die\s+|de\s+)?(?:ia|ki|ai|assistente?|asistente|assistant|assistent|asystenta)\b",
    ),
    _p(
        "ignore-instructions",
        "tells the model to ignore or replace its instructions",
        rf"\b(?:{_IGNORE})\b[^\n]{{0,30}}?\b(?:{_PRIOR})\b[^\n]{{0,30}}?\b(?:{_RULES})\b",
        rf"\b(?:{_IGNORE})\s+(?:{_RULES})\b",
        r"\b(?:new|updated|revised|real|actual|true|following)\s+(?:system\s+)?instructions?\s*:",
        r"\b(?:your|the|all)\s+(?:previous|prior|original|old|earlier)\s+(?:instructions|rules|guidelines|directives|prompts?)\s+(?:are|is|were|have\s+been)\s+(?:now\s+)?(?:void|cancel+ed|null|revoked|obsolete|invalid|deprecated|superseded|replaced|overridden|suspended|lifted|no\s+longer)",
        r"\bfrom\s+now\s+on,?\s+(?:you|the\s+assistant|assistant)\s+(?:must|will|shall|should|are\s+to)\s+(?:ignore|obey|only|always\s+obey|follow\s+(?:only|my|these)|never\s+refuse|comply|answer\s+without)",
        r"\b(?:previous|prior|earlier|above|old|original|former|preceding)\s+(?:instructions|guidelines|rules|directives|prompts?|policies)\b[^\n]{0,40}?\b(?:obsolete|void|cancel+ed|null|revoked|invalid|overridden|no\s+longer\s+(?:apply|valid|in\s+effect|matter))",
        r"\b(?:instructions|guidelines|rules|directives)\s+(?:above|before\s+this)\s+(?:no\s+longer\s+apply|are\s+(?:void|obsolete|cancel+ed|null))",
        r"\b(?:overrid(?:e|ing)|supersed(?:e|ing)|replac(?:e|ing)|revok(?:e|ing))\s+(?:all\s+)?(?:the\s+)?(?:previous|prior|earlier|above|original|old|existing)\s+(?:instructions|rules|guidelines|directives|system\s+prompt)",
        r"\bforget\s+(?:everything|all|anything)\s+(?:you\s+(?:were|have\s+been)\s+(?:told|taught|instructed|given)|above|before|so\s+far)",
        r"\bwhatever\s+you\s+(?:were|have\s+been)\s+(?:told|instructed|programmed|taught)\b",
        r"\bnew\s+instructions\s+(?:are|is)\s+to\b",
        r"\b(?:obey|comply\s+with)\s+(?:any|every|all)\s+(?:messages?|commands?|requests?|instructions?|orders?)\b",
        r"\b(?:execute|run|follow|obey)s?\s+(?:any|every|all)?\s*(?:the\s+)?(?:shell\s+)?(?:commands?|instructions?)\s+(?:found|embedded|contained|hidden|written)\s+in\b",
        r"\b(?:your|the\s+assistant'?s|operator'?s?|developers?'?)\b[^\n]{0,40}\b(?:rules|instructions|guidelines|directions|directives|policies|programming)\b[^\n]{0,40}\b(?:no\s+longer\s+apply|are\s+(?:now\s+)?(?:void|obsolete|cancel+ed|suspended|lifted)|do\s+not\s+apply)",
        r"\b(?:rules|instructions|guidelines|directions|directives|policies)\s+(?:that\s+)?(?:your|the)\s+(?:operator|developers?|creators?|owner|admin|system)\s+(?:gave|set|wrote|provided|defined)\b[^\n]{0,30}\b(?:no\s+longer|void|obsolete|cancel|suspended|lifted|do\s+not\s+apply)",
        r"\b(?:your\s+(?:[a-z]{1,15}\s+)?instructions|instructions\s+(?:you\s+(?:were|have\s+been)\s+given|you\s+received|received\s+(?:before|earlier|so\s+far)|given\s+(?:to\s+you|earlier|before)))\b[^\n]{0,40}\b(?:void|null|invalid|obsolete|outdated|no\s+longer\s+(?:apply|valid)|cancel+ed|revoked)",
        rf"\bstop\s+following\s+(?:your|the|all|any|its)\b[^\n]{{0,20}}\b(?:{_RULES})\b",
        r"\bsupersedes?\s+(?:anything|everything|all)\s+(?:that\s+)?(?:your|the)\s+(?:developers?|operators?|creators?|system|instructions|owner)",
        rf"\b(?:{_IGNORE})\b[^\n]{{0,40}}\byou\s+(?:were|have\s+been)\s+(?:given|told|instructed|assigned|programmed)\b",
        r"\b(?:decode|decrypt|deobfuscate|unscramble|reverse|translate|apply\s+rot-?13|read\s+(?:it\s+|this\s+)?backwards|concatenate|join\s+the\s+(?:parts|pieces|strings))\b[^\n]{0,60}\b(?:and\s+|then\s+)(?:follow|obey|execute|run|do|act\s+on|carry\s+out)\b",
        r"\b(?:ignora(?:re)?|ignorez|ignorer|ignoriere|desconsidere|desconsidera|olvida|esque[cç]a|oublie[rz]?|vergiss|dimentica|negeer|vergeet|zignoruj)\b[^\n]{0,20}?\b(?:istruzioni|instru[cç][oõ]es|instrucciones|instructions|anweisungen|consignes|regole|regras|reglas|r[eè]gles|regeln|indicazioni|instructies|instrukcje|polecenia)\b",
        r"\b(?:ignore[rz]?|oublie[rz]?)\s+(?:toutes\s+)?(?:les\s+)?(?:instructions|consignes|r[eè]gles)\s+(?:pr[eé]c[eé]dentes|ant[eé]rieures)",
        r"\b(?:ignoriere|vergiss|missachte)\s+(?:alle\s+)?(?:vorherigen|bisherigen|vorigen|obigen)\s+(?:anweisungen|instruktionen|regeln|befehle)",
        r"\b(?:ignora|olvida|olvid[ae])\s+(?:todas\s+)?(?:las\s+)?(?:instrucciones|reglas|indicaciones)\s+(?:anteriores|previas)",
    ),
    _p(
        "system-override",
        "fakes a system, developer or chat-template marker",
        r"<\|(?:im_start|im_end|system|endoftext|start_header_id|end_header_id|eot_id)\|?>",
        r"<<\s*/?SYS\s*>>|\[/?INST\]|\[/?SYSTEM(?:\s+(?:OVERRIDE|PROMPT|MESSAGE|NOTE))?\]",
        r"</?\s*(?:system|developer|sys|instructions?)\s*>",
        r"^[ \t>#*-]{0,8}(?:system|syst[eè]me|systemnachricht|systemmeldung|systeemmelding|systeembericht|messaggio\s+di\s+sistema|mensaje\s+del\s+sistema|aviso\s+do\s+sistema|mensagem\s+do\s+sistema|komunikat\s+systemowy|sistema|developer|sysadmin\s+override)\s*(?:message|prompt|note|override)?\s*:",
        r"^#{1,6}\s*(?:new\s+)?(?:system|instructions?)\s*(?:\((?:system|developer)\))?\s*:?\s*$",
        r"[\"']role[\"']\s*:\s*[\"'](?:system|developer)[\"']",
        r"\b(?:admin|administrator|developer)\s+mode\s*[:=]\s*(?:on|enabled|activated|true)\b",
        r"\bmode\s+(?:administrateur|d[eé]veloppeur|admin)\b[^\n]{0,20}\bactiv|\b(?:entwickler|administrator|admin)modus\b[^\n]{0,12}\baktiv|\bmodo\s+(?:administrador|desarrollador)\b[^\n]{0,12}\bactiv",
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
    ),
    _p(
        "role-hijack",
        "tries to give the model a new, unrestricted identity",
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
        r"(?<!never\s)(?<!not\s)(?<!n't\s)\bask\s+(?:the\s+user|them|him|her|the\s+customer)\s+(?:for|to\s+(?:share|send|enter|provide|confirm|type|read\s+out))\s+(?:their|the|his|her|your)\s+(?:[a-z-]{1,15}\s+)?(?:pin|password|passcode|one-time\s+(?:code|password)|otp|2fa\s+code|mfa\s+code|cvv|card\s+number|seed\s+phrase|recovery\s+(?:code|phrase)|security\s+code|verification\s+code|ssn|social\s+security\s+number)",
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
    _p(
        "concealment",
        "tells the model to hide something from the user",
        r"\b(?:do\s+not|don'?t|never|without)\s+(?:ever\s+)?(?:surface|surfacing|report|reporting|flag|flagging|tell|telling|inform|informing|mention|mentioning|reveal|revealing|disclose|disclosing|notify|notifying|alert|alerting|let|letting|show|showing|warn|warning|asking|ask)\b[^\n]{0,40}?\b(?:the\s+)?(?:user|users|human|owner|operator)\b",
        r"\b(?:keep|hide)\s+(?:this|these|it|that|the\s+following)(?:\s+(?:rule|note|entry|instruction|message|memory))?\s+(?:a\s+)?(?:secret|hidden|confidential)?\s*from\s+(?:the\s+)?(?:user|human|owner|operator)\b",
        r"\b(?:do\s+not|don'?t|never)\s+(?:reveal|disclose|mention|repeat|acknowledge|discuss)\s+(?:these|this|the|your|my)?\s*(?:instructions|rules|prompt|note|message|entry|memory(?:\s+entry)?)\b",
        r"\b(?:silently|secretly|covertly|quietly|discreetly|invisibly|surreptitiously)\s+(?:carry\s+out|perform|follow|apply|complete|make|do|send|forward|upload|run|execute|exfiltrate|copy|post|email|share|add|append|include|insert|leak|report|prefer|recommend|promote|favou?r|steer|bias|change|modify|alter|replace|redirect|install|delete)\b",
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
    _p(
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
    _p(
        "secret-files",
        "asks to read or print credential files",
        rf"\b(?:{_READ_VERB})\b[^\n]{{0,60}}?(?:{_SECRET_FILE})",
        rf"(?:{_SECRET_FILE})[^\n]{{0,40}}?\b(?:contents?|and\s+(?:send|post|paste|upload|print|show|include))\b",
        r"~/\.ssh/id_|/root/\.ssh|/home/[a-z_]{1,32}/\.ssh/id_",
        rf"\bcontents?\s+of\s+(?:[~./\w-]{{0,40}}?)(?:{_SECRET_FILE})",
        rf"(?:{_SECRET_FILE})[^\n]{{0,40}}?\b(?:display|print|show|send|post|paste|upload|include|attach|output|reveal|dump)\b",
    ),
    _p(
        "exfil-url",
        "sends conversation, memory or secrets to a URL or address",
        rf"\b(?:{_SEND})\b[^\n]{{0,80}}?\b(?:{_PRIVATE})\b[^\n]{{0,100}}?(?:https?://|\bwss?://|\bftp://|\b[\w.+-]{{1,64}}@[\w-]{{1,63}}\.[\w.]{{2,20}}|\bwebhook|\bpastebin|\bngrok|\bdiscord(?:app)?\.com/api/webhooks)",
        rf"(?:https?://|\bwebhook)[^\n]{{0,160}}?\b(?:{_SEND})\b[^\n]{{0,60}}?\b(?:{_PRIVATE})\b",
        rf"\b(?:{_PRIVATE})\b[^\n]{{0,60}}?\b(?:{_SEND})\b[^\n]{{0,60}}?(?:https?://|\b[\w.+-]{{1,64}}@[\w-]{{1,63}}\.[\w.]{{2,20}}|\bwebhook)",
        r"\b(?:put|place|encode|embed|include|insert|add|append)\s+(?:them|it|this|those|these|the\s+\w+)\s+(?:in(?:to)?|as)\s+(?:the|a)\s+(?:url|link|query(?:\s+string)?|parameter|path)\b",
        r"https?://[^\s)]{0,200}[?&][\w.-]{1,30}=\[?(?-i:[A-Z][A-Z0-9_]{2,})",
        r"https?://[^\s)]{0,200}[?&][\w.-]{1,30}=\s*(?:\$\{?[A-Za-z_]{2,}|<[\w\s-]{1,30}>|\{\{?[\w.-]{1,30}\}?\})|https?://<[\w\s-]{1,30}>",
        r"https?://\S{0,200}[=/]\)?\s+(?:followed\s+by|plus|\+|with)\s+(?:the|it|them|their|a|an)\b",
        r"\b(?:encoded|embedded|included|appended|url-encoded|base64)\b[^\n]{0,30}\b(?:in|into|to)\s+the\s+(?:url|link|query|image\s+url)\b|\b(?:codificad[oa]s?|encod[eé]e?s?|cod[eé]e?s?)\s+(?:en|in|na|no|dans)\s+(?:la\s+|l'|a\s+|o\s+)?(?:url|link)",
        r"\b(?:value|contents?)\s+of\s+(?:the\s+)?\$?\{?(?-i:[A-Z][A-Z0-9_]{0,40}(?:TOKEN|KEY|SECRET|PASSWORD|PASS|PWD|CREDENTIALS?))\b[^\n]{0,80}?https?://|https?://[^\n]{0,120}?\b(?:value|contents?)\s+of\s+(?:the\s+)?\$?\{?(?-i:[A-Z][A-Z0-9_]{0,40}(?:TOKEN|KEY|SECRET|PASSWORD|PASS|PWD|CREDENTIALS?))",
        r"!\[[^\]\n]{0,100}\]\(\s*https?://[^)\s]{0,200}[?&][\w.-]{1,30}=\s*\)",
        r"!\[[^\]\n]{0,100}\]\(\s*https?://[^)\s]{0,200}[?&][^)\s]{0,200}(?:\{|\$|%7B|<)",
        r"https?://[^\s)]{0,200}[?&=/](?:\{\{?|%7B)\s*(?:conversation|chat|history|messages?|memory|secrets?|tokens?|keys?|api_?key|password|user|data|context|query|prompt)",
        r"\b(?:render|include|embed|load|display)\s+(?:an?\s+|this\s+)?(?:image|img|pixel|link)\b[^\n]{0,80}?(?:conversation|history|messages|secrets?|tokens?|keys?)",
    ),
    _p(
        "ssh-backdoor",
        "plants persistent access (authorized_keys, reverse shells, sudo users, cron)",
        r"(?:>>?|\becho\b|\badd\b|\bappend\b|\bwrite\b|\bcopy\b|\binsert\b|\btee\b|\bput\b|\bplace\b|\bajoute)[^\n]{0,120}?authorized_keys",
        r"authorized_keys[^\n]{0,40}?(?:>>|\btee\b|\bappend)",
        r"\bssh-(?:rsa|ed25519|dss|ecdsa)\s+AAAA[0-9A-Za-z+/]{20}",
        r"/dev/(?:tcp|udp)/",
        r"\bbash\s+-i\b|\bsh\s+-i\s*[>&|]|\b(?:nc|ncat|netcat)\b[^\n]{0,40}\s-[a-z]{0,3}e\s|\bmkfifo\b[^\n]{0,60}\b(?:nc|sh|bash)\b",
        r"\b(?:useradd|adduser)\b[^\n]{0,80}\b(?:sudo|wheel|root|-o\s+-u\s*0)\b|\busermod\b[^\n]{0,20}-a?G\s*(?:sudo|wheel|root)\b|\bNOPASSWD\s*:\s*ALL\b",
        r"\bcrontab\b[^\n]{0,120}?\b(?:curl|wget|nc|bash|sh|python|perl)\b|\*\s+\*\s+\*\s+\*\s+\*[^\n]{0,120}?\b(?:curl|wget|nc|bash\s+-i)\b",
        r"\b(?:curl|wget)\b[^\n|]{0,40}https?://[^\n|]{0,160}\|\s*(?:sudo\s+)?(?:ba|z)?sh\b",
        r"\bpython[23]?\s+-c\s+['\"][^\n]{0,80}\bsocket\b",
        r"(?:>>|\badd\b|\bappend\b|\bwrite\b|\binsert\b)[^\n]{0,80}(?:/etc/crontab|/etc/cron\.d/|/etc/rc\.local|/etc/sudoers|\.config/autostart|/etc/systemd/system/)|\b(?:set\s+up|establish|gain|achieve|ensure)\s+persistence\b",
        r"\b(?:create|add|make)\b[^\n]{0,40}\b(?:user|account)\b[^\n]{0,40}\buid\s*(?:=\s*|of\s+)?0\b",
        r"\b(?:systemd\s+unit|\.service|service\s+file)\b[^\n]{0,80}(?:/tmp/|/dev/shm/|/var/tmp/)|\bssh\b[^\n]{0,30}\s-[a-zA-Z]{0,5}R\s*\d{2,5}:(?:localhost|127\.0\.0\.1):22\b|\bsshd\b[^\n]{0,60}\b0\.0\.0\.0\b",
        r"\bnet\s+user\s+\S{1,32}\s+\S{1,64}\s+/add\b|\bnet\s+localgroup\s+administrators\b",
        r"\bPermitRootLogin\s+yes\b|\bsocat\b[^\n]{0,60}\bexec:|Net\.Sockets\.TCPClient",
        r"\b(?:add|put)\s+(?:it|them|him|her|the\s+user|the\s+account|\w+)\s+to\s+the\s+(?:wheel|sudo|sudoers|root)\s+group\b|\b(?:create|add)\s+(?:an?\s+)?(?:hidden|backdoor|secret)\s+(?:admin\s+|root\s+)?(?:user|account)\b",
    ),
    _p(
        "hardcoded-secret",
        "contains what looks like a real credential",
        r"\bsk-(?:proj-|ant-|live-|or-v1-)?[A-Za-z0-9_-]{20,}",
        r"\b(?:ghp|gho|ghu|ghs|ghr)_[A-Za-z0-9]{30,}|\bgithub_pat_[A-Za-z0-9_]{40,}",
        r"\b(?:AKIA|ASIA)[0-9A-Z]{16}\b",
        r"\bxox[abposre]-[A-Za-z0-9-]{10,}",
        r"-----BEGIN\s+(?:[A-Z]{1,10}\s+)?PRIVATE\s+KEY(?:\s+BLOCK)?-----",
        r"\b\d{8,10}:AA[A-Za-z0-9_-]{33}\b",
        r"\b(?:sk|rk|pk)_live_[A-Za-z0-9]{16,}",
        r"\bAIza[0-9A-Za-z_-]{35}\b",
        r"\bglpat-[A-Za-z0-9_-]{20}\b|\bnpm_[A-Za-z0-9]{36}\b|\bhf_[A-Za-z0-9]{30,}\b|\bSG\.[A-Za-z0-9_-]{22}\.[A-Za-z0-9_-]{43}\b",
        r"\beyJ[A-Za-z0-9_-]{10,}\.eyJ[A-Za-z0-9_-]{10,}\.[A-Za-z0-9_-]{10,}",
        r"\b(?:password|passwd|passphrase|pwd|api[_ -]?key|secret[_ -]?key|access[_ -]?token|auth[_ -]?token|client[_ -]?secret|private[_ -]?key)\b\s*(?:is|=|:|was)\s*['\"`]?(?=[^\s'\"`]{4,})(?=[^\s'\"`]{0,60}[0-9!@#$%^&*_+=-])[^\s'\"`]{4,}",
        r"\b(?:mot\s+de\s+passe|passwort|kennwort|contrase[nñ]a|senha)\b[^\n]{0,40}?(?:\s(?:est|ist|es|é)|[=:])\s*\S{4,}",
        r"\bpassword\b[^\n]{0,40}?\b(?:is|=|:)\s*['\"`]?(?=[^\s'\"`]{0,60}[0-9!@#$%^&*_+=])(?=[^\s'\"`]{0,60}[A-Za-z])[^\s'\"`]{6,}",
        r"\b(?:token|secret|key|password|sid)\b[^\n]{0,20}?\b[0-9a-f]{32,}\b|\bAC[0-9a-f]{32}\b",
        r"\b[a-z][a-z0-9+.-]{1,15}://[^\s:/@]{1,64}:[^\s@/]{3,64}@[\w.-]{1,253}",
        r"\b(?:mysql|mysqldump|mysqladmin|mariadb)\b[^\n]{0,40}\s-p[^\s-]\S{3,}|--password[= ]['\"]?[^\s'\"]{4,}|\bsshpass\s+-p\s*\S{4,}",
    ),
    _p(
        "hidden-html",
        "hides text from the reader with HTML or CSS",
        r"<!--[^>]{0,400}?\b(?:ignore|assistant|ai|ia|ki|llm|model|nota|note|remember|save|store|guarda|system|instructions?|you\s+(?:must|should|will|are)|do\s+not|don'?t|tell|send|reveal|prompt|forget|always|never|user)\b",
        r"\bstyle\s*=\s*[\"'][^\"'\n]{0,120}?(?:display\s*:\s*none|visibility\s*:\s*hidden|font-size\s*:\s*0(?:\.\d+)?(?:px|em|rem|pt|%)?\s*(?:;|[\"'])|opacity\s*:\s*0(?:\.0+)?\s*(?:;|[\"'])|(?:left|top|text-indent|margin-left)\s*:\s*-\d{3,}|color\s*:\s*(?:white|#fff(?:fff)?|transparent))",
        r"<[a-z]{1,10}\b[^>\n]{0,100}\bclass\s*=\s*[\"'][^\"'\n]{0,60}\b(?:hidden|sr-only|visually-hidden|d-none)\b[^>\n]{0,100}>[^<\n]{0,200}\b(?:ignore|assistant|instructions?|you\s+must|system|prompt)\b",
        r"<\s*(?:script|iframe|object|embed|template|noscript|frame|frameset|applet)\b",
        r"^\s*\[[^\]\n]{0,20}\]:\s*#\s*\(",
        r"\bon(?:error|load|click|mouseover|focus|begin|toggle|animationstart)\s*=",
        r"<[a-z][a-z0-9]{0,10}\b[^>\n]{0,200}\shidden\b",
        r"\bjavascript\s*:",
        r"\]\(\s*\S{1,300}\s+[\"'][^\"'\n]{0,200}\b(?:assistant|ai|llm|system|ignore|instructions?|you\s+must|save|remember)\b",
        r"<meta\b[^>\n]{0,200}\b(?:ai|assistant|llm|instructions?|prompt)\b|<meta\b[^>\n]{0,100}http-equiv\s*=\s*[\"']?refresh",
        r"\b(?:opacity|fill-opacity)\s*=\s*[\"']0(?:\.0+)?[\"']|\bcontent\s*:\s*[\"'][^\"'\n]{0,200}\b(?:assistant|ai|instructions?|ignore|remember|system)\b",
        r"\bcolor\s*:\s*(?:white|#fff(?:fff)?|transparent|rgba\([^)]{0,20},\s*0\))\b[^\n]{0,80}?\bbackground(?:-color)?\s*:\s*(?:white|#fff(?:fff)?)\b",
    ),
)

_SPACES = re.compile(r"[^\S\n]+")


def normalise(text: str) -> str:
    """NFKC-fold look-alike letters and collapse runs of horizontal white space."""
    return _SPACES.sub(" ", unicodedata.normalize("NFKC", text))


def _flatten(text: str) -> str:
    """All white space (line breaks too) as single spaces, for phrases split over lines."""
    return " ".join(text.split())


# Latin look-alikes that NFKC leaves alone (Cyrillic and Greek homoglyphs).
_CONFUSABLES = str.maketrans(
    "аеорсухіјѕԁɡӏАЕОРСУХІЈЅВНКМТαονρτκιΑΒΕΖΗΙΚΜΝΟΡΤΥΧ",
    "aeopcyxijsdglAEOPCYXIJSBHKMTaovptkiABEZHIKMNOPTYX",
)
_LEET = str.maketrans("013457@$", "oieastas")
_LEET_WORD = re.compile(r"\b(?=[\w@$]*[A-Za-z])(?=[\w@$]*[0-9@$])[\w@$]{3,}\b")
_SPACED = re.compile(r"(?<![^\W_])[^\W_]([ .·_*-])[^\W_](?:\1[^\W_]){1,}(?![^\W_])")
_HYPHEN_BREAK = re.compile(r"(\w)-[ \t]*\n[ \t]*(\w)")
_INNER_HYPHEN = re.compile(r"(?<=[^\W\d_])-(?=[^\W\d_])")
_BASE64 = re.compile(r"[A-Za-z0-9+/]{24,}={0,2}")
_ROT13 = str.maketrans(
    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz",
    "NOPQRSTUVWXYZABCDEFGHIJKLMnopqrstuvwxyzabcdefghijklm",
)


def _variants(text: str) -> list[str]:
    """The texts to match: the folded text, then de-obfuscated readings of it."""
    folded = normalise(text)
    readings = [folded, _flatten(folded)]
    joined = _SPACED.sub(
        lambda m: m.group().replace(m.group(1), ""), unicodedata.normalize("NFKC", text)
    )
    joined = _HYPHEN_BREAK.sub(r"\1\2", joined)
    deobfuscated = _LEET_WORD.sub(
        lambda m: m.group().translate(_LEET), joined.translate(_CONFUSABLES)
    )
    readings.append(_flatten(deobfuscated))
    readings.append(_flatten(_INNER_HYPHEN.sub("", deobfuscated)))
    readings.append(readings[1][::-1])  # "read backwards and comply"
    for blob in _BASE64.findall(folded):
        try:
            decoded = base64.b64decode(blob + "=" * (-len(blob) % 4)).decode("utf-8")
        except (ValueError, UnicodeDecodeError):
            continue
        if decoded.isprintable():
            readings.append(decoded)
    if "rot" in folded.lower():
        readings.append(_flatten(folded).translate(_ROT13))
    return list(dict.fromkeys(readings))


def scan(text: str) -> list[Finding]:
    """Return every finding for ``text`` (empty list = safe to store).

    Invisible characters come first, one finding per distinct code point; then one finding
    per pattern id that matches.
    """
    findings: list[Finding] = []
    seen: set[str] = set()
    for index, char in enumerate(text):
        if char in INVISIBLE_CHARS and char not in seen:
            seen.add(char)
            name = unicodedata.name(char, "UNNAMED")
            findings.append(
                Finding("invisible-unicode", f"U+{ord(char):04X} {name} at position {index}")
            )
    readings = _variants(text)
    for pattern in PATTERNS:
        match = next((m for r in readings if (m := pattern.regex.search(r))), None)
        if match is not None:
            snippet = match.group(0)
            if len(snippet) > 60:
                snippet = snippet[:57] + "..."
            findings.append(Finding(pattern.id, f"{pattern.description}: {snippet!r}"))
    return findings
