"""A GSM8K-shaped dataset small enough for one short run (test_datasets_e2e and test_datasets)."""

from __future__ import annotations

# 12 problems a tiny model can see in one short run; golds carry GSM8K-style working
GSM = [
    {
        "question": f"Ann has {a} pens and buys {b} more. How many pens does she have?",
        "answer": f"She has {a} + {b} = <<{a}+{b}={a + b}>>{a + b} pens.\n#### {a + b}",
    }
    for a, b in [(3, 4), (5, 2), (7, 1), (2, 2), (6, 3), (4, 4), (1, 8), (9, 0), (5, 5), (3, 3), (8, 1), (2, 6)]
]
