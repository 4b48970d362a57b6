//! Proves the C header generated from this crate (`atoll_abi_gen.h`, by
//! scripts/abi-header.sh with cbindgen, through `atoll_abi.h`) agrees with
//! the crate byte for byte: a check of the generator. It writes a C program
//! that prints, from `atoll_abi.h`, every struct's size, every field's
//! offset and size, and every constant, compiles it with the system C
//! compiler, and compares each line with what Rust says.

use atoll_abi::*;
use std::fmt::Write as _;
use std::mem::{offset_of, size_of};
use std::process::Command;

/// The size of the field `field` picks out, with no value of T made (one
/// zeroed copy per field overflowed the test thread's stack).
fn field_size<T, F>(_field: impl Fn(&T) -> &F) -> usize {
    size_of::<F>()
}

/// (C expression to print, Rust value) pairs.
fn expectations() -> Vec<(String, u64)> {
    let mut v: Vec<(String, u64)> = Vec::new();
    macro_rules! layout {
        ($c:literal, $rs:ty { $($cf:literal : $rf:ident),* $(,)? }) => {{
            v.push((format!("sizeof(struct {})", $c), size_of::<$rs>() as u64));
            $(
                v.push((format!("offsetof(struct {}, {})", $c, $cf), offset_of!($rs, $rf) as u64));
                v.push((format!("sizeof(((struct {} *)0)->{})", $c, $cf), field_size(|s: &$rs| &s.$rf) as u64));
            )*
        }};
    }
    layout!("atoll_header", Header { "magic": magic, "version": version, "size": size, "reserved": reserved });
    layout!("atoll_mem_range", MemRange { "start": start, "size": size });
    layout!("atoll_boot_params", BootParams {
        "hdr": hdr, "enclave_id": enclave_id, "cpu_count": cpu_count, "mem_count": mem_count,
        "host_apic_id": host_apic_id, "x2apic": x2apic, "pad0": pad0, "tsc_khz": tsc_khz,
        "lapic_phys": lapic_phys, "trampoline_phys": trampoline_phys, "boot_cr3": boot_cr3,
        "shared_phys": shared_phys, "shared_size": shared_size, "status_phys": status_phys,
        "console_phys": console_phys, "console_size": console_size, "image_phys": image_phys,
        "image_size": image_size, "apic_ids": apic_ids, "mem": mem, "cmdline": cmdline,
    });
    layout!("atoll_trampoline_slots", TrampolineSlots {
        "cr3": cr3, "stack": stack, "entry": entry, "arg0": arg0, "arg1": arg1,
    });
    layout!("atoll_console", Console { "hdr": hdr, "capacity": capacity, "head": head });
    layout!("atoll_status", Status {
        "hdr": hdr, "lwk_state": lwk_state, "online_cpus": online_cpus, "panic_cpu": panic_cpu,
        "pad0": pad0, "free_bytes": free_bytes, "total_bytes": total_bytes,
    });
    layout!("atoll_kmsg_head", KmsgHead { "type": kind, "slots": slots, "len": len });
    layout!("atoll_kmsg_slot", KmsgSlot { "stamp": stamp, "readers": readers, "data": data });
    layout!("atoll_kmsg_ring", KmsgRing {
        "hdr": hdr, "slots": slots, "receivers": receivers, "pad0": pad0, "head": head,
        "pad1": pad1, "tail": tail, "pad2": pad2, "polling": polling, "pad3": pad3,
    });
    layout!("atoll_kmsg_check", KmsgCheck { "sender": sender, "seq": seq, "sum": sum, "pad0": pad0 });
    layout!("atoll_create", Create {
        "hdr": hdr, "name": name, "cpus": cpus, "cpu_count": cpu_count,
        "boot_timeout_ms": boot_timeout_ms, "mem_bytes": mem_bytes, "image_ptr": image_ptr,
        "image_size": image_size, "image_mem_size": image_mem_size, "entry_offset": entry_offset,
        "trampoline_offset": trampoline_offset, "trampoline_size": trampoline_size,
        "cmdline": cmdline, "owner_uid": owner_uid, "owner_gid": owner_gid,
        "serve_nice": serve_nice, "hrt": hrt, "id": id,
        "mem_count": mem_count, "taken_cpus": taken_cpus,
        "mem": mem, "phase_ns": phase_ns, "error": error,
    });
    layout!("atoll_enclave_info", EnclaveInfo {
        "hdr": hdr, "index": index, "id": id, "state": state, "cpu_count": cpu_count,
        "mem_count": mem_count, "serve_nice": serve_nice, "name": name, "cpus": cpus, "mem": mem,
        "uptime_ns": uptime_ns, "phase_ns": phase_ns, "lwk_free_bytes": lwk_free_bytes,
        "lwk_total_bytes": lwk_total_bytes, "programs": programs, "resizes": resizes,
        "resize": resize, "lwk_cpus": lwk_cpus, "owner_uid": owner_uid, "owner_gid": owner_gid,
        "yours": yours, "hrt": hrt,
    });
    layout!("atoll_chown", Chown { "hdr": hdr, "id": id, "uid": uid, "gid": gid, "pad0": pad0, "error": error });
    layout!("atoll_console_read", ConsoleRead {
        "hdr": hdr, "id": id, "pad0": pad0, "offset": offset, "buf_ptr": buf_ptr,
        "buf_len": buf_len, "copied": copied, "head": head,
    });
    layout!("atoll_vdso_data", VdsoData { "ns_mult": ns_mult, "realtime_offset_ns": realtime_offset_ns });
    layout!("atoll_ping", Ping { "hdr": hdr, "id": id, "from_id": from_id, "rtt_ns": rtt_ns });
    layout!("atoll_kmsg_peer", KmsgPeer {
        "peer_id": peer_id, "notify_apic_id": notify_apic_id, "block_phys": block_phys,
        "block_size": block_size, "out_offset": out_offset, "in_offset": in_offset,
        "slots": slots, "programs_talk": programs_talk, "line_offset": line_offset,
    });
    layout!("atoll_kmsg_group", KmsgGroup {
        "group": group, "index": index, "count": count, "slots": slots, "block_phys": block_phys,
        "block_size": block_size,
    });
    layout!("atoll_kmsg_mcast_req", KmsgMcastReq {
        "hdr": hdr, "ids": ids, "n": n, "count": count, "len": len, "pad0": pad0,
        "mcast_ns": mcast_ns, "unicast_ns": unicast_ns, "received": received, "bad": bad,
        "error": error,
    });
    layout!("atoll_user_msg", UserMsg {
        "dest_port": dest_port, "src_port": src_port, "len": len, "area": area, "pad0": pad0,
    });
    layout!("atoll_msg_from", MsgFrom { "kernel": kernel, "port": port });
    layout!("atoll_xemem_io", XememIo {
        "hdr": hdr, "op": op, "mode": mode, "segid": segid, "apid": apid, "vaddr": vaddr,
        "size": size, "offset": offset, "flags": flags, "timeout_ms": timeout_ms, "name": name,
    });
    layout!("atoll_xemem_req", XememReq {
        "id": id, "area": area, "pid": pid, "pin": pin, "runs_hash": runs_hash, "root": root,
        "attachment": attachment, "io": io,
    });
    layout!("atoll_xemem_run", XememRun { "phys": phys, "len": len });
    layout!("atoll_resize", Resize {
        "hdr": hdr, "id": id, "op": op, "bytes": bytes, "cpus": cpus, "cpu_count": cpu_count,
        "pad0": pad0, "linux_ns": linux_ns, "lwk_ns": lwk_ns, "error": error,
    });
    layout!("atoll_noise_run", NoiseRun {
        "cookie": cookie, "cpu": cpu, "probe": probe, "duration_ns": duration_ns, "threshold_ns": threshold_ns,
    });
    layout!("atoll_noise_detour", NoiseDetour { "at_ns": at_ns, "len_ns": len_ns, "irqs": irqs });
    layout!("atoll_noise_result", NoiseResult {
        "cookie": cookie, "error": error, "cpu": cpu, "duration_ns": duration_ns, "loops": loops,
        "detours": detours, "total_ns": total_ns, "max_ns": max_ns, "irqs": irqs,
        "kernel_detours": kernel_detours, "kernel_ns": kernel_ns, "kernel_max_ns": kernel_max_ns,
        "listed": listed, "pad0": pad0,
    });
    layout!("atoll_noise_req", NoiseReq {
        "hdr": hdr, "id": id, "cpu": cpu, "probe": probe, "pad0": pad0, "duration_ns": duration_ns,
        "threshold_ns": threshold_ns, "detours_ptr": detours_ptr, "result": result, "error": error,
    });
    layout!("atoll_resize_event", ResizeEvent {
        "at_ns": at_ns, "op": op, "result": result, "amount": amount, "linux_ns": linux_ns,
        "lwk_ns": lwk_ns,
    });
    layout!("atoll_xemem_seg_info", XememSegInfo {
        "segid": segid, "size": size, "kernel": kernel, "pid": pid, "uid": uid, "mode": mode,
        "grants": grants, "attachments": attachments, "flags": flags, "pad0": pad0, "name": name,
    });
    layout!("atoll_xemem_att_info", XememAttInfo {
        "id": id, "segid": segid, "offset": offset, "size": size, "kernel": kernel, "pid": pid,
        "writable": writable, "revoked": revoked,
    });
    layout!("atoll_xemem_list", XememList {
        "hdr": hdr, "segments": segments, "attachments": attachments, "seg": seg, "att": att,
    });
    layout!("atoll_xemem_event", XememEvent {
        "id": id, "segid": segid, "cancel": cancel, "op": op, "kernel": kernel,
    });
    layout!("atoll_xemem_reply", XememReply {
        "id": id, "result": result, "value": value, "writable": writable, "last": last,
        "count": count, "pad0": pad0,
    });
    layout!("atoll_msg_io", MsgIo {
        "hdr": hdr, "kernel": kernel, "port": port, "src_port": src_port, "buf_ptr": buf_ptr,
        "len": len, "timeout_ms": timeout_ms,
    });
    layout!("atoll_bench_figure", BenchFigure {
        "median_ns": median_ns, "min_ns": min_ns, "p90_ns": p90_ns, "error": error,
    });
    layout!("atoll_kmsg_bench_req", KmsgBenchReq {
        "hdr": hdr, "id": id, "from_id": from_id, "rounds": rounds, "stream_size": stream_size,
        "mode": mode, "stream_ns": stream_ns, "memcpy_ns": memcpy_ns, "error": error,
    });
    layout!("atoll_kmsg_check_start", KmsgCheckStart {
        "count": count, "min_len": min_len, "max_len": max_len, "pad0": pad0,
    });
    layout!("atoll_kmsg_check_req", KmsgCheckReq {
        "hdr": hdr, "id": id, "count": count, "min_len": min_len, "max_len": max_len,
        "directions": directions, "pad1": pad1, "to_messages": to_messages, "to_bad": to_bad, "to_bytes": to_bytes, "to_ns": to_ns,
        "from_messages": from_messages, "from_bad": from_bad, "from_bytes": from_bytes,
        "from_ns": from_ns, "from_waits": from_waits, "from_senders": from_senders,
        "pad0": pad0, "error": error,
    });
    layout!("atoll_destroy", Destroy {
        "hdr": hdr, "id": id, "force": force, "phase_ns": phase_ns, "pad0": pad0, "error": error,
    });

    layout!("atoll_region", Region { "start": start, "size": size, "prot": prot, "flags": flags, "offset": offset });
    layout!("atoll_file_name", FileName { "dev": dev, "ino": ino, "path": path });
    layout!("atoll_slot", Slot {
        "state": state, "cpu": cpu, "kind": kind, "tid": tid, "nr": nr, "args": args,
        "ret": ret, "fault_va": fault_va, "fault_state": fault_state, "fault_write": fault_write,
        "spinning": spinning, "pad1": pad1, "posted_tsc": posted_tsc, "taken_tsc": taken_tsc,
        "answered_tsc": answered_tsc,
    });
    layout!("atoll_proc", Proc {
        "hdr": hdr, "state": state, "pid": pid, "region_count": region_count,
        "cpu_count": cpu_count, "brk_start": brk_start, "entry": entry,
        "stack_pointer": stack_pointer, "cr3": cr3, "wait_status": wait_status,
        "host_pid": host_pid, "map_generation": map_generation, "threads": threads,
        "polling": polling, "poll_window_us": poll_window_us,
        "calls_per_s": calls_per_s, "kernel_mode": kernel_mode, "posted": posted, "realtime_ns": realtime_ns, "cpus": cpus, "mem_bytes": mem_bytes, "created_tsc": created_tsc, "comm": comm, "nodename": nodename,
        "file": file, "region": region, "slot": slot,
    });
    layout!("atoll_run", Run {
        "hdr": hdr, "id": id, "cpu_count": cpu_count, "region_count": region_count, "pid": pid,
        "kernel_mode": kernel_mode, "pad0": pad0, "brk_start": brk_start, "cpus": cpus, "created_tsc": created_tsc, "comm": comm, "region": region, "file": file,
        "error": error,
    });
    layout!("atoll_start", Start { "hdr": hdr, "entry": entry, "stack_pointer": stack_pointer });
    layout!("atoll_call", Call {
        "hdr": hdr, "done_slot": done_slot, "event": event, "done_ret": done_ret, "slot": slot,
        "kind": kind, "tid": tid, "wait_status": wait_status, "nr": nr, "args": args,
    });
    layout!("atoll_kill", Kill { "hdr": hdr, "signal": signal, "pad0": pad0 });
    layout!("atoll_program_info", ProgramInfo {
        "pid": pid, "host_pid": host_pid, "state": state, "threads": threads, "cpus": cpus,
        "mem_bytes": mem_bytes, "poll_window_us": poll_window_us, "calls_per_s": calls_per_s,
        "kernel_mode": kernel_mode, "pad0": pad0, "comm": comm,
    });
    layout!("atoll_programs", Programs { "hdr": hdr, "id": id, "count": count, "program": program });
    layout!("atoll_adopt", Adopt {
        "hdr": hdr, "id": id, "area": area, "pid": pid, "pad0": pad0, "token": token, "error": error,
    });

    let consts: &[(&str, u64)] = &[
        ("ATOLL_ABI_VERSION", ABI_VERSION as u64),
        ("ATOLL_MAX_CPUS", MAX_CPUS as u64),
        ("ATOLL_HOST_CPU_WORDS", HOST_CPU_WORDS as u64),
        ("ATOLL_MAX_MEM_RANGES", MAX_MEM_RANGES as u64),
        ("ATOLL_NAME_LEN", NAME_LEN as u64),
        ("ATOLL_CMDLINE_LEN", CMDLINE_LEN as u64),
        ("ATOLL_ERROR_LEN", ERROR_LEN as u64),
        ("ATOLL_MAGIC_BOOT", MAGIC_BOOT as u64),
        ("ATOLL_MAGIC_CONSOLE", MAGIC_CONSOLE as u64),
        ("ATOLL_MAGIC_CREATE", MAGIC_CREATE as u64),
        ("ATOLL_MAGIC_INFO", MAGIC_INFO as u64),
        ("ATOLL_MAGIC_KCHECK", MAGIC_KCHECK as u64),
        ("ATOLL_MAGIC_CONSREAD", MAGIC_CONSREAD as u64),
        ("ATOLL_MAGIC_PING", MAGIC_PING as u64),
        ("ATOLL_MAGIC_DESTROY", MAGIC_DESTROY as u64),
        ("ATOLL_BOOT_KIND_PVH", BOOT_KIND_PVH),
        ("ATOLL_BOOT_KIND_COKERNEL", BOOT_KIND_COKERNEL),
        ("ATOLL_BOOT_PARAMS_OFFSET", BOOT_PARAMS_OFFSET),
        ("ATOLL_CONSOLE_OFFSET", CONSOLE_OFFSET),
        ("ATOLL_CONSOLE_SIZE", CONSOLE_SIZE),
        ("ATOLL_SHARED_SIZE", SHARED_SIZE),
        ("ATOLL_IMAGE_OFFSET", IMAGE_OFFSET),
        ("ATOLL_LWK_VECTOR", LWK_VECTOR as u64),
        ("ATOLL_HOST_VECTOR", HOST_VECTOR as u64),
        ("ATOLL_TRAMPOLINE_SLOTS", TRAMPOLINE_SLOTS as u64),
        ("ATOLL_MAGIC_STATUS", MAGIC_STATUS as u64),
        ("ATOLL_MAGIC_KMSG", MAGIC_KMSG as u64),
        ("ATOLL_STATUS_OFFSET", STATUS_OFFSET),
        ("ATOLL_STATUS_SIZE", STATUS_SIZE),
        ("ATOLL_KMSG_TO_LWK_OFFSET", KMSG_TO_LWK_OFFSET),
        ("ATOLL_KMSG_TO_HOST_OFFSET", KMSG_TO_HOST_OFFSET),
        ("ATOLL_KMSG_AREA_SIZE", KMSG_AREA_SIZE),
        ("ATOLL_KMSG_SLOT_SIZE", KMSG_SLOT_SIZE as u64),
        ("ATOLL_KMSG_HEAD_DATA", KMSG_HEAD_DATA as u64),
        ("ATOLL_KMSG_SLOT_DATA", KMSG_SLOT_DATA as u64),
        ("ATOLL_KMSG_MAX_LEN", KMSG_MAX_LEN as u64),
        ("ATOLL_KMSG_MAX_TYPES", KMSG_MAX_TYPES as u64),
        ("ATOLL_KMSG_MAX_READERS", KMSG_MAX_READERS as u64),
        ("ATOLL_KMSG_RING_SLOTS", KMSG_RING_SLOTS as u64),
        ("ATOLL_KMSG_RING_BYTES(ATOLL_KMSG_RING_SLOTS)", kmsg_ring_bytes(KMSG_RING_SLOTS) as u64),
        ("ATOLL_KMSG_BOOTED", KMSG_BOOTED as u64),
        ("ATOLL_KMSG_PING", KMSG_PING as u64),
        ("ATOLL_KMSG_PONG", KMSG_PONG as u64),
        ("ATOLL_KMSG_SHUTDOWN", KMSG_SHUTDOWN as u64),
        ("ATOLL_KMSG_STOPPED", KMSG_STOPPED as u64),
        ("ATOLL_KMSG_PANIC", KMSG_PANIC as u64),
        ("ATOLL_KMSG_PROC_CREATE", KMSG_PROC_CREATE as u64),
        ("ATOLL_KMSG_PROC_CREATED", KMSG_PROC_CREATED as u64),
        ("ATOLL_KMSG_PROC_START", KMSG_PROC_START as u64),
        ("ATOLL_KMSG_PROC_KILL", KMSG_PROC_KILL as u64),
        ("ATOLL_KMSG_PROC_EXIT", KMSG_PROC_EXIT as u64),
        ("ATOLL_KMSG_PROC_RELEASE", KMSG_PROC_RELEASE as u64),
        ("ATOLL_KMSG_PROC_FREED", KMSG_PROC_FREED as u64),
        ("ATOLL_KMSG_CALL_POSTED", KMSG_CALL_POSTED as u64),
        ("ATOLL_KMSG_CALL_CANCEL", KMSG_CALL_CANCEL as u64),
        ("ATOLL_KMSG_PAGE_WANTED", KMSG_PAGE_WANTED as u64),
        ("ATOLL_KMSG_PAGE_READY", KMSG_PAGE_READY as u64),
        ("ATOLL_CANCEL_SIGNAL", CANCEL_SIGNAL as u64),
        ("ATOLL_KMSG_CHECK", KMSG_CHECK as u64),
        ("ATOLL_KMSG_CHECK_START", KMSG_CHECK_START as u64),
        ("ATOLL_KMSG_CHECK_DONE", KMSG_CHECK_DONE as u64),
        ("ATOLL_KMSG_CHECK_END", KMSG_CHECK_END as u64),
        ("ATOLL_KMSG_CHECK_REPORT", KMSG_CHECK_REPORT as u64),
        ("ATOLL_CHECK_TO_LWK", CHECK_TO_LWK as u64),
        ("ATOLL_KMSG_PEER_ADD", KMSG_PEER_ADD as u64),
        ("ATOLL_KMSG_PEER_ADDED", KMSG_PEER_ADDED as u64),
        ("ATOLL_KMSG_PEER_REMOVE", KMSG_PEER_REMOVE as u64),
        ("ATOLL_KMSG_PEER_REMOVED", KMSG_PEER_REMOVED as u64),
        ("ATOLL_KMSG_PEER_PING", KMSG_PEER_PING as u64),
        ("ATOLL_KMSG_PEER_PONG", KMSG_PEER_PONG as u64),
        ("ATOLL_KMSG_PEER_TRUST", KMSG_PEER_TRUST as u64),
        ("ATOLL_KMSG_PEER_TRUSTED", KMSG_PEER_TRUSTED as u64),
        ("ATOLL_KMSG_GROUP_JOIN", KMSG_GROUP_JOIN as u64),
        ("ATOLL_KMSG_GROUP_JOINED", KMSG_GROUP_JOINED as u64),
        ("ATOLL_KMSG_GROUP_LEAVE", KMSG_GROUP_LEAVE as u64),
        ("ATOLL_KMSG_GROUP_LEFT", KMSG_GROUP_LEFT as u64),
        ("ATOLL_MCAST_MAX", MCAST_MAX as u64),
        ("ATOLL_MAGIC_MCAST", MAGIC_MCAST as u64),
        ("ATOLL_IOC_KMSG_MCAST", IOC_KMSG_MCAST as u64),
        ("ATOLL_IOC_PROGRAMS", IOC_PROGRAMS as u64),
        ("ATOLL_IOC_ADOPT", IOC_ADOPT as u64),
        ("ATOLL_CALL_FORK", CALL_FORK as u64),
        ("ATOLL_CALL_EXEC", CALL_EXEC as u64),
        ("ATOLL_CALL_KEPT_FILE", CALL_KEPT_FILE as u64),
        ("ATOLL_CALL_FILE_NAME", CALL_FILE_NAME as u64),
        ("ATOLL_STAT_SIZE", STAT_SIZE),
        ("ATOLL_CALL_TEXT_FILE", CALL_TEXT_FILE as u64),
        ("ATOLL_BENCH_TAKE_TURNS", BENCH_TAKE_TURNS),
        ("ATOLL_MAX_TEXT_FILE", MAX_TEXT_FILE),
        ("ATOLL_TEXT_OPEN", TEXT_OPEN),
        ("ATOLL_TEXT_MAY_READ", TEXT_MAY_READ),
        ("ATOLL_KEPT_KEEP", KEPT_KEEP),
        ("ATOLL_KEPT_WRITE", KEPT_WRITE),
        ("ATOLL_KEPT_DROP", KEPT_DROP),
        ("ATOLL_KMSG_PROC_EXEC", KMSG_PROC_EXEC as u64),
        ("ATOLL_KMSG_PROC_EXECED", KMSG_PROC_EXECED as u64),
        ("ATOLL_IOC_EXEC", IOC_EXEC as u64),
        ("ATOLL_IOC_XEMEM", IOC_XEMEM as u64),
        ("ATOLL_IOC_XEMEM_LIST", IOC_XEMEM_LIST as u64),
        ("ATOLL_IOC_RESIZE", IOC_RESIZE as u64),
        ("ATOLL_IOC_CHOWN", IOC_CHOWN as u64),
        ("ATOLL_NO_GROUP", NO_GROUP as u64),
        ("ATOLL_MAGIC_CHOWN", MAGIC_CHOWN as u64),
        ("ATOLL_MAGIC_RESIZE", MAGIC_RESIZE as u64),
        ("ATOLL_RESIZE_ADD_MEM", RESIZE_ADD_MEM as u64),
        ("ATOLL_RESIZE_REMOVE_MEM", RESIZE_REMOVE_MEM as u64),
        ("ATOLL_RESIZE_HISTORY", RESIZE_HISTORY as u64),
        ("ATOLL_KMSG_MEM_ADD", KMSG_MEM_ADD as u64),
        ("ATOLL_KMSG_MEM_ADDED", KMSG_MEM_ADDED as u64),
        ("ATOLL_KMSG_MEM_REMOVE", KMSG_MEM_REMOVE as u64),
        ("ATOLL_KMSG_MEM_REMOVED", KMSG_MEM_REMOVED as u64),
        ("ATOLL_MAGIC_XLIST", MAGIC_XLIST as u64),
        ("ATOLL_XEMEM_LIST_SEGS", XEMEM_LIST_SEGS as u64),
        ("ATOLL_XEMEM_LIST_ATTS", XEMEM_LIST_ATTS as u64),
        ("ATOLL_MAGIC_XEMEM", MAGIC_XEMEM as u64),
        ("ATOLL_SYS_XEMEM", SYS_XEMEM),
        ("ATOLL_SYS_HRT_DIRECT_CALL", SYS_HRT_DIRECT_CALL),
        ("ATOLL_SYS_HRT", SYS_HRT),
        ("ATOLL_HRT_OP_NULL", HRT_OP_NULL),
        ("ATOLL_HRT_OP_ENTRY", HRT_OP_ENTRY),
        ("ATOLL_HRT_OP_CPUS", HRT_OP_CPUS),
        ("ATOLL_HRT_OP_THIS_CPU", HRT_OP_THIS_CPU),
        ("ATOLL_HRT_OP_THREAD", HRT_OP_THREAD),
        ("ATOLL_HRT_OP_EXIT", HRT_OP_EXIT),
        ("ATOLL_HRT_OP_WAIT", HRT_OP_WAIT),
        ("ATOLL_HRT_OP_WAKE", HRT_OP_WAKE),
        ("ATOLL_HRT_OP_HOLD", HRT_OP_HOLD),
        ("ATOLL_HRT_ANY_CPU", HRT_ANY_CPU),
        ("ATOLL_HRT_WAKE_FIRST", HRT_WAKE_FIRST),
        ("ATOLL_HRT_HOLD_MAX_US", HRT_HOLD_MAX_US),
        ("ATOLL_XEMEM_NAME_LEN", XEMEM_NAME_LEN as u64),
        ("ATOLL_XEMEM_MAKE", XEMEM_MAKE as u64),
        ("ATOLL_XEMEM_REMOVE", XEMEM_REMOVE as u64),
        ("ATOLL_XEMEM_GET", XEMEM_GET as u64),
        ("ATOLL_XEMEM_RELEASE", XEMEM_RELEASE as u64),
        ("ATOLL_XEMEM_ATTACH", XEMEM_ATTACH as u64),
        ("ATOLL_XEMEM_DETACH", XEMEM_DETACH as u64),
        ("ATOLL_XEMEM_LOOKUP", XEMEM_LOOKUP as u64),
        ("ATOLL_XEMEM_ENDED", XEMEM_ENDED as u64),
        ("ATOLL_XEMEM_SIGNAL", XEMEM_SIGNAL as u64),
        ("ATOLL_XEMEM_WAIT", XEMEM_WAIT as u64),
        ("ATOLL_XEMEM_CANCEL", XEMEM_CANCEL as u64),
        ("ATOLL_XEMEM_KEEP", XEMEM_KEEP as u64),
        ("ATOLL_XEMEM_SEG_KEPT", XEMEM_SEG_KEPT as u64),
        ("ATOLL_XEMEM_SEG_OWNER_ENDED", XEMEM_SEG_OWNER_ENDED as u64),
        ("ATOLL_KMSG_XEMEM_EVENT", KMSG_XEMEM_EVENT as u64),
        ("ATOLL_KMSG_XEMEM_HOME", KMSG_XEMEM_HOME as u64),
        ("ATOLL_XEMEM_ELSEWHERE", XEMEM_ELSEWHERE as u64),
        ("ATOLL_XEMEM_RDONLY", XEMEM_RDONLY as u64),
        ("ATOLL_XEMEM_RDWR", XEMEM_RDWR as u64),
        ("ATOLL_KMSG_XEMEM_REQ", KMSG_XEMEM_REQ as u64),
        ("ATOLL_KMSG_XEMEM_REPLY", KMSG_XEMEM_REPLY as u64),
        ("ATOLL_KMSG_XEMEM_REVOKE", KMSG_XEMEM_REVOKE as u64),
        ("ATOLL_KMSG_XEMEM_REVOKED", KMSG_XEMEM_REVOKED as u64),
        ("ATOLL_KMSG_XEMEM_UNPIN", KMSG_XEMEM_UNPIN as u64),
        ("ATOLL_XEMEM_REPLY_RUNS", XEMEM_REPLY_RUNS as u64),
        ("ATOLL_XEMEM_HASH_SEED", XEMEM_HASH_SEED),
        ("ATOLL_XEMEM_HASH_PRIME", XEMEM_HASH_PRIME),
        ("ATOLL_MAGIC_ADOPT", MAGIC_ADOPT as u64),
        ("ATOLL_SYS_MSG_SEND", SYS_MSG_SEND),
        ("ATOLL_SYS_MSG_RECV", SYS_MSG_RECV),
        ("ATOLL_MSG_MAX", MSG_MAX as u64),
        ("ATOLL_MSG_PORTS", MSG_PORTS as u64),
        ("ATOLL_MSG_QUEUE", MSG_QUEUE as u64),
        ("ATOLL_MSG_USER_BYTES", MSG_USER_BYTES as u64),
        ("ATOLL_KERNEL_LINUX", KERNEL_LINUX as u64),
        ("ATOLL_KMSG_USER", KMSG_USER as u64),
        ("ATOLL_MAGIC_MSG", MAGIC_MSG as u64),
        ("ATOLL_BENCH_LINE", BENCH_LINE),
        ("ATOLL_BENCH_IPI", BENCH_IPI),
        ("ATOLL_BENCH_KMSG_IPI", BENCH_KMSG_IPI),
        ("ATOLL_BENCH_KMSG_POLL", BENCH_KMSG_POLL),
        ("ATOLL_BENCH_SLOT_POLL", BENCH_SLOT_POLL),
        ("ATOLL_BENCH_MODES", BENCH_MODES as u64),
        ("ATOLL_KMSG_BENCH_RESPOND", KMSG_BENCH_RESPOND as u64),
        ("ATOLL_KMSG_BENCH_READY", KMSG_BENCH_READY as u64),
        ("ATOLL_KMSG_BENCH_DONE", KMSG_BENCH_DONE as u64),
        ("ATOLL_KMSG_BENCH_RUN", KMSG_BENCH_RUN as u64),
        ("ATOLL_KMSG_BENCH_RESULT", KMSG_BENCH_RESULT as u64),
        ("ATOLL_KMSG_BENCH_ECHO", KMSG_BENCH_ECHO as u64),
        ("ATOLL_KMSG_BENCH_SINK", KMSG_BENCH_SINK as u64),
        ("ATOLL_BENCH_VECTOR", BENCH_VECTOR as u64),
        ("ATOLL_BENCH_LINE_OFFSET", BENCH_LINE_OFFSET),
        ("ATOLL_MAGIC_KBENCH", MAGIC_KBENCH as u64),
        ("ATOLL_CHECK_FROM_LWK", CHECK_FROM_LWK as u64),
        ("ATOLL_LWK_BOOTING", LWK_BOOTING as u64),
        ("ATOLL_LWK_RUNNING", LWK_RUNNING as u64),
        ("ATOLL_LWK_CRASHED", LWK_CRASHED as u64),
        ("ATOLL_LWK_STOPPED", LWK_STOPPED as u64),
        ("ATOLL_ENCLAVE_BOOTING", ENCLAVE_BOOTING as u64),
        ("ATOLL_ENCLAVE_RUNNING", ENCLAVE_RUNNING as u64),
        ("ATOLL_ENCLAVE_CRASHED", ENCLAVE_CRASHED as u64),
        ("ATOLL_ENCLAVE_STOPPED", ENCLAVE_STOPPED as u64),
        ("ATOLL_PHASES", PHASES as u64),
        ("ATOLL_DPHASES", DPHASES as u64),
        ("ATOLL_IOC_CREATE", IOC_CREATE as u64),
        ("ATOLL_IOC_INFO", IOC_INFO as u64),
        ("ATOLL_IOC_CONSOLE", IOC_CONSOLE as u64),
        ("ATOLL_IOC_PING", IOC_PING as u64),
        ("ATOLL_IOC_DESTROY", IOC_DESTROY as u64),
        ("ATOLL_MAGIC_PROC", MAGIC_PROC as u64),
        ("ATOLL_MAGIC_RUN", MAGIC_RUN as u64),
        ("ATOLL_MAGIC_START", MAGIC_START as u64),
        ("ATOLL_MAGIC_CALL", MAGIC_CALL as u64),
        ("ATOLL_MAGIC_KILL", MAGIC_KILL as u64),
        ("ATOLL_MAGIC_PROGRAMS", MAGIC_PROGRAMS as u64),
        ("ATOLL_PROC_OFFSET", PROC_OFFSET),
        ("ATOLL_PROC_SIZE", PROC_SIZE),
        ("ATOLL_PROC_AREA_SIZE", PROC_AREA_SIZE),
        ("ATOLL_MAX_PROGRAMS", MAX_PROGRAMS as u64),
        ("ATOLL_COMM_LEN", COMM_LEN as u64),
        ("ATOLL_NODENAME_LEN", NODENAME_LEN as u64),
        ("ATOLL_DONE_VECTOR", DONE_VECTOR as u64),
        ("ATOLL_KERNEL_OFFSET", KERNEL_OFFSET),
        ("ATOLL_BENCH_REPLY", BENCH_REPLY),
        ("ATOLL_TIMER_VECTOR", TIMER_VECTOR as u64),
        ("ATOLL_RESCHED_VECTOR", RESCHED_VECTOR as u64),
        ("ATOLL_STOP_VECTOR", STOP_VECTOR as u64),
        ("ATOLL_SHOOTDOWN_VECTOR", SHOOTDOWN_VECTOR as u64),
        ("ATOLL_ERROR_VECTOR", ERROR_VECTOR as u64),
        ("ATOLL_SPURIOUS_VECTOR", SPURIOUS_VECTOR as u64),
        ("ATOLL_PHASE_CPUS", PHASE_CPUS as u64),
        ("ATOLL_PHASE_MEMORY", PHASE_MEMORY as u64),
        ("ATOLL_PHASE_LOAD", PHASE_LOAD as u64),
        ("ATOLL_PHASE_BOOT", PHASE_BOOT as u64),
        ("ATOLL_DPHASE_STOP", DPHASE_STOP as u64),
        ("ATOLL_DPHASE_CPUS", DPHASE_CPUS as u64),
        ("ATOLL_DPHASE_MEMORY", DPHASE_MEMORY as u64),
        ("ATOLL_USER_START", USER_START),
        ("ATOLL_USER_END", USER_END),
        ("ATOLL_PIE_BASE", PIE_BASE),
        ("ATOLL_MMAP_BASE", MMAP_BASE),
        ("ATOLL_STACK_TOP", STACK_TOP),
        ("ATOLL_STACK_SIZE", STACK_SIZE),
        ("ATOLL_VDSO_BASE", VDSO_BASE),
        ("ATOLL_VDSO_PAGES", VDSO_PAGES),
        ("ATOLL_MAX_REGIONS", MAX_REGIONS as u64),
        ("ATOLL_MAX_SLOTS", MAX_SLOTS as u64),
        ("ATOLL_HRT_NONE", HRT_NONE as u64),
        ("ATOLL_HRT_ROOT", HRT_ROOT as u64),
        ("ATOLL_HRT_OWNER", HRT_OWNER as u64),
        ("ATOLL_SLOT_WORDS", SLOT_WORDS as u64),
        ("ATOLL_PROT_READ", PROT_READ as u64),
        ("ATOLL_PROT_WRITE", PROT_WRITE as u64),
        ("ATOLL_PROT_EXEC", PROT_EXEC as u64),
        ("ATOLL_REGION_ON_DEMAND", REGION_ON_DEMAND as u64),
        ("ATOLL_REGION_STACK", REGION_STACK as u64),
        ("ATOLL_REGION_PROGRAM", REGION_PROGRAM as u64),
        ("ATOLL_REGION_LOADER", REGION_LOADER as u64),
        ("ATOLL_FILE_PATH_LEN", FILE_PATH_LEN as u64),
        ("ATOLL_PROC_FREE", PROC_FREE as u64),
        ("ATOLL_PROC_CREATING", PROC_CREATING as u64),
        ("ATOLL_PROC_LOADED", PROC_LOADED as u64),
        ("ATOLL_PROC_RUNNING", PROC_RUNNING as u64),
        ("ATOLL_PROC_EXITED", PROC_EXITED as u64),
        ("ATOLL_SLOT_IDLE", SLOT_IDLE as u64),
        ("ATOLL_SLOT_REQUEST", SLOT_REQUEST as u64),
        ("ATOLL_SLOT_CLAIMED", SLOT_CLAIMED as u64),
        ("ATOLL_SLOT_DONE", SLOT_DONE as u64),
        ("ATOLL_FAULT_IDLE", FAULT_IDLE as u64),
        ("ATOLL_FAULT_ASKED", FAULT_ASKED as u64),
        ("ATOLL_FAULT_ANSWERED", FAULT_ANSWERED as u64),
        ("ATOLL_FAULT_STATE_MASK", FAULT_STATE_MASK as u64),
        ("ATOLL_CALL_SYSCALL", CALL_SYSCALL as u64),
        ("ATOLL_CALL_UNSUPPORTED", CALL_UNSUPPORTED as u64),
        ("ATOLL_EVENT_CALL", EVENT_CALL as u64),
        ("ATOLL_EVENT_EXITED", EVENT_EXITED as u64),
        ("ATOLL_EVENT_CRASHED", EVENT_CRASHED as u64),
        ("ATOLL_IOC_RUN", IOC_RUN as u64),
        ("ATOLL_IOC_START", IOC_START as u64),
        ("ATOLL_IOC_CALL", IOC_CALL as u64),
        ("ATOLL_IOC_KILL", IOC_KILL as u64),
        ("ATOLL_IOC_KMSG_CHECK", IOC_KMSG_CHECK as u64),
        ("ATOLL_IOC_KMSG_BENCH", IOC_KMSG_BENCH as u64),
        ("ATOLL_IOC_MSG_SEND", IOC_MSG_SEND as u64),
        ("ATOLL_IOC_MSG_RECV", IOC_MSG_RECV as u64),
    ];
    v.extend(consts.iter().map(|&(n, x)| (format!("(unsigned long long)({})", n), x)));
    v
}

fn c_values(exprs: &[String]) -> Vec<u64> {
    let dir = std::env::temp_dir().join(format!("atoll-abi-layout-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let mut src = String::from(
        "#include <stdio.h>\n#include <stddef.h>\n#include \"atoll_abi.h\"\nint main(void)\n{\n",
    );
    for e in exprs {
        writeln!(src, "\tprintf(\"%llu\\n\", (unsigned long long)({}));", e).unwrap();
    }
    src.push_str("\treturn 0;\n}\n");
    let c_file = dir.join("layout.c");
    let exe = dir.join("layout");
    std::fs::write(&c_file, src).unwrap();
    let header_dir = env!("CARGO_MANIFEST_DIR");
    let cc = std::env::var("CC").unwrap_or_else(|_| "cc".into());
    let status = Command::new(&cc)
        .args(["-std=gnu11", "-Wall", "-Werror", "-I", header_dir, "-o"])
        .arg(&exe)
        .arg(&c_file)
        .status()
        .expect("running the C compiler");
    assert!(status.success(), "atoll_abi.h does not compile as C");
    let out = Command::new(&exe).output().expect("running the layout program");
    std::fs::remove_dir_all(&dir).ok();
    String::from_utf8(out.stdout).unwrap().lines().map(|l| l.parse().unwrap()).collect()
}

#[test]
fn c_and_rust_agree_on_every_size_offset_and_constant() {
    let expect = expectations();
    let exprs: Vec<String> = expect.iter().map(|(e, _)| e.clone()).collect();
    let c = c_values(&exprs);
    assert_eq!(c.len(), expect.len());
    let mismatches: Vec<String> = expect
        .iter()
        .zip(&c)
        .filter(|((_, rust), c)| rust != *c)
        .map(|((e, rust), c)| format!("{}: C says {}, Rust says {}", e, c, rust))
        .collect();
    assert!(mismatches.is_empty(), "C and Rust disagree:\n{}", mismatches.join("\n"));
}

#[test]
fn shared_structs_fit_their_regions() {
    assert!(size_of::<BootParams>() as u64 <= STATUS_OFFSET - BOOT_PARAMS_OFFSET);
    assert!(size_of::<Status>() as u64 <= STATUS_SIZE);
    const { assert!(STATUS_OFFSET + STATUS_SIZE <= CONSOLE_OFFSET) };
    const { assert!(CONSOLE_OFFSET + CONSOLE_SIZE <= KMSG_TO_LWK_OFFSET) };
    assert!(kmsg_ring_bytes(KMSG_RING_SLOTS) as u64 <= KMSG_AREA_SIZE);
    const { assert!(KMSG_TO_LWK_OFFSET + KMSG_AREA_SIZE <= KMSG_TO_HOST_OFFSET) };
    const { assert!(KMSG_TO_HOST_OFFSET + KMSG_AREA_SIZE <= PROC_OFFSET) };
    assert_eq!(size_of::<KmsgSlot>(), KMSG_SLOT_SIZE);
    assert_eq!(size_of::<KmsgHead>() + KMSG_HEAD_DATA, KMSG_SLOT_DATA);
    // Several of the largest messages fit in one ring at a time (a stream
    // of them does not wait for each to be read).
    let largest_slots = 1 + (KMSG_MAX_LEN - KMSG_HEAD_DATA).div_ceil(KMSG_SLOT_DATA);
    assert!(3 * largest_slots <= KMSG_RING_SLOTS as usize);
    assert!(size_of::<Proc>() as u64 <= PROC_AREA_SIZE);
    assert!(PROC_AREA_SIZE.is_multiple_of(4096));
    const { assert!(PROC_OFFSET + PROC_SIZE <= SHARED_SIZE) };
    // ioctl sizes have 14 bits.
    assert!(size_of::<Create>() < 1 << 14);
    assert!(size_of::<Programs>() < 1 << 14);
}

#[test]
fn headers_validate_magic_version_and_size() {
    let p = Ping::new();
    assert!(p.hdr.is_valid::<Ping>(MAGIC_PING));
    assert!(!p.hdr.is_valid::<Ping>(MAGIC_DESTROY));
    assert!(!p.hdr.is_valid::<Destroy>(MAGIC_PING));
    let mut old = p;
    old.hdr.version = ABI_VERSION + 1;
    assert!(!old.hdr.is_valid::<Ping>(MAGIC_PING));
}

#[test]
fn c_strings_round_trip_and_refuse_overflow() {
    let mut f = [0u8; 8];
    assert!(set_c_str(&mut f, "abc"));
    assert_eq!(c_str(&f), "abc");
    assert!(!set_c_str(&mut f, "12345678"));
}
