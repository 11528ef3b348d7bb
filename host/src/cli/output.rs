//! Output a person can review (aligned tables) and output a script can parse (`--json`).

use action_state_cleanup::cleanup::PartitionOffset;
use serde_json::{Value, json};

pub fn print_json(value: &Value) {
    // Serialising a Value cannot fail.
    println!(
        "{}",
        serde_json::to_string_pretty(value).unwrap_or_default()
    );
}

/// Offsets as a JSON object keyed by partition, like the plan file.
pub fn offsets_json(offsets: &[PartitionOffset]) -> Value {
    let map: serde_json::Map<String, Value> = offsets
        .iter()
        .map(|po| (po.partition.to_string(), json!(po.offset)))
        .collect();
    Value::Object(map)
}

/// Java-style rendering `{0=10, 1=20}`, as in the messages.
pub fn offsets_text(offsets: &[PartitionOffset]) -> String {
    let items: Vec<String> = offsets
        .iter()
        .map(|po| format!("{}={}", po.partition, po.offset))
        .collect();
    format!("{{{}}}", items.join(", "))
}

/// A right-aligned table with a header row; columns sized to their widest cell.
pub fn table(header: &[&str], rows: &[Vec<String>]) -> String {
    let mut widths: Vec<usize> = header.iter().map(|h| h.len()).collect();
    for row in rows {
        for (width, cell) in widths.iter_mut().zip(row) {
            *width = (*width).max(cell.len());
        }
    }
    let line = |cells: Vec<&str>| {
        cells
            .iter()
            .zip(&widths)
            .map(|(cell, width)| format!("{cell:>width$}"))
            .collect::<Vec<_>>()
            .join("  ")
    };
    let mut out = line(header.to_vec());
    for row in rows {
        out.push('\n');
        out.push_str(&line(row.iter().map(String::as_str).collect()));
    }
    out
}
