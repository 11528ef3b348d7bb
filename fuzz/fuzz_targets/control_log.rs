#![no_main]
//! Fuzz target `control_log`: every input goes through `checks::check_control_log` (see ../checks.rs).

#[path = "../checks.rs"]
mod checks;

libfuzzer_sys::fuzz_target!(|data: &[u8]| checks::check_control_log(data));
