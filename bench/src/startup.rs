//! Benchmark 4: start-up — component load cold (compile) vs from the precompiled cache, pooled
//! instantiation, and one `verify` CLI invocation end to end. Loads are measured in fresh child
//! processes of this binary (`probe-*` modes), so every sample starts from nothing, as a CLI does.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Instant;

use action_state_cleanup::CLEANUP_COMPONENT;
use action_state_cleanup::cleanup::{CleanupComponent, NoEvents};
use action_state_cleanup::engine::{load_component, new_engine};
use action_state_cleanup::kafka::{KafkaClients, KafkaSettings};
use action_state_format::offsets::PartitionOffsets;
use action_state_format::plan::Plan;

use crate::plan::{Rng, TOPIC, TOPIC_ID};
use crate::report::{Goal, Report, table};
use crate::stats::{Samples, Side, Timing, alternate, dur, median, ratio};
use crate::{Ctx, R, call, env_usize, fail, w};

fn secs(from: Instant) -> f64 {
    from.elapsed().as_secs_f64()
}

/// Child process: one measurement, printed as a JSON object of seconds.
pub fn probe(args: &[String]) -> R<()> {
    let mode = args.first().map(String::as_str).unwrap_or_default();
    let mut out = serde_json::Map::new();
    let mut put = |name: &str, value: f64| {
        out.insert(name.to_owned(), serde_json::json!(value));
    };
    let process = Instant::now();
    match mode {
        "probe-load" => {
            let t = Instant::now();
            let engine = w(new_engine())?;
            put("engine", secs(t));
            let t = Instant::now();
            let component = w(load_component(&engine, "cleanup", CLEANUP_COMPONENT))?;
            put("load", secs(t));
            drop(component);
            let t = Instant::now();
            let cleanup = w(CleanupComponent::new(&engine, CLEANUP_COMPONENT))?;
            put("link (warm load + linker + instantiate-pre)", secs(t));
            let settings = KafkaSettings::new("offline.invalid:9092");
            let kafka = KafkaClients::new(settings.clone())?;
            let t = Instant::now();
            let first = w(cleanup.instantiate(kafka, Box::new(NoEvents)))?;
            put("first instantiate", secs(t));
            drop(first);
            let mut instantiate = Vec::new();
            let mut clients = Vec::new();
            for _ in 0..100 {
                let t = Instant::now();
                let kafka = KafkaClients::new(settings.clone())?;
                clients.push(secs(t));
                let t = Instant::now();
                let instance = w(cleanup.instantiate(kafka, Box::new(NoEvents)))?;
                instantiate.push(secs(t));
                drop(instance);
            }
            put("instantiate (pooled, median of 100)", median(&instantiate));
            put("KafkaClients::new (median of 100)", median(&clients));
        }
        "probe-verify" => {
            let plan = args
                .get(1)
                .ok_or_else(|| fail("probe-verify needs a plan file"))?;
            let t = Instant::now();
            let engine = w(new_engine())?;
            put("engine", secs(t));
            let t = Instant::now();
            let cleanup = w(CleanupComponent::new(&engine, CLEANUP_COMPONENT))?;
            put("load + link", secs(t));
            let t = Instant::now();
            let kafka = KafkaClients::new(KafkaSettings::new("offline.invalid:9092"))?;
            put("Kafka clients", secs(t));
            let t = Instant::now();
            let mut instance = w(cleanup.instantiate(kafka, Box::new(NoEvents)))?;
            put("instantiate", secs(t));
            let t = Instant::now();
            let text = std::fs::read_to_string(plan)?;
            let verified = call(instance.verify_plan(&text))?;
            put("read + verify-plan", secs(t));
            std::hint::black_box(verified);
            let t = Instant::now();
            drop(instance);
            drop(cleanup);
            drop(engine);
            put("teardown", secs(t));
        }
        other => return Err(fail(format!("unknown probe {other:?}"))),
    }
    put("in-process total", secs(process));
    println!("{}", serde_json::Value::Object(out));
    Ok(())
}

fn run_probe(args: &[&str], cache: &Path) -> R<Vec<(String, f64)>> {
    let output = Command::new(std::env::current_exe()?)
        .args(args)
        .env("ASC_CACHE_DIR", cache)
        .output()?;
    if !output.status.success() {
        return Err(fail(format!(
            "probe {args:?} failed: {}",
            String::from_utf8_lossy(&output.stderr)
        )));
    }
    let value: serde_json::Value = serde_json::from_slice(&output.stdout)?;
    let object = value
        .as_object()
        .ok_or_else(|| fail("probe printed no object"))?;
    Ok(object
        .iter()
        .map(|(k, v)| (k.clone(), v.as_f64().unwrap_or(f64::NAN)))
        .collect())
}

/// Names live as long as the report: leak the few probe keys.
fn leak(name: &str) -> &'static str {
    Box::leak(name.to_owned().into_boxed_str())
}

fn to_timing(values: Vec<(String, f64)>, total_key: &str) -> Timing {
    let total = values
        .iter()
        .find(|(k, _)| k == total_key)
        .map_or(f64::NAN, |(_, v)| *v);
    Timing {
        total,
        phases: values.into_iter().map(|(k, v)| (leak(&k), v)).collect(),
    }
}

fn write_plan(dir: &Path, partitions: u32) -> R<PathBuf> {
    let mut rng = Rng(u64::from(partitions));
    let offsets: PartitionOffsets = (0..partitions)
        .map(|p| (p, 1_000_000 + rng.next() % 1_000_000_000))
        .collect();
    let plan =
        Plan::new("chk-000481", TOPIC, TOPIC_ID, offsets).map_err(|e| fail(e.to_string()))?;
    let path = dir.join(format!("verify-plan-{partitions}.json"));
    std::fs::write(&path, plan.render_pretty())?;
    Ok(path)
}

fn spawn_wall(command: &mut Command) -> R<f64> {
    let t = Instant::now();
    let status = command
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()?;
    let elapsed = secs(t);
    if !status.success() {
        return Err(fail(format!("{command:?} failed with {status}")));
    }
    Ok(elapsed)
}

fn phase_rows(samples: &Samples, skip: &[&str]) -> String {
    samples
        .phase_names()
        .iter()
        .filter(|n| !skip.contains(n))
        .map(|n| format!("{n} {}", dur(samples.phase_median(n).unwrap_or(f64::NAN))))
        .collect::<Vec<_>>()
        .join("; ")
}

pub fn run(ctx: &Ctx, report: &mut Report) -> R<String> {
    let warm = ctx.cache_dir.clone();
    // One probe warms the cache directory (the harness's own load already did when it is the same).
    run_probe(&["probe-load"], &warm)?;
    let cold_root = ctx.out.join("cold-cache");
    let load = alternate(7, false, |side, round| {
        let values = match side {
            Side::A => {
                let dir = cold_root.join(format!("round-{round}"));
                let _ = std::fs::remove_dir_all(&dir);
                std::fs::create_dir_all(&dir)?;
                let values = run_probe(&["probe-load"], &dir)?;
                std::fs::remove_dir_all(&dir)?;
                values
            }
            Side::B => run_probe(&["probe-load"], &warm)?,
        };
        Ok(to_timing(values, "load"))
    })?;
    let _ = std::fs::remove_dir_all(&cold_root);
    eprintln!(
        "bench: start-up: load cold {} precompiled {}",
        load.a.summary(),
        load.b.summary()
    );

    let small = write_plan(&ctx.out, 8)?;
    let large = write_plan(&ctx.out, 1024)?;
    let runs = env_usize("ASC_BENCH_VERIFY_RUNS", 30)?.max(3);
    let cli = |args: &[&str]| {
        let mut command = Command::new(&ctx.cli);
        command.args(args).env("ASC_CACHE_DIR", &warm);
        command
    };
    let small_arg = small.to_string_lossy().into_owned();
    let large_arg = large.to_string_lossy().into_owned();
    spawn_wall(&mut cli(&["verify", "--plan", &small_arg]))?;
    let verify = alternate(runs, true, |side, _| {
        let wall = match side {
            Side::A => spawn_wall(&mut cli(&["--version"]))?,
            Side::B => spawn_wall(&mut cli(&["verify", "--plan", &small_arg]))?,
        };
        Ok(Timing::total(wall))
    })?;
    let verify_large = alternate(runs.div_ceil(3), true, |side, _| {
        let wall = match side {
            Side::A => spawn_wall(&mut cli(&["verify", "--plan", &small_arg]))?,
            Side::B => spawn_wall(&mut cli(&["verify", "--plan", &large_arg]))?,
        };
        Ok(Timing::total(wall))
    })?;
    let mut probes = Samples::default();
    for _ in 0..10 {
        probes.0.push(to_timing(
            run_probe(&["probe-verify", &small_arg], &warm)?,
            "in-process total",
        ));
    }
    eprintln!(
        "bench: start-up: verify end to end {} (--version {})",
        verify.b.summary(),
        verify.a.summary()
    );

    let mut out = String::from("## 4. Start-up\n\n");
    out.push_str(
        "Every load sample is a fresh child process of the harness (`probe-load`): A = cold, an empty \
         `ASC_CACHE_DIR` so `engine::load_component` compiles with Cranelift and writes the cache; \
         B = the same call with the warm cache (`Component::deserialize_file`). 7 rounds.\n\n",
    );
    out.push_str(&table(
        &[
            "component load",
            "A cold (compile + write cache)",
            "B precompiled cache",
            "B/A",
        ],
        &[vec![
            "`engine::load_component(cleanup)`".into(),
            load.a.summary(),
            load.b.summary(),
            ratio(load.ratio()),
        ]],
    ));
    let _ = write!(
        out,
        "\nSame processes, after the load (medians over all 14): {}.\n",
        phase_rows(
            &Samples([load.a.0.clone(), load.b.0.clone()].concat()),
            &["load", "in-process total"]
        )
    );
    out.push_str(
        "\n`verify` end to end: process spawn to exit of `target/release/action-state-cleanup`, warm \
         cache, output discarded; A = `--version` (process start, no component) as the floor.\n\n",
    );
    out.push_str(&table(
        &["invocation", "A", "B", "B/A"],
        &[
            vec![
                format!("A `--version` / B `verify --plan` (8 partitions), {runs} runs each"),
                verify.a.summary(),
                verify.b.summary(),
                ratio(verify.ratio()),
            ],
            vec![
                format!(
                    "A `verify` 8 partitions / B `verify` 1,024 partitions, {} runs each",
                    runs.div_ceil(3)
                ),
                verify_large.a.summary(),
                verify_large.b.summary(),
                ratio(verify_large.ratio()),
            ],
        ],
    ));
    let _ = write!(
        out,
        "\nInside the process (`probe-verify`, the CLI's steps, medians of 10): {}.\n",
        phase_rows(&probes, &[])
    );

    let e2e = verify.b.median();
    let floor = verify.a.median();
    let inside = probes.median();
    let mut analysis = format!(
        "median {} end to end; the process floor (`--version`) is {}; the in-process steps take {} \
         (engine {}, load + link {}, instantiate {}, verify {}).",
        dur(e2e),
        dur(floor),
        dur(inside),
        dur(probes.phase_median("engine").unwrap_or(f64::NAN)),
        dur(probes.phase_median("load + link").unwrap_or(f64::NAN)),
        dur(probes.phase_median("instantiate").unwrap_or(f64::NAN)),
        dur(probes
            .phase_median("read + verify-plan")
            .unwrap_or(f64::NAN)),
    );
    if e2e >= 0.020 {
        let _ = write!(
            analysis,
            " The remaining {} between the in-process steps and the end-to-end time is process start, \
             dynamic linking and exit (unmapping the pooling allocator's reservation).",
            dur(e2e - inside)
        );
    }
    report.goals.push(Goal {
        goal: "`verify` end to end under 20 ms".into(),
        measured: format!(
            "{} median ({}–{})",
            dur(e2e),
            dur(verify.b.min()),
            dur(verify.b.max())
        ),
        met: Some(e2e < 0.020),
        analysis,
    });
    Ok(out)
}
