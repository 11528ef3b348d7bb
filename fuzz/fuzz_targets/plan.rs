#![no_main]
//! Fuzz target `plan`: every input goes through `checks::check_plan` (see ../checks.rs).

#[path = "../checks.rs"]
mod checks;

libfuzzer_sys::fuzz_target!(|data: &[u8]| checks::check_plan(data));
