//! librdkafka's own log lines (`%3|1733…|FAIL|rdkafka#consumer-3|…` on stderr, its default):
//! an operator hears the CLI's words instead (progress while a request waits, the final error
//! with its hint), and librdkafka's lines only when asked for them (the CLI's `--debug`).
//!
//! Every client of this host is configured by `quiet_unless_shown`: without a sink librdkafka
//! logs nothing at all (a log line it never makes cannot reach stderr, whichever queue would
//! have served it: a consumer's queue prints with librdkafka's own printer); with one it logs
//! everything up to debug, and the clients that deliver logs as events (admin, producers:
//! `ClientLog`, their context) hand each line to the sink.

use std::sync::OnceLock;

use std::ffi::{CStr, c_char};

use rdkafka::bindings as rd;
use rdkafka::client::ClientContext;
use rdkafka::config::{ClientConfig, RDKafkaLogLevel};

type Sink = Box<dyn Fn(&str) + Send + Sync>;

static SINK: OnceLock<Sink> = OnceLock::new();

/// From now on, librdkafka's log lines go to `sink` (the CLI's `--debug`); once per process.
pub fn show_client_logs(sink: impl Fn(&str) + Send + Sync + 'static) {
    let _ = SINK.set(Box::new(sink));
}

/// Whether librdkafka's log lines are shown.
pub fn shown() -> bool {
    SINK.get().is_some()
}

/// The log level of a client: every line when shown, none otherwise. `log_level` is
/// librdkafka's own property (in force from the client's creation, before rdkafka sets its
/// level), so not even a line logged while the client starts slips through.
pub fn quiet_unless_shown(config: &mut ClientConfig) {
    if shown() {
        config.set_log_level(RDKafkaLogLevel::Debug);
    } else {
        config.set("log_level", "0");
        config.set_log_level(RDKafkaLogLevel::Emerg);
    }
}

/// One log line as the sink gets it: level, librdkafka's facility, its text.
fn show(level: i32, facility: &str, line: &str) {
    if let Some(sink) = SINK.get() {
        const LEVELS: [&str; 8] = [
            "EMERG", "ALERT", "CRIT", "ERROR", "WARNING", "NOTICE", "INFO", "DEBUG",
        ];
        let level = usize::try_from(level)
            .ok()
            .and_then(|l| LEVELS.get(l))
            .unwrap_or(&"LOG");
        sink(&format!("librdkafka {level} {facility}: {line}"));
    }
}

/// A log event taken from a client's queue by this host's own polling (the admin client's main
/// queue, which rdkafka's context never sees then): shown like the context's lines.
pub(crate) fn log_event(event: *mut rd::rd_kafka_event_t) {
    if !shown() {
        return;
    }
    let (mut facility, mut text, mut level): (*const c_char, *const c_char, i32) =
        (std::ptr::null(), std::ptr::null(), 0);
    // SAFETY: `event` is a live log event; the strings it returns live as long as the event.
    if unsafe { rd::rd_kafka_event_log(event, &mut facility, &mut text, &mut level) } != 0 {
        return;
    }
    let text_of = |p: *const c_char| {
        // SAFETY: null or a NUL-terminated string owned by the live event.
        (!p.is_null()).then(|| unsafe { CStr::from_ptr(p) }.to_string_lossy().into_owned())
    };
    show(
        level,
        &text_of(facility).unwrap_or_default(),
        &text_of(text).unwrap_or_default(),
    );
}

/// The context of this host's admin client and producers: their log lines go to the sink.
#[derive(Debug, Clone, Copy, Default)]
pub struct ClientLog;

impl ClientContext for ClientLog {
    fn log(&self, level: RDKafkaLogLevel, facility: &str, line: &str) {
        show(level as i32, facility, line);
    }
}
