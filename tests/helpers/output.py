"""What a test reads from a command's output: its error lines, its text without line wrapping."""

from __future__ import annotations


def error_lines(output: str) -> list[str]:
    """The non-blank lines of a one-line user error: the first starts with error:, no traceback."""
    lines = [ln for ln in output.splitlines() if ln.strip()]
    assert lines and lines[0].startswith("error:"), output
    assert "Traceback" not in output
    return lines


def flat(output: str) -> str:
    """Output with its line wrapping undone (rich wraps at the terminal width)."""
    return " ".join(output.split())


def no_prefect() -> None:
    """Patched in for the function that starts Prefect: a check must fail before it is reached."""
    raise AssertionError("Prefect was started")
