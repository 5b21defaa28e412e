"""Builds data/retrieval.jsonl, the shipped retrieval set (rlvr.data.retrieval reads it).

    python -m rlvr.data.generators.retrieval   # rewrite data/retrieval.jsonl (deterministic: BUILD_SEED)

Each problem is about invented towns, people, companies, rivers and inventions, so that a model
cannot answer from memory: 2-4 numbered passages of 2-4 sentences, one holding the supporting
sentence, the others distractors about other invented entities (at least one of the same kind, with
the same attribute, so the model must read which entity a sentence is about). A problem is kept
only when its answer appears as a whole word exactly once in the sources (`whole_word_count`) and
the prompt fits MAX_WORDS. Running rlvr never imports this module.
Tests: .venv/bin/pytest -q tests/unit/data/test_retrieval_data.py (the build reproduces the shipped file)
"""

from __future__ import annotations

import json
import random
import re
from dataclasses import dataclass

from rlvr.data.retrieval import INSTRUCTION, N_PROBLEMS, PATH, TASK

BUILD_SEED = 0
MAX_WORDS = 180  # whole prompt; small models have short contexts


@dataclass(frozen=True)
class Fact:
    """One sentence a passage can hold. `{name}` is the entity; other fields are values of
    the kind they are named after. `questions` maps an answerable field to its question;
    `years` is the range added to the entity's base year for `{year}`."""

    text: str
    questions: dict[str, str]
    years: tuple[int, int] = (0, 0)


# Every fact sentence names its entity, so a quoted sentence stands on its own. Answers are
# years, counts and proper names, which take no article ("the clockmaker" vs "clockmaker").
FACTS: dict[str, list[Fact]] = {
    "town": [
        Fact(
            "{name} was founded in {year} by {person}.",
            {"year": "In what year was {name} founded?", "person": "Who founded {name}?"},
        ),
        Fact("About {people} people live in {name} today.", {"people": "About how many people live in {name} today?"}),
        Fact(
            "The market in {name} is held every {weekday}.", {"weekday": "On which day of the week is the market in {name} held?"}
        ),
        Fact(
            "{name} lies {km} kilometres north of {town}.",
            {"km": "How many kilometres north of {town} does {name} lie?", "town": "{name} lies north of which town?"},
        ),
        Fact(
            "The first bridge in {name} was built in {year}.",
            {"year": "In what year was the first bridge in {name} built?"},
            years=(15, 90),
        ),
    ],
    "person": [
        Fact(
            "{name} was born in {town} in {year}.",
            {"town": "In which town was {full} born?", "year": "In what year was {full} born?"},
        ),
        Fact("{name} trained as a {profession} under {person}.", {"person": "Under whom did {full} train?"}),
        Fact(
            "In {year} {name} opened a workshop in {town}.",
            {"year": "In what year did {full} open a workshop?", "town": "In which town did {full} open a workshop?"},
            years=(19, 45),
        ),
        Fact("{name} took on {small} apprentices over the years.", {"small": "How many apprentices did {full} take on?"}),
    ],
    "company": [
        Fact(
            "{name} was founded in {town} in {year}.",
            {"town": "In which town was {name} founded?", "year": "In what year was {name} founded?"},
        ),
        Fact("{name} was started by {person}, a former {profession}.", {"person": "Who started {name}?"}),
        Fact("{name} employs {staff} people.", {"staff": "How many people does {name} employ?"}),
        Fact("The best-known product of {name} is the {invention}.", {}),
        Fact(
            "{name} opened its second factory in {year}.",
            {"year": "In what year did {name} open its second factory?"},
            years=(6, 40),
        ),
    ],
    "river": [
        Fact("The {name} rises on {mount}.", {"mount": "On which mountain does the {name} rise?"}),
        Fact(
            "The {name} flows for {km} kilometres into {lake}.",
            {"km": "For how many kilometres does the {name} flow?", "lake": "Into which lake does the {name} flow?"},
        ),
        Fact(
            "The first bridge over the {name} was built at {town} in {year}.",
            {
                "town": "At which town was the first bridge over the {name} built?",
                "year": "In what year was the first bridge over the {name} built?",
            },
        ),
        Fact(
            "Fishermen have counted {small} kinds of fish in the {name}.",
            {"small": "How many kinds of fish have been counted in the {name}?"},
        ),
    ],
    "invention": [
        Fact(
            "The {name} was invented by {person} in {year}.",
            {"person": "Who invented the {name}?", "year": "In what year was the {name} invented?"},
        ),
        Fact("The {name} was first sold in {town}.", {"town": "In which town was the {name} first sold?"}),
        Fact(
            "Early models of the {name} weighed {kg} kilograms.",
            {"kg": "How many kilograms did early models of the {name} weigh?"},
        ),
        Fact(
            "{company} bought the patent for the {name} in {year}.",
            {
                "company": "Which company bought the patent for the {name}?",
                "year": "In what year was the patent for the {name} bought?",
            },
            years=(2, 25),
        ),
    ],
}

# Invented names. Word lists differ between kinds (and town and surname endings differ), so
# a name of one kind is never a whole word of a name of another kind.
TOWN = (
    [
        "Vela",
        "Ostra",
        "Karva",
        "Mire",
        "Thal",
        "Breva",
        "Quen",
        "Zora",
        "Haske",
        "Torva",
        "Wend",
        "Caer",
        "Nerva",
        "Yske",
        "Drav",
        "Pell",
        "Orme",
        "Sulla",
    ],
    ["mora", "hollow", "brook", "stead", "wick", "ford", "mere", "vale", "haven", "crest", "garth", "by"],
)
FIRST = [
    "Ilsa",
    "Tomek",
    "Orla",
    "Bram",
    "Senna",
    "Jorin",
    "Maelis",
    "Cato",
    "Rhosyn",
    "Idris",
    "Wren",
    "Talin",
    "Ysolde",
    "Corvin",
    "Petra",
    "Anouk",
    "Edric",
    "Liesl",
    "Fenna",
    "Oskar",
    "Halvar",
    "Mirin",
    "Bettan",
    "Sefa",
]
SURNAME = (
    ["Var", "Hol", "Esk", "Brin", "Mor", "Tess", "Quil", "Dray", "Alm", "Arn", "Fal", "Kest", "Ombr", "Gell"],
    ["wright", "ane", "ovic", "hart", "ell", "ington", "ard", "ier", "oway", "ek"],
)
RIVER = (
    ["Ol", "Ys", "Tav", "Sar", "Ven", "Dru", "Ask", "Mael", "Ith", "Cor"],
    ["vane", "ander", "wen", "isk", "orra", "ethe", "une"],
)
LAKE = ["Ysmer", "Carrow", "Feyl", "Orsk", "Tamsel", "Brudd", "Hollin", "Garra", "Pesk", "Umbra", "Siln", "Teave"]
MOUNT = ["Karsk", "Ebbor", "Tolvar", "Grisk", "Anvel", "Hoth", "Skelt", "Vinnel", "Drumm", "Ossery", "Faln", "Cairth"]
INVENTION = (
    [
        "Ferrowind",
        "Lumatic",
        "Corvel",
        "Brasswhistle",
        "Quorin",
        "Syrix",
        "Pellmann",
        "Tarrow",
        "Glimmer",
        "Oddvane",
        "Halcyn",
        "Wexley",
    ],
    ["loom", "lamp", "press", "kettle", "compass", "pump", "clock", "lathe", "bellows"],
)
COMPANY = (
    ["Korvath", "Ambrel", "Dunstal", "Essing", "Vorran", "Tallock", "Quarne", "Hesk", "Marrek", "Ivel", "Brokk", "Sallen"],
    ["Mills", "Ironworks", "Glassworks", "Trading Company", "Ropeworks", "Foundry", "Brewery"],
)
WEEKDAYS = [
    "Monday",
    "Tuesday",
    "Wednesday",
    "Thursday",
    "Friday",
    "Saturday",
    "Sunday",
]
PROFESSIONS = ["clockmaker", "glassblower", "surveyor", "printer", "cooper", "rope maker", "bookbinder", "tanner", "locksmith"]
NUMBERS = {  # kind -> (low, high, step)
    "people": (300, 9800, 10),
    "staff": (12, 900, 1),
    "km": (5, 480, 1),
    "small": (2, 40, 1),
    "kg": (3, 60, 1),
}


def normalise(text: str) -> str:
    """What the verifier compares: runs of whitespace -> one space, trimmed, lower case."""
    return " ".join(text.split()).lower()


def whole_word_count(needle: str, haystack: str) -> int:
    """Occurrences of `needle` not inside a longer word ("12" is not in "1812"), normalised."""
    pattern = rf"(?<!\w){re.escape(normalise(needle))}(?!\w)"
    return len(re.findall(pattern, normalise(haystack)))


def _compound(rng: random.Random, parts: tuple[list[str], list[str]], sep: str = "") -> str:
    head, tail = parts
    return f"{rng.choice(head)}{sep}{rng.choice(tail)}"


def _name_pools(rng: random.Random) -> dict[str, list[str]]:
    """Per-problem pools of distinct names; a few of each, so passages refer to each other."""

    def distinct(make, n: int, key=lambda s: s) -> list[str]:
        out: dict[str, str] = {}
        while len(out) < n:
            name = make()
            out.setdefault(key(name), name)
        return list(out.values())

    people = distinct(lambda: f"{rng.choice(FIRST)} {_compound(rng, SURNAME)}", 6)
    # first names and surnames both distinct: persons are later called by surname alone
    while len({p.split()[0] for p in people}) < 6 or len({p.split()[1] for p in people}) < 6:
        people = distinct(lambda: f"{rng.choice(FIRST)} {_compound(rng, SURNAME)}", 6)
    return {
        "town": distinct(lambda: _compound(rng, TOWN), 6),
        "person": people,
        "company": distinct(lambda: _compound(rng, COMPANY, " "), 5, key=lambda s: s.split()[0]),
        "river": distinct(lambda: _compound(rng, RIVER), 4),
        "invention": distinct(lambda: _compound(rng, INVENTION, " "), 5, key=lambda s: s.split()[0]),
        "lake": [f"Lake {x}" for x in rng.sample(LAKE, 4)],
        "mount": [f"Mount {x}" for x in rng.sample(MOUNT, 4)],
        "weekday": WEEKDAYS,
        "profession": PROFESSIONS,
    }


def _render(rng: random.Random, kind: str, name: str, facts: list[int], pools: dict) -> list[dict]:
    """The passage's sentences, each as the values it was filled with plus its `text`.
    A person is named in full in the first sentence and by surname after."""
    base_year = rng.randint(1720, 1890)
    sentences = []
    for position, index in enumerate(facts):
        fact = FACTS[kind][index]
        values = {"name": name if kind != "person" or position == 0 else name.split()[1]}
        for field in re.findall(r"{(\w+)}", fact.text):
            if field == "year":
                values[field] = str(base_year + rng.randint(*fact.years))
            elif field in NUMBERS:
                low, high, step = NUMBERS[field]
                values[field] = str(rng.randrange(low, high + 1, step))
            elif field != "name":  # a name from the pools, never the entity itself
                values[field] = rng.choice([v for v in pools[field] if v != name])
        sentences.append(values | {"text": fact.text.format(**values)})
    return sentences


def render_prompt(passages: list[str], question: str) -> str:
    numbered = "\n".join(f"[{k}] {p}" for k, p in enumerate(passages, start=1))
    return f"Read the passages and answer the question.\n\n{numbered}\n\nQuestion: {question}\n{INSTRUCTION}"


def make_problem(rng: random.Random, kind: str, fact_index: int, field: str) -> dict | None:
    """One problem whose answer is `field` of fact `fact_index` of a `kind` entity, or None
    when this draw is ambiguous or too long (the caller draws again from the same rng)."""
    pools = _name_pools(rng)
    n_passages = rng.choice([2, 3, 3, 4])
    kinds = [kind] + [kind if i == 0 or rng.random() < 0.4 else rng.choice(list(FACTS)) for i in range(n_passages - 1)]
    names = {k: iter(rng.sample(pools[k], len(pools[k]))) for k in FACTS}
    passages, target = [], {}
    for i, k in enumerate(kinds):
        name = next(names[k])
        n_facts = rng.randint(2, min(4, len(FACTS[k])))
        facts = sorted(rng.sample(range(len(FACTS[k])), n_facts))
        # a distractor of the target's kind states the same attribute, with another value
        if k == kind and fact_index not in facts:
            facts[rng.randrange(n_facts)] = fact_index
            facts = sorted(set(facts))
        sentences = _render(rng, k, name, facts, pools)
        if i == 0:
            target = sentences[facts.index(fact_index)] | {"name": name, "full": name}
        passages.append(" ".join(s["text"] for s in sentences))
    order = list(range(n_passages))
    rng.shuffle(order)
    sources = [passages[j] for j in order]
    prompt = render_prompt(sources, FACTS[kind][fact_index].questions[field].format(**target))
    answer = target[field]
    # the answer, as a whole word, is in the supporting sentence and nowhere else
    if sum(whole_word_count(answer, s) for s in sources) != 1 or len(prompt.split()) > MAX_WORDS:
        return None
    return {
        "prompt": prompt,
        "answer": answer,
        "sources": sources,
        "meta": json.dumps({"support": target["text"], "passage": order.index(0)}),
    }


def build(*, n: int = N_PROBLEMS, seed: int = BUILD_SEED) -> list[dict]:
    """The shipped set: n distinct problems, cycling over every (kind, fact, field) target."""
    rng = random.Random(seed)
    targets = [(k, i, f) for k, facts in FACTS.items() for i, fact in enumerate(facts) for f in fact.questions]
    rng.shuffle(targets)
    rows, prompts = [], set()
    while len(rows) < n:
        kind, fact_index, field = targets[len(rows) % len(targets)]
        for _ in range(1000):
            problem = make_problem(rng, kind, fact_index, field)
            if problem is not None and problem["prompt"] not in prompts:
                break
        else:
            raise RuntimeError(f"no unambiguous problem for {kind}/{fact_index}/{field} in 1000 draws")
        prompts.add(problem["prompt"])
        rows.append({"prompt_id": f"{TASK}-{len(rows):05d}", "task": TASK, **problem})
    return rows


def to_jsonl(rows: list[dict]) -> str:
    return "".join(json.dumps(row, ensure_ascii=False) + "\n" for row in rows)


if __name__ == "__main__":
    rows = build()
    PATH.write_text(to_jsonl(rows), encoding="utf-8")
    print(f"wrote {len(rows)} problems to {PATH}")
