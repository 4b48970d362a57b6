#!/usr/bin/env bash
# Prints the version dir (e.g. 6.1.0-56-amd64) of the newest installed Debian
# kernel that the test VM can use: it needs both /boot/vmlinuz-<ver> (to boot)
# and /usr/lib/modules/<ver>/build (to build atoll.ko against the same kernel).
#   --install  first install the VM's Debian packages that are missing
# Messages go to stderr so that stdout is only the version.
set -euo pipefail

if [ "${1:-}" = "--install" ]; then
    pkgs=(linux-image-amd64 linux-headers-amd64 busybox-static cpio)
    missing=()
    for p in "${pkgs[@]}"; do
        dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed" || missing+=("$p")
    done
    if [ ${#missing[@]} -gt 0 ]; then
        echo "debian-kernel: installing ${missing[*]}" >&2
        export DEBIAN_FRONTEND=noninteractive
        apt-get update -qq >&2
        apt-get install -y -qq --no-install-recommends "${missing[@]}" >&2
    fi
elif [ $# -gt 0 ]; then
    echo "usage: $0 [--install]" >&2
    exit 2
fi

best=""
for img in /boot/vmlinuz-*; do
    [ -e "$img" ] || continue
    ver=${img#/boot/vmlinuz-}
    [ -d "/usr/lib/modules/$ver/build" ] || continue
    # Keep the highest version (sort -V orders 6.1.0-9 before 6.1.0-56).
    if [ -z "$best" ] || [ "$(printf '%s\n%s\n' "$best" "$ver" | sort -V | tail -n1)" = "$ver" ]; then
        best=$ver
    fi
done

if [ -z "$best" ]; then
    echo "debian-kernel: no kernel with both /boot/vmlinuz-<ver> and" \
         "/usr/lib/modules/<ver>/build; run 'scripts/debian-kernel.sh --install'" \
         "(installs linux-image-amd64 linux-headers-amd64)" >&2
    exit 1
fi
echo "$best"
