"""`atoll noise` (issue 16): the selfish-detour probe on an enclave's CPUs,
run in the LWK, which attributes every detour to itself (an interrupt was
taken during it) or not. Smoke test: the JSON's shape, and no interrupt on
an enclave CPU during its probe (a quiet LWK takes none: tickless, and the
probe holds the CPU), then interrupts sent on purpose during a probe,
each attributed. On a Linux CPU the probe runs in the CLI and attributes
by 100 ms windows: Linux's tick shows as its interrupts."""
import json
import re

import vm_record


# Exits 0 when the FTQ run in argv[1] had, on the enclave CPU and with no
# interrupt there, a quantum with no work or fewer than 500 of its 1000
# quanta: only the host can stop a vCPU so, as this shared machine's
# scheduler does now and then (4 vCPUs on 2 cores, more under load: with
# the suite's other worker's VM running it came twice in a row in 3 of 3
# full runs on 2026-11-29, never alone). The probe is then run again, up to
# twice, each repeat counted like a repeated VM run; a third such run fails
# the test.
EMPTY_QUANTUM = (
    "import json, sys; c = json.load(open(sys.argv[1]))['cpus'][0]; "
    "stopped = c['min'] == 0 or c['samples'] < 500; "
    "sys.exit(0 if stopped and c['with_interrupts'] == 0 and c['interrupts'] == 0 else 1)"
)


def test_noise_probe_on_every_enclave_cpu(vm):
    res = vm(f"EMPTY_QUANTUM=\"{EMPTY_QUANTUM}\"\n" + r'''
atoll create --cpus 2 --mem 128M --name n > /dev/null || exit 9
atoll --json noise --enclave n --seconds 1 > /tmp/noise.json || exit 10
echo "JSON $(cat /tmp/noise.json)"
atoll noise --enclave n --cpus 1 --seconds 0.5 --threshold-ns 3000
atoll --json noise --linux-cpus 1 --seconds 1 > /tmp/linux.json || exit 12
echo "LINUX $(cat /tmp/linux.json)"
atoll noise; echo "NOWHERE: $?"
atoll --json noise --enclave n --cpus 1 --probe fwq --seconds 1 > /tmp/fwq.json || exit 13
echo "FWQ $(cat /tmp/fwq.json)"
for try in 1 2 3; do
  atoll --json noise --enclave n --cpus 1 --linux-cpus 1 --probe ftq --quantum-ns 500000 --seconds 0.5 \
    > /tmp/ftq.json || exit 14
  python3 -c "$EMPTY_QUANTUM" /tmp/ftq.json || break
  echo "FTQ EMPTY QUANTUM $(cat /tmp/ftq.json)"
done
echo "FTQ $(cat /tmp/ftq.json)"
atoll noise --enclave n --probe fwq --seconds 0.5
atoll noise --enclave n --cpus 1 --linux-cpus 1 --seconds 0.5 --plot /tmp/noise.svg > /dev/null || exit 15
echo "SVG $(head -c 200 /tmp/noise.svg | tr -d '\n')"
echo "CAPTIONS $(grep -E '^[a-z]+/1: ' /tmp/noise.svg | tr '\n' '|')"
atoll noise --enclave n --cpus 1 --seconds 0.5 --plot /nonexistent/dir/p.svg > /dev/null; echo "BAD PLOT: $?"
atoll noise --enclave n --cpus 5 --seconds 1; echo "NO SUCH CPU: $?"
atoll noise --enclave n --seconds 0; echo "ZERO SECONDS: $?"
atoll destroy n > /dev/null || exit 11
''', timeout=300)
    assert res.status == 0, res.output
    out = res.output
    doc = json.loads(next(line[5:] for line in out.splitlines() if line.startswith("JSON ")))
    assert doc["probe"] == "selfish" and doc["threshold_ns"] == 5000, doc
    assert [c["cpu"] for c in doc["cpus"]] == [0, 1], doc
    for c in doc["cpus"]:
        for key in ["duration_ns", "loops", "detours", "per_second", "availability", "max_ns", "p50_ns",
                    "p99_ns", "p999_ns", "interrupts", "kernel_detours", "other_detours", "listed"]:
            assert key in c, (key, c)
        assert 0.9e9 <= c["duration_ns"] <= 1.5e9 and c["loops"] > 1000, c
        assert 0 < c["availability"] <= 1 and c["kernel"] == "lwk", c
        assert c["detours"] == c["kernel_detours"] + c["other_detours"], c
        assert len(c["listed"]) == min(c["detours"], 2000), c
        # The target: the LWK takes no interrupt on a CPU it probes.
        assert c["interrupts"] == 0 and c["kernel_detours"] == 0, c
    table = out[out.index("CPU  "):]
    assert table.splitlines()[1].split()[0] == "n/1", table
    assert "threshold 3.0 us" in table, table
    assert "enclave n has no LWK CPU 5" in out and "NO SUCH CPU: 1" in out, out
    assert "ZERO SECONDS: 2" in out, out
    assert "say where to probe" in out and "NOWHERE: 1" in out, out
    linux = json.loads(next(line[6:] for line in out.splitlines() if line.startswith("LINUX ")))["cpus"]
    assert [(c["kernel"], c["name"], c["cpu"]) for c in linux] == [("linux", "linux/1", 1)], linux
    c = linux[0]
    assert c["attribution"] == "per 100 ms window" and 0.9e9 <= c["duration_ns"] <= 1.5e9, c
    # Linux's tick runs on a busy CPU: interrupts, and detours put down to them.
    assert c["interrupts"] > 0 and c["kernel_detours"] > 0, c
    assert c["detours"] == c["kernel_detours"] + c["other_detours"], c
    # FWQ: 1 ms quanta of the same work on an enclave CPU, none interrupted.
    fwq = json.loads(next(line[4:] for line in out.splitlines() if line.startswith("FWQ ")))
    assert fwq["probe"] == "fwq" and fwq["quantum_ns"] == 1_000_000, fwq
    q = fwq["cpus"][0]
    assert q["kernel"] == "lwk" and 300 <= q["samples"] <= 2000, q
    assert q["min"] <= q["mean"] <= q["max"] and q["worst_over_mean"] >= 1, q
    assert q["with_interrupts"] == 0 and q["interrupts"] == 0, q
    assert len(q["listed"]) == q["samples"], q
    # FTQ on the enclave CPU and a Linux CPU: work per 0.5 ms quantum.
    if "FTQ EMPTY QUANTUM " in out:
        vm_record.repeated("FTQ probe run again: an enclave quantum had no work, or most were "
                           "missing, with no interrupt (the host stopped the vCPU)")
    ftq = json.loads(next(line[4:] for line in out.splitlines() if line.startswith("FTQ {")))
    lwk, lin = ftq["cpus"]
    assert (lwk["kernel"], lin["kernel"]) == ("lwk", "linux"), ftq
    assert lwk["samples"] >= 500 and lwk["min"] > 0 and lwk["min_over_mean"] <= 1, lwk
    assert lwk["with_interrupts"] == 0, lwk
    assert lin["with_interrupts"] is None and lin["interrupts"] > 0, lin
    assert "worst/mean" in out and "FWQ: the same work, about 1000.0 us per quantum" in out, out
    # --plot: an SVG with a row per CPU (detours over time and a histogram).
    svg = next(line for line in out.splitlines() if line.startswith("SVG "))
    assert "<svg" in svg and 'height="600"' in svg, svg
    captions = next(line for line in out.splitlines() if line.startswith("CAPTIONS "))
    for caption in ["n/1: ", "n/1: histogram", "linux/1: ", "linux/1: histogram"]:
        assert caption in captions, captions
    assert "noise: --plot /nonexistent/dir/p.svg: No such file" in out and "BAD PLOT: 1" in out, out


# Round trips from a program in enclave b to one in enclave a during a's probe.
PINGS = 50


def test_interrupts_during_a_probe_are_the_lwks(vm, programs):
    # A program on a's CPU 1 answers one in enclave b PINGS times while a's
    # CPU 0, which takes every message to a (kmsg's first CPU), runs the
    # probe: each message sends it an interrupt. (`atoll ping` cannot do
    # it: enclave ioctls, the probe's own, run one at a time.) Both programs
    # start before the probe, as starting one messages CPU 0; the sender
    # waits 1.5 s, the probe runs 3 s from when it said so.
    res = vm(rf'''
atoll create --cpus 2 --mem 128M --name a > /dev/null || exit 9
atoll create --cpus 1 --mem 128M --name b > /dev/null || exit 10
aid=$(atoll --json status a | sed -n 's/.*"id":\([0-9]*\).*/\1/p')
said() {{ for _ in $(seq 300); do grep -q "$1" $2 && return 0; sleep 0.1; done; return 1; }}
atoll run a --cpus 1-1 -- /extra/msgping serve 9 {PINGS + 1} > /tmp/serve.txt &
serve=$!
said "serving port 9" /tmp/serve.txt || exit 11
atoll run b -- /extra/msgping send $aid 9 {PINGS} 64 1500 > /tmp/send.txt &
send=$!
said "sending in" /tmp/send.txt || exit 12
atoll --json noise --enclave a --cpus 0 --seconds 3 --threshold-ns 20000 > /tmp/irq.json || exit 13
echo "PROBE $(cat /tmp/irq.json)"
grep "round trips" /tmp/send.txt | sed 's/^/DURING THE PROBE: /'
wait $send || exit 14
# The server's last round, from Linux once the probe is over.
/extra/msgping send $aid 9 1 16 > /dev/null || exit 15
wait $serve || exit 16
atoll destroy a > /dev/null || exit 17
atoll destroy b > /dev/null || exit 18
''', extra_dir=str(programs), timeout=300)
    assert res.status == 0, res.output
    out = res.output
    # Every round trip ended while the probe ran, each message handled by
    # an interrupt on CPU 0 (nothing else reads a's rings).
    assert re.search(rf"DURING THE PROBE: msgping: {PINGS} round trips of 64 bytes "
                     rf"to kernel \d+ port 9, 0 bad", out), out
    c = json.loads(next(line[6:] for line in out.splitlines() if line.startswith("PROBE ")))["cpus"][0]
    assert (c["name"], c["kernel"]) == ("a/0", "lwk"), c
    summary = {k: v for k, v in c.items() if k != "listed"}
    # At most one interrupt per ping and nothing else (a quiet LWK CPU
    # takes none, as the test above checks). Fewer when the host stalls the
    # vCPU mid-handler and pings pile up: the handler drains the ring until
    # it is empty, and IPIs of one vector that come while one is pending
    # merge in the APIC. So equality cannot be asked for.
    assert 0 < c["interrupts"] <= PINGS, summary
    # Exactly the detours with an interrupt are the LWK's. (The round trips
    # come early in the probe, within the first 2000 detours listed; some
    # handlers take less than the 20 us threshold, so make no detour.)
    listed = c["listed"]
    charged = [d for d in listed if d[2] > 0]
    if len(listed) == c["detours"]:
        assert 0 < c["kernel_detours"] == len(charged), (summary, charged)
    else:
        # A loaded host: more detours than the probe lists (NOISE_MAX_LISTED),
        # and round trips stretched past them; the rest are counted only.
        assert 0 < len(charged) <= c["kernel_detours"], (summary, charged)
    assert sum(d[2] for d in charged) <= c["interrupts"], (summary, charged)
    assert c["detours"] == c["kernel_detours"] + c["other_detours"], summary
    if len(listed) == c["detours"]:
        assert c["other_detours"] == len(listed) - len(charged), summary
