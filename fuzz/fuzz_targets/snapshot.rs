#![no_main]
//! Fuzz target `snapshot`: every input goes through `checks::check_snapshot` (see ../checks.rs).

#[path = "../checks.rs"]
mod checks;

libfuzzer_sys::fuzz_target!(|data: &[u8]| checks::check_snapshot(data));
