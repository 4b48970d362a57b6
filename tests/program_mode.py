"""The program tests' second mode, in the long set (issue 41): every
program root starts with `atoll run` runs at CPL 0 (`--hrt`), in enclaves
root creates with `--hrt`, through an `atoll` first in the guest's PATH
that adds the flag; what other users run stays in ring 3. The tests' checks
are the same: a kernel-mode program behaves as in ring 3."""

# The modules whose tests run in both modes (conftest.py parametrizes them).
MODULES = {"test_processes", "test_signals", "test_fork", "test_exec", "test_dynamic",
           "test_linux_api", "test_run"}

HRT_PREFIX = r'''
mkdir -p /tmp/hrt-bin
cat > /tmp/hrt-bin/atoll <<'HRT_WRAPPER'
#!/bin/sh
# Who runs it, read without a fork (tests count the processes atoll makes).
while read -r key uid rest; do [ "$key" = "Uid:" ] && break; done < /proc/self/status
if [ "$uid" = 0 ]; then
    case "$1" in create|run) c=$1; shift; exec /bin/atoll "$c" --hrt "$@" ;; esac
fi
exec /bin/atoll "$@"
HRT_WRAPPER
chmod +x /tmp/hrt-bin/atoll
export PATH=/tmp/hrt-bin:$PATH
echo "PROGRAM MODE: kernel (--hrt)"
'''


def script_for(mode, text):
    """The VM script `text` for the program mode ("ring3" or "hrt")."""
    return HRT_PREFIX + text if mode == "hrt" else text
