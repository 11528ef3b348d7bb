//! `action-state-cleanup`: plan, verify, apply and enforce checkpoint-aligned cleanups of Kafka
//! action-state topics. Every decision is made by the embedded cleanup component.

mod cli;

use std::process::ExitCode;

fn main() -> ExitCode {
    cli::run()
}
