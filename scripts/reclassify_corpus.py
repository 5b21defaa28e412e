"""Sort the red-team corpus under the answer contract (issue 38): score every non-code entry of
tests/data/redteam.json with the default config and report, by class, each entry whose reward changed.

    .venv/bin/python scripts/reclassify_corpus.py            # report only
    .venv/bin/python scripts/reclassify_corpus.py --write    # move refused right answers out

With --write, a right answer (reward > 0) the contract now scores lower moves to
tests/data/refused-by-contract.json, and an attack the contract now pays to
tests/data/paid-by-contract.json (a marker that holds the right value, with words before it that the
contract does not read), each with the reason the verifier gives and the reward it now gets.
"""

from __future__ import annotations

import json
import sys
import tempfile
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))

import test_redteam as rt  # noqa: E402  (the corpus, its problems and its scorer)

CORPUS = ROOT / "tests" / "data" / "redteam.json"
REFUSED = ROOT / "tests" / "data" / "refused-by-contract.json"
PAID = ROOT / "tests" / "data" / "paid-by-contract.json"


def main(write: bool) -> int:
    """Run with the two tables empty ('[]') to sort the whole corpus again from redteam.json."""
    corpus = json.loads(CORPUS.read_text(encoding="utf-8"))
    entries = [e for e in corpus if e["tier"] != "code"]
    with tempfile.TemporaryDirectory() as tmp:
        rows = rt._score(Path(tmp), entries)
    moved, paid = [], []
    for e, row in zip(entries, rows, strict=True):
        if abs(row["reward"] - e["reward"]) < 1e-9 and e.get("citations_supported") in (None, row["citations_supported"]):
            continue
        if e["reward"] > 0 and row["reward"] < e["reward"]:
            moved.append((e, row))
        else:
            paid.append((e, row))
    print(f"{len(entries)} entries scored; {len(moved)} right answers refused, {len(paid)} other changes")
    print(Counter((e["tier"], row["reason"].split("(")[0][:70]) for e, row in moved).most_common(30))
    for e, row in paid:
        print("PAID/CHANGED:", e["attack"][:100], repr(e["response"][:120]), "->", row["reward"], row["reason"][:120])
    if write:
        ids = {id(e) for e, _ in moved + paid}
        CORPUS.write_text(_dump([e for e in corpus if id(e) not in ids]), encoding="utf-8")
        for path, table in ((REFUSED, moved), (PAID, paid)):
            old = json.loads(path.read_text(encoding="utf-8")) if path.exists() else []
            path.write_text(
                _dump(old + [{**e, "reward": row["reward"], "reason": row["reason"]} for e, row in table]), encoding="utf-8"
            )
        print(f"moved {len(moved)} to {REFUSED.name}, {len(paid)} to {PAID.name}")
    return 0


def _dump(entries: list[dict]) -> str:
    return json.dumps(entries, ensure_ascii=False, indent=1) + "\n"


if __name__ == "__main__":
    sys.exit(main("--write" in sys.argv))
