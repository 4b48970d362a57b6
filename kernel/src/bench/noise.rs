//! OS noise at boot (`noise=<seconds>`, test image): the selfish-detour
//! probe (crate::noise) on the boot CPU, printed in the format
//! bench/selfish.c, its Linux twin, shares.

use crate::println;

pub fn selfish_detour(seconds: u64, threshold_ns: u64) {
    let (r, listed) = crate::noise::selfish(seconds * 1_000_000_000, threshold_ns);
    println!(
        "noise: os=lwk cpu={} duration_ns={} threshold_ns={} loops={} detours={} \
         total_ns={} max_ns={} irqs={} kernel_detours={}",
        r.cpu,
        r.duration_ns,
        threshold_ns,
        r.loops,
        r.detours,
        r.total_ns,
        r.max_ns,
        r.irqs,
        r.kernel_detours
    );
    for d in listed {
        println!("detour {} {}", d.at_ns, d.len_ns);
    }
    println!("noise: end");
}
