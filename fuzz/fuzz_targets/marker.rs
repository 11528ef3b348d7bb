#![no_main]
//! Fuzz target `marker`: every input goes through `checks::check_marker` (see ../checks.rs).

#[path = "../checks.rs"]
mod checks;

libfuzzer_sys::fuzz_target!(|data: &[u8]| checks::check_marker(data));
