"""Questions about graded items standing alone: no item's text gives away another's answer."""

import re

from attnlab.quiz.check import RIGHT, check

_LATEX = [
    (re.compile(r"\\(?:mathrm|operatorname|text)\{([^{}]*)\}"), r"\1"),
    (re.compile(r"\\sqrt\{([^{}]*)\}"), r"sqrt(\1)"),
    (re.compile(r"\^\{([^{}]*)\}"), r"^(\1)"),
    (re.compile(r"_\{([^{}]*)\}"), r"_\1"),
    (re.compile(r"\\(?:left|right|,|;|!)"), " "),
    (re.compile(r"\\cdot"), "*"),
]


def _plain(math: str) -> str:
    for pattern, by in _LATEX:
        math = pattern.sub(by, math)
    return math


def shown_text(item) -> str:
    """Everything a student may see of an item: prompt, options or steps, feedback, explanation."""
    parts = [item.title, item.prompt, item.start, item.explanation, *item.options.values()]
    parts += [*item.option_feedback.values(), *(f.says for f in item.feedback)]
    return "\n".join(p for p in parts if p)


def fragments(text: str) -> set[str]:
    """Every piece of ``text`` that could be typed as an answer: math and code spans, bracketed
    groups, and the pieces between '=', ',', ';', ':' and a few joining words, of those and of
    the prose."""
    spans = re.findall(r"\$([^$]+)\$", text) + re.findall(r"`([^`]+)`", text)
    pieces = {_plain(s) for s in spans} | {text}
    pieces |= {group for piece in pieces for group in re.findall(r"\(([^()]*)\)", piece)}
    out: set[str] = set()
    for piece in pieces:
        for part in re.split(r"=|,|;|:|\n|\bso\b|\bis\b|\bwith\b|\bthat\b", piece):
            part = part.strip(" .'\"()")
            if part and len(part) < 120:
                out.add(part)
    return out


def statements(item) -> list[str]:
    """The right options of a choice item that state something (a method's name is no answer)."""
    keys = item.key if isinstance(item.key, list) else [item.key]
    return [item.options[k] for k in keys if len(item.options[k].split()) >= 6]


def graded(items):
    return [i for i in items.values() if not i.practice and i.key is not None and i.type != "free"]


def test_a_graded_answer_in_another_items_text_is_found(items):
    """Would the search find proof-a's answer if proof-chain's prompt still started from it?"""
    chain = items["proof-chain"]
    assert "P A P^T" in fragments("Starting from $Z' = A'V' = (P A P^T)(P V)$, continue.")
    assert check(items["proof-a"], "P A P^T").status == RIGHT and chain.id != "proof-a"


def test_every_pair_of_graded_items_stands_alone(items):
    """For every pair of graded items, is the first's text free of an answer the second accepts?"""
    leaks = []
    pool = graded(items)
    for source in pool:
        pieces = fragments(shown_text(source))
        for target in pool:
            if target.id == source.id:
                continue
            if target.type in ("choice", "order"):
                leaks += [
                    f"{source.id} shows {target.id}'s right option {option!r}"
                    for option in statements(target)
                    if option.lower() in shown_text(source).lower()
                ]
                continue
            leaks += [
                f"{source.id} shows {p!r}, right for {target.id}" for p in pieces if check(target, p).status == RIGHT
            ]
    assert not leaks, "\n".join(leaks)


def test_order_key_is_not_the_order_listed(items):
    """Is proof-order's key something other than its steps in the order they are listed?"""
    order = items["proof-order"]
    assert list(order.key) != list(order.options)
