//! Samples, A/B alternation and the formatting of times and rates.

use std::time::Instant;

use crate::R;

/// Which side of an A/B comparison runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Side {
    A,
    B,
}

/// One measurement: its total time in seconds plus named phases (also seconds).
#[derive(Debug, Clone, Default)]
pub struct Timing {
    pub total: f64,
    pub phases: Vec<(&'static str, f64)>,
}

impl Timing {
    pub fn total(total: f64) -> Self {
        Timing {
            total,
            phases: Vec::new(),
        }
    }
}

/// Times phases one after another: `lap` closes the phase that started at the previous lap.
pub struct Laps {
    started: Instant,
    last: Instant,
    phases: Vec<(&'static str, f64)>,
}

impl Laps {
    pub fn start() -> Self {
        let now = Instant::now();
        Laps {
            started: now,
            last: now,
            phases: Vec::new(),
        }
    }

    pub fn lap(&mut self, name: &'static str) {
        let now = Instant::now();
        self.phases.push((name, (now - self.last).as_secs_f64()));
        self.last = now;
    }

    pub fn finish(self) -> Timing {
        Timing {
            total: self.started.elapsed().as_secs_f64(),
            phases: self.phases,
        }
    }
}

/// The samples of one side.
#[derive(Debug, Clone, Default)]
pub struct Samples(pub Vec<Timing>);

impl Samples {
    fn totals(&self) -> Vec<f64> {
        self.0.iter().map(|t| t.total).collect()
    }

    pub fn median(&self) -> f64 {
        median(&self.totals())
    }

    pub fn min(&self) -> f64 {
        self.totals().into_iter().fold(f64::INFINITY, f64::min)
    }

    pub fn max(&self) -> f64 {
        self.totals().into_iter().fold(0.0, f64::max)
    }

    /// Median of one named phase over every sample that has it.
    pub fn phase_median(&self, name: &str) -> Option<f64> {
        let values: Vec<f64> = self
            .0
            .iter()
            .flat_map(|t| t.phases.iter().filter(|(n, _)| *n == name).map(|(_, v)| *v))
            .collect();
        (!values.is_empty()).then(|| median(&values))
    }

    /// Phase names in first-seen order.
    pub fn phase_names(&self) -> Vec<&'static str> {
        let mut names: Vec<&'static str> = Vec::new();
        for timing in &self.0 {
            for (name, _) in &timing.phases {
                if !names.contains(name) {
                    names.push(name);
                }
            }
        }
        names
    }

    /// "median (min–max)" of the totals.
    pub fn summary(&self) -> String {
        format!(
            "{} ({}–{})",
            dur(self.median()),
            dur(self.min()),
            dur(self.max())
        )
    }

    /// The same for a rate: `amount` per second of each sample (higher is better).
    pub fn rate_summary(&self, amount: f64, unit: &str) -> String {
        let rates: Vec<f64> = self.totals().iter().map(|t| amount / t).collect();
        let lo = rates.iter().copied().fold(f64::INFINITY, f64::min);
        let hi = rates.iter().copied().fold(0.0, f64::max);
        format!("{} ({}–{}) {unit}", num(median(&rates)), num(lo), num(hi))
    }

    pub fn rate_median(&self, amount: f64) -> f64 {
        let rates: Vec<f64> = self.totals().iter().map(|t| amount / t).collect();
        median(&rates)
    }
}

/// Both sides of one comparison.
#[derive(Debug, Clone, Default)]
pub struct Ab {
    pub a: Samples,
    pub b: Samples,
}

impl Ab {
    /// median(B) / median(A) of the times.
    pub fn ratio(&self) -> f64 {
        self.b.median() / self.a.median()
    }
}

/// Runs `rounds` rounds of A and B, alternating which goes first (AB, BA, AB, …) so that drift
/// (caches, a busy neighbour) falls on both sides. `warmup` runs each side once, unrecorded.
pub fn alternate(
    rounds: usize,
    warmup: bool,
    mut run: impl FnMut(Side, usize) -> R<Timing>,
) -> R<Ab> {
    if warmup {
        run(Side::A, usize::MAX)?;
        run(Side::B, usize::MAX)?;
    }
    let mut ab = Ab::default();
    for round in 0..rounds {
        let order = if round % 2 == 0 {
            [Side::A, Side::B]
        } else {
            [Side::B, Side::A]
        };
        for side in order {
            let timing = run(side, round)?;
            match side {
                Side::A => ab.a.0.push(timing),
                Side::B => ab.b.0.push(timing),
            }
        }
    }
    Ok(ab)
}

pub fn median(values: &[f64]) -> f64 {
    if values.is_empty() {
        return f64::NAN;
    }
    let mut sorted = values.to_vec();
    sorted.sort_by(f64::total_cmp);
    let mid = sorted.len() / 2;
    if sorted.len() % 2 == 1 {
        sorted[mid]
    } else {
        (sorted[mid - 1] + sorted[mid]) / 2.0
    }
}

/// A duration in seconds with a readable unit.
pub fn dur(seconds: f64) -> String {
    if !seconds.is_finite() {
        return "n/a".into();
    }
    let us = seconds * 1e6;
    if us < 1.0 {
        format!("{:.0} ns", us * 1000.0)
    } else if us < 100.0 {
        format!("{us:.1} µs")
    } else if us < 1000.0 {
        format!("{us:.0} µs")
    } else if us < 100_000.0 {
        format!("{:.2} ms", us / 1000.0)
    } else if us < 10_000_000.0 {
        format!("{:.0} ms", us / 1000.0)
    } else {
        format!("{:.1} s", seconds)
    }
}

/// A number with thousands separators (no decimals above 100).
pub fn num(value: f64) -> String {
    if !value.is_finite() {
        return "n/a".into();
    }
    if value.abs() < 100.0 {
        return format!("{value:.2}");
    }
    let digits = format!("{:.0}", value.abs());
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i) % 3 == 0 {
            out.push(',');
        }
        out.push(c);
    }
    if value < 0.0 { format!("-{out}") } else { out }
}

pub fn ratio(value: f64) -> String {
    if !value.is_finite() {
        "n/a".into()
    } else if value < 0.1 {
        format!("{value:.4}× (1/{:.0})", 1.0 / value)
    } else {
        format!("{value:.2}×")
    }
}

pub fn mib(bytes: f64) -> f64 {
    bytes / (1024.0 * 1024.0)
}
