#!/usr/bin/env bash
# Installs the named Debian packages that are not installed yet (as root, or
# with sudo on a developer's machine). Used by the scripts that need a tool or
# Linux's source only for themselves (checkpatch.sh, kdebug-build.sh).
#   scripts/apt-install.sh PACKAGE...
# Messages go to stderr.
set -euo pipefail

missing=()
for p in "$@"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed" || missing+=("$p")
done
[ ${#missing[@]} -gt 0 ] || exit 0

apt_get() {
    if [ "$(id -u)" -eq 0 ]; then
        DEBIAN_FRONTEND=noninteractive apt-get "$@"
    else
        sudo DEBIAN_FRONTEND=noninteractive apt-get "$@"
    fi
}

echo "apt-install: installing ${missing[*]}" >&2
# A fresh machine has no package lists yet: update them only when the first
# attempt fails.
if ! apt_get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null 2>&1; then
    apt_get update -qq >&2
    apt_get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi
