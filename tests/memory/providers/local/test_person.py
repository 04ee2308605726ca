"""A question about the person, in the first person, for the local provider's vectors
(memory/providers/local/person.py): names matched as data, whole, as written or in capitals."""

from __future__ import annotations

import pytest

from memory.people import names_of
from memory.providers.local.person import MAX_NAMES, first_person


@pytest.mark.parametrize(
    ("question", "names", "expected"),
    [
        (
            "Which foods does Maya need to stay away from?",
            ("Maya",),
            "Which foods does I need to stay away from?",
        ),
        ("Which part of Maya's body got injured?", ("Maya",), "Which part of my body got injured?"),
        ("What is MAYA’s job?", ("Maya",), "What is my job?"),  # capitals, curly apostrophe
        ("Where does maya live? Ask Maya.", ("Maya",), "Where does maya live? Ask I."),
        # as written or capitalised only: the modal verb is not the person called May
        ("May I ask what May's job is? It may be.", ("May",), "I I ask what my job is? It may be."),
        ("Where does van Dijk live?", ("van Dijk",), "Where does I live?"),
        # the whole name first, then its first word alone
        ("Is Maya Lopez, or Maya, moving?", ("Maya Lopez", "Maya"), "Is I, or I, moving?"),
        ("Zoë and ZOË, not Zoe", ("Zoë",), "I and I, not Zoe"),
        # CJK has no spaces: the name is found inside the sentence; 的 stays a possessive
        ("李娜的猫叫什么？李娜住在哪里？", ("李娜",), "我的猫叫什么？我住在哪里？"),
    ],
)
def test_the_persons_names_become_the_first_person(
    question: str, names: tuple[str, ...], expected: str
) -> None:
    assert first_person(question, names) == expected


@pytest.mark.parametrize(
    ("question", "names"),
    [
        ("What did Tomas say about Tomorrow's plan?", ("Tom",)),  # inside longer words
        ("Is the Mayan calendar in Mayas?", ("Maya",)),
        ("What does Ana's sister do?", ()),  # no names: the question as asked
        ("What about Ana?", ("",)),
        ("What about a cat?", ("a",)),  # one character: could be any word
        ("Tell me about x" * 3, ("x" * 65,)),  # longer than a name is
    ],
)
def test_other_words_and_unusable_names_are_left_alone(
    question: str, names: tuple[str, ...]
) -> None:
    assert first_person(question, names) == question


def test_names_are_data_not_patterns() -> None:
    """Metacharacters in a name match themselves only; nothing else matches them."""
    assert first_person("Did C++ (x) call? C++ (X) did", ["C++ (x)"]) == "Did I call? I did"
    assert first_person("Cxx x and C (x) call", ["C++ (x)"]) == "Cxx x and C (x) call"
    assert first_person("a.b said so, axb did not", ["a.b"]) == "I said so, axb did not"
    assert first_person("Is .* here? Ann?", [".*", "Ann|Bob"]) == "Is I here? Ann?"
    assert first_person("Bob and Ann|Bob", ["Ann|Bob"]) == "Bob and I"
    assert first_person("back\\slash and \\1", ["\\1"]) == "back\\slash and I"


def test_only_the_first_names_count() -> None:
    names = [f"Name{n}" for n in range(MAX_NAMES + 1)]
    assert first_person("Name0 and Name4", names) == "I and Name4"


def test_names_of_a_display_name() -> None:
    assert names_of("Maya Lopez") == ("Maya Lopez", "Maya")
    assert names_of("  Maya  ") == ("Maya",)
    assert names_of("Maya   de  Souza") == ("Maya de Souza", "Maya")
    assert names_of("李娜") == ("李娜",)
    assert names_of("") == () and names_of("   ") == ()
