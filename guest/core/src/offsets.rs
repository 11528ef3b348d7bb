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

    pub fn iter(&self) -> impl Iterator<Item = (u32, u64)> + '_ {
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
        for (partition, offset) in self.iter() {
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

/// Largest offset a Kafka partition can hold (Java `long`), and so the largest we accept.
pub const MAX_OFFSET: u64 = i64::MAX as u64;
/// Largest partition number Kafka can address (Java `int`).
pub const MAX_PARTITION: u32 = i32::MAX as u32;
