#!/usr/bin/env bash
# Checks every tracked shell script with shellcheck: the *.sh files and those
# without the extension whose first line runs a shell (.ci/run). The guest
# scripts have no shebang (their drivers put variables first); a
# '# shellcheck shell=sh' line at their top names their shell.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

files=()
while IFS= read -r f; do
    [ -f "$f" ] || continue  # deleted, not yet committed
    case $f in
    *.sh) files+=("$f") ;;
    *)
        first=
        IFS= read -r first < "$f" || true
        if [[ $first =~ ^\#!.*[/\ ](sh|bash|dash)([[:space:]]|$) ]]; then
            files+=("$f")
        fi
        ;;
    esac
done < <(git ls-files)

shellcheck "${files[@]}"
echo "shellcheck: ${#files[@]} files checked"
