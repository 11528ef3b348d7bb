//! The snapshot benchmark's report section: its table rows, its two goals with their analysis,
//! and the section's text.

use crate::report::{Goal, Report, table};
use crate::stats::{dur, median};

use super::{CHECKPOINT_ROOT, LARGE_CASE, REFUSAL_CASE, Row};

fn percentile(values: &[f64], p: f64) -> f64 {
    if values.is_empty() {
        return f64::NAN;
    }
    let mut sorted = values.to_vec();
    sorted.sort_by(f64::total_cmp);
    // Nearest rank.
    let rank = ((p / 100.0) * sorted.len() as f64).ceil() as usize;
    sorted[rank.clamp(1, sorted.len()) - 1]
}

fn mib(kib: Option<u64>) -> String {
    kib.map_or("n/a".into(), |k| format!("{:.1} MiB", k as f64 / 1024.0))
}

/// The table's rows, and the lowest JVM/CLI ratio with its case.
pub(super) fn table_rows(rows: &[Row]) -> (Vec<Vec<String>>, Option<(f64, String)>) {
    let mut table_rows = Vec::new();
    let mut worst_ratio: Option<(f64, String)> = None;
    for row in rows {
        let cli_median = median(&row.cli);
        let jvm_median = median(&row.jvm);
        let ratio = jvm_median / cli_median;
        if ratio.is_finite() && worst_ratio.as_ref().is_none_or(|(r, _)| ratio < *r) {
            worst_ratio = Some((ratio, format!("{}/{}", row.line, row.case)));
        }
        let fold = |v: &[f64], f: fn(f64, f64) -> f64, init: f64| v.iter().copied().fold(init, f);
        table_rows.push(vec![
            row.line.clone(),
            format!("`{}`", row.case),
            if row.partitions == 0 {
                "refusal".into()
            } else {
                row.partitions.to_string()
            },
            format!(
                "{} / {} ({}–{}, {} runs)",
                dur(cli_median),
                dur(percentile(&row.cli, 95.0)),
                dur(fold(&row.cli, f64::min, f64::INFINITY)),
                dur(fold(&row.cli, f64::max, 0.0)),
                row.cli.len()
            ),
            mib(row.cli_kib),
            match &row.jvm_note {
                Some(why) => format!("not measured: {why}"),
                None => format!(
                    "{} ({}–{}, {} runs)",
                    dur(jvm_median),
                    dur(fold(&row.jvm, f64::min, f64::INFINITY)),
                    dur(fold(&row.jvm, f64::max, 0.0)),
                    row.jvm.len()
                ),
            },
            mib(row.jvm_kib),
            if ratio.is_finite() {
                format!("{ratio:.0}×")
            } else {
                "n/a".into()
            },
        ]);
    }
    (table_rows, worst_ratio)
}

/// The section's two goals: JVM/CLI on every case, and the large case's absolute time.
pub(super) fn goals(report: &mut Report, rows: &[Row], worst_ratio: Option<(f64, String)>) {
    let measured_all = rows.iter().all(|r| !r.jvm.is_empty());
    report.goals.push(Goal {
        goal:
            "Snapshot `plan --checkpoint`: CLI ≥ 100× faster than the JVM State Processor API path"
                .into(),
        measured: match &worst_ratio {
            Some((r, case)) => format!(
                "JVM/CLI ≥ {r:.0}× on every case measured (lowest: {case}){}",
                if measured_all {
                    ""
                } else {
                    "; some cases not measured on the JVM"
                }
            ),
            None => "JVM side not measured".into(),
        },
        met: worst_ratio.as_ref().map(|(r, _)| *r >= 100.0),
        analysis: spread_analysis(rows),
    });
    for row in rows.iter().filter(|r| r.case == LARGE_CASE) {
        let m = median(&row.cli);
        report.goals.push(Goal {
            goal: format!(
                "Snapshot `plan --checkpoint` of `{LARGE_CASE}` ({}, 3,000 partitions, file-backed) ≤ 20 ms end to end",
                row.line
            ),
            measured: format!(
                "median {}, p95 {}",
                dur(m),
                dur(percentile(&row.cli, 95.0))
            ),
            met: Some(m <= 0.020),
            analysis: String::new(),
        });
    }
}

pub(super) fn section_text(
    cli_runs: usize,
    jvm_runs: usize,
    gnu_time: bool,
    table_rows: &[Vec<String>],
) -> String {
    format!(
        "## 6. plan from a Flink snapshot (`plan --checkpoint`)\n\n\
         Both sides as fresh processes in the repository root over the committed fixtures \
         (`fixtures/snapshots/<line>/<case>/`, real Flink snapshots), every case that plans plus \
         one refusal (`{REFUSAL_CASE}`) per line. **CLI**: the release `action-state-cleanup plan \
         --checkpoint PATH --operator-uid UID` (`--operator-uid-hash` for `savepoint-no-uid`), plan \
         to stdout; one unrecorded warm-up run, then {cli_runs} runs, median / p95 (min–max). \
         **JVM**: `PlanWithStateProcessorApi` (`java/snapshot-fixtures`), what the Flink Agents \
         Java tool's `plan --checkpoint` does — a Flink batch job on a local MiniCluster, \
         `SavepointReader.read` + `readUnionState(…, \"recoveryMarker\", \
         TypeInformation.of(Object.class))`, collect, plan — in a fresh JVM per run (Java 17, \
         default heap, Flink's module flags, logging at WARN), {jvm_runs} runs spread between the \
         CLI runs, median (min–max). Every run's output is checked against `expected.json` (the \
         exact plan text, or a failure whose message contains the refusal) before it counts. \
         Checkpoint cases: the JVM reads the state files at the absolute paths `_metadata` names \
         (`{CHECKPOINT_ROOT}/<job>/…`), bind-mounted from the fixture in a private mount namespace \
         (`unshare -m`). Peak RSS: GNU time's maximum resident set size ({}), the CLI's from its \
         warm-up run, the JVM's the largest of its runs. **JVM/CLI** = median(JVM) ÷ median(CLI).\n\n{}",
        if gnu_time {
            "`/usr/bin/time -f %M`"
        } else {
            "not measured: no /usr/bin/time"
        },
        table(
            &[
                "line",
                "case",
                "partitions",
                "CLI median / p95 (min–max)",
                "CLI peak RSS",
                "JVM median (min–max)",
                "JVM peak RSS",
                "JVM/CLI",
            ],
            table_rows,
        )
    )
}

/// The two sides' ranges of medians over the cases, for the goal's analysis.
fn spread_analysis(rows: &[Row]) -> String {
    let range = |medians: Vec<f64>| {
        let medians: Vec<f64> = medians.into_iter().filter(|m| m.is_finite()).collect();
        if medians.is_empty() {
            return "n/a".to_owned();
        }
        let lo = medians.iter().copied().fold(f64::INFINITY, f64::min);
        let hi = medians.iter().copied().fold(0.0, f64::max);
        format!("{}–{}", dur(lo), dur(hi))
    };
    let peak = |kib: Vec<Option<u64>>| {
        let kib: Vec<u64> = kib.into_iter().flatten().collect();
        match (kib.iter().min(), kib.iter().max()) {
            (Some(lo), Some(hi)) => format!("{}–{}", mib(Some(*lo)), mib(Some(*hi))),
            _ => "n/a".to_owned(),
        }
    };
    format!(
        "medians over the cases: CLI {} (peak RSS {}), JVM {} (peak RSS {}). The JVM's time is \
         almost all fixed cost — JVM start, class loading, a local MiniCluster and one batch job — \
         so it hardly depends on the snapshot; the CLI reads `_metadata` and the marker state \
         directly.",
        range(rows.iter().map(|r| median(&r.cli)).collect()),
        peak(rows.iter().map(|r| r.cli_kib).collect()),
        range(rows.iter().map(|r| median(&r.jvm)).collect()),
        peak(rows.iter().map(|r| r.jvm_kib).collect()),
    )
}
