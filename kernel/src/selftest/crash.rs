pub fn run() -> ! { crate::fatal!("todo") }
