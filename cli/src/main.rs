//! `atoll`: create, inspect and destroy Atoll enclaves through /dev/atoll,
//! and run programs in them. This file is the command line (clap) and the
//! dispatch to `commands/`. The test build (feature `testing`, the test VM's)
//! adds the message checks and benchmarks: kmsg-check, kmsg-bench, kmsg-mcast.

mod commands;
mod cpuset;
mod device;
mod enclave;
mod error;
mod format;
mod image;
mod mapped_file;
mod noise_linux;
mod noise_plot;
mod noise_probe;
mod owner;
mod parse;
mod program;
mod quanta;
mod rank_cpus;
mod running;
mod segments;
mod serve;
mod sys;

use clap::{Parser, Subcommand};
use commands::{chown, console, create, destroy, list, noise, ping, remove_segment, resize, run, status, syscalls};
#[cfg(feature = "testing")]
use commands::{kmsg_bench, kmsg_check, kmsg_mcast};
use std::ffi::OsString;
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(Parser)]
#[command(
    name = "atoll",
    version,
    about = "Create, inspect and destroy Atoll enclaves: CPUs and memory taken from Linux that run the Atoll lightweight kernel; run programs in them",
    after_help = "An <ENCLAVE> is a name or a numeric id, as `atoll list` shows them.\n\
                  Needs the atoll module (/dev/atoll) and root."
)]
struct Cli {
    /// Print one JSON object instead of text (create, destroy, ping, list, status, remove-segment and the test build's message checks; not run)
    #[arg(long, global = true)]
    json: bool,

    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Take CPUs and memory from Linux and boot the LWK on them
    Create {
        /// CPUs: a count (any N CPUs, e.g. 2) or Linux CPU numbers (e.g. 1,3 or 2-3 or 1,3-4; one CPU alone as 3-3)
        #[arg(long, value_name = "LIST|COUNT", value_parser = parse::cpus)]
        cpus: parse::CpuSpec,

        /// Memory: a multiple of 128 MiB, e.g. 256M, 1G, 128MiB or a byte count (units are powers of 1024)
        #[arg(long, value_name = "SIZE", value_parser = parse::mem)]
        mem: u64,

        /// Name of the enclave (letters, digits, '_', '.', '-'; at most 31) [default: enclave<N>]
        #[arg(long, value_parser = parse::name)]
        name: Option<String>,

        /// LWK image [default: /lib/atoll/atoll-kernel, else ../lib/atoll/atoll-kernel beside this program, else build/atoll-kernel]
        #[arg(long, value_name = "IMAGE")]
        kernel: Option<PathBuf>,

        /// Command line for the LWK (e.g. "selftest")
        #[arg(long, value_name = "TEXT", default_value = "", hide_default_value = true, value_parser = parse::cmdline)]
        cmdline: String,

        /// Seconds to wait for the LWK to report that it has booted
        #[arg(long, value_name = "SECONDS", default_value_t = 30, value_parser = clap::value_parser!(u32).range(1..=86400))]
        timeout: u32,

        /// Who may use it (run, console, status, ping), by name or number [default: you]
        #[arg(long, value_name = "USER[:GROUP]")]
        owner: Option<String>,

        /// The nice value (-20..19) of its programs' servers on Linux (`atoll run`, which performs their delegated calls), so that a busy Linux serves them first [default: leave theirs]
        #[arg(long, value_name = "NICE", allow_negative_numbers = true, value_parser = clap::value_parser!(i32).range(-20..=19))]
        serve_nice: Option<i32>,

        /// Allow kernel-mode programs in it (`atoll run --hrt`): code at CPL 0 can reach all of the node's memory,
        /// so only root may run them, as root may load a kernel module
        #[arg(long)]
        hrt: bool,

        /// With --hrt: let the enclave's owner user and group run kernel-mode programs too, which gives them
        /// root's power over the node
        #[arg(long, requires = "hrt")]
        hrt_users: bool,
    },

    /// Give an enclave to another owner (root only): they may run programs in it, read its console and status
    Chown {
        enclave: String,
        #[arg(value_name = "USER[:GROUP]")]
        owner: String,
    },

    /// List the enclaves (or, with --segments, the node's XEMEM segments and attachments)
    List {
        /// List XEMEM segments and attachments instead
        #[arg(long)]
        segments: bool,
    },

    /// Show one enclave: state, CPUs, memory ranges, uptime, creation times
    Status { enclave: String },

    /// Print an enclave's console output
    Console {
        enclave: String,

        /// Keep printing new output until the enclave is destroyed or Ctrl-C
        #[arg(short, long)]
        follow: bool,
    },

    /// Give a running enclave more CPUs or memory (taken from Linux as at create), also while programs run
    #[command(group(clap::ArgGroup::new("what").required(true).args(["cpus", "mem"])))]
    Add {
        enclave: String,

        /// Linux CPUs to add (e.g. 3 CPUs: `3`; these: `2,5-6`); programs started on the whole enclave spread onto them
        #[arg(long, value_name = "LIST|COUNT", value_parser = parse::cpus)]
        cpus: Option<parse::CpuSpec>,

        /// Memory to add (whole 128 MiB blocks, e.g. 256M, 1G)
        #[arg(long, value_name = "SIZE", value_parser = parse::mem)]
        mem: Option<u64>,
    },

    /// Take CPUs or memory back from a running enclave: CPUs once their threads moved, memory its programs do not use
    #[command(group(clap::ArgGroup::new("what").required(true).args(["cpus", "mem"])))]
    Remove {
        enclave: String,

        /// Linux CPUs to take back (a count takes the last added; the enclave keeps its boot CPU)
        #[arg(long, value_name = "LIST|COUNT", value_parser = parse::cpus)]
        cpus: Option<parse::CpuSpec>,

        /// Memory added with `atoll add` to give back to Linux (e.g. 256M)
        #[arg(long, value_name = "SIZE", value_parser = parse::mem)]
        mem: Option<u64>,
    },

    /// Measure OS noise on an enclave's CPUs (selfish detour): availability, detours, who caused them
    Noise {
        /// The enclave whose CPUs to probe (its LWK runs the probe)
        #[arg(long, value_name = "NAME|ID")]
        enclave: Option<String>,

        /// The enclave's LWK CPUs to probe, one after the other (e.g. 0 or 0-1); default: every one
        #[arg(long, value_name = "LIST", value_parser = parse::cpu_list, requires = "enclave")]
        cpus: Option<parse::CpuList>,

        /// Linux CPUs to probe too, after the enclave's (e.g. 1 or 0-1)
        #[arg(long, value_name = "LIST", value_parser = parse::cpu_list)]
        linux_cpus: Option<parse::CpuList>,

        /// How long each probe runs
        #[arg(long, value_name = "S", default_value = "10", value_parser = parse::seconds)]
        seconds: f64,

        /// Gaps between two TSC reads longer than this count as detours (selfish; rtla osnoise's default)
        #[arg(long, value_name = "NS", default_value_t = 5000)]
        threshold_ns: u64,

        /// selfish detour, fixed work quanta or fixed time quanta
        #[arg(long, value_enum, default_value = "selfish")]
        probe: noise_probe::Probe,

        /// FWQ's and FTQ's quantum (1 µs to 1 s)
        #[arg(long, value_name = "NS", default_value_t = 1_000_000,
              value_parser = clap::value_parser!(u64).range(1_000..=1_000_000_000))]
        quantum_ns: u64,

        /// Also draw each CPU's detours over time and their histogram into this SVG file
        #[arg(long, value_name = "FILE.svg")]
        plot: Option<std::path::PathBuf>,
    },

    /// Remove an XEMEM segment kept past its owner (xemem_keep) once that owner ended (its user or root)
    RemoveSegment {
        #[arg(value_name = "NAME|SEGID")]
        segment: String,
    },

    /// Stop an enclave and give its CPUs and memory back to Linux
    Destroy {
        enclave: String,

        /// End the programs running in it first, and do not wait for a hung or crashed LWK to stop by itself
        #[arg(long)]
        force: bool,
    },

    /// How a program's system calls are answered in an enclave: in the LWK (quick, local), by Linux (delegated), or refused
    Syscalls,

    /// Time round trips of a message to an enclave's LWK and back (from Linux, or from another enclave's LWK)
    Ping {
        enclave: String,

        /// Send from this enclave's LWK, directly to the other's (timed by the sender)
        #[arg(long, value_name = "ENCLAVE")]
        from: Option<String>,

        /// Number of round trips
        #[arg(short, long, value_name = "N", default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..=1_000_000))]
        count: u32,
    },

    #[cfg(feature = "testing")]
    /// Flood the message rings to and from an enclave's LWK with checked messages (needs the test module and the LWK's test image)
    KmsgCheck {
        enclave: String,

        /// Messages each way (from the LWK: from each of its CPUs)
        #[arg(long, value_name = "N", default_value_t = 10_000, value_parser = clap::value_parser!(u32).range(1..=100_000_000))]
        count: u32,

        /// Smallest message in bytes (lengths cycle from the smallest to the largest)
        #[arg(long, value_name = "BYTES", default_value_t = 16, value_parser = clap::value_parser!(u32).range(16..=65536))]
        min_size: u32,

        /// Largest message in bytes
        #[arg(long, value_name = "BYTES", default_value_t = 4096, value_parser = clap::value_parser!(u32).range(16..=65536))]
        max_size: u32,

        /// Which way: to-lwk, from-lwk or both
        #[arg(long, value_enum, default_value_t = kmsg_check::Direction::Both)]
        direction: kmsg_check::Direction,
    },

    #[cfg(feature = "testing")]
    /// Time message round trips to an enclave's LWK next to their floors: a cache line bounced, a bare IPI (needs the test module and the LWK's test image)
    KmsgBench {
        enclave: String,

        /// Time them from this enclave's LWK instead of from Linux
        #[arg(long, value_name = "ENCLAVE")]
        from: Option<String>,

        /// Round trips of each kind
        #[arg(long, value_name = "N", default_value_t = 1000, value_parser = clap::value_parser!(u32).range(1..=100_000))]
        rounds: u32,

        /// Also stream that many messages of this size from Linux, next to memcpy() of the same bytes
        #[arg(long, value_name = "BYTES", default_value_t = 0, value_parser = clap::value_parser!(u32).range(0..=65536))]
        stream_size: u32,
    },

    #[cfg(feature = "testing")]
    /// Send checked messages to several LWKs through one multicast ring, then as unicasts, and compare (needs the test module and the LWKs' test image)
    KmsgMcast {
        #[arg(required = true, value_name = "ENCLAVE")]
        enclaves: Vec<String>,

        /// Messages in each phase
        #[arg(long, value_name = "N", default_value_t = 10_000, value_parser = clap::value_parser!(u32).range(1..=10_000_000))]
        count: u32,

        /// Bytes per message
        #[arg(long, value_name = "BYTES", default_value_t = 64, value_parser = clap::value_parser!(u32).range(16..=65536))]
        size: u32,
    },

    /// Run an x86-64 Linux program (static or dynamic) in an enclave, serving its file and terminal calls here; exit with its status
    #[command(after_help = "Exit status: the program's; 128+N if signal N ended it; 125 if atoll run or the enclave \
                            failed, 126 if the program cannot run in an enclave, 127 if it is not found.")]
    Run {
        enclave: String,

        /// Enclave CPUs the program's threads use, the least used ones [default: all of them]
        #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..=atoll_abi::MAX_CPUS as i64))]
        threads: Option<u32>,

        /// The enclave CPUs (LWK numbers: 0 is the enclave's first) the program's threads use: 0,2 or 1-3 (2-2
        /// for CPU 2 alone; a bare number is a count, as --threads)
        #[arg(long, value_name = "LIST", value_parser = parse::cpus, conflicts_with = "threads")]
        cpus: Option<parse::CpuSpec>,

        /// For an MPI rank: its own share of the enclave's CPUs, by its local rank among the node's ranks (from
        /// the launcher: OMPI_COMM_WORLD_LOCAL_RANK, MPI_LOCALRANKID or SLURM_LOCALID)
        #[arg(long, conflicts_with_all = ["threads", "cpus"])]
        rank_cpus: bool,

        /// End the program (SIGSYS) at its first system call the LWK does not support, instead of answering ENOSYS
        #[arg(long)]
        strict: bool,

        /// At the end, say how many of the program's system calls Linux performed, which, and in how long
        #[arg(long)]
        stats: bool,

        /// Run it in kernel mode (at CPL 0, a hybrid runtime), in an enclave created with --hrt, as root or, if
        /// the enclave allows it (--hrt-users), as its owner
        #[arg(long)]
        hrt: bool,

        /// The program (a path, or a name looked up in PATH) and its arguments, after `--`
        #[arg(last = true, required = true, value_name = "PROGRAM [ARGS]", value_parser = clap::value_parser!(OsString))]
        command: Vec<OsString>,
    },
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    match dispatch(cli.command, cli.json) {
        Ok(status) => ExitCode::from(status),
        Err(e) => {
            eprintln!("atoll: {e}");
            ExitCode::from(e.status())
        }
    }
}

/// Runs the command; its exit status (0 but for `run`, which has the program's).
fn dispatch(command: Command, json: bool) -> error::Result<u8> {
    let done = match command {
        Command::Create { cpus, mem, name, kernel, cmdline, timeout, owner, serve_nice, hrt, hrt_users } => {
            create::run(
                create::Options {
                    cpus,
                    mem_bytes: mem,
                    name,
                    kernel,
                    cmdline,
                    timeout_secs: timeout,
                    owner,
                    serve_nice,
                    hrt: create::hrt_setting(hrt, hrt_users),
                },
                json,
            )
        }
        Command::Chown { enclave, owner } => chown::run(&enclave, &owner, json),
        Command::List { segments } => list::run(segments, json),
        Command::Syscalls => {
            syscalls::run(json);
            Ok(())
        }
        Command::Status { enclave } => status::run(&enclave, json),
        Command::Console { enclave, follow } => console::run(&enclave, follow),
        Command::Destroy { enclave, force } => destroy::run(&enclave, force, json),
        Command::RemoveSegment { segment } => remove_segment::run(&segment, json),
        Command::Noise { enclave, cpus, linux_cpus, seconds, threshold_ns, probe, quantum_ns, plot } => noise::run(
            noise::Options {
                plot,
                probe,
                quantum_ns,
                enclave,
                cpus: cpus.map(|c| c.0).unwrap_or_default(),
                linux_cpus: linux_cpus.map(|c| c.0).unwrap_or_default(),
                seconds,
                threshold_ns,
            },
            json,
        ),
        Command::Add { enclave, cpus, mem } => resize::run(&enclave, true, resize::what(cpus, mem), json),
        Command::Remove { enclave, cpus, mem } => resize::run(&enclave, false, resize::what(cpus, mem), json),
        Command::Ping { enclave, from, count } => ping::run(&enclave, from.as_deref(), count, json),
        #[cfg(feature = "testing")]
        Command::KmsgBench { enclave, from, rounds, stream_size } => {
            kmsg_bench::run(&enclave, from.as_deref(), rounds, stream_size, json)
        }
        #[cfg(feature = "testing")]
        Command::KmsgMcast { enclaves, count, size } => kmsg_mcast::run(&enclaves, count, size, json),
        #[cfg(feature = "testing")]
        Command::KmsgCheck { enclave, count, min_size, max_size, direction } => {
            kmsg_check::run(&enclave, kmsg_check::Options { count, min_size, max_size, direction }, json)
        }
        Command::Run { enclave, threads, cpus, rank_cpus, strict, stats, hrt, command } => {
            let threads = match cpus {
                Some(parse::CpuSpec::Count(n)) => run::Cores::Count(n),
                Some(parse::CpuSpec::List(list)) => run::Cores::List(list),
                None if rank_cpus => run::Cores::Rank,
                None => threads.map_or(run::Cores::All, run::Cores::Count),
            };
            return run::run(run::Options { enclave, cores: threads, strict, stats, kernel_mode: hrt, command });
        }
    };
    done.map(|()| 0)
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::CommandFactory;

    #[test]
    fn command_line_is_consistent() {
        Cli::command().debug_assert();
    }

    #[test]
    fn parses_create() {
        let cli = Cli::try_parse_from(["atoll", "create", "--cpus", "1,3-4", "--mem", "1G", "--name", "web", "--json"])
            .unwrap();
        let Command::Create { cpus, mem, name, kernel, cmdline, timeout, owner, serve_nice, .. } = cli.command else {
            panic!("not create")
        };
        assert_eq!((owner, serve_nice), (None, None));
        assert_eq!(cpus, parse::CpuSpec::List(vec![1, 3, 4]));
        assert_eq!(mem, 1 << 30);
        assert_eq!(name.as_deref(), Some("web"));
        assert_eq!((kernel, cmdline.as_str(), timeout), (None, "", 30));
        assert!(cli.json);
    }

    #[test]
    fn parses_noise_and_resize() {
        let cli =
            Cli::try_parse_from(["atoll", "noise", "--enclave", "sim", "--cpus", "0,2", "--seconds", "0.5"]).unwrap();
        let Command::Noise { enclave, cpus, linux_cpus, seconds, threshold_ns, .. } = cli.command else {
            panic!("not noise")
        };
        assert_eq!(
            (enclave.as_deref(), cpus, linux_cpus, seconds, threshold_ns),
            (Some("sim"), Some(parse::CpuList(vec![0, 2])), None, 0.5, 5000)
        );
        assert!(Cli::try_parse_from(["atoll", "noise", "--cpus", "0"]).is_err(), "--cpus needs --enclave");
        let cli = Cli::try_parse_from(["atoll", "add", "sim", "--cpus", "2"]).unwrap();
        let Command::Add { cpus, mem, .. } = cli.command else { panic!("not add") };
        assert_eq!((cpus, mem), (Some(parse::CpuSpec::Count(2)), None));
        assert!(Cli::try_parse_from(["atoll", "remove", "sim"]).is_err(), "--cpus or --mem is required");
    }

    fn parse_run(args: &[&str]) -> (String, Option<u32>, bool, Vec<OsString>) {
        let cli = Cli::try_parse_from(args).unwrap_or_else(|e| panic!("{args:?}: {e}"));
        let Command::Run { enclave, threads, strict, command, .. } = cli.command else { panic!("not run") };
        (enclave, threads, strict, command)
    }

    #[test]
    fn parses_run() {
        let os = |list: &[&str]| list.iter().map(OsString::from).collect::<Vec<_>>();
        assert_eq!(parse_run(&["atoll", "run", "web", "--", "./hello"]), ("web".into(), None, false, os(&["./hello"])));
        assert_eq!(
            parse_run(&[
                "atoll",
                "run",
                "web",
                "--threads",
                "4",
                "--strict",
                "--",
                "prog",
                "-x",
                "--strict",
                "--",
                "y"
            ]),
            ("web".into(), Some(4), true, os(&["prog", "-x", "--strict", "--", "y"]))
        );
        // Options may come before the enclave; after `--` everything is the program's.
        assert_eq!(
            parse_run(&["atoll", "run", "--strict", "3", "--", "a", "--json"]),
            ("3".into(), None, true, os(&["a", "--json"]))
        );
        assert!(!Cli::try_parse_from(["atoll", "run", "web", "--", "a", "--json"]).unwrap().json);
    }

    #[test]
    fn rejects_bad_usage() {
        for args in [
            &["atoll"][..],
            &["atoll", "create", "--mem", "1G"],
            &["atoll", "create", "--cpus", "0", "--mem", "1G"],
            &["atoll", "create", "--cpus", "2", "--mem", "100M"],
            &["atoll", "create", "--cpus", "2", "--mem", "1G", "--name", "a b"],
            &["atoll", "create", "--cpus", "2", "--mem", "1G", "--timeout", "0"],
            &["atoll", "ping", "x", "--count", "0"],
            &["atoll", "status"],
            &["atoll", "run", "web"],
            &["atoll", "run", "web", "--"],
            &["atoll", "run", "web", "./hello"],
            &["atoll", "run", "--", "./hello"],
            &["atoll", "run", "web", "--threads", "0", "--", "./hello"],
            &["atoll", "run", "web", "--threads", "65", "--", "./hello"],
            &["atoll", "run", "web", "--threads", "x", "--", "./hello"],
            &["atoll", "run", "web", "--threads", "2", "--cpus", "0-1", "--", "./hello"],
            &["atoll", "run", "web", "--cpus", "2-1", "--", "./hello"],
        ] {
            let e = Cli::try_parse_from(args).err().unwrap_or_else(|| panic!("accepted {args:?}"));
            assert_eq!(e.exit_code(), 2, "{args:?}");
        }
    }
}
