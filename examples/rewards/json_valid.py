"""A reward plug-in in Python (README "Your own rewards"): is the completion valid JSON?

TRL's reward-function signature: completions (strings, or [{"role": "assistant", "content": ...}]
lists with `completions = "conversational"`) and the dataset's columns as keyword arguments; one
float per completion, or None when it cannot be scored (the row becomes verifier_error).
"""

import json


def json_valid(completions, **kwargs):
    """1.0 for a completion that parses as JSON, 0.0 otherwise; None for an empty one."""
    out = []
    for c in completions:
        text = c[0]["content"] if isinstance(c, list) else c
        if text == "":
            out.append(None)
            continue
        try:
            json.loads(text)
            out.append(1.0)
        except ValueError:
            out.append(0.0)
    return out
