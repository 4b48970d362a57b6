pub fn run_all() {}
