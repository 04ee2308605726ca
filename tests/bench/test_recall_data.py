"""bench/recall_data.py: the recall data set is deterministic and its labels are right.

Every evidence id exists and belongs to the asker; each answer is stated by its evidence (a
month answer is derived from an evidence message's time and relative words) and by no other
message of that person; the kinds are balanced; and the tune and held-out banks share no
question template, answer or user message.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from datetime import UTC, timedelta
from pathlib import Path

import pytest

from bench import recall_bank_heldout, recall_bank_tune
from bench.recall_bank_base import KINDS, RELATIVE_DAYS, month_label
from bench.recall_data import (
    CJK,
    Dataset,
    Message,
    answer_parts,
    generate,
    is_month_answer,
    main,
)

BANKS = ("tune", "heldout")
STOP = {
    "a", "an", "the", "and", "or", "of", "in", "at", "on", "to", "for", "from", "with", "by",
    "is", "was", "were", "be", "been", "are", "do", "does", "did", "what", "which", "who",
    "whom", "where", "when", "how", "why", "that", "this", "these", "those", "it", "its",
    "his", "her", "their", "there", "after", "before", "while", "s", "up", "into", "as", "kind",
}  # fmt: skip


@pytest.fixture(scope="module", params=BANKS)
def data(request: pytest.FixtureRequest) -> Dataset:
    return generate(bank=request.param)


def _index(data: Dataset) -> tuple[dict[str, Message], dict[str, str]]:
    messages = {m.id: m for s in data.sessions for m in s.messages}
    owner = {m.id: s.person for s in data.sessions for m in s.messages}
    return messages, owner


def _month_derivable(answer: str, evidence: list[Message]) -> bool:
    for m in evidence:
        lang = "en" if not CJK.search(m.text) else "zh"
        days = [0] + [d for phrase, d in RELATIVE_DAYS.items() if phrase in m.text.lower()]
        if any(month_label(m.at - timedelta(days=d), lang) == answer for d in days):
            return True
    return False


def _words(text: str) -> set[str]:
    return {w[:4] for w in re.findall(r"[^\W\d_]+", text.lower()) if w not in STOP}


@pytest.mark.slow
def test_the_same_arguments_give_the_same_data_set() -> None:
    def small(bank: str = "tune", seed: int = 3) -> object:  # the sixth person speaks CJK
        return generate(bank=bank, seed=seed, people=6, sessions_per_person=12)

    for bank in BANKS:
        assert small(bank) == small(bank)
    assert small(seed=3) != small(seed=4)


def test_bad_arguments_are_refused() -> None:
    with pytest.raises(ValueError, match="unknown bank"):
        generate(bank="train")
    with pytest.raises(ValueError, match="at least"):
        generate(sessions_per_person=5)


def test_ids_are_unique_and_stable(data: Dataset) -> None:
    ids = [m.id for s in data.sessions for m in s.messages]
    assert len(ids) == len(set(ids))
    assert len({q.id for q in data.questions}) == len(data.questions)
    for session in data.sessions:
        assert session.id.startswith(f"{session.person}/s")
        for k, m in enumerate(session.messages, 1):
            assert m.id == f"{session.id}/m{k}" and m.session == session.id


def test_sessions_look_like_chats(data: Dataset) -> None:
    per_person = Counter(s.person for s in data.sessions)
    assert len(per_person) == 8 and set(per_person.values()) == {25}
    for session in data.sessions:
        assert 10 <= len(session.messages) <= 40
        assert {m.role for m in session.messages} == {"user", "assistant"}
        times = [m.at for m in session.messages]
        assert times == sorted(times) and times[0] == session.started
        assert all(t.tzinfo == UTC and t.date() == session.started.date() for t in times)


def test_every_evidence_id_exists_and_belongs_to_the_asker(data: Dataset) -> None:
    messages, owner = _index(data)
    for q in data.questions:
        assert q.evidence and len(set(q.evidence)) == len(q.evidence), q
        for mid in q.evidence:
            assert mid in messages and owner[mid] == q.person, (q, mid)


def test_kinds_are_balanced_and_shaped(data: Dataset) -> None:
    messages, _ = _index(data)
    kinds = Counter(q.kind for q in data.questions)
    assert set(kinds) == set(KINDS)
    assert all(0.15 <= kinds[k] / len(data.questions) <= 0.35 for k in KINDS), kinds
    per_person = Counter(q.person for q in data.questions)
    assert min(per_person.values()) >= 25 and max(per_person.values()) <= 40
    for q in data.questions:
        sessions = {messages[mid].session for mid in q.evidence}
        if q.kind == "single":
            assert len(q.evidence) == 1, q
        if q.kind == "multi-hop":
            assert 2 <= len(q.evidence) == len(sessions) <= 3, q


def test_each_answer_is_stated_by_its_evidence(data: Dataset) -> None:
    messages, _ = _index(data)
    for q in data.questions:
        evidence = [messages[mid] for mid in q.evidence]
        text = " ".join(m.text for m in evidence).casefold()
        for part in answer_parts(q.answer):
            if is_month_answer(part):
                assert q.kind == "temporal" and _month_derivable(part, evidence), q
            else:
                assert part.casefold() in text, q


def test_no_other_message_of_the_asker_states_the_answer(data: Dataset) -> None:
    by_person: dict[str, list[Message]] = {}
    for s in data.sessions:
        by_person.setdefault(s.person, []).extend(s.messages)
    for q in data.questions:
        for part in answer_parts(q.answer):
            if is_month_answer(part):
                continue
            edge = "" if CJK.search(part) else r"(?<!\w)"
            pattern = re.compile(edge + re.escape(part) + edge.replace("<", ""), re.IGNORECASE)
            stray = [
                m.id
                for m in by_person[q.person]
                if m.id not in q.evidence and pattern.search(m.text)
            ]
            assert not stray, (q, stray)


def test_distractors_share_the_question_entities(data: Dataset) -> None:
    """Most questions name something (a pet, a city, a hobby) that other messages mention."""
    by_person: dict[str, list[Message]] = {}
    for s in data.sessions:
        by_person.setdefault(s.person, []).extend(s.messages)
    latin = [q for q in data.questions if not CJK.search(q.text)]
    shared = 0
    for q in latin:
        words = _words(q.text) - _words(q.person)
        shared += any(
            m.id not in q.evidence and (words & _words(m.text)) - {"name"}
            for m in by_person[q.person]
        )
    assert shared / len(latin) > 0.93


def test_paraphrases_share_fewer_words_with_their_evidence_than_singles(data: Dataset) -> None:
    messages, _ = _index(data)
    names = {q.person: q.text for q in data.questions}  # any text: names are dropped below
    overlap: dict[str, list[int]] = {"single": [], "paraphrase": []}
    for q in data.questions:
        if q.kind not in overlap or CJK.search(q.text):
            continue
        evidence = set().union(*(_words(messages[mid].text) for mid in q.evidence))
        asked = _words(q.text) - _words(" ".join(names)) - _words(q.answer)
        overlap[q.kind].append(len(asked & evidence))
    assert min(overlap["single"]) >= 1
    mean = {kind: sum(v) / len(v) for kind, v in overlap.items()}
    assert mean["paraphrase"] < 0.5 * mean["single"], mean


def test_scripts_and_diacritics_are_mixed(data: Dataset) -> None:
    texts = [m.text for s in data.sessions for m in s.messages]
    cjk_people = {s.person for s in data.sessions if any(CJK.search(m.text) for m in s.messages)}
    assert len(cjk_people) == 1
    assert sum(bool(re.search(r"[À-ɏ]", t)) for t in texts) > 50
    assert any(CJK.search(q.text) for q in data.questions)


def test_people_are_separate_scopes_that_share_names(data: Dataset) -> None:
    """Someone's name, or an answer of theirs, turns up in another person's chats."""
    texts: dict[str, str] = {}
    for s in data.sessions:
        texts[s.person] = texts.get(s.person, "") + "\n".join(m.text for m in s.messages)
    crossing = sum(
        any(part in texts[other] for other in texts if other != q.person)
        for q in data.questions
        for part in answer_parts(q.answer)
        if not is_month_answer(part)
    )
    assert crossing > 20


def test_the_banks_share_no_template_answer_or_user_message() -> None:
    tune, heldout = generate(bank="tune"), generate(bank="heldout")
    banks = (recall_bank_tune.BANK, recall_bank_heldout.BANK)
    templates = [{*bank.latin.templates.values(), *bank.cjk.templates.values()} for bank in banks]
    assert not templates[0] & templates[1]
    skeletons = [{re.sub(r"\{\w+\}", "{}", t) for t in ts} for ts in templates]
    assert not skeletons[0] & skeletons[1]
    answers = [
        {q.answer for q in d.questions if not is_month_answer(q.answer)} for d in (tune, heldout)
    ]
    assert not answers[0] & answers[1]
    said = [
        {m.text for s in d.sessions for m in s.messages if m.role == "user"}
        for d in (tune, heldout)
    ]
    assert not said[0] & said[1], sorted(said[0] & said[1])[:10]


def test_the_command_line_prints_stats_and_dumps(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "data.jsonl"
    assert main(["--bank", "heldout", "--people", "2", "--stats", "--dump", str(out)]) == 0
    printed = capsys.readouterr().out
    for label in ("sessions", "messages", "questions temporal", "mean evidence per question"):
        assert label in printed
    rows = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    expected = generate(bank="heldout", people=2)
    assert Counter(r["type"] for r in rows) == {
        "session": len(expected.sessions),
        "question": len(expected.questions),
    }
    assert all(isinstance(r["evidence"], list) for r in rows if r["type"] == "question")
