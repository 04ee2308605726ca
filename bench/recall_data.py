#!/usr/bin/env python3
"""Long multi-session chats with questions labelled by the messages that answer them.

A retrieval-quality data set for ``session_search``, in the style of long-conversation
memory benchmarks (LoCoMo, LongMemEval): each person chats with an assistant over about a
year, in 25 sessions of 10-40 messages, mostly small talk. Facts are planted in the person's
messages (sometimes restated by the assistant in a recap) and change over time: they move
city, change jobs, lose a pet and adopt another. Each question belongs to one person, is one
of four kinds (``single``, ``multi-hop``, ``temporal``, ``paraphrase``) and lists as evidence
the ids of the messages that hold its answer. No other message of that person contains the
answer string; many share its entities (the dog's name, the city, "pottery").

Two disjoint template banks: ``tune`` (for developing the search) and ``heldout`` (never
used for tuning: different topics, facts, phrasings, question templates and small talk, and a
Japanese speaker instead of a Chinese one). Deterministic: the same arguments give the same
data. Standard library only.

    .venv/bin/python bench/recall_data.py --bank tune --stats
    .venv/bin/python bench/recall_data.py --bank heldout --dump heldout.jsonl
"""

from __future__ import annotations

import argparse
import json
import random
import re
import sys
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # run as a script: find bench.*

from bench import recall_bank_heldout, recall_bank_tune
from bench.recall_bank_base import KINDS, MONTHS, Ask, Bank, Story, Voice

BANKS: dict[str, Bank] = {"tune": recall_bank_tune.BANK, "heldout": recall_bank_heldout.BANK}
PER_KIND = 10  # questions of each kind per person, when the story offers that many
CJK_EVERY, CJK_SLOT = 8, 5  # person 5 of every 8 chats in the bank's CJK voice
RECAP_SHARE = 0.3  # facts the assistant restates in a recap (not for single, multi-hop)
FOLLOW_UP_SHARE = 0.5  # replies to facts and mentions that end with a follow-up question
MIN_SESSIONS = 12
MAX_MESSAGES = 40
MIN_MESSAGES = 10

MONTH_ANSWER = re.compile(rf"^(?:(?:{'|'.join(MONTHS)}) \d{{4}}|\d{{4}}年\d{{1,2}}月)$")
CJK = re.compile(r"[\u3040-\u30ff\u3400-\u9fff]")


@dataclass(frozen=True)
class Message:
    id: str
    session: str
    role: str  # "user" | "assistant"
    text: str
    at: datetime  # UTC


@dataclass(frozen=True)
class Session:
    id: str
    person: str
    started: datetime
    messages: tuple[Message, ...]


@dataclass(frozen=True)
class Question:
    id: str
    person: str
    kind: str  # "single" | "multi-hop" | "temporal" | "paraphrase"
    text: str
    evidence: tuple[str, ...]  # message ids; all of them hold part of the answer
    answer: str


@dataclass(frozen=True)
class Dataset:
    sessions: tuple[Session, ...]
    questions: tuple[Question, ...]
    names: tuple[tuple[str, str], ...] = ()  # (person id, display name) per person


def answer_parts(answer: str) -> list[str]:
    """The parts of an answer ("Lena; Porto"), each stated by some evidence message."""
    return [part.strip() for part in answer.split(";") if part.strip()]


def is_month_answer(part: str) -> bool:
    """A month answer ("March 2025") is derived from a message's time, not its words."""
    return MONTH_ANSWER.match(part) is not None


def leak_pattern(answers: Iterable[str]) -> re.Pattern[str] | None:
    """Matches any answer part (as a whole word, unless CJK) that is not a month."""
    alternatives = set()
    for answer in answers:
        for part in answer_parts(answer):
            if is_month_answer(part):
                continue
            if CJK.search(part):
                alternatives.add(re.escape(part))
            else:
                alternatives.add(rf"(?<!\w){re.escape(part)}(?!\w)")
    if not alternatives:
        return None
    return re.compile("|".join(sorted(alternatives)), re.IGNORECASE)


def generate(
    *, bank: str = "tune", people: int = 8, sessions_per_person: int = 25, seed: int = 7
) -> Dataset:
    """The data set: people x sessions_per_person sessions and about 40 questions a person."""
    if bank not in BANKS:
        raise ValueError(f"unknown bank {bank!r}; choose from {sorted(BANKS)}")
    if sessions_per_person < MIN_SESSIONS:
        raise ValueError(f"sessions_per_person must be at least {MIN_SESSIONS}")
    if people < 1:
        raise ValueError("people must be at least 1")
    sessions: list[Session] = []
    questions: list[Question] = []
    chosen = _people(BANKS[bank], people)
    for voice, display, pid in chosen:
        rng = random.Random(f"{bank}/{seed}/{pid}")  # noqa: S311 - reproducible data, not secrets
        person_sessions, person_questions = _person(voice, display, pid, sessions_per_person, rng)
        sessions.extend(person_sessions)
        questions.extend(person_questions)
    return Dataset(tuple(sessions), tuple(questions), tuple((p, d) for _, d, p in chosen))


def _people(bank: Bank, count: int) -> list[tuple[Voice, str, str]]:
    """(voice, display name, id) per person; ids are unique, names may repeat past the pool."""
    chosen: list[tuple[Voice, str, str]] = []
    seen: Counter[str] = Counter()
    latin = cjk = 0
    for index in range(count):
        if index % CJK_EVERY == CJK_SLOT:
            voice, (display, slug) = bank.cjk, bank.cjk.names[cjk % len(bank.cjk.names)]
            cjk += 1
        else:
            voice, (display, slug) = bank.latin, bank.latin.names[latin % len(bank.latin.names)]
            latin += 1
        seen[slug] += 1
        pid = slug if seen[slug] == 1 else f"{slug}{seen[slug]}"
        chosen.append((voice, display, pid))
    return chosen


def _schedule(rng: random.Random, count: int) -> tuple[datetime, ...]:
    """Session starts: from some day in 2024, every 3-24 days, in the daytime (UTC)."""
    day = datetime(2024, 1, 8, tzinfo=UTC) + timedelta(days=rng.randint(0, 240))
    dates = []
    for _ in range(count):
        dates.append(day.replace(hour=rng.randint(7, 17), minute=rng.randint(0, 59)))
        day += timedelta(days=rng.randint(3, 24))
    return tuple(dates)


def _select(story: Story, rng: random.Random) -> list[Ask]:
    """Up to PER_KIND questions of each kind; multi-hop evidence spans distinct sessions."""
    chosen: list[Ask] = []
    texts: set[str] = set()
    for kind in KINDS:
        pool = []
        for ask in story.asks:
            if ask.kind != kind or ask.text in texts:
                continue
            missing = [key for key in ask.keys if key not in story.plants]
            if missing:
                raise ValueError(f"{story.name}: {ask.text!r} cites unknown plants {missing}")
            if kind == "multi-hop":
                sessions = {story.plants[key].session for key in ask.keys}
                if len(sessions) != len(ask.keys):
                    continue
            texts.add(ask.text)
            pool.append(ask)
        rng.shuffle(pool)
        chosen.extend(pool[:PER_KIND])
    rng.shuffle(chosen)
    return chosen


Unit = list[tuple[str, str, str | None]]  # (role, text, plant key whose answer it holds)


@dataclass
class _Talk:
    """One person's small talk and replies: nothing of it states an answer (``leak``)."""

    voice: Voice
    rng: random.Random
    leak: re.Pattern[str] | None
    pid: str

    def clean(self, unit: Unit) -> bool:
        return self.leak is None or not any(self.leak.search(text) for _, text, _ in unit)

    def filler(self, seen: set[str]) -> Unit:
        """Small talk that states no answer and does not start like earlier small talk."""
        for _ in range(50):
            unit: Unit = [(role, text, None) for role, text in self.voice.filler(self.rng)]
            if self.clean(unit) and unit[0][1][:12] not in seen:
                seen.add(unit[0][1][:12])
                return unit
        raise RuntimeError(f"{self.pid}: no fresh small talk")

    def reply(self, text: str | None) -> str:
        voice, rng = self.voice, self.rng
        text = text or rng.choice(voice.ack)
        if rng.random() < FOLLOW_UP_SHARE:
            text += ("" if voice.lang in ("zh", "ja") else " ") + rng.choice(voice.follow_ups)
        return text


def _person(
    voice: Voice, display: str, pid: str, count: int, rng: random.Random
) -> tuple[list[Session], list[Question]]:
    dates = _schedule(rng, count)
    story = Story(rng, display, voice.lang, dates, voice.templates)
    voice.story(story)
    asks = _select(story, rng)
    talk = _Talk(voice, rng, leak_pattern(ask.answer for ask in asks), pid)
    no_recap = {key for ask in asks if ask.kind in ("single", "multi-hop") for key in ask.keys}
    body = _planted(story, talk, count, no_recap)
    sessions, holders = _sessions(story, talk, dates, body)
    questions = []
    for number, ask in enumerate(asks, 1):
        evidence = tuple(mid for key in ask.keys for mid in holders[key])
        questions.append(
            Question(f"{pid}/q{number}", pid, ask.kind, ask.text, evidence, ask.answer)
        )
    return sessions, questions


def _planted(story: Story, talk: _Talk, count: int, no_recap: set[str]) -> list[list[Unit]]:
    """Each session's units that carry the story: plants (and recaps), then mentions."""
    voice, rng = talk.voice, talk.rng
    body: list[list[Unit]] = [[] for _ in range(count)]
    for plant in story.plants.values():
        unit: Unit = [("user", plant.text, plant.key), ("assistant", talk.reply(plant.reply), None)]
        if plant.recap and plant.key not in no_recap and rng.random() < RECAP_SHARE:
            unit += [
                ("user", rng.choice(voice.recap_asks), None),
                ("assistant", plant.recap, plant.key),
            ]
        body[plant.session].append(unit)
    for mention in story.mentions:
        unit = [("user", mention.text, None), ("assistant", talk.reply(mention.reply), None)]
        room = MAX_MESSAGES - 2 - sum(len(u) for u in body[mention.session])  # 2: the opener
        if talk.clean(unit) and len(unit) <= room:
            body[mention.session].append(unit)
    return body


def _sessions(
    story: Story, talk: _Talk, dates: Sequence[datetime], body: list[list[Unit]]
) -> tuple[list[Session], dict[str, list[str]]]:
    """The sessions, padded with small talk and shuffled; and which messages hold each
    plant's answer."""
    voice, rng, pid = talk.voice, talk.rng, talk.pid
    sessions: list[Session] = []
    holders: dict[str, list[str]] = {key: [] for key in story.plants}
    for index, (start, units) in enumerate(zip(dates, body, strict=True)):
        sid = f"{pid}/s{index + 1}"
        target = rng.randint(MIN_MESSAGES, MAX_MESSAGES)
        opener: Unit = [(role, text, None) for role, text in voice.opener(rng, start.hour)]
        size = len(opener) + sum(len(unit) for unit in units)
        seen: set[str] = set()
        while size < target:
            unit = talk.filler(seen)
            if size + len(unit) > MAX_MESSAGES:
                if size >= MIN_MESSAGES:
                    break
                continue
            units.append(unit)
            size += len(unit)
        rng.shuffle(units)
        messages: list[Message] = []
        at = start
        for role, text, key in [turn for unit in [opener, *units] for turn in unit]:
            if messages:
                step = rng.randint(20, 420) if role == "user" else rng.randint(2, 25)
                at += timedelta(seconds=step)
            mid = f"{sid}/m{len(messages) + 1}"
            messages.append(Message(mid, sid, role, text, at))
            if key is not None:
                holders[key].append(mid)
        if not MIN_MESSAGES <= len(messages) <= MAX_MESSAGES:
            raise RuntimeError(f"{sid}: {len(messages)} messages")  # a story planted too much
        sessions.append(Session(sid, pid, start, tuple(messages)))
    return sessions, holders


def stats(data: Dataset) -> dict[str, object]:
    messages = [m for s in data.sessions for m in s.messages]
    kinds = Counter(q.kind for q in data.questions)
    per_session = [len(s.messages) for s in data.sessions]
    return {
        "people": len({s.person for s in data.sessions}),
        "sessions": len(data.sessions),
        "messages": len(messages),
        "messages per session (min/mean/max)": (
            f"{min(per_session)}/{sum(per_session) / len(per_session):.1f}/{max(per_session)}"
        ),
        "user messages": sum(m.role == "user" for m in messages),
        "CJK messages": sum(bool(CJK.search(m.text)) for m in messages),
        "questions": len(data.questions),
        **{f"questions {kind}": kinds[kind] for kind in KINDS},
        "mean evidence per question": round(
            sum(len(q.evidence) for q in data.questions) / max(1, len(data.questions)), 2
        ),
        "mean message length (chars)": round(
            sum(len(m.text) for m in messages) / max(1, len(messages)), 1
        ),
        "distinct message texts": len({m.text for m in messages}),
    }


def dump(data: Dataset, path: Path) -> None:
    """JSON lines: one per session (with its messages), then one per question."""
    with path.open("w", encoding="utf-8") as out:
        for session in data.sessions:
            record = {
                "type": "session",
                "id": session.id,
                "person": session.person,
                "started": session.started.isoformat(),
                "messages": [
                    {"id": m.id, "role": m.role, "text": m.text, "at": m.at.isoformat()}
                    for m in session.messages
                ],
            }
            out.write(json.dumps(record, ensure_ascii=False) + "\n")
        for q in data.questions:
            out.write(json.dumps({"type": "question", **asdict(q)}, ensure_ascii=False) + "\n")


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--bank", choices=sorted(BANKS), default="tune")
    parser.add_argument("--people", type=int, default=8)
    parser.add_argument("--sessions", type=int, default=25, help="sessions per person")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--stats", action="store_true", help="print counts")
    parser.add_argument("--dump", type=Path, metavar="OUT.jsonl", help="write the data set")
    parser.add_argument("--examples", type=int, default=0, help="print N questions of each kind")
    args = parser.parse_args(argv)
    data = generate(
        bank=args.bank, people=args.people, sessions_per_person=args.sessions, seed=args.seed
    )
    if args.stats or not (args.dump or args.examples):
        for name, value in stats(data).items():
            print(f"{name:38} {value}")
    if args.examples:
        texts = {m.id: m.text for s in data.sessions for m in s.messages}
        for kind in KINDS:
            for q in [q for q in data.questions if q.kind == kind][: args.examples]:
                print(f"\n[{kind}] {q.id}: {q.text}  ->  {q.answer}")
                for mid in q.evidence:
                    print(f"    {mid}: {texts[mid]}")
    if args.dump:
        dump(data, args.dump)
        print(f"wrote {args.dump}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
