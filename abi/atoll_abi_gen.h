/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Generated from abi/src (the atoll-abi crate) by scripts/abi-header.sh
 * (`make abi-header`) with cbindgen: do not edit. Include atoll_abi.h.
 */

#ifndef ATOLL_ABI_GEN_H
#define ATOLL_ABI_GEN_H

#include <linux/types.h>
#include <linux/ioctl.h>

#define ATOLL_ABI_VERSION 24

// CPUs in one enclave.
#define ATOLL_MAX_CPUS 64

// Host CPU bitmaps: 256 CPUs.
#define ATOLL_HOST_CPU_WORDS 4

#define ATOLL_MAX_MEM_RANGES 16

#define ATOLL_NAME_LEN 32

#define ATOLL_CMDLINE_LEN 512

#define ATOLL_ERROR_LEN 256

// "ATBP" boot parameters.
#define ATOLL_MAGIC_BOOT 1346524225

// "ATSP" status page.
#define ATOLL_MAGIC_STATUS 1347638337

// "ATMG" message ring.
#define ATOLL_MAGIC_KMSG 1196250177

// "ATCN" console ring.
#define ATOLL_MAGIC_CONSOLE 1313035329

// "ATCR" create request.
#define ATOLL_MAGIC_CREATE 1380144193

// "ATIN" enclave info query.
#define ATOLL_MAGIC_INFO 1313428545

// "ATCK" message check.
#define ATOLL_MAGIC_KCHECK 1262703681

// "ATKB" message benchmark.
#define ATOLL_MAGIC_KBENCH 1112233025

// "AUMG" program message.
#define ATOLL_MAGIC_MSG 1196250433

// "ATMC" multicast check.
#define ATOLL_MAGIC_MCAST 1129141313

// "ATRD" console read.
#define ATOLL_MAGIC_CONSREAD 1146246209

// "ATPG" ping.
#define ATOLL_MAGIC_PING 1196446785

// "ATDS" destroy.
#define ATOLL_MAGIC_DESTROY 1396986945

// "ATPR" program area.
#define ATOLL_MAGIC_PROC 1380996161

// "ATRN" run request.
#define ATOLL_MAGIC_RUN 1314018369

// "ATST" start request.
#define ATOLL_MAGIC_START 1414747201

// "ATCL" delegated-call exchange.
#define ATOLL_MAGIC_CALL 1279480897

// "ATKL" kill request.
#define ATOLL_MAGIC_KILL 1280005185

// "ATPS" program list.
#define ATOLL_MAGIC_PROGRAMS 1397773377

// "ATAD" adopt a forked program.
#define ATOLL_MAGIC_ADOPT 1145132097

// "ATXM" shared-memory segment request.
#define ATOLL_MAGIC_XEMEM 1297634369

// "ATXL" list of segments.
#define ATOLL_MAGIC_XLIST 1280857153

// "ATRZ" resize request.
#define ATOLL_MAGIC_RESIZE 1515344961

// "ATNZ" noise probe.
#define ATOLL_MAGIC_NOISE 1515082817

// "ATCO" change an enclave's owner.
#define ATOLL_MAGIC_CHOWN 1329812545

// An owner gid meaning "no group": the owner alone may use the enclave.
#define ATOLL_NO_GROUP 4294967295u

// Boot kinds: %rsi at kernel_entry64.
#define ATOLL_BOOT_KIND_PVH 1

#define ATOLL_BOOT_KIND_COKERNEL 2

// The LWK's direct map: all physical memory it owns is mapped at phys +
// KERNEL_OFFSET, leaving the lower half to programs. The host's boot page
// tables map the enclave's memory there, and the stack and entry it gives
// the boot CPU are such addresses.
#define ATOLL_KERNEL_OFFSET 18446603336221196288ull

// Layout of the enclave's first memory block: the shared area (boot
// parameters, status page, console ring, message rings, program area) then
// the LWK image.
#define ATOLL_BOOT_PARAMS_OFFSET 0

#define ATOLL_STATUS_OFFSET 4096

#define ATOLL_STATUS_SIZE 4096

// One cache line Linux and the LWK bounce (benchmarks).
#define ATOLL_BENCH_LINE_OFFSET 8192

#define ATOLL_CONSOLE_OFFSET 65536

#define ATOLL_CONSOLE_SIZE 262144

// A [`KmsgRing`], host -> LWK.
#define ATOLL_KMSG_TO_LWK_OFFSET 327680

// LWK -> host.
#define ATOLL_KMSG_TO_HOST_OFFSET 593920

// Room for each of the two rings.
#define ATOLL_KMSG_AREA_SIZE 266240

// [`Proc`]`[MAX_PROGRAMS]`.
#define ATOLL_PROC_OFFSET 1048576

// Each program's area.
#define ATOLL_PROC_AREA_SIZE 20480

// Programs alive at once per enclave.
#define ATOLL_MAX_PROGRAMS 128

#define ATOLL_PROC_SIZE (ATOLL_PROC_AREA_SIZE * (__u64)ATOLL_MAX_PROGRAMS)

#define ATOLL_SHARED_SIZE 4194304

#define ATOLL_IMAGE_OFFSET ATOLL_SHARED_SIZE

// Interrupt vectors: every fixed vector an LWK CPU takes, and the one the
// LWK sends Linux, in one table (VECTORS), no two alike. The host sends
// LWK_VECTOR, DONE_VECTOR and BENCH_VECTOR to LWK CPUs; the LWK sends the
// others among its own CPUs, and HOST_VECTOR to Linux. The LWK's dynamic
// vectors (kernel/hal/src/irq.rs) lie below all of them.
//
// The local APIC's timer.
#define ATOLL_TIMER_VECTOR 240

// LWK -> LWK: look at your run queue now.
#define ATOLL_RESCHED_VECTOR 241

// Host or another enclave's LWK -> the LWK CPU that hears messages
// (apic_ids[0], notify_apic_id): a message waits in a ring.
#define ATOLL_LWK_VECTOR 242

// LWK -> LWK: stop this CPU for good (shutdown).
#define ATOLL_STOP_VECTOR 243

// The host sends DONE_VECTOR to the LWK CPU named in a delegated-call
// slot once the call's result is in the slot.
#define ATOLL_DONE_VECTOR 244

// LWK -> LWK: flush your TLB (shootdown).
#define ATOLL_SHOOTDOWN_VECTOR 245

// Benchmarks (test image): a bare IPI to time against a message round trip.
#define ATOLL_BENCH_VECTOR 246

// LWK -> Linux (host_apic_id): Linux's platform IPI vector
// (X86_PLATFORM_IPI_VECTOR), whose callback the module installs; the
// module fails to build if the two differ.
#define ATOLL_HOST_VECTOR 247

// The local APIC's error interrupt.
#define ATOLL_ERROR_VECTOR 254

// The local APIC's spurious interrupt.
#define ATOLL_SPURIOUS_VECTOR 255

// The SMP trampoline starts with a 2-byte jump, then a [`TrampolineSlots`]
// at offset TRAMPOLINE_SLOTS. It enters long mode with cr3, loads rsp, rdi
// and rsi from the slots and jumps to entry.
#define ATOLL_TRAMPOLINE_SLOTS 8

// What the LWK says of itself in the status page (Status.lwk_state).
#define ATOLL_LWK_BOOTING 0

#define ATOLL_LWK_RUNNING 1

#define ATOLL_LWK_CRASHED 2

#define ATOLL_LWK_STOPPED 3

// Inter-kernel messages (kmsg): one transport for every protocol between
// kernels (Popcorn's design): a ring per direction and receiver set, of
// 64-byte slots. A sender claims the slots of one message by moving head
// forward with compare-and-swap (never past tail + slots: a full ring is
// refused, nothing is overwritten), writes every further slot, then the
// first slot, whose stamp it sets last (release). A slot's stamp is its
// ticket + 1, so an old slot never looks ready. Then it interrupts each
// receiver that is not polling. A message's first slot holds a
// [`KmsgHead`] and 48 payload bytes; each further slot 56 payload bytes
// (up to 64 KiB in all). Each receiver keeps its own next ticket and
// watches that slot's stamp (never head, which stays in the senders'
// cache); it copies a message out and decrements the first slot's readers;
// the receiver that takes it to zero moves tail past it (and past later
// messages already read by all). Senders keep their own copy of tail and
// read the shared one only when that copy says the ring is full. A
// receiver never trusts what it reads: lengths, slot counts and stamps are
// checked, and a ring that breaks the rules is abandoned.
#define ATOLL_KMSG_SLOT_SIZE 64

// Payload bytes in a message's first slot.
#define ATOLL_KMSG_HEAD_DATA 48

// Payload bytes in each further slot.
#define ATOLL_KMSG_SLOT_DATA 56

// Largest payload.
#define ATOLL_KMSG_MAX_LEN 65536

// Message types are 1 .. KMSG_MAX_TYPES - 1.
#define ATOLL_KMSG_MAX_TYPES 64

// Receivers of one multicast ring.
#define ATOLL_KMSG_MAX_READERS 32

// Each ring: three of the largest messages fit.
#define ATOLL_KMSG_RING_SLOTS 4096

// Enclave life cycle: host lifecycle.c, LWK kernel/src/lifecycle.rs.
// LWK: u64 CPUs online.
#define ATOLL_KMSG_BOOTED 1

// u64 cookie, echoed in PONG.
#define ATOLL_KMSG_PING 2

#define ATOLL_KMSG_PONG 3

// Host: stop every core.
#define ATOLL_KMSG_SHUTDOWN 4

// LWK: every core has stopped.
#define ATOLL_KMSG_STOPPED 5

// LWK: u64 CPU; the text is on the console.
#define ATOLL_KMSG_PANIC 6

// Programs ([`Proc`]): host program.c, LWK process/launch.rs. The first
// word of each is the program's area index.
// Host: build the address space the area describes.
#define ATOLL_KMSG_PROC_CREATE 7

// LWK: area, s64 0 or -errno, u64 pid.
#define ATOLL_KMSG_PROC_CREATED 8

// Host: area; start the main thread (entry, stack_pointer).
#define ATOLL_KMSG_PROC_START 9

// Host: area, u64 signal; end the program with it.
#define ATOLL_KMSG_PROC_KILL 10

// LWK: area, u64 wait status, u64 pid; memory still held.
#define ATOLL_KMSG_PROC_EXIT 11

// Host: area; Linux maps none of its memory now: free it.
#define ATOLL_KMSG_PROC_RELEASE 12

// LWK: area, u64 pid; the area is PROC_FREE again.
#define ATOLL_KMSG_PROC_FREED 13

// Delegated calls: host program.c, LWK process/delegate.rs.
// LWK: area, u64 slot; a thread's call waits in it.
#define ATOLL_KMSG_CALL_POSTED 14

// LWK: area, u64 slot; a signal came for the thread waiting in the slot:
// the host interrupts the worker performing the call with CANCEL_SIGNAL
// (its handler has no SA_RESTART, so a blocking call returns EINTR). Sent
// again while the call is not done.
#define ATOLL_KMSG_CALL_CANCEL 38

#define ATOLL_CANCEL_SIGNAL 64

// Host: area; build the address space the area's regions describe and put
// it in place of the program's (an execve in progress).
#define ATOLL_KMSG_PROC_EXEC 39

// LWK: area, s64 0 or -errno, u64 new cr3.
#define ATOLL_KMSG_PROC_EXECED 40

// Host: area, u64 slot; the worker performing the slot's call touched a
// page the LWK gives memory only when touched (the main stack's) at the
// slot's fault_va: the LWK gives it if it would to its own thread, then
// sets fault_state FAULT_ANSWERED and sends PAGE_READY (area, u64 slot).
#define ATOLL_KMSG_PAGE_WANTED 59

#define ATOLL_KMSG_PAGE_READY 60

// Transport checks: host atoll_test/kmsg_check.c, LWK
// kernel/src/selftest/kmsg.rs. A [`KmsgCheck`], then pattern bytes.
#define ATOLL_KMSG_CHECK 15

// Host: a [`KmsgCheckStart`]; every LWK CPU sends.
#define ATOLL_KMSG_CHECK_START 16

// LWK: u64 sender, u64 messages sent, u64 waits for room.
#define ATOLL_KMSG_CHECK_DONE 17

// Host: u64 messages it sent the LWK.
#define ATOLL_KMSG_CHECK_END 18

// LWK: u64 received, u64 bad (of the host's).
#define ATOLL_KMSG_CHECK_REPORT 19

// Rings between two enclaves: the host lends each pair of running
// enclaves one block of its memory holding two rings (one each way, at
// out_offset and in_offset from each side's view) and tells both. Each LWK
// maps the block and from then on sends to the other directly: a message,
// then LWK_VECTOR to the other's notify_apic_id. Before the host takes the
// block back it sends PEER_REMOVE and waits for PEER_REMOVED: the LWK has
// stopped using it and unmapped it on every CPU.
//
// Programs in the two enclaves may message each other (KMSG_USER) only
// while both enclaves have the same owner user and group: programs_talk
// says so at PEER_ADD, and PEER_TRUST says it anew after an owner changes
// (the host waits for PEER_TRUSTED). Both LWKs hold to it, the sender and
// the receiver.
//
// Host: a [`KmsgPeer`].
#define ATOLL_KMSG_PEER_ADD 20

// LWK: u64 peer id, s64 0 or -errno.
#define ATOLL_KMSG_PEER_ADDED 21

// Host: u64 peer id.
#define ATOLL_KMSG_PEER_REMOVE 22

// LWK: u64 peer id; the block is no longer mapped.
#define ATOLL_KMSG_PEER_REMOVED 23

// Host: u64 peer id, u64 cookie: ping the peer.
#define ATOLL_KMSG_PEER_PING 24

// LWK: u64 cookie, s64 round trip in ns or -errno.
#define ATOLL_KMSG_PEER_PONG 25

// Host: u64 peer id, u64 programs_talk (1 or 0), u64 cookie.
#define ATOLL_KMSG_PEER_TRUST 57

// LWK: u64 cookie; it holds to the new answer now.
#define ATOLL_KMSG_PEER_TRUSTED 58

// Multicast: a ring several LWKs receive from (up to KMSG_MAX_READERS),
// in a block of Linux's memory each maps; the sender writes each message
// once with a reader count and interrupts every receiver that does not
// poll. Joining and leaving work as PEER_ADD/PEER_REMOVE do.
//
// Host: a [`KmsgGroup`].
#define ATOLL_KMSG_GROUP_JOIN 33

// LWK: u64 group, s64 0 or -errno.
#define ATOLL_KMSG_GROUP_JOINED 34

// Host: u64 group.
#define ATOLL_KMSG_GROUP_LEAVE 35

// LWK: u64 group; the block is no longer mapped.
#define ATOLL_KMSG_GROUP_LEFT 36

// IOC_KMSG_MCAST (test image): count check messages of len bytes to the n
// enclaves in ids, once as multicast and once as unicasts to each; each
// phase's time runs until every LWK has reported.
#define ATOLL_MCAST_MAX 8

// Messages between programs: a program in an enclave, a process on Linux
// or a program in another enclave sends up to MSG_MAX bytes to a (kernel,
// port); kernel 0 is Linux, any other the enclave with that id. In an
// enclave the two calls are system calls of the LWK; on Linux they are
// ioctls of /dev/atoll (abi/atoll_msg.h wraps both). Between kernels a
// message travels as one KMSG_USER message, straight from LWK to LWK
// between enclaves. A port keeps MSG_QUEUE messages; past that the
// sender's call fails with EAGAIN on Linux, and messages from other
// kernels are dropped and counted.
//
// Who hears whom: each Linux user has ports of their own. A process on
// Linux receives on its user's ports, and sends to kernel 0 into them; a
// program in an enclave sends to the ports of the user who runs it (its
// atoll run's). Ports in an enclave are its programs', whose users all may
// use that enclave. Programs in two enclaves hear each other only while
// the enclaves have the same owner (PEER_ADD's programs_talk). Queued
// messages to one Linux user take at most MSG_USER_BYTES.
//
// (kernel, port, from port, buf, len) -> 0.
#define ATOLL_SYS_MSG_SEND 1000

// (port, buf, len, struct atoll_msg_from *, timeout ms) -> bytes.
#define ATOLL_SYS_MSG_RECV 1001

#define ATOLL_MSG_MAX 4096

#define ATOLL_MSG_PORTS 256

#define ATOLL_MSG_QUEUE 64

#define ATOLL_MSG_USER_BYTES (4 << 20)

#define ATOLL_KERNEL_LINUX 0

// A [`UserMsg`], then the bytes.
#define ATOLL_KMSG_USER 32

// XEMEM: memory segments shared between programs anywhere on the node, in
// any enclave or on Linux (XPMEM's model; xemem/xpmem.h wraps it). A
// program makes a segment of its own memory (segid, optionally named);
// another gets it (apid, if the segment's mode lets its user) and attaches
// it, mapping the very frames. In an enclave the calls are the LWK's
// system call SYS_XEMEM; on Linux, IOC_XEMEM of /dev/atoll. The host
// module keeps every segment; an LWK asks it with XEMEM_REQ and gets
// XEMEM_REPLY (an attach's frames in runs, over several replies). Removing
// a segment (or its owner ending) revokes every attachment first: the host
// zaps Linux's, and sends XEMEM_REVOKE to each LWK; only then are the
// frames let go (XEMEM_UNPIN to the owner's LWK).
//
// Signalled segments: every segment has an event count. SIGNAL adds one
// and wakes a waiter; WAIT takes one, blocking until there is one (an
// LWK's WAIT is answered when it is taken, by an XEMEM_REPLY from the
// message interrupt). Removing the segment ends every wait with EIDRM. A
// SIGNAL with request id 0 gets no answer (the LWK sends those once a
// first signal to the segment succeeded, so a simulation never waits on
// Linux). The event lives in its owner's kernel: the host's for a segment
// made on Linux, the LWK's for one made in an enclave (the host opens and
// closes it there with XEMEM_HOME). A program's first SIGNAL or WAIT goes
// to the host, which checks the segment's mode; for an event in an LWK it
// answers XEMEM_ELSEWHERE with that enclave's id, and the program's kernel
// then sends its SIGNAL, WAIT and CANCEL there (XEMEM_HOME, answered by
// XEMEM_REPLY), from one enclave's CPU to the other's without Linux; the
// host forwards Linux's own the same way.
//
// (struct atoll_xemem_io *) -> 0 or -errno.
#define ATOLL_SYS_XEMEM 1002

// Where a kernel-mode program (`atoll run --hrt`) calls for its system
// calls instead of SYSCALL: CALL it with the number and arguments in
// SYSCALL's registers; the result comes in rax, and rcx and r11 are
// clobbered, as by SYSCALL. EPERM in ring 3 (ENOSYS on Linux).
#define ATOLL_SYS_HRT_DIRECT_CALL 1003

// The hybrid-runtime API's calls into the LWK (libatoll-hrt, docs/hrt.md):
// (op, up to five arguments) -> a value or -errno. A ring-3 program makes
// them by SYSCALL with this number and the op in rdi; a kernel-mode one
// CALLs the address HRT_OP_ENTRY gives with the op and arguments in C's
// registers (rdi, rsi, rdx, rcx, r8, r9), the result in rax.
#define ATOLL_SYS_HRT 1004

// () -> 0: nothing, what a call costs.
#define ATOLL_HRT_OP_NULL 0

// () -> the address of the direct entry; EPERM in ring 3.
#define ATOLL_HRT_OP_ENTRY 1

// () -> how many CPUs the program has (the API numbers them from 0).
#define ATOLL_HRT_OP_CPUS 2

// () -> the number of the CPU the calling thread runs on.
#define ATOLL_HRT_OP_THIS_CPU 3

// (cpu or HRT_ANY_CPU, rip, rsp, fs base, u32 *done) -> tid: a thread
// bound to that CPU, entered at rip with rsp and rdi = rsp; at its end
// `*done` becomes 0 and its waiters wake (as CLONE_CHILD_CLEARTID).
#define ATOLL_HRT_OP_THREAD 4

// () -> never returns: ends the calling thread.
#define ATOLL_HRT_OP_EXIT 5

// (u32 *word, expected) -> 0 once woken, EAGAIN if `*word` differs,
// EINTR for a signal: sleeps as FUTEX_WAIT does.
#define ATOLL_HRT_OP_WAIT 6

// (u32 *word, how many, HRT_WAKE_*) -> how many woke: each woken thread's
// CPU is kicked with an IPI.
#define ATOLL_HRT_OP_WAKE 7

// (1 to hold, 0 to release) -> 1 if it was held before, else 0: the
// calling thread is not preempted while held (ring 3's interrupt-off
// region), for at most HRT_HOLD_MAX_US at a time.
#define ATOLL_HRT_OP_HOLD 8

#define ATOLL_HRT_ANY_CPU 18446744073709551615ull

// HRT_OP_WAKE: the woken thread runs next on its CPU, ahead of the
// threads queued there and in place of the one running (a handler thread).
#define ATOLL_HRT_WAKE_FIRST 1

#define ATOLL_HRT_HOLD_MAX_US 10000

#define ATOLL_XEMEM_NAME_LEN 64

// vaddr, size, mode, name ("": none) -> segid.
#define ATOLL_XEMEM_MAKE 1

// segid.
#define ATOLL_XEMEM_REMOVE 2

// segid, flags -> apid.
#define ATOLL_XEMEM_GET 3

// apid.
#define ATOLL_XEMEM_RELEASE 4

// apid, offset, size, vaddr (0: anywhere) -> vaddr.
#define ATOLL_XEMEM_ATTACH 5

// vaddr.
#define ATOLL_XEMEM_DETACH 6

// name -> segid.
#define ATOLL_XEMEM_LOOKUP 7

// LWK only: the program's memory is gone; drop what it held.
#define ATOLL_XEMEM_ENDED 8

// segid: one event for its waiters.
#define ATOLL_XEMEM_SIGNAL 9

// segid, timeout_ms: takes an event, or ETIMEDOUT, EIDRM.
#define ATOLL_XEMEM_WAIT 10

// LWK only: ends the WAIT whose request id is attachment.
#define ATOLL_XEMEM_CANCEL 11

// segid: the owner asks that it outlive the owner.
#define ATOLL_XEMEM_KEEP 12

// GET's flags, as XPMEM's.
#define ATOLL_XEMEM_RDONLY 1

#define ATOLL_XEMEM_RDWR 2

// LWK: a [`XememReq`].
#define ATOLL_KMSG_XEMEM_REQ 41

// Host: a [`XememReply`], then its runs.
#define ATOLL_KMSG_XEMEM_REPLY 42

// Host: u64 area, u64 attachment: unmap it.
#define ATOLL_KMSG_XEMEM_REVOKE 43

// LWK: u64 attachment; no CPU can reach it now.
#define ATOLL_KMSG_XEMEM_REVOKED 44

// Host: u64 pin; nobody else maps its frames now.
#define ATOLL_KMSG_XEMEM_UNPIN 45

// LWK: a [`XememReq`], SIGNAL, WAIT or CANCEL.
#define ATOLL_KMSG_XEMEM_EVENT 46

// To an event's LWK: a [`XememEvent`].
#define ATOLL_KMSG_XEMEM_HOME 61

// Runs in one reply.
#define ATOLL_XEMEM_REPLY_RUNS 4000

// A reply's result: the event is in enclave `value`.
#define ATOLL_XEMEM_ELSEWHERE 1

// FNV-1a over each run's phys then len (8 bytes each, little-endian): a
// MAKE's runs as the LWK pinned them must hash as the host finds them
// ([`xemem_hash`]).
#define ATOLL_XEMEM_HASH_SEED 14695981039346656037ull

#define ATOLL_XEMEM_HASH_PRIME 1099511628211ull

// IOC_XEMEM_LIST: the node's segments and attachments (the first that fit).
#define ATOLL_XEMEM_LIST_SEGS 64

#define ATOLL_XEMEM_LIST_ATTS 128

// Outlives its owner (KEEP).
#define ATOLL_XEMEM_SEG_KEPT 1

// And its owner has ended.
#define ATOLL_XEMEM_SEG_OWNER_ENDED 2

// Message benchmarks (test image; host atoll_test/kmsg_bench.c, LWK
// kernel/src/selftest/kmsg_bench.rs): one side times `rounds` round trips
// of each mode, the other answers. Linux times its own round trips with an
// LWK; for two LWKs, Linux asks one (BENCH_RUN) and it reports
// BENCH_RESULT.
//
// A cache line bounced between the two CPUs.
#define ATOLL_BENCH_LINE 1

// A bare IPI and one back.
#define ATOLL_BENCH_IPI 2

// A 64-byte message each way, with interrupts.
#define ATOLL_BENCH_KMSG_IPI 3

// A 64-byte message each way, both sides polling.
#define ATOLL_BENCH_KMSG_POLL 4

// A one-slot message each way, both sides polling (Popcorn's 64-byte
// message: one slot, its head and 48 payload bytes in one cache line).
#define ATOLL_BENCH_SLOT_POLL 5

#define ATOLL_BENCH_MODES 5

// Modes timed together, taking turns round by round: the bare IPI and the
// message with interrupts (the LWK answers both from its interrupts), so
// that the host's drifts, which move IPI delivery under TCG, hit both
// alike. Every other mode is timed alone; groups go in mode order.
#define ATOLL_BENCH_TAKE_TURNS ((1 << ATOLL_BENCH_IPI) | (1 << ATOLL_BENCH_KMSG_IPI))

// u64 mode, rounds, partner APIC id, reply vector.
#define ATOLL_KMSG_BENCH_RESPOND 26

// u64 mode: the responder is in place.
#define ATOLL_KMSG_BENCH_READY 27

// The polling responder may stop.
#define ATOLL_KMSG_BENCH_DONE 28

// Host: u64 peer id, rounds: time every mode with it.
#define ATOLL_KMSG_BENCH_RUN 29

// LWK: u64 mode, median ns, min ns, 90th percentile ns, s64 error.
#define ATOLL_KMSG_BENCH_RESULT 30

// 48 or 64 bytes, echoed by the receiver (the round trips): u64 round,
// BENCH_REPLY set in the answer's.
#define ATOLL_KMSG_BENCH_ECHO 31

// Set in an echo's round on the answer: the round number comes back with it.
#define ATOLL_BENCH_REPLY (1ull << 63)

// Any bytes, received and dropped (the stream).
#define ATOLL_KMSG_BENCH_SINK 37

// IOC_KMSG_CHECK: floods the rings of enclave id with check messages of
// lengths cycling min_len .. max_len (the LWK's side is in the test
// image): count from Linux to the LWK, then count from every LWK CPU at
// once to Linux, which polls meanwhile (the LWK then sends no interrupts).
// Directions: a bit each.
#define ATOLL_CHECK_TO_LWK 1

#define ATOLL_CHECK_FROM_LWK 2

// Programs (up to MAX_PROGRAMS at once per enclave). `atoll run` opens
// /dev/atoll; the open file is bound to one program, which has one
// [`Proc`] of the enclave's (its area; messages name it by index). Both
// sides claim a free area by a compare-and-swap of its state from
// PROC_FREE to PROC_CREATING.
//
// 1. IOC_RUN: the host claims an area, copies the regions into it and
//    sends KMSG_PROC_CREATE. The LWK maps every region, populated and
//    zeroed (large pages where aligned), writes cr3 and pid, sets state
//    PROC_LOADED and answers KMSG_PROC_CREATED.
// 2. mmap(USER_START, USER_END - USER_START, RW, MAP_SHARED |
//    MAP_FIXED_NOREPLACE, fd, 0) mirrors the program's address space in
//    the caller: a fault at an address is resolved through the LWK's page
//    tables (cr3) to the same physical page. While LOADED the mirror may
//    write read-only pages (to load the ELF); after START it honours the
//    LWK's protections.
// 3. The caller writes the ELF segments and the initial stack (argv, envp,
//    auxv) through the mirror, then IOC_START (entry, stack pointer):
//    KMSG_PROC_START, state PROC_RUNNING.
// 4. Delegated calls: an LWK thread owns slot[i]. It fills nr, args, kind,
//    cpu, tid, sets state SLOT_REQUEST, increments doorbell and sends
//    HOST_VECTOR. A host worker in IOC_CALL claims it (SLOT_REQUEST ->
//    SLOT_CLAIMED), performs it, and its next IOC_CALL stores ret, sets
//    SLOT_DONE and sends DONE_VECTOR to apic_ids[cpu]. The LWK thread
//    takes ret and sets the slot SLOT_IDLE. Before a worker is handed a
//    call, the host drops every mirror mapping if map_generation changed
//    (the LWK bumps it after it unmaps memory or takes protection away).
// 5. The last thread ends: state PROC_EXITED, wait_status,
//    KMSG_PROC_EXIT. The memory stays until the file is released (every
//    mirror mapping gone): KMSG_PROC_RELEASE; the LWK ends any thread
//    left, frees everything, sets state PROC_FREE and sends
//    KMSG_PROC_FREED.
//
// Lowest program address.
#define ATOLL_USER_START 1048576ull

// 64 TiB: end of the mirror.
#define ATOLL_USER_END 70368744177664ull

// Where a PIE program is loaded.
#define ATOLL_PIE_BASE 1073741824ull

// Anonymous mmaps grow up from here.
#define ATOLL_MMAP_BASE 17592186044416ull

// The main stack ends here.
#define ATOLL_STACK_TOP 70368742080512ull

// 8 MiB, like RLIMIT_STACK.
#define ATOLL_STACK_SIZE 8388608ull

// The vDSO (kernel/vdso): the LWK maps a [`VdsoData`] page at VDSO_BASE
// and the image right after it, in every program it builds; `atoll run`
// passes the image's address as AT_SYSINFO_EHDR. 1 MiB below the mmap
// base.
#define ATOLL_VDSO_BASE 17592184995840ull

// The data page and the image's.
#define ATOLL_VDSO_PAGES 4

#define ATOLL_MAX_REGIONS 16

// Threads alive at once.
#define ATOLL_MAX_SLOTS 128

// Words of a bitmap with a bit per slot.
#define ATOLL_SLOT_WORDS (ATOLL_MAX_SLOTS / 64)

// A command name, NUL padded.
#define ATOLL_COMM_LEN 16

// Linux's host name (65 bytes with its NUL), NUL padded to 72.
#define ATOLL_NODENAME_LEN 72

// Region.prot.
#define ATOLL_PROT_READ 1

#define ATOLL_PROT_WRITE 2

#define ATOLL_PROT_EXEC 4

// Proc.state.
#define ATOLL_PROC_FREE 0

#define ATOLL_PROC_CREATING 1

#define ATOLL_PROC_LOADED 2

#define ATOLL_PROC_RUNNING 3

#define ATOLL_PROC_EXITED 4

// Slot.state.
#define ATOLL_SLOT_IDLE 0

#define ATOLL_SLOT_REQUEST 1

#define ATOLL_SLOT_CLAIMED 2

#define ATOLL_SLOT_DONE 3

// Slot.fault_state: PAGE_WANTED's question and answer, in the slot: the
// state in the low bits (FAULT_STATE_MASK), the question's number above,
// which the answer keeps.
#define ATOLL_FAULT_IDLE 0

#define ATOLL_FAULT_ASKED 1

#define ATOLL_FAULT_ANSWERED 2

#define ATOLL_FAULT_STATE_MASK 255

// Slot.kind: perform Linux system call nr(args).
#define ATOLL_CALL_SYSCALL 1

// Report: nr is not supported (ENOSYS); ret ignored.
#define ATOLL_CALL_UNSUPPORTED 2

// fork: the LWK made a child process in area args[0] with pid args[1]; the
// module puts a random token in args[2]; the worker forks `atoll run`,
// whose child adopts it with that token (IOC_ADOPT) and starts it; ret is
// the child's Linux pid, or -errno (the LWK drops it).
#define ATOLL_CALL_FORK 3

// execve(args[0..3]): the worker reads the new program, has the LWK build
// its image (IOC_EXEC), loads it through the mirror and gives its entry
// and stack (IOC_START); ret 0, or -errno (before the image was replaced
// the program goes on; after, it is killed).
#define ATOLL_CALL_EXEC 4

// A descriptor `atoll run` keeps for writing a shared file mapping back
// (the LWK's write_back.rs) or a pipe's bytes into Linux's pipe
// (pipe_move.rs); nr says what, args[0] is the descriptor. The program
// cannot use, close or replace a kept descriptor. KEEP: a close-on-exec
// duplicate of the program's args[0] (from 512 up); ret the kept
// descriptor. WRITE: pwrite64(args[0], args[1], args[2], args[3]) from the
// program's memory. DROP: closes it. PUSH: write(args[0], args[1],
// args[2]), never waiting (O_NONBLOCK on the kept description only).
#define ATOLL_CALL_KEPT_FILE 5

#define ATOLL_KEPT_KEEP 1

#define ATOLL_KEPT_WRITE 2

#define ATOLL_KEPT_DROP 3

#define ATOLL_KEPT_PUSH 4

// The name of the file behind the program's descriptor args[0], for
// /proc/<pid>/maps: the worker writes its struct stat (STAT_SIZE bytes) at
// args[1] and its path, NUL terminated, right after, in args[2] bytes in
// all; ret is the path's length (cut to fit), or -errno.
#define ATOLL_CALL_FILE_NAME 6

#define ATOLL_STAT_SIZE 144

// open() of a file whose contents the LWK made (/proc/<pid>/maps). nr
// TEXT_OPEN: the args[1] bytes at args[0] (at most MAX_TEXT_FILE), with
// open's flags args[2] (O_CLOEXEC counts); ret is the new descriptor,
// read-only, or -errno. nr TEXT_MAY_READ, asked before another program's
// file is made: 0 if this `atoll run` may open the maps of the `atoll run`
// serving LWK pid args[0], else -errno.
#define ATOLL_CALL_TEXT_FILE 7

#define ATOLL_TEXT_OPEN 0

#define ATOLL_TEXT_MAY_READ 1

#define ATOLL_MAX_TEXT_FILE (16 << 20)

// Region.flags: memory comes on first touch, from the touched page up to
// the region's end (the main stack below its first contents); at most one
// such region, writable, not executable.
#define ATOLL_REGION_ON_DEMAND 1

// Region.flags, what a region maps, for /proc/<pid>/maps: the main stack,
// or segments of the program's or its loader's file from Region.offset on.
#define ATOLL_REGION_STACK 2

#define ATOLL_REGION_PROGRAM 4

#define ATOLL_REGION_LOADER 8

#define ATOLL_FILE_PATH_LEN 512

// EnclaveInfo.state.
#define ATOLL_ENCLAVE_BOOTING 1

#define ATOLL_ENCLAVE_RUNNING 2

#define ATOLL_ENCLAVE_CRASHED 3

#define ATOLL_ENCLAVE_STOPPED 4

// Phases of create, for the Table 5 benchmark.
#define ATOLL_PHASE_CPUS 0

#define ATOLL_PHASE_MEMORY 1

#define ATOLL_PHASE_LOAD 2

#define ATOLL_PHASE_BOOT 3

#define ATOLL_PHASES 4

// Phases of destroy.
#define ATOLL_DPHASE_STOP 0

#define ATOLL_DPHASE_CPUS 1

#define ATOLL_DPHASE_MEMORY 2

#define ATOLL_DPHASES 3

// Create.hrt, EnclaveInfo.hrt: who may run kernel-mode programs in an
// enclave (`atoll run --hrt`). Code at CPL 0 reaches all memory, so each
// is as trusted as root: no one; root (`atoll create --hrt`); root and the
// enclave's owner user and group (`--hrt --hrt-users`).
#define ATOLL_HRT_NONE 0

#define ATOLL_HRT_ROOT 1

#define ATOLL_HRT_OWNER 2

// Resizing a running enclave (atoll add / atoll remove). Memory: the host
// offlines blocks as at create and sends MEM_ADD for each; the LWK maps it
// and gives it to its frame allocator (its bitmap in the block's first
// frames). MEM_REMOVE asks for a block back: the LWK gives it only if none
// of its frames is in use (else -EBUSY, and it keeps it), unmaps it and
// flushes every CPU's TLB before it answers; only then does Linux online
// it. A missing or refused answer leaves the enclave and Linux as they
// were.
//
// CPUs: the host offlines a CPU as at create, picks the lowest free LWK CPU
// index for it and lends Linux's trampoline page (with page tables below 4
// GiB that map it and the enclave's memory); CPU_ADD has the LWK start the
// CPU exactly as its boot CPU started the others. CPU_REMOVE asks the LWK
// to move every thread away from one of its CPUs (their affinity follows)
// and park it; only after CPU_REMOVED does the host INIT it and give it to
// Linux. The LWK's boot CPU (index 0) hears the host's messages and is
// never removed.
#define ATOLL_RESIZE_ADD_MEM 1

#define ATOLL_RESIZE_REMOVE_MEM 2

#define ATOLL_RESIZE_ADD_CPUS 3

#define ATOLL_RESIZE_REMOVE_CPUS 4

// The last resizes atoll status shows.
#define ATOLL_RESIZE_HISTORY 16

// Host: u64 phys, u64 bytes: a block to use.
#define ATOLL_KMSG_MEM_ADD 47

// LWK: u64 phys, s64 0 or -errno.
#define ATOLL_KMSG_MEM_ADDED 48

// Host: u64 phys, u64 bytes: give it back if unused.
#define ATOLL_KMSG_MEM_REMOVE 49

// LWK: u64 phys, s64 0 or -EBUSY; no CPU maps it now.
#define ATOLL_KMSG_MEM_REMOVED 50

// Host: u64 LWK index, APIC id, trampoline page, its CR3.
#define ATOLL_KMSG_CPU_ADD 51

// LWK: u64 index, s64 0 or -errno: it runs (or never will).
#define ATOLL_KMSG_CPU_ADDED 52

// Host: u64 LWK index: move its threads, park it.
#define ATOLL_KMSG_CPU_REMOVE 53

// LWK: u64 index, s64 0 or -errno: it is parked.
#define ATOLL_KMSG_CPU_REMOVED 54

// OS noise probes (atoll noise). Selfish detour: the LWK spins on one of
// its CPUs reading the TSC for duration_ns and records every gap longer
// than threshold_ns (a detour) with the interrupts that CPU took during
// it. A detour with none is not the LWK's doing: the hardware or the
// hypervisor took the CPU. FWQ (fixed work quanta): a piece of work that
// takes about threshold_ns undisturbed, repeated for duration_ns; each
// listed entry is one quantum (len_ns: how long it took). FTQ (fixed time
// quanta): quanta of threshold_ns; each entry's len_ns is the work units
// done in it. The probe holds the CPU for its duration.
#define ATOLL_NOISE_SELFISH 1

#define ATOLL_NOISE_FWQ 2

#define ATOLL_NOISE_FTQ 3

// Detours listed one by one; all are counted.
#define ATOLL_NOISE_MAX_LISTED 2000

// Host: a [`NoiseRun`].
#define ATOLL_KMSG_NOISE_RUN 55

// LWK: a [`NoiseResult`], its listed detours.
#define ATOLL_KMSG_NOISE_DONE 56

// Call.event: slot, kind, tid, nr, args: perform it.
#define ATOLL_EVENT_CALL 1

// wait_status.
#define ATOLL_EVENT_EXITED 2

// The LWK crashed; the program is gone.
#define ATOLL_EVENT_CRASHED 3

// The ioctls on /dev/atoll, but for KMSG_CHECK, KMSG_BENCH and
// KMSG_MCAST: those are the test module's (atoll_test.ko), on
// /dev/atoll-test; atoll.ko answers them with -ENOTTY.
#define ATOLL_IOC_MAGIC 167

struct atoll_header {
  __u32 magic;
  __u32 version;
  // sizeof the whole struct.
  __u32 size;
  __u32 reserved;
};

struct atoll_mem_range {
  // Physical.
  __u64 start;
  __u64 size;
};

struct atoll_boot_params {
  struct atoll_header hdr;
  __u32 enclave_id;
  __u32 cpu_count;
  __u32 mem_count;
  __u32 host_apic_id;
  // Nonzero: the CPUs run their APIC in x2APIC mode.
  __u32 x2apic;
  __u32 pad0;
  // Measured by Linux; the LWK must not touch the PIT.
  __u64 tsc_khz;
  __u64 lapic_phys;
  // Page below 1 MiB lent for starting CPUs.
  __u64 trampoline_phys;
  // Page tables below 4 GiB for the trampoline.
  __u64 boot_cr3;
  // The shared area: never given to the allocator.
  __u64 shared_phys;
  __u64 shared_size;
  __u64 status_phys;
  __u64 console_phys;
  __u64 console_size;
  __u64 image_phys;
  __u64 image_size;
  // [0] is the boot CPU.
  __u32 apic_ids[ATOLL_MAX_CPUS];
  struct atoll_mem_range mem[ATOLL_MAX_MEM_RANGES];
  char cmdline[ATOLL_CMDLINE_LEN];
};

struct atoll_trampoline_slots {
  __u64 cr3;
  __u64 stack;
  __u64 entry;
  // %rdi.
  __u64 arg0;
  // %rsi.
  __u64 arg1;
};

// The console ring (LWK writes, host reads; survives an LWK panic).
struct atoll_console {
  struct atoll_header hdr;
  // Bytes of data after this header.
  __u64 capacity;
  // Bytes ever written; next at data[head % capacity]. The data follow.
  __u64 head;
};

// The status page (LWK writes, host reads).
struct atoll_status {
  struct atoll_header hdr;
  // LWK_BOOTING, _RUNNING, _CRASHED or _STOPPED.
  __u32 lwk_state;
  __u32 online_cpus;
  __u32 panic_cpu;
  __u32 pad0;
  // LWK memory not in use, updated as it changes.
  __u64 free_bytes;
  // LWK memory it manages (kernel image and shared area excluded).
  __u64 total_bytes;
};

struct atoll_kmsg_head {
  // `type` in C.
  __u16 type;
  // Slots the message takes, this one included.
  __u16 slots;
  // Payload bytes.
  __u32 len;
};

struct atoll_kmsg_slot {
  // Ticket + 1; set last in a message's first slot.
  __u32 stamp;
  // First slot: receivers yet to read the message.
  __u32 readers;
  // First slot: head, then payload.
  __u8 data[ATOLL_KMSG_SLOT_DATA];
};

struct atoll_kmsg_ring {
  struct atoll_header hdr;
  // Power of two; set by whoever made the ring.
  __u32 slots;
  // 1: unicast.
  __u32 receivers;
  __u32 pad0[10];
  // Senders: next ticket to claim.
  __u32 head;
  __u32 pad1[15];
  // Receivers: tickets below it are free again.
  __u32 tail;
  __u32 pad2[15];
  // Bit r: receiver r polls; senders skip its interrupt. The ring's
  // [`KmsgSlot`]s follow.
  __u32 polling;
  __u32 pad3[15];
};

struct atoll_kmsg_peer {
  // The other enclave's id.
  __u32 peer_id;
  // The other enclave's CPU that hears messages.
  __u32 notify_apic_id;
  // Page aligned, in Linux's memory.
  __u64 block_phys;
  __u64 block_size;
  // Our ring to the peer.
  __u64 out_offset;
  // The peer's ring to us.
  __u64 in_offset;
  // In each ring.
  __u32 slots;
  // 1: programs may message each other (same owner).
  __u32 programs_talk;
  // One cache line both bounce (benchmarks).
  __u64 line_offset;
};

struct atoll_kmsg_group {
  // Its number, from the host.
  __u32 group;
  // This receiver's, 0 .. count - 1.
  __u32 index;
  // Receivers.
  __u32 count;
  // Of the ring at the block's start.
  __u32 slots;
  __u64 block_phys;
  __u64 block_size;
};

struct atoll_kmsg_mcast_req {
  struct atoll_header hdr;
  __u32 ids[ATOLL_MCAST_MAX];
  __u32 n;
  __u32 count;
  __u32 len;
  __u32 pad0;
  // Out.
  __u64 mcast_ns;
  // Out.
  __u64 unicast_ns;
  // Out: intact and in order, per LWK, both phases.
  __u64 received[ATOLL_MCAST_MAX];
  __u64 bad[ATOLL_MCAST_MAX];
  char error[ATOLL_ERROR_LEN];
};

struct atoll_user_msg {
  __u16 dest_port;
  __u16 src_port;
  // Bytes after this struct.
  __u32 len;
  // The sending program's (to Linux: whose user's ports).
  __u32 area;
  __u32 pad0;
};

// Who sent a received message.
struct atoll_msg_from {
  __u32 kernel;
  __u32 port;
};

// IOC_MSG_SEND: buf_ptr/len to (kernel, port) from src_port.
// IOC_MSG_RECV: waits up to timeout_ms (-1: for ever) for a message on
// port; len in: room at buf_ptr, out: the message's bytes (at most the
// room); kernel and src_port out: who sent it.
struct atoll_msg_io {
  struct atoll_header hdr;
  __u32 kernel;
  __u16 port;
  __u16 src_port;
  __u64 buf_ptr;
  __u32 len;
  __s32 timeout_ms;
};

struct atoll_xemem_io {
  struct atoll_header hdr;
  __u32 op;
  // MAKE: who may get it, as a file's mode (0600).
  __u32 mode;
  __s64 segid;
  __s64 apid;
  __u64 vaddr;
  __u64 size;
  __u64 offset;
  // GET: XEMEM_RDONLY or XEMEM_RDWR.
  __u32 flags;
  // WAIT: -1 waits for ever.
  __s32 timeout_ms;
  char name[ATOLL_XEMEM_NAME_LEN];
};

// A program's request, with the LWK's pin over a MAKE's frames.
struct atoll_xemem_req {
  // The LWK's, echoed by every reply.
  __u64 id;
  // The program asking.
  __u32 area;
  __u32 pid;
  // MAKE: the frames' pin in the LWK.
  __u64 pin;
  // MAKE: xemem_hash of the range's runs.
  __u64 runs_hash;
  // MAKE: the program's page-table root, to walk.
  __u64 root;
  // DETACH: the id ATTACH gave.
  __u64 attachment;
  struct atoll_xemem_io io;
};

// Physically contiguous bytes of a segment, in order.
struct atoll_xemem_run {
  __u64 phys;
  __u64 len;
};

// XEMEM_HOME: SIGNAL, WAIT or CANCEL for an event that lives in the
// receiving LWK, from the host or another LWK, answered by XEMEM_REPLY to
// the sender with the segid as its value (id 0: no answer; a WAIT always
// has one). From the host also MAKE (the event of a segment made here
// opens here), REMOVE (it closes: waits get EIDRM) and GET (enclave
// `kernel`'s programs may use it: the host told one of them where it is;
// another LWK's requests wait for that).
struct atoll_xemem_event {
  // The sender's, echoed by the reply.
  __u64 id;
  __s64 segid;
  // CANCEL: the id of the WAIT it ends.
  __u64 cancel;
  __u32 op;
  // GET: the enclave let in.
  __u32 kernel;
};

struct atoll_xemem_reply {
  __u64 id;
  // 0 or -errno.
  __s64 result;
  // segid, apid, or an attach's attachment id.
  __s64 value;
  // ATTACH: map the runs writable.
  __u32 writable;
  // ATTACH sends its runs in several replies; 1 ends.
  __u32 last;
  // Runs after this struct.
  __u32 count;
  __u32 pad0;
};

struct atoll_xemem_seg_info {
  __s64 segid;
  __u64 size;
  // The owner's: 0 Linux, else the enclave's id.
  __u32 kernel;
  // The owner: its pid there.
  __u32 pid;
  __u32 uid;
  __u32 mode;
  // Apids handed out and not released.
  __u32 grants;
  // Not revoked.
  __u32 attachments;
  // XEMEM_SEG_KEPT, XEMEM_SEG_OWNER_ENDED.
  __u32 flags;
  __u32 pad0;
  char name[ATOLL_XEMEM_NAME_LEN];
};

struct atoll_xemem_att_info {
  __u64 id;
  __s64 segid;
  __u64 offset;
  __u64 size;
  // Where it is mapped: 0 Linux, else the enclave's id.
  __u32 kernel;
  __u32 pid;
  __u32 writable;
  // Its segment went; its pages fault.
  __u32 revoked;
};

struct atoll_xemem_list {
  struct atoll_header hdr;
  // Out: how many exist.
  __u32 segments;
  __u32 attachments;
  struct atoll_xemem_seg_info seg[ATOLL_XEMEM_LIST_SEGS];
  struct atoll_xemem_att_info att[ATOLL_XEMEM_LIST_ATTS];
};

struct atoll_bench_figure {
  __u64 median_ns;
  __u64 min_ns;
  __u64 p90_ns;
  // 0, or -errno: this mode could not be measured.
  __s64 error;
};

// IOC_KMSG_BENCH: round trips to enclave id from Linux or from enclave
// from_id.
struct atoll_kmsg_bench_req {
  struct atoll_header hdr;
  __u32 id;
  // 0: Linux times it.
  __u32 from_id;
  __u32 rounds;
  // From Linux: also stream `rounds` messages of this size (0: no).
  __u32 stream_size;
  // `[BENCH_x - 1]`.
  struct atoll_bench_figure mode[ATOLL_BENCH_MODES];
  // Out: the stream, until the LWK had handled all of it.
  __u64 stream_ns;
  // Out: as many memcpy()s of that size on Linux's CPU.
  __u64 memcpy_ns;
  char error[ATOLL_ERROR_LEN];
};

// A message whose every byte can be checked (the test image and
// IOC_KMSG_CHECK flood with it): this header, then pattern byte i =
// (i * 31 + (seq ^ sender)) & 0xff. A check message is at least
// sizeof(struct atoll_kmsg_check) long.
struct atoll_kmsg_check {
  // Stream: one per sending CPU; the host is stream 0.
  __u32 sender;
  // 0, 1, ... within the stream.
  __u32 seq;
  // FNV-1a (32 bit) of the pattern bytes.
  __u32 sum;
  __u32 pad0;
};

struct atoll_kmsg_check_start {
  // Messages each LWK CPU sends.
  __u32 count;
  // Lengths cycle min_len .. max_len.
  __u32 min_len;
  __u32 max_len;
  __u32 pad0;
};

// The vDSO's data page: CLOCK_MONOTONIC is (TSC * ns_mult) >> 32 ns.
struct atoll_vdso_data {
  __u64 ns_mult;
  // CLOCK_REALTIME - CLOCK_MONOTONIC.
  __s64 realtime_offset_ns;
};

struct atoll_region {
  // Page aligned, within [USER_START, USER_END).
  __u64 start;
  // Page multiple.
  __u64 size;
  // PROT_*.
  __u32 prot;
  // REGION_*.
  __u32 flags;
  // REGION_PROGRAM, REGION_LOADER: the file offset at `start`.
  __u64 offset;
};

// A file as /proc/<pid>/maps names it (no file: all zero).
struct atoll_file_name {
  // stat's st_dev.
  __u64 dev;
  // stat's st_ino.
  __u64 ino;
  // Its full path, NUL terminated, cut to fit.
  char path[ATOLL_FILE_PATH_LEN];
};

struct atoll_slot {
  // SLOT_*.
  __u32 state;
  // LWK CPU index of the waiting thread.
  __u32 cpu;
  // CALL_*.
  __u32 kind;
  __u32 tid;
  __u64 nr;
  __u64 args[6];
  // Value or -errno, as Linux returns it.
  __s64 ret;
  // Host: PAGE_WANTED's page.
  __u64 fault_va;
  // FAULT_* | question number << 8.
  __u32 fault_state;
  // Host: 1 if the worker writes there.
  __u32 fault_write;
  // LWK: 1 while the caller polls `state`, so the host sends no DONE interrupt.
  __u32 spinning;
  __u32 pad1;
  // LWK: its TSC when it posted the call.
  __u64 posted_tsc;
  // Host: its TSC when a worker took the call.
  __u64 taken_tsc;
  // Host: its TSC when the worker answered.
  __u64 answered_tsc;
};

struct atoll_proc {
  struct atoll_header hdr;
  // PROC_*.
  __u32 state;
  __u32 pid;
  __u32 region_count;
  // Enclave CPUs the threads use, 1.. (0: all).
  __u32 cpu_count;
  // Page aligned, in no region: the heap grows up from here.
  __u64 brk_start;
  // START.
  __u64 entry;
  // START.
  __u64 stack_pointer;
  // LOADED: the LWK's page-table root (physical).
  __u64 cr3;
  // EXITED: as wait(2): code << 8, or the signal.
  __u32 wait_status;
  // Host: the Linux process serving it (`atoll run`).
  __u32 host_pid;
  // LWK: +1 after unmapping or reducing protection.
  __u32 map_generation;
  // LWK: threads alive.
  __u32 threads;
  // Host: 1 while a worker polls the slots, so the LWK posts without CALL_POSTED.
  __u32 polling;
  // Host: how long a worker polls before it sleeps, now (`atoll status`).
  __u32 poll_window_us;
  // Host: delegated calls taken in the last whole second.
  __u32 calls_per_s;
  // Host, at RUN: 1 to run the program at CPL 0 (`atoll run --hrt`, in
  // an enclave created with `--hrt`); its forked children inherit it.
  __u32 kernel_mode;
  // LWK: a bit per slot it posted a call in, set after the slot's
  // REQUEST; a worker clears the bit, then claims the slot. A polling
  // worker reads these words instead of every slot's state.
  __u64 posted[ATOLL_SLOT_WORDS];
  // START: Linux's CLOCK_REALTIME when it sent START.
  __u64 realtime_ns;
  // Host: the CPUs asked for (0: cpu_count); LWK: those it uses.
  __u64 cpus;
  // LWK: memory mapped for it (pages and reserved ranges).
  __u64 mem_bytes;
  // LWK: its TSC when it took the create request (`atoll run --stats`
  // says it, for the start-to-main figure of `make bench-hrt`).
  __u64 created_tsc;
  // Host: the command's name.
  char comm[ATOLL_COMM_LEN];
  // Host: uname's, from `atoll run`'s UTS namespace.
  char nodename[ATOLL_NODENAME_LEN];
  // Host: the program's and its loader's (REGION_PROGRAM, REGION_LOADER).
  struct atoll_file_name file[2];
  struct atoll_region region[ATOLL_MAX_REGIONS];
  struct atoll_slot slot[ATOLL_MAX_SLOTS];
};

struct atoll_create {
  struct atoll_header hdr;
  // In.
  char name[ATOLL_NAME_LEN];
  // Linux CPU numbers; empty: pick cpu_count.
  __u64 cpus[ATOLL_HOST_CPU_WORDS];
  __u32 cpu_count;
  __u32 boot_timeout_ms;
  __u64 mem_bytes;
  // User address of the flat image (file bytes).
  __u64 image_ptr;
  __u64 image_size;
  // With bss: zeroed past image_size.
  __u64 image_mem_size;
  // kernel_entry64, from the image start.
  __u64 entry_offset;
  __u64 trampoline_offset;
  __u64 trampoline_size;
  char cmdline[ATOLL_CMDLINE_LEN];
  // Who may use it (IOC_CHOWN).
  __u32 owner_uid;
  // NO_GROUP: its owner alone.
  __u32 owner_gid;
  // The nice of its programs' servers on Linux (`atoll run`); 0 leaves theirs.
  __s32 serve_nice;
  // HRT_*: who may run kernel-mode programs in it.
  __u32 hrt;
  // Out.
  __u32 id;
  __u32 mem_count;
  __u64 taken_cpus[ATOLL_HOST_CPU_WORDS];
  struct atoll_mem_range mem[ATOLL_MAX_MEM_RANGES];
  __u64 phase_ns[ATOLL_PHASES];
  char error[ATOLL_ERROR_LEN];
};

// One resize, as the enclave's history keeps it.
struct atoll_resize_event {
  // Since the enclave was created.
  __u64 at_ns;
  __u32 op;
  // 0 or -errno.
  __s32 result;
  // Bytes, or the Linux CPUs (a bit each, CPUs 0-63).
  __u64 amount;
  __u64 linux_ns;
  __u64 lwk_ns;
};

struct atoll_enclave_info {
  struct atoll_header hdr;
  // In: the index-th enclave (0, 1, ...).
  __u32 index;
  // Out.
  __u32 id;
  // Out: ENCLAVE_*.
  __u32 state;
  __u32 cpu_count;
  __u32 mem_count;
  // As Create's.
  __s32 serve_nice;
  char name[ATOLL_NAME_LEN];
  __u64 cpus[ATOLL_HOST_CPU_WORDS];
  struct atoll_mem_range mem[ATOLL_MAX_MEM_RANGES];
  __u64 uptime_ns;
  __u64 phase_ns[ATOLL_PHASES];
  // From the channel header.
  __u64 lwk_free_bytes;
  __u64 lwk_total_bytes;
  // Programs bound to it.
  __u32 programs;
  // Resizes so far; the last RESIZE_HISTORY are in resize[].
  __u32 resizes;
  // Oldest first.
  struct atoll_resize_event resize[ATOLL_RESIZE_HISTORY];
  // The LWK's CPU indices in use, a bit each.
  __u64 lwk_cpus;
  __u32 owner_uid;
  __u32 owner_gid;
  // The caller may use it; if not, only id, state, name and owner are filled.
  __u32 yours;
  // HRT_*.
  __u32 hrt;
};

// IOC_CHOWN (root only, as are create, destroy, resizing and noise
// probes): who may use an enclave. Its owner user and the members of its
// owner group may run programs in it, read its console and status, ping it
// and message it; nobody else but root (CAP_SYS_ADMIN) may. uid and gid
// are in the caller's user namespace; gid NO_GROUP: no group, the owner
// alone.
struct atoll_chown {
  struct atoll_header hdr;
  __u32 id;
  __u32 uid;
  __u32 gid;
  __u32 pad0;
  char error[ATOLL_ERROR_LEN];
};

// IOC_RESIZE.
struct atoll_resize {
  struct atoll_header hdr;
  __u32 id;
  // RESIZE_*.
  __u32 op;
  // Memory to add or remove (whole blocks).
  __u64 bytes;
  // Linux CPUs; empty: cpu_count of them; out: done.
  __u64 cpus[ATOLL_HOST_CPU_WORDS];
  __u32 cpu_count;
  __u32 pad0;
  // Out: Linux's part (offlining or onlining).
  __u64 linux_ns;
  // Out: the LWK's part (until its answers came).
  __u64 lwk_ns;
  char error[ATOLL_ERROR_LEN];
};

struct atoll_noise_run {
  __u64 cookie;
  // LWK CPU index.
  __u32 cpu;
  // NOISE_*.
  __u32 probe;
  __u64 duration_ns;
  __u64 threshold_ns;
};

struct atoll_noise_detour {
  // Since the probe began.
  __u64 at_ns;
  __u64 len_ns;
  // Interrupts the CPU took meanwhile.
  __u64 irqs;
};

struct atoll_noise_result {
  __u64 cookie;
  // 0 or -errno.
  __s32 error;
  __u32 cpu;
  __u64 duration_ns;
  __u64 loops;
  __u64 detours;
  __u64 total_ns;
  __u64 max_ns;
  // Interrupts the CPU took during the probe.
  __u64 irqs;
  // Detours during which it took one.
  __u64 kernel_detours;
  __u64 kernel_ns;
  __u64 kernel_max_ns;
  // Detours that follow, the first ones.
  __u32 listed;
  __u32 pad0;
};

// IOC_NOISE: runs a probe on one of an enclave's CPUs and waits for it.
struct atoll_noise_req {
  struct atoll_header hdr;
  __u32 id;
  // LWK CPU index.
  __u32 cpu;
  __u32 probe;
  __u32 pad0;
  __u64 duration_ns;
  __u64 threshold_ns;
  // Room for NOISE_MAX_LISTED [`NoiseDetour`]s.
  __u64 detours_ptr;
  // Out.
  struct atoll_noise_result result;
  char error[ATOLL_ERROR_LEN];
};

struct atoll_console_read {
  struct atoll_header hdr;
  __u32 id;
  __u32 pad0;
  // In: stream position; out: position of the first byte copied.
  __u64 offset;
  __u64 buf_ptr;
  __u64 buf_len;
  // Out.
  __u64 copied;
  // Out: bytes the LWK has written in all.
  __u64 head;
};

struct atoll_ping {
  struct atoll_header hdr;
  __u32 id;
  // 0: from Linux; else from that enclave's LWK, directly.
  __u32 from_id;
  // Out.
  __u64 rtt_ns;
};

struct atoll_kmsg_check_req {
  struct atoll_header hdr;
  __u32 id;
  __u32 count;
  __u32 min_len;
  __u32 max_len;
  // CHECK_* bits.
  __u32 directions;
  __u32 pad1;
  // Out: Linux -> LWK, as the LWK counted them.
  __u64 to_messages;
  __u64 to_bad;
  __u64 to_bytes;
  __u64 to_ns;
  // Out: LWK -> Linux, as Linux counted them.
  __u64 from_messages;
  // Wrong checksum, length, sender or order.
  __u64 from_bad;
  __u64 from_bytes;
  __u64 from_ns;
  // Times an LWK sender found the ring full.
  __u64 from_waits;
  __u32 from_senders;
  __u32 pad0;
  char error[ATOLL_ERROR_LEN];
};

struct atoll_destroy {
  struct atoll_header hdr;
  __u32 id;
  // Nonzero: do not wait for a hung or crashed LWK.
  __u32 force;
  __u64 phase_ns[ATOLL_DPHASES];
  __u64 pad0;
  char error[ATOLL_ERROR_LEN];
};

// IOC_RUN: create the program's address space in enclave id.
struct atoll_run {
  struct atoll_header hdr;
  __u32 id;
  // 0: every enclave CPU.
  __u32 cpu_count;
  __u32 region_count;
  // Out.
  __u32 pid;
  // 1: at CPL 0 (`atoll run --hrt`), if the enclave's HRT_* lets the caller.
  __u32 kernel_mode;
  __u32 pad0;
  __u64 brk_start;
  // Bit per LWK CPU the threads use; 0: cpu_count of them.
  __u64 cpus;
  // Out: the LWK's TSC when it took the request (Proc.created_tsc).
  __u64 created_tsc;
  // The command's name, for listings.
  char comm[ATOLL_COMM_LEN];
  struct atoll_region region[ATOLL_MAX_REGIONS];
  // The program's and its loader's, for /proc/<pid>/maps.
  struct atoll_file_name file[2];
  char error[ATOLL_ERROR_LEN];
};

// IOC_START: run the loaded program.
struct atoll_start {
  struct atoll_header hdr;
  __u64 entry;
  __u64 stack_pointer;
};

// IOC_CALL: finish one delegated call (done_slot >= 0; the module sets
// done_slot to -1 once ret is delivered, so a retried ioctl after EINTR
// does not deliver it twice), then wait for the next call or the
// program's end.
struct atoll_call {
  struct atoll_header hdr;
  // In/out.
  __s32 done_slot;
  // Out.
  __u32 event;
  // In.
  __s64 done_ret;
  // Out.
  __u32 slot;
  __u32 kind;
  __u32 tid;
  __u32 wait_status;
  __u64 nr;
  __u64 args[6];
};

// IOC_PROGRAMS: the programs in enclave id (areas not PROC_FREE).
struct atoll_program_info {
  // In the LWK.
  __u32 pid;
  // `atoll run` on Linux.
  __u32 host_pid;
  // PROC_*.
  __u32 state;
  __u32 threads;
  // Bit per LWK CPU.
  __u64 cpus;
  __u64 mem_bytes;
  // Its server's polling window now.
  __u32 poll_window_us;
  // Delegated calls in the last whole second.
  __u32 calls_per_s;
  // 1: it runs at CPL 0.
  __u32 kernel_mode;
  __u32 pad0;
  char comm[ATOLL_COMM_LEN];
};

struct atoll_programs {
  struct atoll_header hdr;
  // In.
  __u32 id;
  // Out.
  __u32 count;
  struct atoll_program_info program[ATOLL_MAX_PROGRAMS];
};

// IOC_ADOPT: binds this file to the program the LWK forked into area
// (state PROC_LOADED, pid as given); then the mirror and IOC_START (entry
// and stack pointer ignored: the child goes on from the fork).
struct atoll_adopt {
  struct atoll_header hdr;
  // Enclave.
  __u32 id;
  __u32 area;
  __u32 pid;
  __u32 pad0;
  // The one CALL_FORK handed the parent's worker (args[2]).
  __u64 token;
  char error[ATOLL_ERROR_LEN];
};

// IOC_KILL: end the program as if by this signal.
struct atoll_kill {
  struct atoll_header hdr;
  __u32 signal;
  __u32 pad0;
};

/* The ioctls on /dev/atoll (abi/src/lib.rs, IOC_MAGIC). */
#define ATOLL_IOC_CREATE _IOWR(ATOLL_IOC_MAGIC, 1, struct atoll_create)
#define ATOLL_IOC_INFO _IOWR(ATOLL_IOC_MAGIC, 2, struct atoll_enclave_info)
#define ATOLL_IOC_CONSOLE _IOWR(ATOLL_IOC_MAGIC, 3, struct atoll_console_read)
#define ATOLL_IOC_PING _IOWR(ATOLL_IOC_MAGIC, 4, struct atoll_ping)
#define ATOLL_IOC_DESTROY _IOWR(ATOLL_IOC_MAGIC, 5, struct atoll_destroy)
#define ATOLL_IOC_RUN _IOWR(ATOLL_IOC_MAGIC, 6, struct atoll_run)
#define ATOLL_IOC_START _IOWR(ATOLL_IOC_MAGIC, 7, struct atoll_start)
#define ATOLL_IOC_CALL _IOWR(ATOLL_IOC_MAGIC, 8, struct atoll_call)
#define ATOLL_IOC_KILL _IOWR(ATOLL_IOC_MAGIC, 9, struct atoll_kill)
#define ATOLL_IOC_KMSG_CHECK _IOWR(ATOLL_IOC_MAGIC, 10, struct atoll_kmsg_check_req)
#define ATOLL_IOC_KMSG_BENCH _IOWR(ATOLL_IOC_MAGIC, 11, struct atoll_kmsg_bench_req)
#define ATOLL_IOC_MSG_SEND _IOWR(ATOLL_IOC_MAGIC, 12, struct atoll_msg_io)
#define ATOLL_IOC_MSG_RECV _IOWR(ATOLL_IOC_MAGIC, 13, struct atoll_msg_io)
#define ATOLL_IOC_KMSG_MCAST _IOWR(ATOLL_IOC_MAGIC, 14, struct atoll_kmsg_mcast_req)
#define ATOLL_IOC_PROGRAMS _IOWR(ATOLL_IOC_MAGIC, 15, struct atoll_programs)
#define ATOLL_IOC_ADOPT _IOWR(ATOLL_IOC_MAGIC, 16, struct atoll_adopt)
#define ATOLL_IOC_EXEC _IOWR(ATOLL_IOC_MAGIC, 17, struct atoll_run)
#define ATOLL_IOC_XEMEM _IOWR(ATOLL_IOC_MAGIC, 18, struct atoll_xemem_io)
#define ATOLL_IOC_XEMEM_LIST _IOWR(ATOLL_IOC_MAGIC, 19, struct atoll_xemem_list)
#define ATOLL_IOC_RESIZE _IOWR(ATOLL_IOC_MAGIC, 20, struct atoll_resize)
#define ATOLL_IOC_NOISE _IOWR(ATOLL_IOC_MAGIC, 21, struct atoll_noise_req)
#define ATOLL_IOC_CHOWN _IOWR(ATOLL_IOC_MAGIC, 22, struct atoll_chown)

#endif /* ATOLL_ABI_GEN_H */
