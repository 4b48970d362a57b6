"""`atoll noise` (issue 16): the selfish-detour probe on an enclave's CPUs,
run in the LWK, which attributes every detour to itself (an interrupt was
taken during it) or not. Smoke test: the JSON's shape, and no interrupt on
an enclave CPU during its probe (a quiet LWK takes none: tickless, and the
probe holds the CPU). On a Linux CPU the probe runs in the CLI and
attributes by 100 ms windows: Linux's tick shows as its interrupts."""
import json


def test_noise_probe_on_every_enclave_cpu(vm):
    res = vm(r'''
atoll create --cpus 2 --mem 128M --name n > /dev/null || exit 9
atoll --json noise --enclave n --seconds 1 > /tmp/noise.json || exit 10
echo "JSON $(cat /tmp/noise.json)"
atoll noise --enclave n --cpus 1 --seconds 0.5 --threshold-ns 3000
atoll --json noise --linux-cpus 1 --seconds 1 > /tmp/linux.json || exit 12
echo "LINUX $(cat /tmp/linux.json)"
atoll noise; echo "NOWHERE: $?"
atoll --json noise --enclave n --cpus 1 --probe fwq --seconds 1 > /tmp/fwq.json || exit 13
echo "FWQ $(cat /tmp/fwq.json)"
atoll --json noise --enclave n --cpus 1 --linux-cpus 1 --probe ftq --quantum-ns 500000 --seconds 0.5 > /tmp/ftq.json || exit 14
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
    doc = json.loads(next(l[5:] for l in out.splitlines() if l.startswith("JSON ")))
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
    linux = json.loads(next(l[6:] for l in out.splitlines() if l.startswith("LINUX ")))["cpus"]
    assert [(c["kernel"], c["name"], c["cpu"]) for c in linux] == [("linux", "linux/1", 1)], linux
    c = linux[0]
    assert c["attribution"] == "per 100 ms window" and 0.9e9 <= c["duration_ns"] <= 1.5e9, c
    # Linux's tick runs on a busy CPU: interrupts, and detours put down to them.
    assert c["interrupts"] > 0 and c["kernel_detours"] > 0, c
    assert c["detours"] == c["kernel_detours"] + c["other_detours"], c
    # FWQ: 1 ms quanta of the same work on an enclave CPU, none interrupted.
    fwq = json.loads(next(l[4:] for l in out.splitlines() if l.startswith("FWQ ")))
    assert fwq["probe"] == "fwq" and fwq["quantum_ns"] == 1_000_000, fwq
    q = fwq["cpus"][0]
    assert q["kernel"] == "lwk" and 300 <= q["samples"] <= 2000, q
    assert q["min"] <= q["mean"] <= q["max"] and q["worst_over_mean"] >= 1, q
    assert q["with_interrupts"] == 0 and q["interrupts"] == 0, q
    assert len(q["listed"]) == q["samples"], q
    # FTQ on the enclave CPU and a Linux CPU: work per 0.5 ms quantum.
    ftq = json.loads(next(l[4:] for l in out.splitlines() if l.startswith("FTQ ")))
    lwk, lin = ftq["cpus"]
    assert (lwk["kernel"], lin["kernel"]) == ("lwk", "linux"), ftq
    assert lwk["samples"] >= 500 and lwk["min"] > 0 and lwk["min_over_mean"] <= 1, lwk
    assert lwk["with_interrupts"] == 0, lwk
    assert lin["with_interrupts"] is None and lin["interrupts"] > 0, lin
    assert "worst/mean" in out and "FWQ: the same work, about 1000.0 us per quantum" in out, out
    # --plot: an SVG with a row per CPU (detours over time and a histogram).
    svg = next(l for l in out.splitlines() if l.startswith("SVG "))
    assert "<svg" in svg and 'height="600"' in svg, svg
    captions = next(l for l in out.splitlines() if l.startswith("CAPTIONS "))
    for caption in ["n/1: ", "n/1: histogram", "linux/1: ", "linux/1: histogram"]:
        assert caption in captions, captions
    assert "noise: --plot /nonexistent/dir/p.svg: No such file" in out and "BAD PLOT: 1" in out, out
