#![no_main]
//! Fuzz target `marker_file`: every input goes through `checks::check_marker_file` (see
//! ../checks.rs).

#[path = "../checks.rs"]
mod checks;

libfuzzer_sys::fuzz_target!(|data: &[u8]| checks::check_marker_file(data));
