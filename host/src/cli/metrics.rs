//! `apply --metrics-file`: each run's outcome in the Prometheus text exposition format, for
//! node_exporter's textfile collector (or any scraper of such a file), written on every run,
//! success or failure. The time of the last successful run is carried over from the file's
//! previous contents, so that one rule alerts when cleanup has not succeeded for N days:
//! `time() - action_state_cleanup_apply_last_success_timestamp_seconds > N * 86400`.

use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use super::failure::Failure;

const PREFIX: &str = "action_state_cleanup_apply_";

/// What one apply run did, as far as it got.
#[derive(Debug, Default, Clone)]
pub struct RunFacts {
    pub plan_id: Option<String>,
    pub topic: Option<String>,
    /// `applied`, `resumed`, `already-applied`, `dry-run`, `declined`, `interrupted`, `terminated`,
    /// or `failed`.
    pub outcome: Option<&'static str>,
    pub records_deleted: u64,
    /// With `--retained`: the records held below the newest retained point after the run.
    pub records_held: Option<u64>,
    /// Kafka requests by kind: admin, control reads, control writes.
    pub requests: Option<(u64, u64, u64)>,
}

/// Where the metrics go; checked before the apply contacts Kafka.
#[derive(Debug, Clone)]
pub struct MetricsFile {
    path: PathBuf,
    control_topic: String,
}

impl MetricsFile {
    /// Makes sure the file can be written (its directory exists and takes a file) before
    /// anything durable happens: a scheduled run must not find out only afterwards.
    pub fn open(path: &Path, control_topic: &str) -> Result<MetricsFile, Failure> {
        let probe = temporary(path);
        std::fs::write(&probe, b"").map_err(|e| {
            Failure::usage(format!(
                "cannot write --metrics-file {}: {e}",
                path.display()
            ))
        })?;
        let _ = std::fs::remove_file(&probe);
        Ok(MetricsFile {
            path: path.to_owned(),
            control_topic: control_topic.to_owned(),
        })
    }

    /// Writes the run's metrics (atomically: a temporary file renamed over the old one, so a
    /// scraper never reads half a file). Returns the sentence to show if it could not.
    pub fn write(&self, facts: &RunFacts, exit_code: u8, took: Duration) -> Result<(), String> {
        let now = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .unwrap_or_default()
            .as_secs_f64();
        let previous = std::fs::read_to_string(&self.path).unwrap_or_default();
        let last_success = if exit_code == 0 {
            now
        } else {
            previous_value(&previous, "last_success_timestamp_seconds").unwrap_or(0.0)
        };
        let text = render(
            &self.control_topic,
            facts,
            exit_code,
            took,
            now,
            last_success,
        );
        let temporary = temporary(&self.path);
        std::fs::write(&temporary, text)
            .and_then(|()| std::fs::rename(&temporary, &self.path))
            .map_err(|e| format!("cannot write --metrics-file {}: {e}", self.path.display()))
    }
}

fn temporary(path: &Path) -> PathBuf {
    let mut name = path.file_name().unwrap_or_default().to_os_string();
    name.push(format!(".{}.tmp", std::process::id()));
    path.with_file_name(name)
}

/// The value of `PREFIX + name` in an earlier file, if it has one.
fn previous_value(text: &str, name: &str) -> Option<f64> {
    let series = format!("{PREFIX}{name}{{");
    text.lines()
        .find(|line| line.starts_with(&series))
        .and_then(|line| line.rsplit(' ').next())
        .and_then(|value| value.parse().ok())
}

/// A label value with `\`, `"` and newlines escaped, as the text format requires.
fn label(value: &str) -> String {
    value
        .replace('\\', "\\\\")
        .replace('"', "\\\"")
        .replace('\n', "\\n")
}

fn render(
    control_topic: &str,
    facts: &RunFacts,
    exit_code: u8,
    took: Duration,
    now: f64,
    last_success: f64,
) -> String {
    let labels = format!("control_topic=\"{}\"", label(control_topic));
    let mut out = String::new();
    let mut gauge = |name: &str, help: &str, extra: &str, value: String| {
        out.push_str(&format!(
            "# HELP {PREFIX}{name} {help}\n# TYPE {PREFIX}{name} gauge\n{PREFIX}{name}{{{labels}{extra}}} {value}\n"
        ));
    };
    gauge(
        "last_run_timestamp_seconds",
        "When the last apply run ended (Unix time).",
        "",
        format!("{now:.3}"),
    );
    gauge(
        "last_run_exit_code",
        "The last run's exit code (0 success, 3 refused by a safety check, 4 Kafka failure; README, exit codes).",
        "",
        exit_code.to_string(),
    );
    gauge(
        "last_run_duration_seconds",
        "How long the last run took, from start to exit.",
        "",
        format!("{:.3}", took.as_secs_f64()),
    );
    gauge(
        "last_run_records_deleted",
        "Records the last run deleted from the data topic (0 when it deleted nothing).",
        "",
        facts.records_deleted.to_string(),
    );
    if let Some(held) = facts.records_held {
        gauge(
            "last_run_records_held_below_newest_point",
            "With --retained: records the data topic still holds below the newest retained recovery point after the run, kept only for older points (it grows while they are retained).",
            "",
            held.to_string(),
        );
    }
    gauge(
        "last_success_timestamp_seconds",
        "When an apply last ended with exit 0 (Unix time; 0: never, as far as this file knows).",
        "",
        format!("{last_success:.3}"),
    );
    let info = format!(
        ",topic=\"{}\",plan_id=\"{}\",outcome=\"{}\"",
        label(facts.topic.as_deref().unwrap_or("")),
        label(facts.plan_id.as_deref().unwrap_or("")),
        facts.outcome.unwrap_or("failed")
    );
    gauge(
        "last_run_info",
        "The last run's data topic, plan and outcome, as labels.",
        &info,
        "1".into(),
    );
    if let Some((admin, reads, writes)) = facts.requests {
        for (kind, count) in [
            ("admin", admin),
            ("control_reads", reads),
            ("control_writes", writes),
        ] {
            out.push_str(&format!(
                "{PREFIX}last_run_kafka_requests{{{labels},kind=\"{kind}\"}} {count}\n"
            ));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_failed_run_keeps_the_last_success_of_the_file_before() {
        let facts = RunFacts {
            plan_id: Some("p1".into()),
            topic: Some("orders".into()),
            outcome: Some("applied"),
            records_deleted: 20,
            records_held: None,
            requests: Some((9, 2, 2)),
        };
        let first = render("c\"1", &facts, 0, Duration::from_millis(84), 100.0, 100.0);
        assert!(
            first.contains(
                "action_state_cleanup_apply_last_run_records_deleted{control_topic=\"c\\\"1\"} 20\n"
            ),
            "{first}"
        );
        assert!(
            first.contains("outcome=\"applied\"} 1\n")
                && first.contains("kind=\"control_writes\"} 2\n"),
            "{first}"
        );
        assert_eq!(
            previous_value(&first, "last_success_timestamp_seconds"),
            Some(100.0)
        );
        let failed = render("c", &RunFacts::default(), 4, Duration::ZERO, 200.0, 100.0);
        assert!(
            failed.contains("last_run_exit_code{control_topic=\"c\"} 4\n")
                && failed.contains("last_success_timestamp_seconds{control_topic=\"c\"} 100.000\n")
                && failed.contains("outcome=\"failed\"} 1\n"),
            "{failed}"
        );
        assert_eq!(previous_value("", "last_success_timestamp_seconds"), None);
    }
}
