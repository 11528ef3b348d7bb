//! Benchmark 1: plan computation from N markers × N partitions on disk, and verification of a
//! 100,000-partition plan; the cleanup component vs the same core compiled natively.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use action_state_format::marker::{Marker, VersionedMarker};
use action_state_format::offsets::PartitionOffsets;
use action_state_format::plan::Plan;
use action_state_format::planning::{parse_markers, plan_from_marker_texts, plan_from_markers};

use crate::report::{Goal, Report, table};
use crate::stats::{Laps, Side, Timing, alternate, dur, mib, ratio};
use crate::{Ctx, R, call, fail, w};

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

/// Writes `n` subtask markers of `n` partitions each, as a Flink job's checkpoint would hold
/// them: every subtask saw every partition, offsets in the millions to billions, subtasks a few
/// hundred thousand records apart. Returns the files' total size.
fn write_markers(dir: &Path, n: usize) -> R<u64> {
    if dir.exists() {
        std::fs::remove_dir_all(dir)?;
    }
    std::fs::create_dir_all(dir)?;
    let mut rng = Rng(n as u64);
    let bases: Vec<u64> = (0..n)
        .map(|_| 5_000_000 + rng.next() % 2_000_000_000)
        .collect();
    let mut bytes = 0;
    for subtask in 0..n {
        let offsets: PartitionOffsets = (0..n)
            .map(|p| (p as u32, bases[p] + rng.next() % 500_000))
            .collect();
        let marker =
            VersionedMarker::new(TOPIC, TOPIC_ID, offsets).map_err(|e| fail(e.to_string()))?;
        let text = Marker::Versioned(marker).render();
        bytes += text.len() as u64;
        std::fs::write(dir.join(format!("subtask-{subtask:04}.json")), text)?;
    }
    Ok(bytes)
}

fn read_markers(dir: &Path) -> R<Vec<String>> {
    let mut paths: Vec<PathBuf> = std::fs::read_dir(dir)?
        .map(|e| e.map(|e| e.path()))
        .collect::<Result<_, _>>()?;
    paths.sort();
    Ok(paths
        .iter()
        .map(std::fs::read_to_string)
        .collect::<Result<_, _>>()?)
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

/// The strict serde_json baseline of goal 1: the work a careful hand-written Rust reader of the
/// marker format does with the most common JSON library, against which the component is held.
/// Every marker goes through a serde visitor straight into a struct (keys and text borrowed from
/// the input where they have no escapes), with the rules of SPEC §2 that planning relies on:
/// exactly the four fields, each once; schema 1; topic and topic ID strings, not blank, without
/// control characters; a non-empty offsets object of canonical partitions (no sign, no leading
/// zero, at most `i32::MAX`), each once; integer offsets in `[0, i64::MAX]`; nothing after the
/// document; and serde_json's own refusal of lone surrogates and malformed JSON. Then the minima:
/// every marker of one topic (name and ID, not the zero ID) and one partition set.
mod strict {
    use std::borrow::Cow;
    use std::fmt;

    use serde::Deserialize;
    use serde::de::{self, DeserializeSeed, Deserializer, MapAccess, Visitor};

    pub struct Minima {
        pub topic: String,
        pub topic_id: String,
        /// Ascending partitions with the minimum offset over every marker.
        pub offsets: Vec<(u32, u64)>,
    }

    struct Marker<'de> {
        topic: Cow<'de, str>,
        topic_id: Cow<'de, str>,
        offsets: Vec<(u32, u64)>,
    }

    pub fn minima(texts: &[String]) -> Result<Minima, String> {
        let mut result: Option<Minima> = None;
        for (index, text) in texts.iter().enumerate() {
            let refuse = |why: String| format!("marker {}: {why}", index + 1);
            let mut de = serde_json::Deserializer::from_str(text);
            let marker = de
                .deserialize_map(MarkerVisitor)
                .and_then(|marker| de.end().map(|()| marker))
                .map_err(|e| refuse(e.to_string()))?;
            for (name, value) in [("topic", &marker.topic), ("topicId", &marker.topic_id)] {
                if value.trim().is_empty() || value.chars().any(char::is_control) {
                    return Err(refuse(format!("{name} is blank or has control characters")));
                }
            }
            if marker.topic_id == "AAAAAAAAAAAAAAAAAAAAAA" {
                return Err(refuse("the zero topic ID".into()));
            }
            let Some(minima) = &mut result else {
                result = Some(Minima {
                    topic: marker.topic.into_owned(),
                    topic_id: marker.topic_id.into_owned(),
                    offsets: marker.offsets,
                });
                continue;
            };
            if minima.topic != marker.topic || minima.topic_id != marker.topic_id {
                return Err(refuse("another topic".into()));
            }
            if minima.offsets.len() != marker.offsets.len() {
                return Err(refuse("another partition set".into()));
            }
            for (slot, (partition, offset)) in minima.offsets.iter_mut().zip(&marker.offsets) {
                if slot.0 != *partition {
                    return Err(refuse("another partition set".into()));
                }
                slot.1 = slot.1.min(*offset);
            }
        }
        result.ok_or_else(|| "no markers".to_owned())
    }

    enum Field {
        SchemaVersion,
        Topic,
        TopicId,
        Offsets,
    }

    const FIELDS: &[&str] = &["schemaVersion", "topic", "topicId", "offsets"];

    impl<'de> Deserialize<'de> for Field {
        fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
            struct FieldVisitor;
            impl Visitor<'_> for FieldVisitor {
                type Value = Field;
                fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                    f.write_str("a marker field name")
                }
                fn visit_str<E: de::Error>(self, name: &str) -> Result<Field, E> {
                    Ok(match name {
                        "schemaVersion" => Field::SchemaVersion,
                        "topic" => Field::Topic,
                        "topicId" => Field::TopicId,
                        "offsets" => Field::Offsets,
                        other => return Err(de::Error::unknown_field(other, FIELDS)),
                    })
                }
            }
            deserializer.deserialize_identifier(FieldVisitor)
        }
    }

    /// A string borrowed from the input when it has no escapes.
    struct Text<'de>(Cow<'de, str>);

    impl<'de> Deserialize<'de> for Text<'de> {
        fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
            struct TextVisitor;
            impl<'de> Visitor<'de> for TextVisitor {
                type Value = Text<'de>;
                fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                    f.write_str("a string")
                }
                fn visit_borrowed_str<E: de::Error>(self, s: &'de str) -> Result<Text<'de>, E> {
                    Ok(Text(Cow::Borrowed(s)))
                }
                fn visit_str<E: de::Error>(self, s: &str) -> Result<Text<'de>, E> {
                    Ok(Text(Cow::Owned(s.to_owned())))
                }
            }
            deserializer.deserialize_str(TextVisitor)
        }
    }

    /// A canonical partition key.
    struct Partition(u32);

    impl<'de> Deserialize<'de> for Partition {
        fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
            struct PartitionVisitor;
            impl Visitor<'_> for PartitionVisitor {
                type Value = Partition;
                fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                    f.write_str("a canonical partition number")
                }
                fn visit_str<E: de::Error>(self, key: &str) -> Result<Partition, E> {
                    let canonical = !key.is_empty()
                        && key.bytes().all(|b| b.is_ascii_digit())
                        && (key == "0" || !key.starts_with('0'));
                    match key.parse::<u32>() {
                        Ok(p) if canonical && p <= i32::MAX as u32 => Ok(Partition(p)),
                        _ => Err(E::custom(format!("invalid partition {key:?}"))),
                    }
                }
            }
            deserializer.deserialize_str(PartitionVisitor)
        }
    }

    struct Offsets;

    impl<'de> DeserializeSeed<'de> for Offsets {
        type Value = Vec<(u32, u64)>;
        fn deserialize<D: Deserializer<'de>>(
            self,
            deserializer: D,
        ) -> Result<Self::Value, D::Error> {
            deserializer.deserialize_map(self)
        }
    }

    impl<'de> Visitor<'de> for Offsets {
        type Value = Vec<(u32, u64)>;
        fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            f.write_str("an offsets object")
        }
        fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
            let mut offsets: Vec<(u32, u64)> = Vec::with_capacity(map.size_hint().unwrap_or(0));
            let mut ascending = true;
            while let Some(Partition(partition)) = map.next_key()? {
                let offset: i64 = map.next_value()?;
                let offset = u64::try_from(offset)
                    .map_err(|_| de::Error::custom(format!("negative offset {offset}")))?;
                if let Some(&(last, _)) = offsets.last() {
                    ascending &= partition > last;
                }
                offsets.push((partition, offset));
            }
            if !ascending {
                offsets.sort_unstable_by_key(|(p, _)| *p);
                if offsets.windows(2).any(|w| w[0].0 == w[1].0) {
                    return Err(de::Error::custom("duplicate partition"));
                }
            }
            if offsets.is_empty() {
                return Err(de::Error::custom("empty offsets"));
            }
            Ok(offsets)
        }
    }

    struct MarkerVisitor;

    impl<'de> Visitor<'de> for MarkerVisitor {
        type Value = Marker<'de>;
        fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            f.write_str("a versioned recovery marker")
        }
        fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Marker<'de>, A::Error> {
            let (mut schema, mut topic, mut topic_id, mut offsets) = (None, None, None, None);
            fn once<T, E: de::Error>(slot: &Option<T>, name: &'static str) -> Result<(), E> {
                match slot {
                    Some(_) => Err(E::duplicate_field(name)),
                    None => Ok(()),
                }
            }
            while let Some(field) = map.next_key::<Field>()? {
                match field {
                    Field::SchemaVersion => {
                        once(&schema, "schemaVersion")?;
                        schema = Some(map.next_value::<u32>()?);
                    }
                    Field::Topic => {
                        once(&topic, "topic")?;
                        topic = Some(map.next_value::<Text<'de>>()?.0);
                    }
                    Field::TopicId => {
                        once(&topic_id, "topicId")?;
                        topic_id = Some(map.next_value::<Text<'de>>()?.0);
                    }
                    Field::Offsets => {
                        once(&offsets, "offsets")?;
                        offsets = Some(map.next_value_seed(Offsets)?);
                    }
                }
            }
            match schema {
                Some(1) => {}
                Some(other) => return Err(de::Error::custom(format!("schema {other}"))),
                None => return Err(de::Error::missing_field("schemaVersion")),
            }
            Ok(Marker {
                topic: topic.ok_or_else(|| de::Error::missing_field("topic"))?,
                topic_id: topic_id.ok_or_else(|| de::Error::missing_field("topicId"))?,
                offsets: offsets.ok_or_else(|| de::Error::missing_field("offsets"))?,
            })
        }
    }

    #[cfg(test)]
    #[allow(clippy::panic, reason = "tests: a failure is a failed test")]
    mod tests {
        use super::minima;

        const GOOD: &str =
            r#"{"schemaVersion":1,"topic":"t","topicId":"id","offsets":{"0":10,"1":20}}"#;

        #[test]
        fn computes_minima_and_refuses_what_the_format_refuses() {
            let other =
                r#"{"offsets":{"1":5,"0":30},"topicId":"id","topic":"t","schemaVersion":1}"#;
            let m = minima(&[GOOD.into(), other.into()]).unwrap_or_else(|e| panic!("{e}"));
            assert_eq!(m.offsets, vec![(0, 10), (1, 5)]);
            for bad in [
                GOOD.replace("\"topic\":\"t\",", "\"topic\":\"t\",\"topic\":\"t\","),
                GOOD.replace("\"topic\":\"t\",", "\"x\":1,\"topic\":\"t\","),
                GOOD.replace("\"topicId\":\"id\",", ""),
                GOOD.replace("\"1\":20", "\"1\":20,\"1\":21"),
                GOOD.replace("\"1\":20", "\"01\":20"),
                GOOD.replace("\"1\":20", "\"+1\":20"),
                GOOD.replace("\"1\":20", "\"2147483648\":20"),
                GOOD.replace(":20", ":20.0"),
                GOOD.replace(":20", ":-20"),
                GOOD.replace(":20", ":9223372036854775808"),
                GOOD.replace("\"t\"", "\"\\ud800\""),
                GOOD.replace("\"t\"", "\" \""),
                GOOD.replace("\"schemaVersion\":1", "\"schemaVersion\":2"),
                GOOD.replace("{\"0\":10,\"1\":20}", "{}"),
                format!("{GOOD}{{}}"),
            ] {
                assert!(
                    minima(std::slice::from_ref(&bad)).is_err(),
                    "accepted {bad}"
                );
            }
            let partitions = r#"{"schemaVersion":1,"topic":"t","topicId":"id","offsets":{"0":1}}"#;
            assert!(minima(&[GOOD.into(), partitions.into()]).is_err());
        }
    }
}
