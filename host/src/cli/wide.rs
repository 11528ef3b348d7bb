//! Per-partition output that still reads at thousands of partitions: a table of more than
//! `FULL_ROWS` rows is summarised (partition count, totals, the span of each offset column, the
//! partitions that differ from the boundary) and shows its first `FIRST_ROWS` rows; `--all`
//! prints every row, and `--json` always has every field of every row.

use action_state_cleanup::cleanup::PartitionOffset;

use super::output::{offsets_text, table};

/// Tables and offset maps up to this many partitions are printed whole, as they always were.
pub const FULL_ROWS: usize = 20;
/// How many rows a summarised table still shows.
pub const FIRST_ROWS: usize = 10;
/// How many partitions a summary line names before it counts the rest.
const NAMED: usize = 5;

/// Whether `rows` partitions are printed whole: asked for (`--all`) or few enough.
pub fn whole(rows: usize, all: bool) -> bool {
    all || rows <= FULL_ROWS
}

/// A table of every row, or of the first rows and a line saying how many are left out.
pub fn rows_table(header: &[&str], rows: &[Vec<String>], all: bool) -> String {
    if whole(rows.len(), all) {
        return table(header, rows);
    }
    format!(
        "{}\n{}",
        table(header, &rows[..FIRST_ROWS]),
        more_rows(rows.len() - FIRST_ROWS)
    )
}

/// The line under a summarised table.
pub fn more_rows(left_out: usize) -> String {
    format!(
        "… and {} more partitions (--all prints every row; --json has every field)",
        count(left_out as u64)
    )
}

/// `10` when every value is 10, `10..16` for a span, `-` for none.
pub fn span(values: impl IntoIterator<Item = u64>) -> String {
    let mut bounds: Option<(u64, u64)> = None;
    for value in values {
        bounds = Some(bounds.map_or((value, value), |(lo, hi)| (lo.min(value), hi.max(value))));
    }
    match bounds {
        None => "-".into(),
        Some((lo, hi)) if lo == hi => lo.to_string(),
        Some((lo, hi)) => format!("{lo}..{hi}"),
    }
}

/// A number with thousands separators: `10,000`.
pub fn count(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3);
    for (i, digit) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(digit);
    }
    out
}

/// A number of records in a sentence: "1 record", "0 records", "1800 records".
pub fn records(n: u64) -> String {
    noun(n, n.to_string())
}

/// `records` with thousands separators, for the summaries of wide topics ("12,000 records").
pub fn counted_records(n: u64) -> String {
    noun(n, count(n))
}

fn noun(n: u64, shown: String) -> String {
    if n == 1 {
        format!("{shown} record")
    } else {
        format!("{shown} records")
    }
}

/// An offset map as the Java tool prints it (`{0=10, 1=20}`) when it is short or `--all` asks,
/// else its size, its span and its first entries.
pub fn offsets_brief(offsets: &[PartitionOffset], all: bool) -> String {
    if whole(offsets.len(), all) {
        return offsets_text(offsets);
    }
    let first: Vec<String> = offsets
        .iter()
        .take(NAMED)
        .map(|po| format!("{}={}", po.partition, po.offset))
        .collect();
    format!(
        "{} partitions at offsets {} ({{{}, …}}; --all prints every partition)",
        count(offsets.len() as u64),
        span(offsets.iter().map(|po| po.offset)),
        first.join(", ")
    )
}

/// `words` followed by the offsets: `boundary {0=10, 1=20}` for a short map, `boundary: 10,000
/// partitions at offsets 10..16 (…)` for a wide one.
pub fn labelled_offsets(words: &str, offsets: &[PartitionOffset], all: bool) -> String {
    let separator = if whole(offsets.len(), all) { " " } else { ": " };
    format!("{words}{separator}{}", offsets_brief(offsets, all))
}

/// The first few of `items`, each as `show` writes it, and how many more there are:
/// `0 (begins at 5), 3 (begins at 7) and 12 more`.
pub fn named<T>(items: &[T], show: impl Fn(&T) -> String) -> String {
    let mut text = items
        .iter()
        .take(NAMED)
        .map(show)
        .collect::<Vec<_>>()
        .join(", ");
    if items.len() > NAMED {
        text.push_str(&format!(
            " and {} more",
            count((items.len() - NAMED) as u64)
        ));
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    fn offsets(n: u32) -> Vec<PartitionOffset> {
        (0..n)
            .map(|partition| PartitionOffset {
                partition,
                offset: 10 + u64::from(partition % 7),
            })
            .collect()
    }

    #[test]
    fn few_partitions_print_as_before_and_many_are_summarised() {
        assert_eq!(offsets_brief(&offsets(2), false), "{0=10, 1=11}");
        assert_eq!(
            offsets_brief(&offsets(10_000), false),
            "10,000 partitions at offsets 10..16 ({0=10, 1=11, 2=12, 3=13, 4=14, …}; --all prints every partition)"
        );
        assert_eq!(offsets_brief(&offsets(30), true).matches('=').count(), 30);
        let rows: Vec<Vec<String>> = (0..25).map(|p| vec![p.to_string()]).collect();
        let text = rows_table(&["partition"], &rows, false);
        assert_eq!(text.lines().count(), 1 + FIRST_ROWS + 1, "{text}");
        assert!(text.ends_with(
            "… and 15 more partitions (--all prints every row; --json has every field)"
        ));
        assert_eq!(rows_table(&["partition"], &rows, true).lines().count(), 26);
    }

    #[test]
    fn spans_counts_and_names_read_at_a_glance() {
        assert_eq!(span([3, 1, 2]), "1..3");
        assert_eq!(span([4, 4]), "4");
        assert_eq!(span([]), "-");
        assert_eq!(count(10_000), "10,000");
        assert_eq!(count(999), "999");
        assert_eq!(count(1_234_567), "1,234,567");
        let items: Vec<u32> = (0..8).collect();
        assert_eq!(named(&items, u32::to_string), "0, 1, 2, 3, 4 and 3 more");
        assert_eq!(named(&items[..2], u32::to_string), "0, 1");
    }
}
