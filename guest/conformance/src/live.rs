//! Checks against a live broker: every capability's semantics on topics the suite creates.

use crate::bindings::action_state::cleanup::types::{KafkaError, PartitionOffset};
use crate::bindings::action_state::cleanup::{clock, kafka_admin, kafka_consumer, kafka_writer};
use crate::{Checks, case};
use kafka_admin::{ConfigEntry, OffsetSpec};

const POLICY: &str = "cleanup.policy";
const UNKNOWN_NAME: &str = "no.such.config.name";
const DEFAULT_REPLICATION_FACTOR: &str = "default.replication.factor";

fn po(partition: u32, offset: u64) -> PartitionOffset {
    PartitionOffset { partition, offset }
}

fn pairs(offsets: &[PartitionOffset]) -> Vec<(u32, u64)> {
    offsets.iter().map(|p| (p.partition, p.offset)).collect()
}

/// Repeats `probe` until it returns `Some` or the operation timeout passes (creation and
/// transaction markers propagate asynchronously; the component waits the same way).
fn eventually<T>(probe: impl FnMut() -> Option<T>) -> Option<T> {
    crate::within(u64::from(clock::operation_timeout_ms()), probe)
}

/// One record of a poll, decoded from the batch's columns as the WIT documents them.
#[derive(Debug)]
struct Row {
    partition: u32,
    offset: u64,
    has_key: bool,
    has_value: bool,
    utf8: bool,
    key: Option<String>,
    value: Option<String>,
    /// -1 when the record has none (and in a poll without data).
    timestamp: i64,
}

/// The bits of `polled-batch.flags`, as the WIT defines them.
const HAS_KEY: u8 = 1;
const HAS_VALUE: u8 = 2;
const UTF8: u8 = 4;

/// Polls and decodes the answer's columns into rows. A batch that breaks the WIT's shape rules
/// (columns of different lengths, texts without `with-data` or missing with it, unknown flag
/// bits) is recorded in `shape` and read as no records.
fn poll_rows(
    consumer: &kafka_consumer::Consumer,
    with_data: bool,
    shape: &mut Vec<String>,
) -> Result<Vec<Row>, KafkaError> {
    let batch = consumer.poll(10, 200, with_data)?;
    let n = batch.partitions.len();
    let texts = if with_data { n } else { 0 };
    let lengths = [
        batch.offsets.len(),
        batch.flags.len(),
        batch.keys.len(),
        batch.values.len(),
        batch.timestamps.len(),
    ];
    if lengths != [n, n, texts, texts, texts] {
        shape.push(format!(
            "with-data {with_data}: {n} partitions but offsets, flags, keys, values, timestamps {lengths:?}"
        ));
        return Ok(Vec::new());
    }
    if let Some(flags) = batch
        .flags
        .iter()
        .find(|f| **f & !(HAS_KEY | HAS_VALUE | UTF8) != 0)
    {
        shape.push(format!("unknown flag bits in {flags}"));
        return Ok(Vec::new());
    }
    let mut keys = batch.keys.into_iter();
    let mut values = batch.values.into_iter();
    let mut timestamps = batch.timestamps.into_iter();
    Ok((0..n)
        .map(|i| {
            let flags = batch.flags[i];
            Row {
                partition: batch.partitions[i],
                offset: batch.offsets[i],
                has_key: flags & HAS_KEY != 0,
                has_value: flags & HAS_VALUE != 0,
                utf8: flags & UTF8 != 0,
                key: keys.next().flatten(),
                value: values.next().flatten(),
                timestamp: timestamps.next().unwrap_or(-1),
            }
        })
        .collect())
}

fn metadata(topic: &str, names: &[String], offsets: bool) -> Option<kafka_admin::TopicMetadata> {
    kafka_admin::describe(&[topic.to_owned()], names, offsets)
        .ok()?
        .into_iter()
        .next()
        .flatten()
}

pub fn run(checks: &mut Checks, prefix: &str) {
    let data = format!("{prefix}data");
    let control = format!("{prefix}control");
    let missing = format!("{prefix}missing");

    // A missing topic is an answer for describe, an error elsewhere.
    let described = kafka_admin::describe(std::slice::from_ref(&missing), &[], true);
    checks.check(
        "describe answers none for a topic that does not exist",
        matches!(&described, Ok(a) if a.len() == 1 && a[0].is_none()),
        || format!("got {described:?}"),
    );
    let listed = kafka_admin::list_offsets(&missing, &[0], OffsetSpec::Latest);
    checks.expect_error(
        "list-offsets of a missing topic fails with unknown-topic",
        &listed,
        &["unknown-topic"],
    );

    // Creation, and creating again.
    let configs = [ConfigEntry {
        name: POLICY.into(),
        value: Some("compact,delete".into()),
    }];
    let created = kafka_admin::create_topic(&data, 2, 1, &configs);
    checks.check(
        "create-topic answers true for a new topic",
        matches!(created, Ok(true)),
        || format!("got {created:?}"),
    );
    let again = kafka_admin::create_topic(&data, 2, 1, &configs);
    checks.check(
        "create-topic answers false for an existing topic",
        matches!(again, Ok(false)),
        || format!("got {again:?}"),
    );
    let invalid = [ConfigEntry {
        name: POLICY.into(),
        value: Some("no-such-policy".into()),
    }];
    let refused = kafka_admin::create_topic(&format!("{prefix}invalid"), 1, 1, &invalid);
    checks.expect_error(
        "create-topic with an invalid configuration fails with policy-violation",
        &refused,
        &["policy-violation"],
    );
    let created = kafka_admin::create_topic(
        &control,
        1,
        1,
        &[ConfigEntry {
            name: POLICY.into(),
            value: Some("compact".into()),
        }],
    );
    checks.check(
        "create-topic creates the single-partition topic",
        matches!(created, Ok(true)),
        || format!("got {created:?}"),
    );

    // Metadata: ID, partitions, configs in order, offsets.
    let names = [UNKNOWN_NAME.to_owned(), POLICY.to_owned()];
    let seen = eventually(|| metadata(&data, &names, true).filter(|m| m.partitions.len() == 2));
    let Some(meta) = seen else {
        checks.check(
            "a created topic appears in describe with its partitions",
            false,
            || format!("{data} did not appear with 2 partitions within the operation timeout"),
        );
        return;
    };
    // The all-zero ID is what a client gets that asks for metadata without topic IDs (or a
    // broker before Kafka 2.8): well-formed, and no identity at all.
    let id_ok = meta.topic_id.len() == 22
        && meta
            .topic_id
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
        && meta.topic_id.bytes().any(|b| b != b'A');
    checks.check(
        "describe gives the topic's own ID as 22 characters of URL-safe base64, not the all-zero ID",
        id_ok,
        || format!("got {:?}", meta.topic_id),
    );
    checks.check(
        "describe lists the partitions ascending",
        meta.partitions == [0, 1],
        || format!("got {:?}", meta.partitions),
    );
    let configs: Vec<(&str, Option<&str>)> = meta
        .configs
        .iter()
        .map(|c| (c.name.as_str(), c.value.as_deref()))
        .collect();
    checks.check(
        "describe answers every requested config name in order, none for an unknown name",
        configs == [(UNKNOWN_NAME, None), (POLICY, Some("compact,delete"))],
        || format!("got {configs:?}"),
    );
    let ranges: Vec<(u32, u64, u64)> = meta
        .offsets
        .iter()
        .map(|r| (r.partition, r.beginning, r.end))
        .collect();
    checks.check(
        "describe with offsets gives every partition's range",
        ranges == [(0, 0, 0), (1, 0, 0)],
        || format!("got {ranges:?}"),
    );
    let plain = metadata(&data, &[], false);
    checks.check(
        "describe without offsets or names answers no offsets and no configs",
        plain
            .as_ref()
            .is_some_and(|m| m.offsets.is_empty() && m.configs.is_empty()),
        || format!("got {plain:?}"),
    );
    // Every topic of the suite is created with one replica per partition.
    checks.check(
        "describe gives the replication factor a topic was created with",
        meta.replication_factor == 1 && plain.as_ref().is_some_and(|m| m.replication_factor == 1),
        || {
            format!(
                "got {} (and {:?} without offsets)",
                meta.replication_factor,
                plain.as_ref().map(|m| m.replication_factor)
            )
        },
    );

    cluster(checks);

    idempotent_writes(checks, &data);
    transactional_writes(checks, prefix, &control);
    consumer_reads(checks, &data, &control);
    deletion(checks, &data);
}

/// The cluster's brokers and one broker's configuration, as the component reads them to choose
/// a control topic's replication.
fn cluster(checks: &mut Checks) {
    let names = [
        UNKNOWN_NAME.to_owned(),
        DEFAULT_REPLICATION_FACTOR.to_owned(),
    ];
    let described = kafka_admin::describe_cluster(&names);
    let Ok(cluster) = described else {
        checks.check("describe-cluster answers on a live broker", false, || {
            format!("got {described:?}")
        });
        return;
    };
    checks.check(
        "describe-cluster lists the brokers, at least one, ascending and without duplicates",
        !cluster.brokers.is_empty() && cluster.brokers.windows(2).all(|w| w[0] < w[1]),
        || format!("got {:?}", cluster.brokers),
    );
    let configs: Vec<(&str, Option<&str>)> = cluster
        .configs
        .iter()
        .map(|c| (c.name.as_str(), c.value.as_deref()))
        .collect();
    let factor = configs
        .get(1)
        .and_then(|(_, v)| v.as_ref())
        .and_then(|v| v.parse::<u16>().ok());
    checks.check(
        "describe-cluster answers every requested broker config name in order, none for an \
         unknown name and default.replication.factor as a number of at least 1",
        configs.len() == 2
            && configs[0] == (UNKNOWN_NAME, None)
            && configs[1].0 == DEFAULT_REPLICATION_FACTOR
            && factor.is_some_and(|f| f >= 1),
        || format!("got {configs:?}"),
    );
    let plain = kafka_admin::describe_cluster(&[]);
    checks.check(
        "describe-cluster without names answers the same brokers and no configs",
        matches!(&plain, Ok(p) if p.brokers == cluster.brokers && p.configs.is_empty()),
        || format!("got {plain:?}"),
    );
}

fn idempotent_writes(checks: &mut Checks, data: &str) {
    let writer = match kafka_writer::Writer::open(None) {
        Ok(writer) => writer,
        Err(error) => {
            checks.check("an idempotent writer opens", false, || format!("{error:?}"));
            return;
        }
    };
    let first = writer.append(data, 0, "k0", "v0");
    let second = writer.append(data, 0, "k1", "v1");
    checks.check(
        "idempotent appends return consecutive offsets from 0",
        matches!((&first, &second), (Ok(0), Ok(1))),
        || format!("got {first:?} and {second:?}"),
    );
    let ends = kafka_admin::list_offsets(data, &[0, 1], OffsetSpec::Latest);
    checks.check(
        "list-offsets latest is the end after acknowledged appends",
        matches!(&ends, Ok(e) if pairs(e) == [(0, 2), (1, 0)]),
        || format!("got {ends:?}"),
    );
    let beginnings = kafka_admin::list_offsets(data, &[0, 1], OffsetSpec::Earliest);
    checks.check(
        "list-offsets earliest is the log start",
        matches!(&beginnings, Ok(b) if pairs(b) == [(0, 0), (1, 0)]),
        || format!("got {beginnings:?}"),
    );
    let wrong = writer.append(&format!("{data}-missing"), 0, "k", "v");
    checks.check(
        "an append to a missing topic fails (unknown-topic or timeout)",
        matches!(&wrong, Err(e) if ["unknown-topic", "timeout"].contains(&case(e))),
        || format!("got {wrong:?}"),
    );
}

fn transactional_writes(checks: &mut Checks, prefix: &str, control: &str) {
    let id = format!("{prefix}writer");
    let older = match kafka_writer::Writer::open(Some(&id)) {
        Ok(writer) => writer,
        Err(error) => {
            checks.check("a transactional writer opens", false, || {
                format!("{error:?}")
            });
            return;
        }
    };
    let offset = older.append(control, 0, "a", "1");
    checks.check(
        "a transactional append returns offset 0 of a new topic",
        matches!(offset, Ok(0)),
        || format!("got {offset:?}"),
    );
    // The commit marker follows: the record becomes visible to read_committed readers.
    let visible = eventually(|| {
        let ends = kafka_admin::list_offsets(control, &[0], OffsetSpec::Latest).ok()?;
        ends.iter()
            .any(|e| e.partition == 0 && e.offset >= 2)
            .then_some(())
    });
    checks.check(
        "a committed transactional record becomes stable (latest passes it and its marker)",
        visible.is_some(),
        || "list-offsets latest stayed below 2 within the operation timeout".into(),
    );
    // A newer writer with the same id fences the older one.
    let newer = kafka_writer::Writer::open(Some(&id));
    checks.check(
        "a second writer with the same transactional id opens",
        newer.is_ok(),
        || format!("got {:?}", newer.as_ref().err()),
    );
    let fenced = older.append(control, 0, "b", "2");
    checks.expect_error(
        "the older writer's append fails with fenced",
        &fenced,
        &["fenced"],
    );
    let again = older.append(control, 0, "c", "3");
    checks.expect_error("a fenced writer stays fenced", &again, &["fenced"]);
    if let Ok(newer) = newer {
        let offset = newer.append(control, 0, "d", "4");
        checks.check(
            "the newer writer appends after the fenced attempt",
            matches!(offset, Ok(o) if o >= 2),
            || format!("got {offset:?}"),
        );
    }
}

fn consumer_reads(checks: &mut Checks, data: &str, control: &str) {
    let consumer = match kafka_consumer::Consumer::open(data) {
        Ok(consumer) => consumer,
        Err(error) => {
            checks.check("a consumer opens", false, || format!("{error:?}"));
            return;
        }
    };
    let assigned = consumer.assign(&[po(0, 0)]);
    checks.check("assign succeeds", assigned.is_ok(), || {
        format!("{assigned:?}")
    });
    let mut shape = Vec::new();
    let mut records = Vec::new();
    eventually(|| {
        if let Ok(batch) = poll_rows(&consumer, true, &mut shape) {
            records.extend(batch);
        }
        (records.len() >= 2).then_some(())
    });
    type Seen<'a> = (u32, u64, bool, bool, bool, Option<&'a str>, Option<&'a str>);
    let got: Vec<Seen<'_>> = records
        .iter()
        .map(|r| {
            (
                r.partition,
                r.offset,
                r.has_key,
                r.has_value,
                r.utf8,
                r.key.as_deref(),
                r.value.as_deref(),
            )
        })
        .collect();
    checks.check(
        "poll with data delivers keys and values in offset order",
        got == [
            (0, 0, true, true, true, Some("k0"), Some("v0")),
            (0, 1, true, true, true, Some("k1"), Some("v1")),
        ],
        || format!("got {got:?}"),
    );
    // Written moments ago, so CreateTime is a Unix time in milliseconds after 2020.
    let times: Vec<i64> = records.iter().map(|r| r.timestamp).collect();
    checks.check(
        "poll with data gives each record its Kafka timestamp in milliseconds since the epoch",
        !times.is_empty() && times.iter().all(|t| *t > 1_577_836_800_000),
        || format!("got {times:?}"),
    );
    let position = consumer.position();
    checks.check(
        "position is the next offset after the records read",
        matches!(&position, Ok(p) if pairs(p) == [(0, 2)]),
        || format!("got {position:?}"),
    );
    let reassigned = consumer.assign(&[po(0, 1)]);
    let mut bare = Vec::new();
    eventually(|| {
        if let Ok(batch) = poll_rows(&consumer, false, &mut shape) {
            bare.extend(batch);
        }
        (!bare.is_empty()).then_some(())
    });
    checks.check(
        "a new assignment seeks, and poll without data gives presence but no texts",
        reassigned.is_ok()
            && bare.first().is_some_and(|r| {
                r.offset == 1
                    && r.has_key
                    && r.has_value
                    && r.utf8
                    && r.key.is_none()
                    && r.value.is_none()
            }),
        || format!("got {bare:?}"),
    );
    let empty = consumer.poll(10, 100, true);
    checks.check(
        "a poll with nothing new returns empty columns",
        matches!(&empty, Ok(b) if b.partitions.is_empty() && b.offsets.is_empty()
            && b.flags.is_empty() && b.keys.is_empty() && b.values.is_empty()
            && b.timestamps.is_empty()),
        || format!("got {empty:?}"),
    );

    // Read-committed: the control topic holds committed records and their markers.
    let reader = match kafka_consumer::Consumer::open(control) {
        Ok(reader) => reader,
        Err(error) => {
            checks.check("a consumer of the transactional topic opens", false, || {
                format!("{error:?}")
            });
            return;
        }
    };
    let end = kafka_admin::list_offsets(control, &[0], OffsetSpec::Latest)
        .ok()
        .and_then(|e| e.first().map(|e| e.offset))
        .unwrap_or(0);
    let _ = reader.assign(&[po(0, 0)]);
    let mut seen = Vec::new();
    let reached = eventually(|| {
        if let Ok(batch) = poll_rows(&reader, true, &mut shape) {
            seen.extend(batch.into_iter().map(|r| (r.offset, r.key)));
        }
        let at = reader.position().ok()?.first().map_or(0, |p| p.offset);
        (at >= end).then_some(at)
    });
    let keys: Vec<Option<&str>> = seen.iter().map(|(_, k)| k.as_deref()).collect();
    checks.check(
        "a read_committed consumer delivers committed records only, not the fenced writer's",
        keys == [Some("a"), Some("d")],
        || format!("got {seen:?}"),
    );
    checks.check(
        "the position moves past transaction markers to the last stable offset",
        reached.is_some(),
        || format!("position stayed below the end {end}"),
    );
    checks.check(
        "every poll answers one entry per record in each column (texts only with data) and \
         only the flag bits 1, 2 and 4",
        shape.is_empty(),
        || shape.join("; "),
    );
}

fn deletion(checks: &mut Checks, data: &str) {
    let deleted = kafka_admin::delete_records(data, &[po(0, 1)]);
    checks.check(
        "delete-records returns the new log start",
        matches!(&deleted, Ok(d) if pairs(d) == [(0, 1)]),
        || format!("got {deleted:?}"),
    );
    let again = kafka_admin::delete_records(data, &[po(0, 0)]);
    checks.check(
        "delete-records below the log start deletes nothing and returns the log start",
        matches!(&again, Ok(d) if pairs(d) == [(0, 1)]),
        || format!("got {again:?}"),
    );
    let beginnings = kafka_admin::list_offsets(data, &[0], OffsetSpec::Earliest);
    checks.check(
        "list-offsets earliest follows the deletion",
        matches!(&beginnings, Ok(b) if pairs(b) == [(0, 1)]),
        || format!("got {beginnings:?}"),
    );
    let beyond = kafka_admin::delete_records(data, &[po(0, 99)]);
    checks.expect_error(
        "delete-records above the end fails with offset-out-of-range",
        &beyond,
        &["offset-out-of-range"],
    );
    // A consumer positioned below the log start gets an error, never a silent jump.
    if let Ok(consumer) = kafka_consumer::Consumer::open(data) {
        let _ = consumer.assign(&[po(0, 0)]);
        let mut outcome: Option<Result<usize, KafkaError>> = None;
        eventually(|| match consumer.poll(10, 200, false) {
            Ok(batch) if batch.offsets.is_empty() => None,
            Ok(batch) => {
                outcome = Some(Ok(batch.offsets.len()));
                Some(())
            }
            Err(error) => {
                outcome = Some(Err(error));
                Some(())
            }
        });
        checks.check(
            "a consumer below the log start fails with offset-out-of-range",
            matches!(&outcome, Some(Err(e)) if case(e) == "offset-out-of-range"),
            || format!("got {outcome:?}"),
        );
    }
}
