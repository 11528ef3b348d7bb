//! Output a person can review (aligned tables) and output a script can parse (`--json`).
//!
//! Everything the CLI prints goes through `outln!`/`out!` (stdout) and `errln!`/`err!`
//! (stderr): a reader that went away (`… | head`, `… | true`) ends the process quietly with the
//! status a shell reports for a Unix tool killed by SIGPIPE, instead of a panic.

use std::fmt;
use std::io::{self, Write};
use std::sync::OnceLock;
use std::sync::atomic::{AtomicBool, Ordering};

use action_state_cleanup::kafka::config::redact;

use action_state_cleanup::cleanup::PartitionOffset;
use serde_json::{Value, json};

/// `println!` to stdout that exits quietly when the reader is gone.
macro_rules! outln {
    () => { $crate::cli::output::write_out(format_args!("\n")) };
    ($($arg:tt)*) => { $crate::cli::output::write_out(format_args!("{}\n", format_args!($($arg)*))) };
}

/// `print!` to stdout that exits quietly when the reader is gone.
macro_rules! out {
    ($($arg:tt)*) => { $crate::cli::output::write_out(format_args!($($arg)*)) };
}

/// `eprintln!` that exits quietly when stderr's reader is gone.
macro_rules! errln {
    () => { $crate::cli::output::write_err(format_args!("\n")) };
    ($($arg:tt)*) => { $crate::cli::output::write_err(format_args!("{}\n", format_args!($($arg)*))) };
}

/// `eprint!` that exits quietly when stderr's reader is gone.
macro_rules! err {
    ($($arg:tt)*) => { $crate::cli::output::write_err(format_args!($($arg)*)) };
}

/// `eprintln!` for what the operator must see to answer a question (`apply`'s review and
/// confirmation on a terminal), even in a `--json` run that keeps stderr otherwise empty.
macro_rules! promptln {
    ($($arg:tt)*) => { $crate::cli::output::write_prompt(format_args!("{}\n", format_args!($($arg)*))) };
}

/// `eprint!` for the confirmation question (see `promptln!`).
macro_rules! prompt {
    ($($arg:tt)*) => { $crate::cli::output::write_prompt(format_args!($($arg)*)) };
}

/// 128 + SIGPIPE: what a shell reports for a command whose output pipe closed.
const READER_GONE: i32 = 141;

/// The version of every `--json` document's shape (its `format` field, the first one). Adding a
/// field keeps it; a field removed, renamed or changed in meaning or type bumps it (README,
/// "JSON output"; the schemas in docs/json/).
pub const JSON_FORMAT: u64 = 1;

/// Set by `--json` without `--verbose`: stdout carries the one JSON document and stderr stays
/// empty (no progress, warnings, reviews or the error sentence: the document has them).
static QUIET_STDERR: AtomicBool = AtomicBool::new(false);

/// From now on nothing is written to stderr (see `QUIET_STDERR`).
pub fn quiet_stderr() {
    QUIET_STDERR.store(true, Ordering::SeqCst);
}

/// Whether stderr is silenced for a `--json` run.
pub fn stderr_quiet() -> bool {
    QUIET_STDERR.load(Ordering::SeqCst)
}

/// Configured secrets (passwords, keys, JAAS credentials) that no output may show.
static SECRETS: OnceLock<Vec<String>> = OnceLock::new();

/// From now on every line the CLI prints has these values replaced by `[redacted]`: a Kafka
/// client's or a broker's message may echo a configuration value.
pub fn hide_secrets(secrets: Vec<String>) {
    if !secrets.is_empty() {
        let _ = SECRETS.set(secrets);
    }
}

/// The text as it may be shown.
fn shown(text: fmt::Arguments<'_>) -> Option<String> {
    let secrets = SECRETS.get()?;
    Some(redact(&text.to_string(), secrets))
}

pub fn write_out(text: fmt::Arguments<'_>) {
    let mut stdout = io::stdout().lock();
    let written = match shown(text) {
        Some(text) => stdout.write_all(text.as_bytes()),
        None => stdout.write_fmt(text),
    };
    if let Err(error) = written.and_then(|()| stdout.flush()) {
        output_failed(&error);
    }
}

pub fn write_err(text: fmt::Arguments<'_>) {
    if !stderr_quiet() {
        write_prompt(text);
    }
}

/// stderr whether or not a `--json` run keeps it quiet: a question nobody could read would
/// leave the operator waiting in front of a silent terminal.
pub fn write_prompt(text: fmt::Arguments<'_>) {
    let mut stderr = io::stderr().lock();
    let written = match shown(text) {
        Some(text) => stderr.write_all(text.as_bytes()),
        None => stderr.write_fmt(text),
    };
    if let Err(error) = written {
        output_failed(&error);
    }
}

/// Nobody reads any more: stop where we are. A command that prints does so after its work
/// (or, for `apply`, its review before COMMITTED), so stopping here never leaves more done than
/// the output already said.
fn output_failed(error: &io::Error) -> ! {
    if error.kind() == io::ErrorKind::BrokenPipe {
        std::process::exit(READER_GONE);
    }
    // Any other write error (a full disk behind a redirect): say so once, if stderr still can.
    let _ = writeln!(io::stderr(), "error: cannot write the output: {error}");
    std::process::exit(4);
}

/// Prints one `--json` document: `format` first, then the command's fields in the order the
/// command wrote them (serde_json's `preserve_order`).
pub fn print_json(value: &Value) {
    // Serialising a Value cannot fail.
    outln!(
        "{}",
        serde_json::to_string_pretty(&versioned(value)).unwrap_or_default()
    );
}

/// The document with `"format": JSON_FORMAT` as its first field.
fn versioned(value: &Value) -> Value {
    let mut document = serde_json::Map::new();
    document.insert("format".into(), json!(JSON_FORMAT));
    if let Value::Object(fields) = value {
        document.extend(fields.iter().map(|(k, v)| (k.clone(), v.clone())));
    }
    Value::Object(document)
}

/// Offsets as a JSON object keyed by partition, like the plan file.
pub fn offsets_json(offsets: &[PartitionOffset]) -> Value {
    let map: serde_json::Map<String, Value> = offsets
        .iter()
        .map(|po| (po.partition.to_string(), json!(po.offset)))
        .collect();
    Value::Object(map)
}

/// Java-style rendering `{0=10, 1=20}`, as in the messages.
pub fn offsets_text(offsets: &[PartitionOffset]) -> String {
    let items: Vec<String> = offsets
        .iter()
        .map(|po| format!("{}={}", po.partition, po.offset))
        .collect();
    format!("{{{}}}", items.join(", "))
}

/// A right-aligned table with a header row; columns sized to their widest cell.
pub fn table(header: &[&str], rows: &[Vec<String>]) -> String {
    let mut widths: Vec<usize> = header.iter().map(|h| h.len()).collect();
    for row in rows {
        for (width, cell) in widths.iter_mut().zip(row) {
            *width = (*width).max(cell.len());
        }
    }
    let line = |cells: Vec<&str>| {
        cells
            .iter()
            .zip(&widths)
            .map(|(cell, width)| format!("{cell:>width$}"))
            .collect::<Vec<_>>()
            .join("  ")
    };
    let mut out = line(header.to_vec());
    for row in rows {
        out.push('\n');
        out.push_str(&line(row.iter().map(String::as_str).collect()));
    }
    out
}

/// A Kafka timestamp (milliseconds since the Unix epoch) as RFC 3339 UTC with milliseconds,
/// e.g. `2026-12-05T03:30:12.345Z`: what a person reads and a script parses alike.
pub fn utc_time(ms: i64) -> String {
    let (days, ms_of_day) = (ms.div_euclid(86_400_000), ms.rem_euclid(86_400_000));
    let (year, month, day) = civil_date(days);
    let seconds = ms_of_day / 1000;
    format!(
        "{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}.{:03}Z",
        seconds / 3600,
        seconds / 60 % 60,
        seconds % 60,
        ms_of_day % 1000
    )
}

/// The proleptic Gregorian date `days` after 1970-01-01, counted in 400-year eras of 146,097
/// days that begin on 1 March (so the leap day ends an era's year).
fn civil_date(days: i64) -> (i64, u32, u32) {
    let shifted = days + 719_468; // days from 0000-03-01 to 1970-01-01
    let era = shifted.div_euclid(146_097);
    let day_of_era = shifted.rem_euclid(146_097);
    let year_of_era =
        (day_of_era - day_of_era / 1460 + day_of_era / 36_524 - day_of_era / 146_096) / 365;
    let day_of_year = day_of_era - (365 * year_of_era + year_of_era / 4 - year_of_era / 100);
    let month_from_march = (5 * day_of_year + 2) / 153;
    let day = day_of_year - (153 * month_from_march + 2) / 5 + 1;
    let month = if month_from_march < 10 {
        month_from_march + 3
    } else {
        month_from_march - 9
    };
    let year = year_of_era + era * 400 + i64::from(month <= 2);
    (
        year,
        u32::try_from(month).unwrap_or(1),
        u32::try_from(day).unwrap_or(1),
    )
}

#[cfg(test)]
mod time_tests {
    use super::utc_time;

    #[test]
    fn kafka_timestamps_read_as_utc_dates() {
        assert_eq!(utc_time(0), "1970-01-01T00:00:00.000Z");
        // 2024 is a leap year: 29 February exists, and 1 March follows it.
        assert_eq!(utc_time(1_709_164_800_123), "2024-02-29T00:00:00.123Z");
        assert_eq!(utc_time(1_709_251_199_999), "2024-02-29T23:59:59.999Z");
        assert_eq!(utc_time(1_796_441_412_345), "2026-12-05T03:30:12.345Z");
        assert_eq!(utc_time(-1), "1969-12-31T23:59:59.999Z");
    }
}
