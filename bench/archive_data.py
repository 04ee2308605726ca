"""The archive benchmark's data set generator: ``generate`` plans sessions for people
chosen by a Zipf-like activity weight until N messages exist (private and group chats, some
in Japanese or Chinese), plants the facts and their decoys, and interleaves the sessions'
exchanges (user, assistant, sometimes tool calls with long outputs) the way a busy gateway
would see them. It also remembers some user messages to derive realistic queries from.
Deterministic from the seed.
"""

from __future__ import annotations

import json
import random
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from bench.archive_common import (
    ACTIVE_SESSIONS,
    CJK_SESSION_SHARE,
    GROUP_SESSION_SHARE,
    SAMPLES,
    YEAR_SECONDS,
    YEAR_START,
    Progress,
)
from bench.archive_facts import FACTS, fill_slots
from bench.archive_vocab import TOOLS, Vocabulary, zipf_cum
from memory.archive.database import NewMessage

# -- the data set ---------------------------------------------------------------------------


@dataclass(slots=True)
class SessionPlan:
    id: str
    owner: str
    platform: str
    chat_id: str
    group: bool
    members: tuple[str, ...]  # owner first
    cjk: bool
    started_at: float
    shapes: list[int]  # tool calls per exchange (0, 1 or 2)


@dataclass(slots=True)
class Exchange:
    session: int
    speaker: str
    first: bool
    messages: list[NewMessage]


@dataclass(slots=True)
class Fact:
    session: int
    owner: str
    text: str
    questions: list[tuple[str, str]]


@dataclass(slots=True)
class Sample:
    owner: str
    words: list[str]


@dataclass(slots=True)
class Dataset:
    vocab: Vocabulary
    people: list[str]
    people_cum: list[float]
    sessions: list[SessionPlan]
    exchanges: list[Exchange]
    facts: list[Fact]
    samples: list[Sample]
    cjk_samples: list[Sample]
    messages: int

    def exchange_cut(self, messages: int) -> int:
        """Index of the first exchange after the first ``messages`` messages."""
        total = 0
        for index, exchange in enumerate(self.exchanges):
            if total >= messages:
                return index
            total += len(exchange.messages)
        return len(self.exchanges)

    def message_count(self, exchanges: int) -> int:
        return sum(len(e.messages) for e in self.exchanges[:exchanges])


def messages_in(shape: int) -> int:
    return 2 if shape == 0 else 3 + shape


def make_people(rng: random.Random, n: int) -> tuple[list[str], list[float]]:
    people: dict[str, None] = {}
    while len(people) < n:
        platform_name = "telegram" if rng.random() < 0.7 else "discord"
        people[f"{platform_name}-{rng.randrange(10**8, 10**10)}"] = None
    return list(people), zipf_cum(n, 0.8, 10.0)


def plan_sessions(
    rng: random.Random, n_messages: int, people: list[str], cum: list[float]
) -> list[SessionPlan]:
    sessions: list[SessionPlan] = []
    total = 0
    while total < n_messages:
        owner = rng.choices(people, cum_weights=cum)[0]
        group = rng.random() < GROUP_SESSION_SHARE
        members: tuple[str, ...] = (owner,)
        if group:
            others = [p for p in rng.sample(people, rng.randint(1, 3)) if p != owner]
            members = (owner, *others)
        count = min(60, 1 + int(rng.expovariate(1 / 7)))
        shapes = [
            0 if r < 0.85 else 1 if r < 0.97 else 2 for r in (rng.random() for _ in range(count))
        ]
        platform_name = owner.split("-", 1)[0]
        sessions.append(
            SessionPlan(
                id=f"s{rng.getrandbits(80):020x}",
                owner=owner,
                platform=platform_name,
                chat_id=f"-100{rng.randrange(10**9)}" if group else owner.split("-", 1)[1],
                group=group,
                members=members,
                cjk=rng.random() < CJK_SESSION_SHARE,
                started_at=YEAR_START + rng.random() * YEAR_SECONDS,
                shapes=shapes,
            )
        )
        total += sum(messages_in(s) for s in shapes)
    return sessions


def plant_facts(
    rng: random.Random, sessions: list[SessionPlan], k: int, names: Sequence[str]
) -> tuple[list[Fact], dict[tuple[int, int], str]]:
    """K facts in random private English sessions, decoys in the owner's other sessions."""
    eligible = [i for i, s in enumerate(sessions) if not s.group and not s.cjk]
    by_owner: dict[str, list[int]] = {}
    for i in eligible:
        by_owner.setdefault(sessions[i].owner, []).append(i)
    facts: list[Fact] = []
    overrides: dict[tuple[int, int], str] = {}
    for n, index in enumerate(rng.sample(eligible, min(k, len(eligible)))):
        template = FACTS[n % len(FACTS)]
        slots = fill_slots(rng, names)
        plan = sessions[index]
        lead = rng.choice(("", "btw ", "oh and ", "note to self: ", "fyi "))
        text = lead + template.fact.format(**slots)
        overrides[(index, rng.randrange(len(plan.shapes)))] = text
        questions = [(q.format(**slots), kind) for q, kind in template.questions]
        facts.append(Fact(index, plan.owner, text, questions))
        for decoy in template.decoys:
            mine = [i for i in by_owner[plan.owner] if i != index]
            other = rng.choice(mine) if mine and rng.random() < 0.7 else rng.choice(eligible)
            key = (other, rng.randrange(len(sessions[other].shapes)))
            if key not in overrides:
                overrides[key] = decoy.format(**slots)
    return facts, overrides


def generate(seed: int, n_messages: int, n_people: int, n_facts: int) -> Dataset:
    rng = random.Random(seed)  # noqa: S311 - a benchmark, not cryptography
    vocab = Vocabulary.build(rng)
    people, people_cum = make_people(rng, n_people)
    sessions = plan_sessions(rng, n_messages, people, people_cum)
    facts, overrides = plant_facts(rng, sessions, n_facts, vocab.names)
    sample_p = min(1.0, SAMPLES / max(1, n_messages // 2))
    samples: list[Sample] = []
    cjk_samples: list[Sample] = []
    exchanges: list[Exchange] = []
    pool: list[list[Any]] = []  # [session index, next exchange, clock, members seen]
    next_session = 0
    progress = Progress("generate", len(sessions))
    while pool or next_session < len(sessions):
        while len(pool) < ACTIVE_SESSIONS and next_session < len(sessions):
            plan = sessions[next_session]
            pool.append([next_session, 0, plan.started_at])
            next_session += 1
            progress.update(next_session)
        slot = rng.randrange(len(pool))
        index, step, clock = pool[slot]
        plan = sessions[index]
        speaker = plan.owner if not plan.group or step == 0 else rng.choice(plan.members)
        messages: list[NewMessage] = []
        override = overrides.get((index, step))
        words: list[str] = []
        if override is not None:
            text = override
        elif plan.cjk:
            text, words = vocab.cjk_text(rng, rng.randint(4, 14), rng.random() < 0.3)
        else:
            n_words = int(min(80, max(2, rng.lognormvariate(2.3, 0.6))))
            text, words = vocab.english(rng, n_words, 0.15)
        if override is None and rng.random() < sample_p:
            (cjk_samples if plan.cjk else samples).append(Sample(speaker, words))
        messages.append(NewMessage("user", text, speaker=speaker, created_at=clock))
        tools = plan.shapes[step]
        if tools:
            calls: list[dict[str, Any]] = []
            for t in range(tools):
                tool = rng.choice(TOOLS)
                argument = rng.choices(vocab.code, cum_weights=vocab.code_cum)[0]
                calls.append(
                    {
                        "id": f"call_{step}_{t}",
                        "type": "function",
                        "function": {"name": tool, "arguments": json.dumps({"arg": argument})},
                    }
                )
            clock += rng.uniform(1, 8)
            messages.append(
                NewMessage(
                    "assistant",
                    vocab.english(rng, rng.randint(3, 12), 0.0)[0],
                    tool_calls=calls,
                    created_at=clock,
                )
            )
            for call in calls:
                clock += rng.uniform(1, 20)
                name = call["function"]["name"]
                messages.append(
                    NewMessage(
                        "tool",
                        vocab.tool_output(rng, name),
                        tool_call_id=call["id"],
                        tool_name=name,
                        created_at=clock,
                    )
                )
        clock += rng.uniform(2, 30)
        if plan.cjk:
            reply = vocab.cjk_text(rng, rng.randint(10, 40), rng.random() < 0.3)[0]
        else:
            n_words = int(min(400, max(5, rng.lognormvariate(3.6, 0.6))))
            reply = vocab.english(rng, n_words, 0.2)[0]
        messages.append(
            NewMessage("assistant", reply, created_at=clock, prompt_tokens=rng.randint(800, 9000))
        )
        exchanges.append(Exchange(index, speaker, step == 0, messages))
        step += 1
        if step >= len(plan.shapes):
            pool[slot] = pool[-1]
            pool.pop()
        else:
            pool[slot][1] = step
            pool[slot][2] = clock + rng.expovariate(1 / 240) + 5
    total = sum(len(e.messages) for e in exchanges)
    return Dataset(
        vocab, people, people_cum, sessions, exchanges, facts, samples, cjk_samples, total
    )
