//! Per-partition offset maps: markers, plans and boundaries all share this shape.

use std::collections::BTreeMap;
use std::fmt;

/// Offsets keyed by partition, always iterated in ascending numeric partition order.
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash)]
pub struct PartitionOffsets(pub BTreeMap<u32, u64>);

impl PartitionOffsets {
    pub fn new() -> Self {
        Self::default()
    }

    pub fn get(&self, partition: u32) -> Option<u64> {
        self.0.get(&partition).copied()
    }

    pub fn insert(&mut self, partition: u32, offset: u64) {
        self.0.insert(partition, offset);
    }

    pub fn len(&self) -> usize {
        self.0.len()
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    pub fn iter(&self) -> impl Iterator<Item = (u32, u64)> + Clone + '_ {
        self.0.iter().map(|(p, o)| (*p, *o))
    }

    pub fn partitions(&self) -> Vec<u32> {
        self.0.keys().copied().collect()
    }

    pub fn same_partitions(&self, other: &PartitionOffsets) -> bool {
        self.0.len() == other.0.len() && self.0.keys().eq(other.0.keys())
    }

    pub fn has_partitions(&self, partitions: &[u32]) -> bool {
        self.0.len() == partitions.len() && self.0.keys().eq(partitions.iter())
    }

    /// Refuses what the strict parser refuses (offsets above [`MAX_OFFSET`], partitions above
    /// [`MAX_PARTITION`]), with the parser's messages, so a value built from parts can always be
    /// written and read back. Per partition the offset is checked first, as the parser does.
    pub fn check_ranges(&self, subject: &str) -> Result<(), String> {
        check_ranges(self.iter(), subject)
    }
}

/// [`PartitionOffsets::check_ranges`] over offsets in any form. (Never inlined: see
/// `plan::checked_id`.)
#[inline(never)]
pub(crate) fn check_ranges(
    offsets: impl Iterator<Item = (u32, u64)>,
    subject: &str,
) -> Result<(), String> {
    for (partition, offset) in offsets {
        if offset > MAX_OFFSET {
            return Err(format!(
                "{subject} offset for partition {partition} must be an integer between 0 and {MAX_OFFSET}, but was {offset}"
            ));
        }
        if partition > MAX_PARTITION {
            return Err(format!(
                "{subject} partition {partition} is larger than the largest Kafka partition {MAX_PARTITION}"
            ));
        }
    }
    Ok(())
}

impl FromIterator<(u32, u64)> for PartitionOffsets {
    fn from_iter<I: IntoIterator<Item = (u32, u64)>>(iter: I) -> Self {
        PartitionOffsets(iter.into_iter().collect())
    }
}

/// Java's map rendering, which operators know from the Java tool: `{0=10, 1=20}`.
impl fmt::Display for PartitionOffsets {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("{")?;
        for (i, (partition, offset)) in self.iter().enumerate() {
            if i > 0 {
                f.write_str(", ")?;
            }
            write!(f, "{partition}={offset}")?;
        }
        f.write_str("}")
    }
}

/// Java's set rendering: `[0, 1, 2]`.
pub fn format_partitions(partitions: &[u32]) -> String {
    let items: Vec<String> = partitions.iter().map(u32::to_string).collect();
    format!("[{}]", items.join(", "))
}

/// How many partitions a message lists one by one; a longer list or map is summarised, so
/// that a sentence about a 10,000-partition topic stays a sentence.
pub const LISTED_PARTITIONS: usize = 20;
/// How many entries a summarised list still shows at each end.
const SHOWN_AT_EACH_END: usize = 3;

/// `format_partitions` for up to `LISTED_PARTITIONS` partitions; a longer list as its first and
/// last few and its size: `[0, 1, 2, …, 9997, 9998, 9999] (10000 partitions)`.
pub fn brief_partitions(partitions: &[u32]) -> String {
    if partitions.len() <= LISTED_PARTITIONS {
        return format_partitions(partitions);
    }
    let ends = |items: &[u32]| {
        items
            .iter()
            .map(u32::to_string)
            .collect::<Vec<_>>()
            .join(", ")
    };
    format!(
        "[{}, …, {}] ({} partitions)",
        ends(&partitions[..SHOWN_AT_EACH_END]),
        ends(&partitions[partitions.len() - SHOWN_AT_EACH_END..]),
        partitions.len()
    )
}

/// What tells two partition sets apart, for a message about wide ones (where the lists
/// themselves are summarised): `; only in the first: 10000, 10001; only in the second: none`.
/// Empty when both lists are short enough to be read whole.
pub fn partition_difference(first: &[u32], second: &[u32]) -> String {
    if first.len() <= LISTED_PARTITIONS && second.len() <= LISTED_PARTITIONS {
        return String::new();
    }
    let only = |a: &[u32], b: &[u32]| {
        let b: std::collections::BTreeSet<u32> = b.iter().copied().collect();
        let missing: Vec<u32> = a.iter().copied().filter(|p| !b.contains(p)).collect();
        match missing.len() {
            0 => "none".to_owned(),
            n if n <= LISTED_PARTITIONS => missing
                .iter()
                .map(u32::to_string)
                .collect::<Vec<_>>()
                .join(", "),
            n => format!("{} partitions, {}", n, brief_partitions(&missing)),
        }
    };
    format!(
        "; only in the first: {}; only in the second: {}",
        only(first, second),
        only(second, first)
    )
}

impl PartitionOffsets {
    /// The Java map rendering (`Display`) for up to `LISTED_PARTITIONS` partitions; a longer
    /// map as its first entries, its size and the span of its offsets:
    /// `{0=10, 1=11, 2=12, …} (10000 partitions, offsets 10..16)`.
    pub fn brief(&self) -> String {
        if self.len() <= LISTED_PARTITIONS {
            return self.to_string();
        }
        let first: Vec<String> = self
            .iter()
            .take(SHOWN_AT_EACH_END)
            .map(|(p, o)| format!("{p}={o}"))
            .collect();
        let (low, high) = self
            .iter()
            .fold((u64::MAX, 0), |(lo, hi), (_, o)| (lo.min(o), hi.max(o)));
        format!(
            "{{{}, …}} ({} partitions, offsets {low}..{high})",
            first.join(", "),
            self.len()
        )
    }
}

/// Largest offset a Kafka partition can hold (Java `long`), and so the largest we accept.
pub const MAX_OFFSET: u64 = i64::MAX as u64;
/// Largest partition number Kafka can address (Java `int`).
pub const MAX_PARTITION: u32 = i32::MAX as u32;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn long_lists_and_maps_are_summarised_and_short_ones_print_as_java_does() {
        let wide: Vec<u32> = (0..10_000).collect();
        assert_eq!(brief_partitions(&[0, 1]), "[0, 1]");
        assert_eq!(
            brief_partitions(&wide),
            "[0, 1, 2, …, 9997, 9998, 9999] (10000 partitions)"
        );
        let offsets: PartitionOffsets = (0..10_000).map(|p| (p, 10 + u64::from(p % 7))).collect();
        assert_eq!(
            offsets.brief(),
            "{0=10, 1=11, 2=12, …} (10000 partitions, offsets 10..16)"
        );
        let short: PartitionOffsets = [(0, 5)].into_iter().collect();
        assert_eq!(short.brief(), "{0=5}");
        let more: Vec<u32> = (0..10_002).collect();
        assert_eq!(
            partition_difference(&wide, &more),
            "; only in the first: none; only in the second: 10000, 10001"
        );
        assert_eq!(partition_difference(&[0], &[1]), "");
    }
}
