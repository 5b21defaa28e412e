"""Verdicts of the logic questions: true, false or unknown, read from an answer's text
(`normalise_verdict`) by the same table the verify SQL's norm_verdict macro is built from
(rlvr.verify.scoring), so SQL and Python share one list of spellings and sentences.

Test: .venv/bin/pytest tests/unit/verify/test_logic.py -q, tests/unit/verify/test_verify_tasks.py.
"""

from __future__ import annotations

import re

# (key, verdict) pairs. A key is a spelling after normalisation: lower case, every whitespace
# character removed, the curly apostrophes VERDICT_APOSTROPHES read as "'" ("Can’t tell" -> "can'ttell"),
# VERDICT_STRIP characters trimmed from the end and VERDICT_LEAD ones from the start
# ("Cannot be determined." -> "cannotbedetermined"; "True!" -> "true", but "!true" is a negation and no
# verdict at all), then one VERDICT_FONTS command around the
# whole of it dropped and trimmed again ("\\textsc{true}" -> "true"; "\\overline{true}" or
# "\\neg\\textsc{true}" are no verdict). The whitespace-free keys are those of the verify SQL's norm_answer macro
# (lower case, whitespace removed, one trailing '.' dropped), so a SQL macro can look norm_answer's
# output up in these pairs. "true"/"false" are about the statement for true-false-unknown
# questions and about "does it follow?" for syllogisms (yes = true, no = false).
VERDICT_APOSTROPHES = "’ʼ"  # U+2019 (also a closing quotation mark) and U+02BC
VERDICT_STRIP = ".!*\"'`“”‘"
VERDICT_LEAD = VERDICT_STRIP.replace("!", "")  # a leading '!' negates
# text commands norm_answer (macros.sql's norm_latex) leaves in place; none strikes or negates
VERDICT_FONTS = ("textsc", "texttt", "textup", "textnormal", "textsl", "emph")
VERDICT_FONT = r"^\\(?:" + "|".join(VERDICT_FONTS) + r")\{([^{}]*)\}$"
VERDICT_PAIRS: tuple[tuple[str, str], ...] = (
    ("true", "true"),
    ("yes", "true"),
    ("valid", "true"),
    ("correct", "true"),
    ("entailed", "true"),
    ("follows", "true"),
    ("itfollows", "true"),
    ("false", "false"),
    ("no", "false"),
    ("invalid", "false"),
    ("incorrect", "false"),
    ("contradicted", "false"),
    ("doesnotfollow", "false"),
    ("itdoesnotfollow", "false"),
    ("doesn'tfollow", "false"),
    ("itdoesn'tfollow", "false"),
    ("unknown", "unknown"),
    ("uncertain", "unknown"),
    ("undetermined", "unknown"),
    ("undecidable", "unknown"),
    ("indeterminate", "unknown"),
    ("unknowable", "unknown"),
    ("cannotbedetermined", "unknown"),
    ("can'tbedetermined", "unknown"),
    ("cannotbeknown", "unknown"),
    ("cannottell", "unknown"),
    ("can'ttell", "unknown"),
    ("notenoughinformation", "unknown"),
    ("insufficientinformation", "unknown"),
    ("neither", "unknown"),
)
VERDICTS: dict[str, str] = dict(VERDICT_PAIRS)

# A verdict in a sentence, read from the same normalised key, so only as a whole
# sentence of one of these forms, whose every word states the one verdict:
#   'Yes, it follows.'  'No, it does not follow.'  (yes/no before a verdict of its own kind)
#   'The statement is true.'  'The conclusion is unknown.'  'It is false.'  'The answer: true'
#   'The conclusion follows.'  'It does not follow.'
#   'True (Q follows by modus ponens)'  (a verdict and a short reason in brackets: VERDICT_REASON)
# Anything else is no verdict: a negation ('It is not true', 'The statement is not true'), a
# question ('True or false?', 'True?'), a hedge ('Not sure, maybe true'), a second verdict ('true...
# or maybe false', 'The premise is true but the conclusion is unknown', 'No, it follows'), or another
# subject ('The premise is true'). The key has no spaces, so the reason's words are not told apart:
# VERDICT_DENIED refuses a reason holding any negation, hedge, question, contrast or verdict word,
# even inside a longer word ('know' in 'unknown', 'or' in 'for'); that refuses some honest reasons,
# never pays a retracted verdict ('True (or false)', 'True (not really)', 'True (I think)').
_SUBJECT = "(?:the)?(?:statement|conclusion|claim|answer|query)|it"
_SENTENCE_WORDS = {  # verdict: (yes/no before it, adjectives after 'is', verbs after the subject)
    "true": ("yes", "true|valid|correct|entailed", "follows|does|doesfollow"),
    "false": ("no", "false|invalid|incorrect|contradicted", "doesnotfollow|doesn'tfollow|doesnot|doesn't"),
    "unknown": (
        "",
        "unknown|uncertain|undetermined|undecidable|indeterminate|unknowable",
        "cannotbedetermined|can'tbedetermined",
    ),
}
VERDICT_REASON = r"(?:\(([^()?]{1,80})\))?"
VERDICT_SENTENCES: tuple[tuple[str, str], ...] = tuple(
    (
        verdict,
        (f"(?:{lead}[,.:;!-]*)?" if lead else "")
        + f"(?:(?:{_SUBJECT})(?:is:?|:)(?:{adjectives})|(?:{_SUBJECT})(?:{verbs})|"
        + "|".join(re.escape(k) for k, v in VERDICT_PAIRS if v == verdict)
        + ")"
        + VERDICT_REASON,
    )
    for verdict, (lead, adjectives, verbs) in _SENTENCE_WORDS.items()
)
_DENIED = (
    "no|n't|never|nor|either|or|true|false|yes|unknown|certain|determin|decid|valid|correct|wrong|contra|negat|"
    "refut|disprov|fail|maybe|perhaps|possib|probab|likel|might|may|could|should|guess|think|believ|suppos|sure|"
    "assum|unless|if|but|however|though|actual|rather|instead|except|kidding|joke|opposite|revers|invers|"
    "[~¬!∼/|%\\d]"
)
VERDICT_DENIED: dict[str, str] = {"true": _DENIED, "false": _DENIED + "|follow|entail", "unknown": _DENIED + "|follow|entail"}


def normalise_verdict(text: str | None) -> str | None:
    """'Yes.' -> 'true', '**False**' -> 'false', 'Cannot be determined' -> 'unknown',
    'It doesn’t follow.' -> 'false', '\\textsc{true}' -> 'true', 'maybe' -> None (not a verdict).
    The keys of VERDICT_PAIRS, and the sentences of VERDICT_SENTENCES whose reason in brackets, if
    any, VERDICT_DENIED lets through ('Yes, it follows.', 'The statement is true.', 'True (Q follows
    by modus ponens)'), are the whole list."""
    if text is None:
        return None
    key = "".join(text.lower().split()).translate({ord(c): "'" for c in VERDICT_APOSTROPHES})
    key = re.sub(VERDICT_FONT, r"\1", key.lstrip(VERDICT_LEAD).rstrip(VERDICT_STRIP))
    key = key.lstrip(VERDICT_LEAD).rstrip(VERDICT_STRIP)
    if key in VERDICTS:
        return VERDICTS[key]
    for verdict, sentence in VERDICT_SENTENCES:
        m = re.fullmatch(sentence, key)
        if m and not re.search(VERDICT_DENIED[verdict], m.group(1) or ""):
            return verdict
    return None
