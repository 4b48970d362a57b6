//! One file per subcommand. Each `run` prints its result to stdout (text, or
//! one JSON object with `--json`) and returns an error for `main` to print.

pub mod chown;
pub mod console;
pub mod create;
pub mod destroy;
pub mod exec;
pub mod forked;
#[cfg(feature = "testing")]
pub mod kmsg_bench;
#[cfg(feature = "testing")]
pub mod kmsg_check;
#[cfg(feature = "testing")]
pub mod kmsg_mcast;
pub mod list;
pub mod noise;
pub mod ping;
pub mod remove_segment;
pub mod resize;
pub mod run;
pub mod serving;
pub mod status;
pub mod syscalls;

/// Prints `value` as one line of JSON.
fn print_json(value: &serde_json::Value) {
    println!("{value}");
}
