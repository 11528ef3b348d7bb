//! Command-line parsing, dispatch and exit codes.
//!
//! Exit codes scripts can rely on (the README's table): 0 success; 1 `apply` declined at the
//! confirmation question; 2 usage error; 3 input rejected or refused by a safety check; 4 Kafka,
//! I/O or internal failure; 5 (`status` only) the history needs an operator: a plan COMMITTED
//! but not APPLIED, or a broken history; 6 (`check-recovery`, `recover`) the restore is refused;
//! 7 (`apply`) another apply of the control topic took it over; 130 `apply` interrupted by
//! SIGINT, 143 by SIGTERM; 141 the output's reader went away.

// serde_json's `preserve_order` (fields of --json in the order written) makes a `Value`, and so
// a `Failure` carrying `violations`, larger than clippy's limit for an error; a command fails
// once per run, so its size costs nothing worth a box around every use.
#![allow(clippy::result_large_err)]

// First: its printing macros are used by every module below.
#[macro_use]
mod output;

mod acl;
mod apply;
mod args;
mod check;
mod demo;
mod failure;
mod inputs;
mod interrupt;
mod metrics;
mod offline;
mod query;
mod recover;
mod retained;
mod session;
mod snapshot;
mod warnings;
mod wide;

use std::process::ExitCode;

use clap::{CommandFactory, FromArgMatches};

use args::{Cli, Command};
use failure::Failure;

/// `--version`: this CLI's version, then the librdkafka it runs on and that library's
/// `builtin.features` (whether TLS, SCRAM, GSSAPI... are available), as the library reports them.
/// A build with the `testing` feature (failpoints compiled in) says so on a last line, so that
/// the benchmark can refuse to measure it.
fn version() -> String {
    let (client, features) = action_state_cleanup::kafka::client_build();
    let testing = if cfg!(feature = "testing") {
        "\nbuild: testing (failpoints and test hooks compiled in; not for production)"
    } else {
        ""
    };
    format!(
        "{}\nlibrdkafka {client}\nbuiltin.features: {features}{testing}",
        env!("CARGO_PKG_VERSION")
    )
}

pub fn run() -> ExitCode {
    // clap wants the text for the whole run: leaking this one string is all that costs.
    let version: &'static str = version().leak();
    let mut command = Cli::command().version(version);
    let parsed = command
        .try_get_matches_from_mut(std::env::args_os())
        .and_then(|mut matches| {
            Cli::from_arg_matches_mut(&mut matches).map_err(|e| e.format(&mut command))
        });
    let cli = match parsed {
        Ok(cli) => cli,
        Err(error) => {
            // A script that asked for --json gets its usage error as JSON too (the command line
            // did not parse, so the flag is looked for among the raw arguments).
            let json = std::env::args().any(|a| a == "--json");
            let verbose = std::env::args().any(|a| a == "--verbose");
            if error.use_stderr() && json {
                let rendered = error.render().to_string();
                let message = rendered
                    .lines()
                    .next()
                    .unwrap_or("")
                    .trim_start_matches("error: ")
                    .to_owned();
                output::print_json(&serde_json::json!({
                    "error": { "kind": "usage", "message": message, "hint": "see --help", "exitCode": failure::USAGE }
                }));
            }
            // clap prints help and version to stdout with success, usage errors with code 2
            // (on stderr, which a --json run keeps empty unless --verbose).
            if !(error.use_stderr() && json && !verbose) {
                let _ = error.print();
            }
            return ExitCode::from(if error.use_stderr() { 2 } else { 0 });
        }
    };
    if let Some(format) = &cli.trace {
        action_state_cleanup::trace::enable(format == "json");
    }
    action_state_cleanup::trace::mark("command line parsed", String::new);
    let out = match &cli.command {
        Command::Plan(a) => &a.out,
        Command::Verify(a) => &a.out,
        Command::Snapshot(a) => &a.out,
        Command::Apply(a) => &a.out,
        Command::Status(a) => &a.out,
        Command::CheckRecovery(a) => &a.out,
        Command::Marker(a) => &a.out,
        Command::Recover(a) => &a.out,
        Command::Demo(a) => &a.out,
    };
    let json = out.json;
    if out.json && !out.verbose {
        output::quiet_stderr();
    }
    let done = |result: Result<(), Failure>| result.map(|()| 0);
    let result = match cli.command {
        Command::Plan(args) => done(offline::plan(&args)),
        Command::Verify(args) => done(offline::verify(&args)),
        Command::Snapshot(args) => done(offline::snapshot(&args)),
        Command::Apply(args) => done(apply::apply(&args)),
        Command::Status(args) => query::status(&args),
        Command::CheckRecovery(args) => done(check::check_recovery(&args)),
        Command::Marker(args) => done(query::marker(&args)),
        Command::Recover(args) => done(recover::recover(&args)),
        Command::Demo(args) => done(demo::demo(&args)),
    };
    match result {
        Ok(code) => ExitCode::from(code),
        Err(failure) => {
            if json {
                let mut error = serde_json::json!({
                    "kind": failure.kind, "message": failure.message, "hint": failure.hint, "exitCode": failure.code
                });
                if let (Some(violations), Some(fields)) =
                    (&failure.violations, error.as_object_mut())
                {
                    fields.insert("violations".into(), violations.clone());
                }
                output::print_json(&serde_json::json!({ "error": error }));
            }
            errln!("error: {}", failure.message);
            if let Some(hint) = &failure.hint {
                errln!("hint: {hint}");
            }
            ExitCode::from(failure.code)
        }
    }
}
