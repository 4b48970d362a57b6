#!/bin/sh
# Puts SRC at DEST in one rename, so builds running at once (the test
# workers' programs) never read a half-written DEST.
#   scripts/replace-file.sh SRC DEST
set -eu
tmp="$2.new.$$"
cp "$1" "$tmp"
mv -f "$tmp" "$2"
