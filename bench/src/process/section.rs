//! The process benchmark's report section: its table, its goal, and each case's `--trace`
//! timeline of one CLI apply.

use crate::report::{Goal, Report, table};
use crate::stats::{dur, ratio};

use super::{Case, CaseResult, PARTITIONS, PLAN_AT, PROCESS_FACTOR, RECORDS};

pub(super) fn section(
    report: &mut Report,
    rounds: usize,
    results: &[CaseResult],
    load_before: &str,
    load_after: &str,
) -> String {
    let mut out = String::from(
        "## 2b. Apply as the operator runs it: one CLI process per apply vs a floor process\n\n",
    );
    out.push_str(&format!(
        "Each apply is one `action-state-cleanup apply --plan F --control-topic C \
         --bootstrap-servers B --yes --json` process (the release CLI, warm component cache), \
         timed from spawn to exit, on a data topic of its own ({PARTITIONS} partitions, {RECORDS} \
         records each, the plan at offset {PLAN_AT} + partition). F = a process of this harness \
         (`action-state-bench floor-process`) doing the same Kafka work with fresh clients and \
         no checks (`floor::fresh`: describe both topics, earliest and latest offsets, \
         `init_transactions`, one transaction with the COMMITTED record, DeleteRecords, the \
         APPLIED record; in the first case it creates the control topic first), spawned and \
         timed alike. P = the issue's peer: the same floor in Python with confluent-kafka \
         (`bench/peer/confluent_floor.py`, a Python process per apply, its import included), \
         first case only. All topics are made before the first timed run; one unrecorded set \
         warms up first. {rounds} rounds, the sides taking turns at going first. Load average \
         (1, 5, 15 min): {load_before} before, {load_after} after.\n\n"
    ));
    let rows: Vec<Vec<String>> = results
        .iter()
        .map(|r| {
            let (peer, vs_peer) = r.peer.as_ref().map_or_else(
                || ("—".to_owned(), "—".to_owned()),
                |p| (p.a.summary(), ratio(p.ratio())),
            );
            vec![
                r.case.label().to_owned(),
                r.floor.b.summary(),
                r.floor.a.summary(),
                ratio(r.floor.ratio()),
                peer,
                vs_peer,
                common(&r.requests),
            ]
        })
        .collect();
    out.push_str(&table(
        &[
            "case",
            "CLI process",
            "F floor process",
            "CLI/F",
            "P confluent-kafka process",
            "CLI/P",
            "CLI requests (admin / reads / writes)",
        ],
        &rows,
    ));
    for CaseResult {
        case,
        floor,
        peer,
        timeline,
        ..
    } in results
    {
        if *case == Case::Existing {
            // The issue's floor is the confluent-kafka process; without it, this harness's.
            let (ab, whose) = match peer {
                Some(p) => (p, "the confluent-kafka floor process"),
                None => (
                    floor,
                    "its floor process (F; the confluent-kafka peer did not run)",
                ),
            };
            let r = ab.ratio();
            report.goals.push(Goal {
                goal: format!("Fresh apply as a CLI process within 2× of {whose} (aim 1.5×)"),
                measured: format!(
                    "{} vs {} ({})",
                    dur(ab.b.median()),
                    dur(ab.a.median()),
                    ratio(r)
                ),
                met: Some(r <= PROCESS_FACTOR),
                analysis: String::new(),
            });
        }
        out.push_str(&format!(
            "\nTimeline of one more CLI apply ({}), `--trace`: when each step started (ms since \
             `main`) and how long it took:\n\n```\n{}```\n",
            case.label(),
            trace_lines(timeline)
        ));
    }
    out
}

/// The most frequent request count (they should all be the same).
fn common(requests: &[String]) -> String {
    let mut counts: Vec<(&String, usize)> = Vec::new();
    for r in requests {
        match counts.iter_mut().find(|(s, _)| *s == r) {
            Some((_, n)) => *n += 1,
            None => counts.push((r, 1)),
        }
    }
    counts.sort_by_key(|(_, n)| std::cmp::Reverse(*n));
    let all: Vec<String> = counts.iter().map(|(s, n)| format!("{s} (×{n})")).collect();
    all.join(", ")
}

fn trace_lines(stderr: &str) -> String {
    let mut out = String::new();
    for line in stderr.lines().filter(|l| l.starts_with("trace:")) {
        out.push_str(line);
        out.push('\n');
    }
    out
}
