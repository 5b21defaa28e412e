#!/usr/bin/env bash
# Run the code sandbox's test suites as an ordinary user (uid 65534, via setpriv), as CI does after
# `make test` (which runs as root): the sandbox must work for a non-root user wherever the kernel
# allows unprivileged user namespaces (bwrap --unshare-user), and say so clearly where it does not.
#   bash scripts/test-as-user.sh            # needs root (to switch user) and a built .venv
# The user cannot always reach the venv's interpreter (pyenv under a 0700 /root): then a throwaway
# venv is made from a system python of the same X.Y, reading the project venv's site-packages
# (same minor version: same ABI); nothing of the machine is changed.
set -euo pipefail
cd "$(dirname "$0")/.."
VENV=${VENV:-.venv}
USER_ID=${RLVR_TEST_UID:-65534}
SUITES=(tests/integration/test_sandbox.py tests/integration/test_redteam.py tests/integration/test_stdio.py
        tests/integration/test_humaneval.py tests/integration/test_verify_code.py tests/integration/test_code_trust.py)
as_user() { setpriv --reuid="$USER_ID" --regid="$USER_ID" --clear-groups env -i PATH=/usr/local/bin:/usr/bin:/bin \
    HOME=/tmp LANG=C.UTF-8 PYTHONDONTWRITEBYTECODE=1 "$@"; }

# the user must reach the checkout itself (pytest reads tests/ there; the project is installed in
# editable mode): a clone under a private folder (mktemp -d makes 0700 ones) cannot be tested this way
if ! as_user test -r "$PWD/pyproject.toml"; then
    blocked=$PWD
    d=$PWD; while [ "$d" != / ]; do as_user test -x "$d" || blocked=$d; d=$(dirname "$d"); done
    echo "test-as-user: user $USER_ID cannot read this checkout ($PWD): $blocked (mode $(stat -c %a "$blocked")) is closed" \
         "to other users; run 'chmod o+rx $blocked', or clone into a folder they can read"
    exit 1
fi

PY="$VENV/bin/python"
if ! as_user "$PY" -c "import rlvr" 2>/dev/null; then
    ver=$("$PY" -c 'import sys; print(f"{sys.version_info[0]}.{sys.version_info[1]}")')
    site=$(realpath "$("$PY" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')")
    base=$(command -v "/usr/bin/python$ver" || command -v "/usr/local/bin/python$ver" || true)
    [ -n "$base" ] || { echo "test-as-user: no python$ver an ordinary user can run (the venv's is unreachable)"; exit 1; }
    tmp=$(mktemp -d /tmp/rlvr-user-venv.XXXXXX)
    trap 'rm -rf "$tmp"' EXIT
    "$base" -m venv --without-pip "$tmp/venv"
    echo "import site; site.addsitedir('$site')" > "$tmp/venv/lib/python$ver/site-packages/rlvr-project.pth"
    chmod -R a+rX "$tmp"
    PY="$tmp/venv/bin/python"
fi
problem=$(as_user "$PY" -c "from rlvr.verify.code import sandbox_problem; print(sandbox_problem() or '')")
if [ -n "$problem" ]; then
    echo "test-as-user: the sandbox cannot run as an ordinary user here: $problem"
    exit 1
fi
as_user "$PY" -m pytest -q -p no:cacheprovider "${SUITES[@]}"
