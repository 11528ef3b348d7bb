//! `action-state-cleanup`: plan, verify, apply and enforce checkpoint-aligned cleanups of Kafka
//! action-state topics. Every decision is made by the embedded cleanup component.

mod cli;

use std::process::ExitCode;

fn main() -> ExitCode {
    // First: the timeline (`--trace`, `ASC_TRACE`) measures every step from here.
    action_state_cleanup::trace::start();
    let code = cli::run();
    action_state_cleanup::trace::mark("exit", || {
        "main returns; the process exits (clients still closing in the background are not waited for)"
            .to_owned()
    });
    code
}
