//! Benchmark 1: plan computation from N markers × N partitions on disk, and verification of a
//! 100,000-partition plan; the cleanup component vs the same core compiled natively.

mod markers;
mod strict;

use std::fmt::Write as _;
use std::path::Path;

use action_state_format::offsets::PartitionOffsets;
use action_state_format::plan::Plan;
use action_state_format::planning::{parse_markers, plan_from_marker_texts, plan_from_markers};

use crate::report::{Goal, Report, table};
use crate::stats::{Laps, Side, Timing, alternate, dur, mib, ratio};
use crate::{Ctx, R, call, fail, w};
use markers::{read_markers, write_markers};

pub const TOPIC: &str = "agents.orders.action-state";
pub const TOPIC_ID: &str = "q7Zg3bR0Tn2lW1aVbXkJdQ";
const RECOVERY_POINT: &str = "chk-000482-savepoint";

/// splitmix64: deterministic offsets without a dependency.
pub struct Rng(pub u64);

impl Rng {
    pub fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
}

fn native_plan(dir: &Path) -> R<(Timing, String)> {
    let mut laps = Laps::start();
    let texts = read_markers(dir)?;
    laps.lap("read files");
    // The core function the component's `plan-from-markers` runs.
    let plan = plan_from_marker_texts(RECOVERY_POINT, &texts).map_err(|e| fail(e.to_string()))?;
    laps.lap("parse + plan");
    let text = plan.render_pretty();
    laps.lap("render");
    Ok((laps.finish(), text))
}

fn component_plan(
    instance: &mut action_state_cleanup::cleanup::CleanupInstance,
    dir: &Path,
) -> R<(Timing, String)> {
    let mut laps = Laps::start();
    let texts = read_markers(dir)?;
    laps.lap("read files");
    let plan = call(instance.plan_from_markers(RECOVERY_POINT, &texts))?;
    laps.lap("plan-from-markers");
    let text = w(instance.render_plan(&plan))?;
    laps.lap("render-plan");
    Ok((laps.finish(), text))
}

fn phases(timing: &crate::stats::Samples) -> String {
    timing
        .phase_names()
        .iter()
        .map(|name| {
            format!(
                "{name} {}",
                dur(timing.phase_median(name).unwrap_or(f64::NAN))
            )
        })
        .collect::<Vec<_>>()
        .join(", ")
}

/// S: the strict serde_json baseline over the same files (see `strict`).
fn serde_plan(dir: &Path) -> R<(Timing, strict::Minima)> {
    let mut laps = Laps::start();
    let texts = read_markers(dir)?;
    laps.lap("read files");
    let minima = strict::minima(&texts).map_err(fail)?;
    laps.lap("parse + minima");
    Ok((laps.finish(), minima))
}

/// C: the release CLI's `plan` as an operator runs it, a fresh process with the warm component
/// cache, plan text to stdout (captured).
fn cli_plan(ctx: &Ctx, dir: &Path) -> R<(Timing, String)> {
    let faults = children_minor_faults();
    let mut laps = Laps::start();
    let output = std::process::Command::new(&ctx.cli)
        .arg("plan")
        .arg("--markers")
        .arg(dir)
        .args(["--recovery-point", RECOVERY_POINT])
        .env("ASC_CACHE_DIR", &ctx.cache_dir)
        .stderr(std::process::Stdio::inherit())
        .output()?;
    laps.lap("process");
    if !output.status.success() {
        return Err(fail(format!("CLI plan failed: {}", output.status)));
    }
    let mut timing = laps.finish();
    // A count, not seconds: kept with the sample so the report can take its median.
    timing
        .phases
        .push((MINOR_FAULTS, children_minor_faults() - faults));
    Ok((timing, String::from_utf8(output.stdout)?))
}

const MINOR_FAULTS: &str = "minor page faults";

/// cminflt of this process: the minor page faults of the children it has waited for.
fn children_minor_faults() -> f64 {
    std::fs::read_to_string("/proc/self/stat")
        .ok()
        .and_then(|text| {
            let rest = &text[text.rfind(')')? + 1..];
            // Fields after the command name start at `state` (field 3); cminflt is field 11.
            rest.split_whitespace().nth(8)?.parse::<f64>().ok()
        })
        .unwrap_or(f64::NAN)
}

/// The four ways to the plan of one marker set, measured in rotation.
#[derive(Clone, Copy)]
enum Variant {
    Serde,
    Native,
    Component,
    Cli,
}

const VARIANTS: [Variant; 4] = [
    Variant::Serde,
    Variant::Native,
    Variant::Component,
    Variant::Cli,
];

/// Samples of every variant, each round in a rotated order (S A B C, A B C S, …) so drift falls
/// on all of them alike; one unrecorded warm-up each.
fn rotate(
    rounds: usize,
    mut run: impl FnMut(Variant) -> R<Timing>,
) -> R<[crate::stats::Samples; 4]> {
    for variant in VARIANTS {
        run(variant)?;
    }
    let mut samples: [crate::stats::Samples; 4] = Default::default();
    for round in 0..rounds {
        for k in 0..VARIANTS.len() {
            let i = (round + k) % VARIANTS.len();
            samples[i].0.push(run(VARIANTS[i])?);
        }
    }
    Ok(samples)
}

pub fn run(ctx: &Ctx, report: &mut Report) -> R<String> {
    let mut instance = ctx.offline_instance()?;
    let mut rows = Vec::new();
    let mut phase_rows = Vec::new();
    let mut per_mib: Vec<(usize, f64, f64)> = Vec::new();
    let mut at_1024: Option<([crate::stats::Samples; 4], u64)> = None;
    for n in [64usize, 256, 1024] {
        let dir = ctx.out.join(format!("plan-markers-{n}"));
        let bytes = write_markers(&dir, n)?;
        eprintln!(
            "bench: plan {n}×{n}: {:.1} MiB of markers in {}",
            mib(bytes as f64),
            dir.display()
        );
        let (_, expected) = native_plan(&dir)?;
        // The reference path (JSON tree per marker, then planning) must agree with it.
        let reference = parse_markers(&read_markers(&dir)?)
            .and_then(|markers| plan_from_markers(RECOVERY_POINT, &markers))
            .map_err(|e| fail(e.to_string()))?;
        if reference.render_pretty() != expected {
            return Err(fail(format!(
                "plan {n}×{n}: the fast and the reference core paths differ"
            )));
        }
        let (_, got) = component_plan(&mut instance, &dir)?;
        if expected != got {
            return Err(fail(format!(
                "plan {n}×{n}: component and native plans differ"
            )));
        }
        let (_, cli) = cli_plan(ctx, &dir)?;
        if cli != expected {
            return Err(fail(format!("plan {n}×{n}: CLI and native plans differ")));
        }
        // The baseline must compute the same minima, or it is not the same work.
        let (_, minima) = serde_plan(&dir)?;
        let plan = Plan::parse(&expected).map_err(|e| fail(e.to_string()))?;
        let planned: Vec<(u32, u64)> = plan.offsets.iter().collect();
        if minima.topic != plan.topic
            || minima.topic_id != plan.topic_id
            || minima.offsets != planned
        {
            return Err(fail(format!(
                "plan {n}×{n}: the serde_json baseline computed other minima"
            )));
        }
        let rounds = if n >= 1024 { 7 } else { 9 };
        let [s, a, b, c] = rotate(rounds, |variant| match variant {
            Variant::Serde => serde_plan(&dir).map(|r| r.0),
            Variant::Native => native_plan(&dir).map(|r| r.0),
            Variant::Component => component_plan(&mut instance, &dir).map(|r| r.0),
            Variant::Cli => cli_plan(ctx, &dir).map(|r| r.0),
        })?;
        let size = mib(bytes as f64);
        let (a_mib, b_mib) = (a.median() * 1e6 / size, b.median() * 1e6 / size);
        per_mib.push((n, a_mib, b_mib));
        let vs = |x: &crate::stats::Samples| ratio(x.median() / s.median());
        rows.push(vec![
            format!("{n} × {n}"),
            format!("{:.2} MiB", size),
            s.summary(),
            a.summary(),
            b.summary(),
            c.summary(),
            vs(&a),
            vs(&b),
            vs(&c),
        ]);
        phase_rows.push(vec![
            format!("{n} × {n}"),
            phases(&s),
            phases(&a),
            phases(&b),
        ]);
        eprintln!(
            "bench: plan {n}×{n}: serde_json {} native {} component {} CLI {} (C/S {}, B/S {}, A/S {}; load {})",
            s.summary(),
            a.summary(),
            b.summary(),
            c.summary(),
            vs(&c),
            vs(&b),
            vs(&a),
            crate::load_average()
        );
        if n == 1024 {
            at_1024 = Some(([s, a, b, c], bytes));
        }
    }

    // Verification of a 100,000-partition plan (as read from a file, already in memory).
    let partitions = 100_000u32;
    let mut rng = Rng(7);
    let offsets: PartitionOffsets = (0..partitions)
        .map(|p| (p, 5_000_000 + rng.next() % 2_000_000_000))
        .collect();
    let plan =
        Plan::new(RECOVERY_POINT, TOPIC, TOPIC_ID, offsets).map_err(|e| fail(e.to_string()))?;
    let text = plan.render_pretty();
    let verified = call(instance.verify_plan(&text))?;
    if verified.plan_id != plan.plan_id {
        return Err(fail("verify-plan returned another plan ID"));
    }
    let verify = alternate(7, true, |side, _| {
        let mut laps = Laps::start();
        match side {
            Side::A => {
                let parsed = Plan::parse(&text).map_err(|e| fail(e.to_string()))?;
                std::hint::black_box(parsed);
            }
            Side::B => {
                let parsed = call(instance.verify_plan(&text))?;
                std::hint::black_box(parsed);
            }
        }
        laps.lap("verify");
        Ok(laps.finish())
    })?;
    eprintln!(
        "bench: verify 100k: native {} component {}",
        verify.a.summary(),
        verify.b.summary()
    );

    let mut out = String::from(
        "## 1. Plan at scale: CLI and component against a strict serde_json baseline\n\n",
    );
    out.push_str(
        "N versioned subtask markers × N partitions, one file per subtask on disk (page cache warm). \
         S = the strict serde_json baseline: read files + a serde visitor per marker that refuses \
         unknown, missing and duplicate fields, non-canonical, out-of-range and duplicate \
         partitions, non-integer, negative and out-of-range offsets, trailing content and lone \
         surrogates, and computes the per-partition minima across markers of one topic and one \
         partition set (no plan ID, no rendering). \
         A = read files + `plan_from_marker_texts` (what the component runs) + `Plan::render_pretty`, natively; \
         B = read files + `CleanupInstance::plan_from_markers` + `render_plan` on one instance \
         (precompiled, instantiated once, outside the timing); C = the release CLI \
         `action-state-cleanup plan --markers DIR --recovery-point …` end to end, a fresh process \
         per run with the warm component cache (it reads each file into one reused buffer and hands \
         it to the component's `marker-files-planner`, one call per file, which splits it and \
         folds its markers into the running minimum), plan text captured from stdout. A, B and C \
         produce byte-identical plans and S the same minima (checked). One warm-up each, then 9 \
         rounds (7 at 1,024), each round in a rotated order.\n\n",
    );
    out.push_str(&table(
        &[
            "markers × partitions",
            "marker bytes",
            "S serde_json",
            "A native core",
            "B component",
            "C CLI `plan`",
            "A/S",
            "B/S",
            "C/S",
        ],
        &rows,
    ));
    let (first, last) = (per_mib[0], per_mib[per_mib.len() - 1]);
    let _ = write!(
        out,
        "\nLinearity: from {}² to {}² the input grows {:.0}× and the cost per MiB changes by {:.2}× \
         (native) and {:.2}× (component) — {}.\n\nPhases (medians):\n\n",
        first.0,
        last.0,
        (last.0 * last.0) as f64 / (first.0 * first.0) as f64,
        last.1 / first.1,
        last.2 / first.2,
        if (last.1 / first.1) < 1.5 && (last.2 / first.2) < 1.5 {
            "time is linear in marker bytes"
        } else {
            "super-linear: the cost per byte grows with N"
        }
    );
    out.push_str(&table(
        &[
            "markers × partitions",
            "S serde_json",
            "A native",
            "B component",
        ],
        &phase_rows,
    ));
    let _ = write!(
        out,
        "\n### Parse + verify of a 100,000-partition plan\n\nPlan file text of {:.2} MiB in memory. \
         A = `Plan::parse` (strict parse + plan-ID check), B = `CleanupInstance::verify_plan` \
         (same, plus copying the text in and the 100,000-entry plan record out).\n\n",
        mib(text.len() as f64)
    );
    out.push_str(&table(
        &["case", "A native", "B component", "B/A"],
        &[vec![
            "verify 100,000 partitions".into(),
            verify.a.summary(),
            verify.b.summary(),
            ratio(verify.ratio()),
        ]],
    ));

    if let Some(([s, a, b, c], bytes)) = at_1024 {
        // One marker file per subtask.
        let files = 1024;
        let goal = c.median() / s.median();
        let plan_b = b.phase_median("plan-from-markers").unwrap_or(f64::NAN);
        let read = b.phase_median("read files").unwrap_or(f64::NAN);
        let native_core = a.phase_median("parse + plan").unwrap_or(f64::NAN);
        let analysis = format!(
            "CLI {} and in-process component {} (B/S {}) against serde_json {} (native core {}, \
             A/S {}). Of the component's time, reading the files takes {} and the guest call \
             `plan-from-markers` {} (copying {:.1} MiB in, parsing, minima, plan ID) where the \
             native parse + plan take {}; the CLI adds process start, component load from the \
             cache and instantiation, and hands the files over one by one \
             (`marker-files-planner`: each file is read into the same host buffer, copied into \
             guest memory that the previous file's text was freed from, split and folded into \
             the running minimum; a file the fast decoder reads whole as one marker is not \
             scanned again to split it): {} over B. The CLI process takes {:.0} minor page \
             faults (median) for {:.1} MiB of markers: neither side touches new memory per file, \
             where a single call with every file would touch about 2 × {:.1} MiB of new pages \
             (host buffers and guest copy) in a fresh process. What is left over B is the \
             process itself (start, component load, instantiation) and {} calls into the \
             component instead of one.",
            dur(c.median()),
            dur(b.median()),
            ratio(b.median() / s.median()),
            dur(s.median()),
            dur(a.median()),
            ratio(a.median() / s.median()),
            dur(read),
            dur(plan_b),
            mib(bytes as f64),
            dur(native_core),
            dur(c.median() - b.median()),
            c.phase_median(MINOR_FAULTS).unwrap_or(f64::NAN),
            mib(bytes as f64),
            mib(bytes as f64),
            files,
        );
        report.goals.push(Goal {
            goal: "Plan at 1,024 × 1,024 through the component within 1.5× of a strict serde_json baseline"
                .into(),
            measured: format!(
                "{} (C/S, CLI `plan` end to end ÷ serde_json); in-process component {} (B/S), native core {} (A/S)",
                ratio(goal),
                ratio(b.median() / s.median()),
                ratio(a.median() / s.median())
            ),
            met: Some(goal <= 1.5),
            analysis,
        });
    }
    Ok(out)
}
