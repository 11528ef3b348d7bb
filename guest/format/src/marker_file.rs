//! Splitting the text of a marker file (or of a paste) into the exact text of each marker, once
//! for every host: the CLI's `--markers` files, the Python API and the browser page all call
//! this through `plans.split-markers`, and then hand each text to the strict marker parser.
//!
//! Accepted shapes:
//! - a JSON array whose elements are marker objects, or strings that each hold one marker's
//!   text (as fixtures' `markers.json` does);
//! - one or more marker objects one after another, separated by whitespace (one marker per
//!   line, as a runtime's log of checkpoint markers is usually kept);
//! - anything else is taken as one marker text, for the marker parser to accept or refuse.
//!
//! The splitter only finds where values begin and end (strings, escapes and nesting); it never
//! reads numbers, so offsets above 2^53 are passed on exactly as written.

use std::borrow::Cow;

use crate::decode;
use crate::error::{CleanupError, Result};
use crate::json;
use crate::json_scan::{skip_space, value_end};
use crate::plan::Plan;
use crate::planning::MarkerPlanner;

/// The marker texts of `text`, in order.
pub fn split_marker_file(text: &str) -> Result<Vec<String>> {
    Ok(marker_texts(text)?
        .into_iter()
        .map(Cow::into_owned)
        .collect())
}

/// `split_marker_file` for the file `name`: a refusal names it.
pub fn split_named_marker_file(name: &str, text: &str) -> Result<Vec<String>> {
    split_marker_file(text).map_err(|error| named(name, error))
}

/// A refusal of a marker file's shape, naming the file.
fn named(name: &str, error: CleanupError) -> CleanupError {
    match error {
        CleanupError::InvalidMarker(why) => {
            CleanupError::InvalidMarker(why.replacen(FILE, &format!("{FILE}{name} "), 1))
        }
        other => other,
    }
}

/// The marker texts of `text`, in order, borrowed from it where they are written out in it (a
/// string element of an array is decoded, so it is owned).
pub fn marker_texts(text: &str) -> Result<Vec<Cow<'_, str>>> {
    let bytes = text.as_bytes();
    let start = skip_space(bytes, 0);
    match bytes.get(start) {
        Some(b'[') => array_elements(text, start),
        Some(b'{') => object_sequence(text, start),
        None => Err(refused("holds no marker (it is empty)".into())),
        Some(_) => Ok(vec![Cow::Borrowed(text)]),
    }
}

/// The plan of the markers of several marker files (SPEC §3), each file split as
/// `split_marker_file` splits it, and how many markers there were. A file's refusal names it.
pub fn plan_from_marker_files(
    recovery_point: &str,
    files: &[(&str, &str)],
) -> Result<(Plan, usize)> {
    let mut planner = MarkerFilesPlanner::new(recovery_point);
    for (name, text) in files {
        planner.add_file(name, text)?;
    }
    planner.finish()
}

/// `plan_from_marker_files` over files handed over one at a time, so that a host can read
/// each file into the same buffer and hand it over, and only one file's text is ever in memory
/// (planning keeps just the running minimum).
///
/// A file that is not a marker file is refused at once, naming it, and that refusal is final:
/// every later call answers it again, as `finish` does. Files are split in order before any
/// marker is planned, so it outranks a refusal of a marker in an earlier file, which waits for
/// `finish` like every other marker or planning refusal.
#[derive(Debug)]
pub struct MarkerFilesPlanner {
    recovery_point: String,
    markers: MarkerPlanner,
    refused: Option<CleanupError>,
}

impl MarkerFilesPlanner {
    pub fn new(recovery_point: &str) -> Self {
        MarkerFilesPlanner {
            recovery_point: recovery_point.to_owned(),
            markers: MarkerPlanner::new(),
            refused: None,
        }
    }

    /// Splits the file `name` and takes its markers.
    pub fn add_file(&mut self, name: &str, text: &str) -> Result<()> {
        if let Some(refused) = &self.refused {
            return Err(refused.clone());
        }
        // The everyday file is one marker. When the fast decoder reads the whole text as one,
        // splitting would give back exactly this text, so it is not scanned a second time.
        let whole = decode::marker_parts(text);
        if whole.is_some() {
            self.markers
                .add_decoded(text, whole, |_| format!("the marker of file {name}"));
            return Ok(());
        }
        match marker_texts(text) {
            Ok(texts) => {
                let count = texts.len();
                for (number, marker) in texts.iter().enumerate() {
                    self.markers
                        .add_labelled(marker, |_| file_label(name, text, marker, number, count));
                }
                Ok(())
            }
            Err(error) => {
                let error = named(name, error);
                self.refused = Some(error.clone());
                Err(error)
            }
        }
    }

    /// The plan of every marker of every file added, and how many markers there were.
    pub fn finish(self) -> Result<(Plan, usize)> {
        if let Some(refused) = self.refused {
            return Err(refused);
        }
        self.markers.finish(&self.recovery_point)
    }
}

/// How a refusal names a marker of a file: the file, and for a file of several markers the
/// marker's number and the line it starts on (when it is written out in the file, not decoded
/// from a JSON string).
fn file_label(name: &str, file: &str, marker: &str, number: usize, count: usize) -> String {
    if count == 1 {
        return format!("the marker of file {name}");
    }
    let start = (marker.as_ptr() as usize).wrapping_sub(file.as_ptr() as usize);
    match file.get(..start) {
        Some(before) if start <= file.len() => format!(
            "marker {} of file {name} (line {})",
            number + 1,
            before.bytes().filter(|&b| b == b'\n').count() + 1
        ),
        _ => format!("marker {} of file {name}", number + 1),
    }
}

/// How every refusal of a marker file begins.
const FILE: &str = "Recovery marker file ";

fn refused(why: String) -> CleanupError {
    CleanupError::InvalidMarker(format!("{FILE}{why}"))
}

fn unterminated(at: usize) -> CleanupError {
    refused(format!(
        "is not valid JSON: the value starting at byte {at} is not closed"
    ))
}

fn array_elements(text: &str, open: usize) -> Result<Vec<Cow<'_, str>>> {
    let bytes = text.as_bytes();
    let mut markers = Vec::new();
    let mut at = skip_space(bytes, open + 1);
    if bytes.get(at) == Some(&b']') {
        return Err(refused("holds an empty array".into()));
    }
    loop {
        match bytes.get(at) {
            None => return Err(unterminated(open)),
            Some(b',' | b']') => {
                return Err(refused(format!(
                    "is not a JSON array of markers: element {} is missing (byte {at})",
                    markers.len() + 1
                )));
            }
            Some(_) => {}
        }
        let end = value_end(bytes, at).ok_or_else(|| unterminated(at))?;
        markers.push(element_text(&text[at..end], markers.len() + 1)?);
        at = skip_space(bytes, end);
        match bytes.get(at) {
            Some(b',') => at = skip_space(bytes, at + 1),
            Some(b']') => break,
            None => return Err(unterminated(open)),
            Some(_) => {
                return Err(refused(format!(
                    "is not a JSON array of markers: expected ',' or ']' after element {} (byte {at})",
                    markers.len()
                )));
            }
        }
    }
    let rest = skip_space(bytes, at + 1);
    if rest != bytes.len() {
        return Err(refused(format!("has text after its array (byte {rest})")));
    }
    Ok(markers)
}

/// An array element: a marker object's text as written, or the text a string element holds.
fn element_text(raw: &str, index: usize) -> Result<Cow<'_, str>> {
    if !raw.starts_with('"') {
        return Ok(Cow::Borrowed(raw));
    }
    match json::parse(raw) {
        Ok(json::Value::String(inner)) => Ok(Cow::Owned(inner)),
        _ => Err(refused(format!(
            "is not a JSON array of markers: element {index} is not a valid JSON string"
        ))),
    }
}

fn object_sequence(text: &str, first: usize) -> Result<Vec<Cow<'_, str>>> {
    let bytes = text.as_bytes();
    let mut markers = Vec::new();
    let mut at = first;
    while at < bytes.len() {
        if bytes[at] != b'{' {
            if markers.len() == 1 {
                // One marker followed by something else: the marker parser says what is wrong.
                return Ok(vec![Cow::Borrowed(text)]);
            }
            return Err(refused(format!(
                "holds something other than a marker object after marker {} (byte {at})",
                markers.len()
            )));
        }
        let end = value_end(bytes, at).ok_or_else(|| unterminated(at))?;
        markers.push(Cow::Borrowed(&text[at..end]));
        at = skip_space(bytes, end);
    }
    if markers.len() == 1 {
        // A single marker keeps its exact text, surrounding whitespace included.
        return Ok(vec![Cow::Borrowed(text)]);
    }
    Ok(markers)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn split(text: &str) -> Vec<String> {
        split_marker_file(text).unwrap()
    }

    fn refusal(text: &str) -> String {
        split_marker_file(text).unwrap_err().to_string()
    }

    #[test]
    fn a_named_file_is_split_alike_and_named_in_its_refusal() {
        assert_eq!(
            split_named_marker_file("m.json", "{\"a\":1}\n{\"b\":2}").unwrap(),
            split("{\"a\":1}\n{\"b\":2}")
        );
        assert_eq!(
            split_named_marker_file("dir/m.json", "[]")
                .unwrap_err()
                .to_string(),
            "Recovery marker file dir/m.json holds an empty array"
        );
    }

    #[test]
    fn an_array_gives_each_element_exactly_as_written() {
        let text = "[ {\"a\": 18446744073709551615, \"s\": \"x]}\\\"\"} ,\n{\"b\":[1,{}]}]\n";
        assert_eq!(
            split(text),
            [
                "{\"a\": 18446744073709551615, \"s\": \"x]}\\\"\"}",
                "{\"b\":[1,{}]}"
            ]
        );
    }

    #[test]
    fn string_elements_give_the_marker_text_they_hold() {
        assert_eq!(
            split("[\"{\\\"topic\\\":\\\"t\\\"}\", {\"x\":1}]"),
            ["{\"topic\":\"t\"}", "{\"x\":1}"]
        );
    }

    #[test]
    fn markers_one_per_line_are_split_and_a_single_marker_keeps_its_text() {
        assert_eq!(
            split("{\"a\":1}\n{\"b\":2}\n\n{\"c\":{}}"),
            ["{\"a\":1}", "{\"b\":2}", "{\"c\":{}}"]
        );
        assert_eq!(split("  {\"a\":1}\n"), ["  {\"a\":1}\n"]);
        // Not JSON at all: one text, for the marker parser to refuse with its own message.
        assert_eq!(split("schemaVersion=1"), ["schemaVersion=1"]);
        assert_eq!(split("{\"a\":1} trailing"), ["{\"a\":1} trailing"]);
    }

    #[test]
    fn malformed_arrays_are_refused_naming_where() {
        assert_eq!(refusal("[]"), "Recovery marker file holds an empty array");
        assert_eq!(
            refusal(" \n "),
            "Recovery marker file holds no marker (it is empty)"
        );
        assert!(refusal("[{\"a\":1},]").contains("element 2 is missing"));
        assert!(refusal("[,{}]").contains("element 1 is missing"));
        assert!(refusal("[{\"a\":1} {\"b\":2}]").contains("expected ',' or ']' after element 1"));
        assert!(refusal("[{\"a\":1}").contains("is not closed"));
        assert!(refusal("[{\"a\":\"1}]").contains("is not closed"));
        assert!(refusal("[{}] x").contains("text after its array"));
        assert!(refusal("[\"\\x\"]").contains("element 1 is not a valid JSON string"));
        assert!(refusal("{\"a\":1}\n{\"b\":2}\nx").contains("after marker 2"));
    }

    #[test]
    fn the_eight_byte_scan_finds_every_kind_of_end_at_every_alignment() {
        // Each structural byte and each string end at every position within a word, with the
        // word boundary both before and after it.
        for pad in 0..17 {
            let digits = "7".repeat(pad);
            for inner in ["[1]", "{}", "\"s\"", "\"a\\\"b\"", "\"\\\\\""] {
                let element = format!("{{\"k{digits}\":{digits}0,\"v\":{inner}}}");
                let text = format!("[{element}, {element}]");
                assert_eq!(split(&text), [element.clone(), element], "{text}");
            }
        }
    }

    fn marker(offset: u64) -> String {
        format!(
            "{{\"schemaVersion\":1,\"topic\":\"t\",\"topicId\":\"q7Zg3bR0Tn2lW1aVbXkJdQ\",\
             \"offsets\":{{\"0\":{offset},\"1\":9}}}}"
        )
    }

    #[test]
    fn marker_files_plan_like_their_split_markers_and_count_them() {
        let one = marker(5);
        let two = format!("[{}, {}]", marker(3), marker(8));
        let (plan, count) =
            plan_from_marker_files("chk-1", &[("a.json", &one), ("b.json", &two)]).unwrap();
        let mut texts = split(&one);
        texts.extend(split(&two));
        assert_eq!(
            plan,
            crate::planning::plan_from_marker_texts("chk-1", &texts).unwrap()
        );
        assert_eq!(count, 3);
    }

    #[test]
    fn a_later_file_that_is_not_a_marker_file_outranks_an_earlier_bad_marker() {
        // As if every file were split before any marker is read.
        let mut planner = MarkerFilesPlanner::new("chk-1");
        planner.add_file("a.json", "{\"x\":1}").unwrap();
        let refused = planner.add_file("b.json", "[]").unwrap_err();
        assert_eq!(
            refused.to_string(),
            "Recovery marker file b.json holds an empty array"
        );
        // The refusal is final: a good file afterwards changes nothing.
        assert_eq!(planner.add_file("c.json", &marker(1)).unwrap_err(), refused);
        assert_eq!(planner.finish().unwrap_err(), refused);
        // Without the bad file, the bad marker is what `finish` reports.
        let mut planner = MarkerFilesPlanner::new("chk-1");
        planner.add_file("a.json", "{\"x\":1}").unwrap();
        planner.add_file("c.json", &marker(1)).unwrap();
        let error = planner.finish().unwrap_err().to_string();
        assert!(error.starts_with("the marker of file a.json:"), "{error}");
    }

    #[test]
    fn files_handed_over_one_at_a_time_plan_like_all_at_once() {
        let files = [
            ("a.json", marker(5)),
            ("b.json", format!("[{}, {}]", marker(3), marker(8))),
            ("c.json", format!("{}\n{}\n", marker(9), marker(4))),
        ];
        let mut planner = MarkerFilesPlanner::new("chk-1");
        for (name, text) in &files {
            planner.add_file(name, text).unwrap();
        }
        let borrowed: Vec<(&str, &str)> = files.iter().map(|(n, t)| (*n, t.as_str())).collect();
        let (plan, count) = planner.finish().unwrap();
        assert_eq!(count, 5);
        assert_eq!(
            (plan.clone(), count),
            plan_from_marker_files("chk-1", &borrowed).unwrap()
        );
        assert_eq!(plan.offsets.to_string(), "{0=3, 1=9}");
    }

    #[test]
    fn a_marker_files_refusal_names_the_file() {
        let error =
            plan_from_marker_files("chk-1", &[("a.json", &marker(1)), ("dir/b.json", "[]")])
                .unwrap_err();
        assert_eq!(
            error.to_string(),
            "Recovery marker file dir/b.json holds an empty array"
        );
        let planning = plan_from_marker_files("chk-1", &[("a.json", "{\"x\":1}")]).unwrap_err();
        assert!(
            planning
                .to_string()
                .starts_with("the marker of file a.json:"),
            "{planning}"
        );
        // In a file of several markers, a refusal names the marker's number and line.
        let lines = format!("{}\n{}\n", marker(1), "{\"x\":1}");
        let planning = plan_from_marker_files("chk-1", &[("c.json", &lines)]).unwrap_err();
        assert!(
            planning
                .to_string()
                .starts_with("marker 2 of file c.json (line 2):"),
            "{planning}"
        );
    }

    #[test]
    fn deep_nesting_needs_no_recursion() {
        let deep = format!("[{}{}]", "[".repeat(1_000_000), "]".repeat(1_000_000));
        assert_eq!(split_marker_file(&deep).unwrap().len(), 1);
    }
}
