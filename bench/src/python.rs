//! Goal 4: the Python embedding's `verify` and `render` of a 10,000-partition plan against the
//! release CLI process on the same plan, measured side by side by `python/measure.py` (rounds in
//! alternating order) in the venv `python/run-tests` leaves behind (the installed wheel, real
//! wasmtime-py).

use std::process::Command;

use serde::Deserialize;

use crate::report::{Goal, Report, table};
use crate::stats::{dur, num, ratio};
use crate::{Ctx, R, fail};

const GOAL: f64 = 2.0;
const PARTITIONS: u32 = 10_000;
const ROUNDS: u32 = 21;

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Measured {
    partitions: u32,
    plan_bytes: u64,
    rounds: u32,
    median_ms: std::collections::BTreeMap<String, f64>,
    min_ms: std::collections::BTreeMap<String, f64>,
    verify_ratio: f64,
    render_ratio: f64,
    plan_ratio: f64,
    versions: String,
}

pub fn run(ctx: &Ctx, report: &mut Report) -> R<String> {
    let goal = format!(
        "Python `verify` and `render` of a {}-partition plan within {GOAL}× of the CLI",
        num(f64::from(PARTITIONS))
    );
    let python = ctx.repo.join("python/.venv/bin/python");
    if !python.is_file() {
        report.goals.push(Goal {
            goal,
            measured: "not measured: python/.venv is missing".into(),
            met: None,
            analysis: "Run python/run-tests once (it builds the wheel and creates python/.venv)."
                .into(),
        });
        return Ok(
            "## 5. Python embedding\n\nSkipped: python/.venv is missing (python/run-tests \
                   creates it).\n"
                .into(),
        );
    }
    let json = ctx.out.join("python-goal4.json");
    let output = Command::new(&python)
        .arg(ctx.repo.join("python/measure.py"))
        .args(["--goal4-only", "--calls", "200"])
        .args(["--partitions", &PARTITIONS.to_string()])
        .args(["--large-rounds", &ROUNDS.to_string()])
        .arg("--json")
        .arg(&json)
        .env("ASC_CLI", &ctx.cli)
        .env("ASC_CACHE_DIR", &ctx.cache_dir)
        .output()?;
    if !output.status.success() {
        return Err(fail(format!(
            "python/measure.py failed ({}): {}",
            output.status,
            String::from_utf8_lossy(&output.stderr)
        )));
    }
    let m: Measured = serde_json::from_str(&std::fs::read_to_string(&json)?)?;
    eprintln!(
        "bench: python: verify {:.2}x, render {:.2}x of the CLI verify process",
        m.verify_ratio, m.render_ratio
    );
    let ms = |label: &str| {
        let median = m.median_ms.get(label).copied().unwrap_or(f64::NAN);
        let min = m.min_ms.get(label).copied().unwrap_or(f64::NAN);
        format!("{} (min {})", dur(median / 1e3), dur(min / 1e3))
    };
    let rows: Vec<Vec<String>> = [
        "rust CLI process: verify --plan FILE",
        "python Cleanup.verify(text)",
        "python Cleanup.render(plan)",
        "rust CLI process: plan --markers FILE (renders)",
        "python Cleanup.render(Cleanup.plan(...))",
    ]
    .iter()
    .map(|label| vec![(*label).to_owned(), ms(label)])
    .collect();
    let met = m.verify_ratio <= GOAL && m.render_ratio <= GOAL;
    report.goals.push(Goal {
        goal,
        measured: format!(
            "verify {}, render {} (of the CLI `verify` process); plan + render {} of the CLI `plan` process",
            ratio(m.verify_ratio),
            ratio(m.render_ratio),
            ratio(m.plan_ratio)
        ),
        met: Some(met),
        analysis: format!(
            "{} in the venv of python/run-tests; the Python side is a call on a warm `Cleanup` \
             (interpreter start excluded), the CLI side a whole process (start, component load \
             from the cache, the call).",
            m.versions
        ),
    });
    let mut out = format!(
        "## 5. Python embedding: `verify` and `render` against the CLI process\n\n\
         `python/measure.py --goal4-only` ({}) on a {}-partition plan ({:.0} KiB): the Python \
         calls on one warm `Cleanup` of the installed wheel, the release CLI `{}` as a fresh \
         process per run; {} rounds in alternating order, medians.\n\n",
        m.versions,
        num(f64::from(m.partitions)),
        m.plan_bytes as f64 / 1024.0,
        ctx.cli.display(),
        m.rounds
    );
    out.push_str(&table(&["variant", "median (min)"], &rows));
    Ok(out)
}
