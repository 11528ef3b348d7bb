//! The timeline of one process: with `ASC_TRACE=1` (or the CLI's `--trace`) every step that can
//! wait — each Kafka request and each client's set-up, each wait the component asks for, each
//! poll, the engine's and component's start — is reported on stderr as it ends, with when it
//! started (milliseconds since the process's `start`) and how long it took; `ASC_TRACE=json`
//! reports the same as one JSON object per line. Where the wall clock goes is then read off
//! the lines, not guessed. (`ASC_TRACE_KAFKA=1`, the earlier switch, still prints only the
//! capability calls in its own `kafka: CALL N ms: OUTCOME` lines, which `bench/src/wide.rs`
//! reads.)
//!
//! Off (the default), a step costs one atomic load.

use std::io::Write as _;
use std::sync::OnceLock;
use std::sync::atomic::{AtomicU8, Ordering};
use std::time::Instant;

/// When the process started, as far as this code can tell: the first call of `start` (the CLI's
/// `main` makes it first), else the first step traced.
static ORIGIN: OnceLock<Instant> = OnceLock::new();

const UNKNOWN: u8 = 0;
const OFF: u8 = 1;
const TEXT: u8 = 2;
const JSON: u8 = 3;

static MODE: AtomicU8 = AtomicU8::new(UNKNOWN);

/// Takes the time every later step is measured from. Call it first thing in `main`.
pub fn start() {
    ORIGIN.get_or_init(Instant::now);
}

/// How long ago `start` was called (the process's age, as far as this code can tell).
pub fn since_start() -> std::time::Duration {
    ORIGIN.get_or_init(Instant::now).elapsed()
}

/// Turns the timeline on (the CLI's `--trace`), as text or as JSON lines.
pub fn enable(json: bool) {
    MODE.store(if json { JSON } else { TEXT }, Ordering::Relaxed);
}

fn mode() -> u8 {
    match MODE.load(Ordering::Relaxed) {
        UNKNOWN => {
            let asked = std::env::var("ASC_TRACE").unwrap_or_default();
            let mode = match asked.as_str() {
                "json" => JSON,
                "1" | "text" => TEXT,
                _ => OFF,
            };
            // A concurrent first call computes the same answer.
            MODE.store(mode, Ordering::Relaxed);
            mode
        }
        known => known,
    }
}

/// Whether `ASC_TRACE_KAFKA=1` asks for the capability calls in their own lines.
pub fn kafka_calls() -> bool {
    static ON: OnceLock<bool> = OnceLock::new();
    *ON.get_or_init(|| std::env::var("ASC_TRACE_KAFKA").is_ok_and(|v| v == "1"))
}

/// Whether steps are reported.
pub fn on() -> bool {
    mode() > OFF
}

fn millis_since(earlier: Instant, later: Instant) -> f64 {
    later.saturating_duration_since(earlier).as_secs_f64() * 1000.0
}

/// Reports a step that began at `started` and ends now; `detail` (the request's target and
/// outcome) is only computed when the timeline is on.
pub fn step(name: &str, started: Instant, detail: impl FnOnce() -> String) {
    let mode = mode();
    if mode <= OFF {
        return;
    }
    let now = Instant::now();
    let origin = *ORIGIN.get_or_init(|| started);
    let at = millis_since(origin, started);
    let took = millis_since(started, now);
    let thread = std::thread::current();
    let thread = thread.name().unwrap_or("?");
    let detail = detail();
    let line = if mode == JSON {
        serde_json::json!({
            "trace": { "atMs": round(at), "ms": round(took), "thread": thread, "step": name, "detail": detail }
        })
        .to_string()
    } else {
        format!("trace: {at:8.1} ms +{took:7.1} ms  [{thread}] {name} {detail}")
    };
    // One write per line, so lines of threads tracing at once never interleave.
    let _ = writeln!(std::io::stderr().lock(), "{line}");
}

/// Reports a moment (a step of no duration), e.g. the process's exit.
pub fn mark(name: &str, detail: impl FnOnce() -> String) {
    step(name, Instant::now(), detail);
}

/// Runs `work` as one step named `name`; `detail` sees its answer.
pub fn timed<T>(name: &str, work: impl FnOnce() -> T, detail: impl FnOnce(&T) -> String) -> T {
    if !on() {
        return work();
    }
    let started = Instant::now();
    let answer = work();
    step(name, started, || detail(&answer));
    answer
}

/// An outcome as a trace line says it: `ok`, or the error.
pub fn outcome<T, E: std::fmt::Display>(answer: &Result<T, E>) -> String {
    match answer {
        Ok(_) => "ok".to_owned(),
        Err(error) => format!("failed: {error}"),
    }
}

fn round(ms: f64) -> f64 {
    (ms * 100.0).round() / 100.0
}
