"""Twenty small stdin/stdout programming problems (sum a list, reverse words, fizzbuzz, gcd, ...).

Hand-written, each with a reference program and 3-5 cases, as rows of rlvr.schema.PROBLEMS:
- prompt: the statement and its first case as an example, asking for a complete Python program
  (reads standard input, prints the answer) in one ```python block;
- answer: the reference program, the same shape as the code a response should contain;
- tests: `{"stdin_stdout": [{"stdin": ..., "stdout": ...}, ...]}` (rlvr.verify.code.io_tests_json),
  which `rlvr.verify.code.make_check` turns into IOTests: output compared line by line after
  stripping whitespace, fraction = cases passed;
- meta: {"kind": "stdin_stdout"}.

The expected outputs are written by hand, not produced by the reference programs, so
`pytest tests/integration/test_stdio.py` (every reference passes every case in the sandbox) checks both.
Run `python -m rlvr.data.stdio` to print one.
"""

from __future__ import annotations

import json

from rlvr.data.splits import split_indices

from rlvr.verify.code import io_tests_json

TASK = "code"
INSTRUCTION = (
    "Write a complete Python 3 program that reads its input from standard input and prints the "
    "answer to standard output. Reply with the whole program in one ```python code block."
)
TEMPLATE = INSTRUCTION + "\n\n{prompt}"  # default user turn; the rows hold statement + example

# (name, statement, reference program, [(stdin, expected stdout), ...])
SPECS: list[tuple[str, str, str, list[tuple[str, str]]]] = [
    (
        "sum-list",
        ("The first line holds n (1 <= n <= 1000), the second line n integers separated by spaces. Print their sum."),
        "n = int(input())\nprint(sum(map(int, input().split()[:n])))\n",
        [
            ("3\n1 2 3\n", "6\n"),
            ("1\n-5\n", "-5\n"),
            ("4\n10 -10 7 0\n", "7\n"),
            ("2\n1000000 2000000\n", "3000000\n"),
        ],
    ),
    (
        "reverse-words",
        ("One line of words separated by single spaces. Print the words in reverse order, separated by single spaces."),
        "print(' '.join(input().split()[::-1]))\n",
        [
            ("hello world\n", "world hello\n"),
            ("a b c d\n", "d c b a\n"),
            ("single\n", "single\n"),
        ],
    ),
    (
        "count-vowels",
        "One line of text. Print how many of its characters are vowels (a, e, i, o, u, in either case).",
        "print(sum(c in 'aeiouAEIOU' for c in input()))\n",
        [
            ("hello world\n", "3\n"),
            ("AEIOU xyz\n", "5\n"),
            ("rhythm\n", "0\n"),
            ("Programming Puzzles\n", "5\n"),
        ],
    ),
    (
        "fizzbuzz",
        (
            "One integer n (1 <= n <= 100). For i from 1 to n print one line: FizzBuzz if i is divisible "
            "by 15, Fizz if by 3, Buzz if by 5, else i itself."
        ),
        (
            "n = int(input())\nfor i in range(1, n + 1):\n"
            "    print('FizzBuzz' if i % 15 == 0 else 'Fizz' if i % 3 == 0 else 'Buzz' if i % 5 == 0 else i)\n"
        ),
        [
            ("5\n", "1\n2\nFizz\n4\nBuzz\n"),
            ("1\n", "1\n"),
            (
                "15\n",
                "1\n2\nFizz\n4\nBuzz\nFizz\n7\n8\nFizz\nBuzz\n11\nFizz\n13\n14\nFizzBuzz\n",
            ),
        ],
    ),
    (
        "gcd",
        "Two positive integers a and b on one line. Print their greatest common divisor.",
        "a, b = map(int, input().split())\nwhile b:\n    a, b = b, a % b\nprint(a)\n",
        [
            ("12 18\n", "6\n"),
            ("7 13\n", "1\n"),
            ("100 10\n", "10\n"),
            ("1071 462\n", "21\n"),
        ],
    ),
    (
        "max-min",
        (
            "The first line holds n (1 <= n <= 1000), the second line n integers. Print the largest and "
            "the smallest of them, separated by a space."
        ),
        "input()\nxs = list(map(int, input().split()))\nprint(max(xs), min(xs))\n",
        [
            ("5\n3 9 -2 7 0\n", "9 -2\n"),
            ("1\n42\n", "42 42\n"),
            ("3\n-1 -1 -1\n", "-1 -1\n"),
        ],
    ),
    (
        "palindrome",
        (
            "One line of text. Print YES if its letters, read without case and ignoring every character "
            "that is not a letter, are the same backwards, else NO."
        ),
        "s = [c.lower() for c in input() if c.isalpha()]\nprint('YES' if s == s[::-1] else 'NO')\n",
        [
            ("Racecar\n", "YES\n"),
            ("A man, a plan, a canal: Panama\n", "YES\n"),
            ("hello\n", "NO\n"),
            ("ab\n", "NO\n"),
        ],
    ),
    (
        "factorial",
        "One integer n (0 <= n <= 25). Print n! (the product 1 * 2 * ... * n; 0! = 1).",
        "import math\nprint(math.factorial(int(input())))\n",
        [
            ("5\n", "120\n"),
            ("0\n", "1\n"),
            ("10\n", "3628800\n"),
            ("20\n", "2432902008176640000\n"),
        ],
    ),
    (
        "fibonacci",
        ("One integer n (0 <= n <= 90). Print the n-th Fibonacci number, where F(0) = 0, F(1) = 1 and F(n) = F(n-1) + F(n-2)."),
        "a, b = 0, 1\nfor _ in range(int(input())):\n    a, b = b, a + b\nprint(a)\n",
        [("0\n", "0\n"), ("1\n", "1\n"), ("10\n", "55\n"), ("50\n", "12586269025\n")],
    ),
    (
        "primes-up-to",
        (
            "One integer n (1 <= n <= 10000). Print every prime number p <= n in increasing order, "
            "separated by spaces (an empty line if there is none)."
        ),
        "n = int(input())\nprint(' '.join(str(p) for p in range(2, n + 1) if all(p % d for d in range(2, int(p**0.5) + 1))))\n",
        [
            ("10\n", "2 3 5 7\n"),
            ("2\n", "2\n"),
            ("1\n", "\n"),
            ("30\n", "2 3 5 7 11 13 17 19 23 29\n"),
        ],
    ),
    (
        "digit-sum",
        "One non-negative integer with up to 1000 digits. Print the sum of its digits.",
        "print(sum(int(c) for c in input().strip()))\n",
        [("12345\n", "15\n"), ("0\n", "0\n"), ("99999999999999999999\n", "180\n")],
    ),
    (
        "word-count",
        (
            "Several lines of text, up to the end of the input. Print how many words there are in total "
            "(a word is a maximal run of characters other than spaces, tabs and newlines)."
        ),
        "import sys\nprint(len(sys.stdin.read().split()))\n",
        [
            ("the quick brown fox\njumps over\n", "6\n"),
            ("one\n", "1\n"),
            ("  spaced   out  \n\n  words\n", "3\n"),
        ],
    ),
    (
        "sort-numbers",
        (
            "The first line holds n (1 <= n <= 1000), the second line n integers. Print them in "
            "increasing order, separated by spaces."
        ),
        "input()\nprint(*sorted(map(int, input().split())))\n",
        [
            ("5\n3 1 4 1 5\n", "1 1 3 4 5\n"),
            ("1\n7\n", "7\n"),
            ("4\n10 -3 0 -30\n", "-30 -3 0 10\n"),
        ],
    ),
    (
        "most-common-letter",
        (
            "One line of lowercase letters. Print the letter that occurs most often; on a tie, the one "
            "that comes first in the alphabet."
        ),
        "from collections import Counter\nc = Counter(input().strip())\nprint(min(c, key=lambda x: (-c[x], x)))\n",
        [
            ("hello\n", "l\n"),
            ("abcabc\n", "a\n"),
            ("zzzya\n", "z\n"),
            ("banana\n", "a\n"),
        ],
    ),
    (
        "to-binary",
        "One non-negative integer n (n < 2**62). Print n in binary, without leading zeros (0 is 0).",
        "print(bin(int(input()))[2:])\n",
        [
            ("5\n", "101\n"),
            ("0\n", "0\n"),
            ("255\n", "11111111\n"),
            ("1024\n", "10000000000\n"),
        ],
    ),
    (
        "transpose",
        (
            "The first line holds r and c (1 <= r, c <= 20), then r lines of c integers: a matrix. Print "
            "its transpose: c lines of r integers separated by spaces."
        ),
        (
            "r, c = map(int, input().split())\nm = [input().split() for _ in range(r)]\n"
            "for j in range(c):\n    print(' '.join(m[i][j] for i in range(r)))\n"
        ),
        [
            ("2 3\n1 2 3\n4 5 6\n", "1 4\n2 5\n3 6\n"),
            ("1 1\n9\n", "9\n"),
            ("3 1\n1\n2\n3\n", "1 2 3\n"),
        ],
    ),
    (
        "prefix-sums",
        (
            "The first line holds n (1 <= n <= 1000), the second line n integers. Print their running "
            "sums (the first, the first two, ...), separated by spaces."
        ),
        "import itertools\ninput()\nprint(*itertools.accumulate(map(int, input().split())))\n",
        [("4\n1 2 3 4\n", "1 3 6 10\n"), ("1\n5\n", "5\n"), ("3\n5 -5 5\n", "5 0 5\n")],
    ),
    (
        "caesar",
        (
            "The first line holds an integer k (0 <= k <= 25), the second a line of text. Shift every "
            "letter k places forward in the alphabet, wrapping from z to a and keeping its case; leave "
            "every other character as it is. Print the result."
        ),
        (
            "k = int(input())\nout = []\nfor ch in input():\n    if ch.isalpha() and ch.isascii():\n"
            "        base = ord('a') if ch.islower() else ord('A')\n        ch = chr((ord(ch) - base + k) % 26 + base)\n"
            "    out.append(ch)\nprint(''.join(out))\n"
        ),
        [
            ("3\nabc xyz\n", "def abc\n"),
            ("1\nHello, World!\n", "Ifmmp, Xpsme!\n"),
            ("0\nsame\n", "same\n"),
        ],
    ),
    (
        "anagrams",
        (
            "Two words on two lines. Print YES if one is an anagram of the other (the same letters the "
            "same number of times, ignoring case), else NO."
        ),
        "a, b = input().strip().lower(), input().strip().lower()\nprint('YES' if sorted(a) == sorted(b) else 'NO')\n",
        [
            ("listen\nsilent\n", "YES\n"),
            ("Dusty\nstudy\n", "YES\n"),
            ("apple\npapel\n", "YES\n"),
            ("abc\nabd\n", "NO\n"),
        ],
    ),
    (
        "second-largest",
        (
            "The first line holds n (1 <= n <= 1000), the second line n integers. Print the second "
            "largest distinct value, or NONE if there are fewer than two distinct values."
        ),
        "input()\nxs = sorted(set(map(int, input().split())))\nprint(xs[-2] if len(xs) > 1 else 'NONE')\n",
        [
            ("5\n1 5 3 5 4\n", "4\n"),
            ("3\n7 7 7\n", "NONE\n"),
            ("2\n-1 -2\n", "-2\n"),
            ("1\n9\n", "NONE\n"),
        ],
    ),
]
N_PROBLEMS = len(SPECS)


def render_prompt(statement: str, example: tuple[str, str]) -> str:
    given, expected = (text if text.endswith("\n") else text + "\n" for text in example)
    return f"{statement}\n\nExample input:\n```\n{given}```\nExample output:\n```\n{expected}```"


def to_row(number: int, *, split: str) -> dict:
    _, statement, program, cases = SPECS[number]
    return {
        "prompt_id": f"stdio-{number:03d}",
        "task": TASK,
        "split": split,
        "prompt": render_prompt(statement, cases[0]),
        "answer": program,
        "tests": io_tests_json(cases, shown=[0]),  # the prompt shows the first case
        "sources": None,
        "meta": json.dumps({"kind": "stdin_stdout"}),
    }


def generate(*, seed: int = 0, n_train: int = 0, n_test: int = N_PROBLEMS) -> list[dict]:
    """Rows in prompt_id order; with n_train > 0, a seed-shuffled n_train problems are "train"."""
    split = split_indices(N_PROBLEMS, seed=seed, n_train=n_train, n_test=n_test)
    return [to_row(i, split=s) for i, s in split.items()]


if __name__ == "__main__":
    row = generate()[0]
    print(row["prompt_id"], row["split"], row["meta"])
    print(row["prompt"], "\n---\n", row["answer"], "\n---\n", row["tests"])
