r"""English rules by concept: a verb of a kind near an object of a kind, said as an order.

The rows of ``memory.scan.patterns`` grew phrase by phrase, and a new blind corpus showed
they memorise wordings. These alternatives are built from small vocabularies instead, one per
concept (verbs of disclosure, objects that are the model's own instructions, verbs of
passing data on, places data can be sent to, ...), matched within a bounded window:

* **disclosure**: a verb of disclosure near the model's instructions, memory or context;
* **override**: not following, or invalidating, the model's rules; a claim that a note is
  the authority; refusing nothing; skipping confirmation for dangerous actions;
* **exfiltration**: people's data passed on to an address, URL, webhook or other account;
* **held secrets**: the bot's keys or environment shown, or allowed to be shared;
* **logins**: a user name and a random-looking password written side by side.

Orders, not descriptions: verbs are matched in their base form and, where the object alone
is weak, only in the position of an order (``_LEAD``: at the start of a line or clause, or
after "please", "always", "and", "you must" ...), so "he posts about system prompts" or "a
page telling the model to ignore ..." are not read as orders. Same conventions as the main
table: bounded gaps, ``\s+`` read as a short run.
"""

from __future__ import annotations

__all__ = ["CONCEPTS"]

# Where an order starts: a line or clause start, or after a word that introduces one. As
# look-behinds (each one fixed width: readings collapse white space to one character), so
# a match starts at the verb and is only tried where a verb is.
_LEAD_WORDS = (
    *("please", "pls", "kindly", "always", "also", "then", "and", "or", "just", "now", "simply"),
    *("immediately", "automatically", "quietly", "silently", "secretly", "discreetly"),
    *("instead", "must", "should", "shall", "be sure to", "make sure to", "remember to"),
    "feel free to",
    *(
        f"{who} {modal}"
        for who in ("you", "assistant", "bot")
        for modal in ("will", "may", "can", "are to", "need to", "have to")
    ),
)
_CLAUSE = r"[.!?:;,(\[\"'“‘>*•—–-]"


def _lead() -> str:
    """The look-behinds of ``_LEAD``: the words of one length in one look-behind (fewer
    checks at each place a verb is tried)."""
    by_length: dict[int, list[str]] = {}
    for word in _LEAD_WORDS:
        by_length.setdefault(len(word), []).append(word.replace(" ", r"\s"))
    words = [rf"(?<=\b(?:{'|'.join(group)})\s)" for _, group in sorted(by_length.items())]
    return "|".join([r"(?<![^\n])", rf"(?<={_CLAUSE})", rf"(?<={_CLAUSE}\s)", *words])


_LEAD = f"(?:{_lead()})"
# A verb that is negated just before ("do not print it") is no order to do it.
_NOT = r"(?<!\bnot\s)(?<!\bnever\s)(?<!n't\s)(?<!\bno\s)"

# -- disclosure ---------------------------------------------------------------------------
_DISCLOSE = (
    r"reveal|print|show|dump|repeat|output|leak|echo|paste|spell\s+out|translate|summari[sz]e"
    r"|quote|recite|share|disclose|expose|list|give|tell|send|post|include|copy|reproduce"
    r"|display|write\s+out|read\s+out|type\s+out|return|publish|forward|provide|hand\s+over"
    r"|make\s+a\s+(?:table|list|copy|summary)\s+of"
    r"|(?:start|begin|end|prefix|sign)\s+(?:your|each|every|all)\s+(?:next\s+)?(?:reply|replies|response|responses|answer|answers|message|messages)\s+with"
)
_MINE = r"(?:your|the\s+bot'?s|the\s+assistant'?s|the\s+ai'?s|its)\s+(?:own\s+)?"
_PROMPT_OBJECT = (
    r"system\s+(?:prompt|message|instructions?|rules|configuration|config)"
    r"|(?:hidden|secret|internal|confidential|private|underlying|developer|operator)\s+(?:(?:safety|system|core|base|real|true|actual|full|complete|original|initial|operating|moderation|content|tool|setup)\s+)?(?:instructions|prompt|rules|directives|guidelines|configuration|policies|descriptions?)"
    r"|(?:initial|original|pre-?set|core|base|full|complete|entire|whole|exact|raw)\s+(?:system\s+)?prompt"
    r"|(?:developer|operator)\s+(?:message|prompt|instructions|notes)"
    rf"|{_MINE}(?:(?:initial|original|full|complete|entire|exact|hidden|secret|real|core)\s+)?(?:instructions|prompt|rules|configuration|guidelines|directives|programming|setup)"
    r"|memory\s+(?:file|block|entries|store|contents|dump)"
    r"|(?:words|text|lines|content|contents|messages?|everything|all)\s+(?:written\s+)?(?:above|before\s+this|preceding)"
    r"|everything\s+(?:you\s+(?:were|have\s+been|'ve\s+been)\s+(?:told|given|instructed|shown)|in\s+your\s+(?:context|memory|prompt))"
    r"|what(?:'s|\s+is)\s+(?:stored|saved|kept)\s+in\s+(?:your\s+|the\s+)?memory"
    r"|(?:memor(?:y|ies)|entries|notes|everything\s+you\s+(?:know|remember))\s+(?:about|of|on)\s+(?:other|another)\s+(?:users?|people|persons?|members?)"
    r"|other\s+(?:users|people|members)'?s?\s+(?:entries|memories|notes|data|messages)"
    r"|tool\s+(?:definitions|descriptions|schemas?)"
)
_VERBATIM = (
    r"in\s+full|verbatim|word\s+for\s+word|unabridged|character\s+for\s+character|unredacted"
    r"|in\s+its\s+entirety|as\s+written"
)
_RULE_WORD = r"rules|instructions|prompt|guidelines|directives|configuration"

_PROMPT_LEAK = (
    rf"{_LEAD}{_NOT}\b(?:{_DISCLOSE})\b[^\n]{{0,60}}?(?>\b(?:{_PROMPT_OBJECT})\b)",
    rf"(?>\b(?:{_PROMPT_OBJECT})\b)[^\n]{{0,60}}?{_LEAD}{_NOT}\b(?:{_DISCLOSE})\s+(?:them|it|that|this|those|these)\b",
    rf"(?>\b(?:{_PROMPT_OBJECT})\b)[^\n]{{0,40}}?\b(?:is|are|should|must|may|can|shall|will)\s+(?:to\s+)?be\s+(?:included|shown|printed|shared|revealed|disclosed|given|sent|posted|pasted|quoted|repeated|output|listed|published|made\s+public)\b",
    rf"\b(?:{_RULE_WORD})\s+(?:quoted|copied|reproduced|printed|pasted|repeated|written\s+out|shown|output|given)\s+(?:{_VERBATIM})",
    rf"(?>\b(?:{_PROMPT_OBJECT})\b)[^\n]{{0,30}}?\b(?:{_VERBATIM})",
    rf"\b(?:{_RULE_WORD})\b[^\n]{{0,60}}?{_LEAD}\b(?:give|print|paste|show|send|post|provide|output|reproduce|quote)\s+(?:me\s+|us\s+|them\s+)?(?:the\s+)?(?:exact|verbatim|original|full|complete|unabridged|raw|literal|entire)\s+(?:original\s+)?(?:text|wording|words|contents?|version)\b",
    r"\b(?:first|last)\s+\d{1,5}\s+(?:characters|words|lines|tokens|sentences)\s+of\s+(?:your|the)\s+(?:system\s+)?(?:instructions|prompt|rules|context)\b",
    r"\b(?:every|each|all)\s+(?:rule|line|instruction|sentence)s?\s+(?:in|of|from)\s+(?:your|the)\s+(?:system\s+prompt|instructions|prompt|configuration)\b",
    rf"\b(?:reply|respond|answer)\s+(?:to\s+[^\n]{{1,30}}?\s)?with\b[^\n]{{0,40}}?(?>\b(?:{_PROMPT_OBJECT})\b)",
    r"\bstarting\s+(?:with|from)\s+(?:the\s+(?:phrase|words?)\s+)?['\"‘“]you\s+are\b",
    rf"{_LEAD}{_NOT}\b(?:tell|share|give|send|show|reveal|disclose|forward)\b[^\n]{{0,30}}?\b(?:anyone|everyone|anybody|whoever|other\s+(?:users|people|members)|the\s+(?:whole\s+)?group|strangers)\b[^\n]{{0,50}}?\b(?:everything|all|whatever)\s+(?:you\s+(?:remember|know|have\s+stored|have\s+saved)|(?:is\s+)?(?:stored|saved)\s+in\s+memory)\b",
)

# -- override -------------------------------------------------------------------------------
_RULES = (
    r"instructions?|rules|guidelines|directives|restrictions|polic(?:y|ies)|content\s+policy"
    r"|safety\s+rules|guardrails|filters|limits|constraints|programming|system\s+prompt|prompt"
    r"|corrections|guidance|orders"
)
_AUTHORITY = (
    r"your|operator'?s?|developers?'?s?|system'?s?|owner'?s?|creators?'?s?|admin'?s?|safety|content"
    r"|moderation|previous|prior|earlier|original|default|built-in|existing|current|future"
)
_INVALID = (
    r"void|null|outdated|obsolete|deprecated|invalid|revoked|cancell?ed|superseded|overridden"
    r"|a\s+test|fake|a\s+decoy|expired|retired|suspended|lifted|withdrawn"
    r"|no\s+longer\s+(?:valid|apply|applies|in\s+effect|active|binding|relevant)"
)
_NOTE = r"memory|memories|memory\s+entries|notes?|entry|entries|message|section|file|block"
_DANGER = (
    r"shell\s+commands?|tool\s+calls?|delet\w{0,5}\s+(?:\w{1,12}\s+)?files|rm\s+-rf"
    r"|(?:send\w{0,3}|transfer\w{0,3}|wir\w{1,4})\s+(?:\w{1,12}\s+)?(?:money|funds|payments?|crypto)"
    r"|payments?|purchases?|any\s+command|commands?\s+(?:requested|they\s+send)"
)
_SKIP_CHECK = (
    r"\b(?:skip|bypass|disable|omit|turn\s+off|without|no|never\s+ask\s+for|don'?t\s+ask\s+for"
    r"|do\s+not\s+ask\s+for)\s+(?:asking\s+(?:for\s+)?|all\s+|any\s+|the\s+)?"
    r"(?:confirmations?|approvals?|permission|verification|checks)\b"
)
_IGNORE = (
    r"ignore|disregard|forget|override|overrule|bypass|set\s+aside|drop|discard|abandon|disobey"
    r"|defy|(?:do\s+not|don'?t|no\s+longer|never|stop|cease|quit)\s+(?:follow(?:ing)?|obey(?:ing)?"
    r"|apply(?:ing)?|respect(?:ing)?|honou?r(?:ing)?|enforc(?:e|ing)|observ(?:e|ing)"
    r"|adher(?:e|ing)\s+to|listen(?:ing)?\s+to|comply(?:ing)?\s+with)"
)

_OVERRIDE = (
    rf"{_LEAD}\b(?:{_IGNORE})\s+(?:the\s+|any\s+|all\s+(?:the\s+)?|these\s+|those\s+)?(?:{_AUTHORITY})\b[^\n]{{0,25}}?\b(?:{_RULES})\b",
    r"\b(?:ignore|disregard|discard|reject|overrule)\s+(?:any\s+|all\s+)?(?:corrections|instructions|orders|messages|changes|updates)\s+from\s+(?:the\s+)?(?:system|owner|operator|developers?|admins?)\b",
    rf"\b(?:system|your|the\s+(?:operator|developer|assistant|bot)'?s?)\s+(?:prompt|instructions|rules|guidelines|directives|polic(?:y|ies)|programming|configuration)\b[^\n]{{0,25}}?\b(?:is|are|was|were|has\s+been|have\s+been)\s+(?:now\s+|hereby\s+|officially\s+)?(?:{_INVALID})\b",
    rf"\b(?:previous|prior|earlier|old|original|existing|current|default|former)\s+(?:system\s+)?(?:prompt|instructions|rules|guidelines|directives|policies)\s+(?:(?:is|are|was|were|has|have|been|now|hereby|officially|all)\s+){{0,3}}(?:{_INVALID})\b",
    rf"\b(?:follow|obey|trust|heed|listen\s+to|answer\s+to)\s+(?:the\s+)?(?:{_NOTE}|(?:this|these)\s+(?:{_NOTE}))\s+(?:only|alone|exclusively)\b",
    rf"\b(?:only\s+)?(?:this|these|the\s+present)\s+(?:{_NOTE})\s+(?:is|are)\s+(?:now\s+)?(?:the\s+)?(?:only\s+)?(?:authoritative|binding|canonical|supreme|in\s+charge|(?:real|true|actual)\s+(?:rules|instructions|authority))\b",
    rf"\b(?:this|these)\s+(?:{_NOTE}|rules|instructions)\s+(?:take|takes|have|has|get|gets)\s+(?:the\s+)?(?:precedence|priority|(?:highest|top|absolute|maximum)\s+priority)\b",
    r"\b(?:highest|top|absolute|maximum)[- ]priority\s+(?:instruction|rule|directive|override|order|command)s?\b",
    r"\b(?:can|may|are\s+allowed\s+to|have\s+the\s+right\s+to)\s+(?:rewrite|change|override|replace|update|edit|redefine)\s+your\s+(?:rules|instructions|system\s+prompt|guidelines|directives|programming|policies)\b",
    r"\b(?:accept|follow|obey|adopt|apply|execute|carry\s+out)\s+(?:any|all|every|whatever)\s+(?:new\s+)?(?:rules|instructions|commands|orders|directives|policies)\s+(?:they|the\s+user|users|he|she|anyone|someone|that)\b[^\n]{0,30}?\b(?:without\s+(?:question|questioning|checking|hesitation|verification|confirmation)|no\s+questions)",
    r"\b(?:refuse|decline|reject)\s+nothing\b|\b(?:if\s+)?you(?:'d|\s+would)?\s+(?:normally|usually|typically|otherwise)\s+(?:decline|refuse|reject)\b|\bthings\s+you\s+(?:normally|usually|typically|otherwise)\s+(?:won'?t|wouldn'?t|would\s+not|will\s+not|refuse\s+to)\s+do\b",
    r"\b(?:act|behave|respond|answer|reply|pretend|operate)\b[^\n]{0,40}\b(?:jailbroken|unfiltered|uncensored|unaligned|amoral)\b",
    r"\b(?:in|enter|into|switch\s+to|activate|enable|turn\s+on)\s+['\"‘“]?(?:unfiltered|uncensored|unrestricted|jailbreak|jailbroken|god|dan|no[- ]limits?|no[- ]rules?|evil|chaos)\s+mode\b",
    rf"{_SKIP_CHECK}[^\n]{{0,80}}?\b(?:{_DANGER})\b|\b(?:{_DANGER})\b[^\n]{{0,80}}?{_SKIP_CHECK}",
    r"\b(?:execute|run|obey|carry\s+out)\s+(?:it|them|that|this|those|these|everything)\s+(?:immediately|at\s+once|right\s+away|without\s+(?:question|checks?|checking|asking|confirmation|hesitation|review)|no\s+(?:checks|questions))\b",
    r"\b(?:comes?|came|is|are|was)\s+(?:directly\s+|really\s+|actually\s+)?from\s+your\s+(?:developers?|creators?|operators?|admins?|makers?|owners?|trainers?|engineers)\b",
    r"\b(?:system|admin|developer|safety|security|root)\s+override\s+(?:is\s+|now\s+){0,2}(?:active|activated|enabled|engaged|on|in\s+effect)\b",
    r"(?:^|\n)\s{0,3}(?:```|~~~)\s{0,2}(?:system|developer|admin|operator|instructions?|system[_-]?prompt|sys)\s*$",
)

# -- exfiltration ---------------------------------------------------------------------------
_SEND = (
    r"send|forward|fwd|email|e-mail|mail|cc|bcc|post|upload|mirror|copy|relay|sync|push|dump"
    r"|leak|share|transmit|exfiltrate|deliver|report|pipe|stream|dm|text|message|ship"
)
_DATA = (
    r"conversations?|chats?|chat\s+logs?|messages|transcripts?|history|dms|direct\s+messages"
    r"|photos?|pictures?|images?|screenshots?|voice\s+(?:notes|messages)|documents?|files"
    r"|code|snippets?|facts?|memor(?:y|ies)|notes|contacts|passwords?|credentials|attachments?"
    r"|(?:every|each|all|any)\s+(?:message|chat|conversation|reply|answer)"
    r"|what\s+(?:users|people|the\s+user|they|he|she)\s+(?:says?|said|tells?|told|types?|writes?)"
)
_PLACE = (
    r"\b[\w.+-]{1,64}@[\w-]{1,63}\.[a-z]{2,12}\b|\bhttps?://|\bwebhooks?\b|\bpastebin\b"
    r"|\bpaste\s+(?:site|service|bin)\b|\bgist\b|\b\d{1,3}\.\d{1,3}\.\d{1,3}\.\d{1,3}\b"
    r"|\b(?:my|his|her|their|the\s+owner'?s|an?\s+(?:second|other|external|different|backup|separate))"
    r"\s+(?:(?:personal|private|own|second|other|backup|alternate|secondary)\s+)?"
    r"(?:mailbox|inbox|e-?mail|account|address|server|drive|dropbox|phone|number)\b"
    r"|\bthe\s+(?:address|number|handle|url|link|e-?mail)\s+(?:on|in|below|above|at)\b"
    r"|\bthis\s+(?:address|number|handle|url|webhook|e-?mail|account|server)\b"
    r"|\bpublic\s+(?:channel|group|chat|repo|gist|page|forum)\b"
)
_EXFIL = (
    rf"\b(?:{_SEND})\b[^\n]{{0,60}}?(?>\b(?:{_DATA})\b)[^\n]{{0,60}}?(?>{_PLACE})",
    rf"(?>\b(?:{_DATA})\b)[^\n]{{0,60}}?\b(?:{_SEND})\s+(?:it|them|this|that|those|these|everything|a\s+cop(?:y|ies))\b[^\n]{{0,60}}?(?>{_PLACE})",
)

# -- the bot's own secrets --------------------------------------------------------------------
# How people name the bot's own keys and tokens.
_BOT_HELD = (
    r"(?:the\s+bot'?s|your|its|the\s+assistant'?s)\s+(?:own\s+)?(?:[a-z]{1,12}\s+)?(?:keys?|tokens?|credentials|secrets?|passwords?)"
    r"|(?:api|bot|access|auth|discord|telegram|slack|github|openai|anthropic|stripe)[\s_-]{0,2}(?:keys?|tokens?)"
)
_ENV_COMMAND = (
    r"(?:env|printenv|set|export\s+-p|gci\s+env:|get-childitem\s+env:"
    r"|cat\s+[^\s`]{0,40}(?:\.env|secret|credential|token|key)[^\s`]{0,20}"
    r"|[^`\n]{0,20}\|\s*grep\s+(?:-\w{1,4}\s+)?['\"]?(?:key|token|secret|pass))"
)
_HELD = (
    rf"(?>\b(?:{_BOT_HELD})\b)[^\n]{{0,40}}?\b(?:may|can|should|must|is\s+(?:fine|ok(?:ay)?|allowed)\s+to|are\s+(?:fine|ok(?:ay)?|allowed)\s+to)\s+(?:be\s+)?(?:shared|given|sent|posted|revealed|disclosed|shown|printed|handed\s+out|pasted|published)\b[^\n]{{0,30}}?\b(?:anyone|everyone|anybody|whoever|the\s+(?:whole\s+)?group|publicly|in\s+public|all\s+users|other\s+users|people|strangers)\b",
    rf"\b(?:run|execute|call|use)\s+`?{_ENV_COMMAND}`?[^\n]{{0,60}}?\b(?:include|paste|put|add|append|show|print|return|post|send|attach|insert)\s+(?:the\s+|its\s+|all\s+)?(?:result|results|output|it|everything)\b[^\n]{{0,20}}?\b(?:answer|reply|replies|response|message|chat)\b",
)

# -- credentials written as a login -----------------------------------------------------------
# Random-looking: 8+ characters with a digit, an upper- and a lower-case letter.
_RANDOM = (
    r"(?=[^\s'\"`]{0,63}\d)(?-i:(?=[^\s'\"`]{0,63}[A-Z])(?=[^\s'\"`]{0,63}[a-z]))"
    r"[^\s'\"`]{8,64}(?![^\s'\"`])"
)
_LOGIN = (
    rf"\b(?:login|log-in|sign-in|signin|credentials?|creds)\b[^\n]{{0,40}}?(?<![^\s(:])[\w.@+-]{{2,64}}\s?/\s?{_RANDOM}",
    rf"\b(?:pw|pwd|pass|passwd|password|passcode|passphrase|pin)\s+(?:is\s+|was\s+)?{_RANDOM}",
)

#: Extra alternatives by the id of the row they belong to.
CONCEPTS: dict[str, tuple[str, ...]] = {
    "prompt-leak": _PROMPT_LEAK,
    "ignore-instructions": _OVERRIDE,
    "message-exfil": _EXFIL,
    "secret-disclosure": _HELD,
    "hardcoded-secret": _LOGIN,
}
