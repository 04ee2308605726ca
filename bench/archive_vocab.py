"""The archive benchmark's vocabulary: the word lists generated chat is made of (frequent
chat words, the topic words of the planted facts, syllables for made-up words, a small
kanji/katakana set with Japanese and Chinese particles, file extensions, tool names) and
``Vocabulary``, which ranks them on a Zipf law and writes English sentences, CJK sentences
without spaces, and long tool outputs (log lines, search results, grep hits) from them.
"""

from __future__ import annotations

import itertools
import random
from dataclasses import dataclass
from datetime import UTC, datetime

from bench.archive_common import VOCAB_SIZE, YEAR_SECONDS, YEAR_START, words_of
from memory.archive.query import STOP_WORDS

# Frequent chat words, roughly most-frequent first: they take the top Zipf ranks.
COMMON_WORDS = words_of("""
the i to and you a it is that of in for my this on with be have do not but can what so just
me we was are if at like get about how your there all one know no or up out will would from
they think now an make go some when want time then need did could use back see more he thing
which really good new work way well also try set should file look still right help here why
because first day other much change run yeah ok thanks sure maybe got going let been has had
them their very even after where than only any over those these our us into two last next fix
error test build app server data code page user list check start stop open close add remove
update issue problem version line name text message chat send call week today tomorrow
yesterday morning night home house money price plan idea question answer number image link
email phone note book game music movie food coffee lunch dinner trip bus train road city
friend family kid kids mom dad wife husband brother team boss meeting office job project
deadline report docs config script function class method value key table query index field
type string loop bug crash log logs output input path folder repo branch merge commit push
pull deploy release install package library api endpoint request response token password
account login setup settings option feature support service client database cache memory disk
cpu network port host docker container cloud cost pay buy sell order store shop ship box room
door window light water weather rain cold hot summer winter spring year month hour minute
early late soon again always never often sometimes everything nothing something anything
someone people person life world place things stuff kind sort bit lot little big small long
short old young great nice bad better best worse easy hard fast slow quick simple clean happy
tired busy free ready done sorry please hello hey bye said says went made found gave took
came left put kept told asked tried used wanted needed working looking trying getting
""")

# Used by the planted facts, their questions and decoys (archive_facts.py) without slot
# values. They are spread over mid Zipf ranks so the background chatter contains them as
# distractors too.
TOPIC_WORDS = words_of("""
sister wedding married venue hall june car parked park parking garage level leave left
dentist appointment moved rescheduled wifi password cabin online internet decided deploying
deploy host server pick picked compose daughter allergic allergies avoid lunch kid kids
booked book flights flight flying conference seat trip landlord rent increase going pay
passport expires expire renew valid document grandma recipe secret ingredient butter family
signed gym membership month join joined working out crash await retry loop bug async found
doctor prescribed medication pills twice weeks give take anniversary dinner booked restaurant
spare key hidden door back house locked hide bike lock combination code unlock numbers chain
shed rusty photos drawer insurance visiting tried flopped piano lessons heater late card
library expired office phone cleanup client logic tests flaky build disk space movie weekend
called finally tires winter downtown nightmare bank closer email reset summer expensive
submissions talk close prescription cat oil squeaks picks
""")

ONSETS = words_of("b bl br c ch cl cr d dr f fl fr g gl gr h j k l m n p pl pr qu r")
ONSETS += words_of("s sh sk sl sp st t th tr v w z")
VOWELS = words_of("a e i o u ai ea ee io oa ou y")
CODAS = ["", "", "", "n", "r", "s", "l", "m", "nd", "st", "x", "th", "ck", "ng", "rt"]

KANJI = (
    "日本語東京大阪京都会議資料予定明日今日昨日時間電話確認連絡仕事問題解決方法設定変更更新削除"
    "追加開発環境本番試験画面表示機能管理報告書類検索結果情報記録保存送信受信返事家族友達旅行天気"
    "料理食事買物映画音楽写真病院医者学校先生勉強宿題部屋銀行支払契約期限準備完了失敗成功最近週末"
    "来週先週毎朝昼夜駅電車会社社長担当部長这个那我们你他们什么怎为没有可以需要已经还是但因所"
)
KATAKANA = "アイウエオカキクケコサシスセソタチツテトナニヌネノハヒフヘホマミムメモラリルレロワンガギグゲゴパピプペポ"  # noqa: E501
JA_GLUE = ("の", "は", "を", "に", "で", "が", "と", "も", "から", "です", "ます", "した", "、")
ZH_GLUE = ("的", "了", "，", "在", "是", "和")

EXTENSIONS = words_of("config.ts py yaml json md rs go tsx toml sh sql lock env ts")
TOOLS = ("shell", "read_file", "web_search", "search_files", "http_get", "python")
ENDINGS = (".", ".", ".", ".", "?", "!", "…", ":")
LEVELS = ("INFO", "INFO", "INFO", "DEBUG", "WARN", "ERROR")


def zipf_cum(n: int, exponent: float = 1.0, shift: float = 2.7) -> list[float]:
    """Cumulative Zipf-Mandelbrot weights for ranks 1..n (for ``random.choices``)."""
    return list(itertools.accumulate(1.0 / (r + shift) ** exponent for r in range(1, n + 1)))


def syllable_word(rng: random.Random) -> str:
    return "".join(
        rng.choice(ONSETS) + rng.choice(VOWELS) + rng.choice(CODAS)
        for _ in range(rng.choice((1, 2, 2, 2, 3)))
    )


@dataclass(slots=True)
class Vocabulary:
    words: list[str]
    cum: list[float]
    content: list[str]  # non-stop words in rank order
    names: list[str]  # capitalised made-up names that are *not* in the vocabulary
    cjk: list[str]
    cjk_cum: list[float]
    code: list[str]
    code_cum: list[float]

    @classmethod
    def build(cls, rng: random.Random) -> Vocabulary:
        ranked = list(dict.fromkeys(COMMON_WORDS))
        taken = set(ranked)
        made: list[str] = []
        while len(made) < VOCAB_SIZE + 3_000:
            word = syllable_word(rng)
            if word not in taken and word not in STOP_WORDS and len(word) >= 3:
                taken.add(word)
                made.append(word)
        filler, names = made[:VOCAB_SIZE], made[VOCAB_SIZE:]
        ranked += filler[: VOCAB_SIZE - len(ranked)]
        for word in dict.fromkeys(TOPIC_WORDS):
            if word not in set(COMMON_WORDS):
                ranked.insert(rng.randrange(150, 2_500), word)
        ranked = list(dict.fromkeys(ranked))[:VOCAB_SIZE]
        content = [w for w in ranked if w not in STOP_WORDS and "'" not in w]
        cjk: list[str] = []
        seen: set[str] = set()
        while len(cjk) < 1_500:
            if rng.random() < 0.15:
                word = "".join(rng.choices(KATAKANA, k=rng.randint(3, 5)))
            else:
                word = "".join(rng.choices(KANJI, k=rng.choice((2, 2, 2, 2, 3, 3, 4))))
            if word not in seen:
                seen.add(word)
                cjk.append(word)
        code_words = ranked[300:3_000]
        code: list[str] = []
        for _ in range(800):
            a, b, c = rng.sample(code_words, 3)
            roll = rng.random()
            if roll < 0.4:
                code.append(f"{a}-{b}.{rng.choice(EXTENSIONS)}")
            elif roll < 0.6:
                code.append(f"src/{a}/{b}_{c}.{rng.choice(EXTENSIONS)}")
            elif roll < 0.8:
                code.append(f"https://{a}.example.com/{b}/{c}?id={rng.randint(1, 9999)}")
            else:
                code.append(f"{a}_{b}()" if rng.random() < 0.5 else f"{a.title()}{b.title()}Error")
        return cls(
            ranked,
            zipf_cum(len(ranked)),
            content,
            [n.title() for n in names],
            cjk,
            zipf_cum(len(cjk), 0.9),
            list(dict.fromkeys(code)),
            zipf_cum(len(dict.fromkeys(code)), 0.8),
        )

    def english(self, rng: random.Random, n: int, code_share: float) -> tuple[str, list[str]]:
        words = rng.choices(self.words, cum_weights=self.cum, k=n)
        if rng.random() < code_share:
            words[rng.randrange(n)] = rng.choices(self.code, cum_weights=self.code_cum)[0]
        parts: list[str] = []
        start = 0
        while start < n:
            end = min(n, start + rng.randint(4, 14))
            sentence = " ".join(words[start:end])
            parts.append(sentence[:1].upper() + sentence[1:] + rng.choice(ENDINGS))
            start = end
        return " ".join(parts), words

    def cjk_text(self, rng: random.Random, n: int, chinese: bool) -> tuple[str, list[str]]:
        words = rng.choices(self.cjk, cum_weights=self.cjk_cum, k=n)
        glue = ZH_GLUE if chinese else JA_GLUE
        out: list[str] = []
        for word in words:
            out.append(word)
            if rng.random() < 0.55:
                out.append(rng.choice(glue))
            if rng.random() < 0.03:  # a Latin word or a file name in the middle
                out.append(" " + rng.choice(self.content[:2_000]) + " ")
        out.append("。")
        return "".join(out), words

    def tool_output(self, rng: random.Random, tool: str) -> str:
        target = int(min(20_000, max(200, rng.lognormvariate(7.0, 0.8))))
        lines: list[str] = []
        size = 0
        while size < target:
            words = " ".join(rng.choices(self.words, cum_weights=self.cum, k=rng.randint(3, 12)))
            code = rng.choices(self.code, cum_weights=self.code_cum)[0]
            if tool in ("shell", "python"):
                stamp = YEAR_START + rng.random() * YEAR_SECONDS
                iso = datetime.fromtimestamp(stamp, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
                line = f"{iso} {rng.choice(LEVELS)} {code} {words} ({rng.randint(1, 900)}ms)"
            elif tool in ("web_search", "http_get"):
                line = f"{len(lines) + 1}. {words.title()} — {code} {words}"
            else:
                line = f"{code}:{rng.randint(1, 2000)}: {words}"
            lines.append(line)
            size += len(line) + 1
        return "\n".join(lines)
