#!/usr/bin/env bash
# The LWK relocates itself with only R_X86_64_RELATIVE entries; any other
# dynamic relocation would be silently skipped at boot, so refuse the image.
set -euo pipefail
img=$1
bad=$(readelf -rW "$img" | awk '/^[0-9a-f]+ +[0-9a-f]+ +R_X86_64_/ && $3 != "R_X86_64_RELATIVE" {print $3}' | sort -u)
if [ -n "$bad" ]; then
    echo "check-kernel-image: $img has relocations the boot code does not apply: $bad" >&2
    exit 1
fi
readelf -nW "$img" | grep -q "Xen" || { echo "check-kernel-image: $img has no PVH note" >&2; exit 1; }
