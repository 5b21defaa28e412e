"""The code tier: a response's ```python block run against the problem's tests in a bubblewrap
sandbox. rlvr/verify/code/sandbox.py's docstring says what it defends and what it does not."""
