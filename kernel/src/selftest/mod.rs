pub mod crash;
pub fn run_all() -> bool { true }
