//! Wide data topics for the wide-topic benchmark: created in parts (Kafka's controller refuses one
//! request that would write more than 10,000 metadata records, a 10,000-partition topic
//! included), filled with the same number of records on every partition, and read back by
//! Kafka's own GetOffsetShell, a reader that shares no code with the tool under test.

use std::collections::BTreeMap;
use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

use rdkafka::admin::{AdminClient, AdminOptions, NewPartitions, NewTopic, TopicReplication};
use rdkafka::client::{Client, ClientContext, DefaultClientContext};
use rdkafka::config::ClientConfig;
use rdkafka::error::{KafkaError as RdError, RDKafkaErrorCode};
use rdkafka::metadata::MetadataPartition;
use rdkafka::producer::{BaseProducer, BaseRecord, Producer as _};

use crate::{R, fail};

/// Partitions added per CreateTopics or CreatePartitions request: every partition is a metadata
/// record, and the controller refuses a request of more than 10,000 records.
pub const PARTITIONS_PER_REQUEST: u32 = 5_000;

/// The configuration `apply` requires of a data topic.
const SAFE: [(&str, &str); 3] = [
    ("cleanup.policy", "compact,delete"),
    ("retention.ms", "-1"),
    ("retention.bytes", "-1"),
];

fn admin(bootstrap: &str) -> R<AdminClient<DefaultClientContext>> {
    Ok(ClientConfig::new()
        .set("bootstrap.servers", bootstrap)
        .create()?)
}

/// How many brokers the cluster at `bootstrap` has, as its metadata lists them.
pub fn node_count(bootstrap: &str) -> R<usize> {
    let metadata = admin(bootstrap)?
        .inner()
        .fetch_metadata(None, Duration::from_secs(30))?;
    Ok(metadata.brokers().len())
}

fn runtime() -> R<tokio::runtime::Runtime> {
    Ok(tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .build()?)
}

/// `action-state-bench wide-topic BOOTSTRAP TOPIC PARTITIONS REPLICATION RECORDS`: creates the
/// topic in parts, fills every partition with RECORDS records and prints its topic ID.
pub fn prepare_from_args(args: &[String]) -> R<()> {
    let [bootstrap, topic, partitions, replication, records] = args else {
        return Err(fail(
            "usage: action-state-bench wide-topic BOOTSTRAP TOPIC PARTITIONS REPLICATION RECORDS",
        ));
    };
    let partitions: u32 = partitions.parse()?;
    create(bootstrap, topic, partitions, replication.parse()?, &[])?;
    fill(bootstrap, topic, partitions, records.parse()?)?;
    Ok(())
}

/// Creates `topic` with `partitions` partitions, `PARTITIONS_PER_REQUEST` at a time, with the
/// configuration `apply` requires and `extra` entries.
pub fn create(
    bootstrap: &str,
    topic: &str,
    partitions: u32,
    replication: u16,
    extra: &[(&str, &str)],
) -> R<()> {
    let admin = admin(bootstrap)?;
    let runtime = runtime()?;
    let options = AdminOptions::new()
        .request_timeout(Some(Duration::from_secs(120)))
        .operation_timeout(Some(Duration::from_secs(120)));
    let first = partitions.min(PARTITIONS_PER_REQUEST);
    let mut new = NewTopic::new(
        topic,
        i32::try_from(first)?,
        TopicReplication::Fixed(i32::from(replication)),
    );
    for (name, value) in SAFE.iter().chain(extra) {
        new = new.set(name, value);
    }
    for result in runtime.block_on(admin.create_topics([&new], &options))? {
        result.map_err(|(t, code)| fail(format!("creating {t}: {code}")))?;
    }
    let mut count = first;
    while count < partitions {
        count = partitions.min(count + PARTITIONS_PER_REQUEST);
        let more = NewPartitions::new(topic, usize::try_from(count)?);
        for result in runtime.block_on(admin.create_partitions([&more], &options))? {
            result.map_err(|(t, code)| fail(format!("adding partitions to {t}: {code}")))?;
        }
    }
    wait_for_leaders(&admin, topic, partitions)
}

/// Deletes `topic` and waits until metadata no longer shows it.
pub fn delete(bootstrap: &str, topic: &str) -> R<()> {
    let admin = admin(bootstrap)?;
    let runtime = runtime()?;
    let options = AdminOptions::new().operation_timeout(Some(Duration::from_secs(120)));
    for result in runtime.block_on(admin.delete_topics(&[topic], &options))? {
        result.map_err(|(t, code)| fail(format!("deleting {t}: {code}")))?;
    }
    let started = Instant::now();
    loop {
        let metadata = admin
            .inner()
            .fetch_metadata(Some(topic), Duration::from_secs(30))?;
        let gone = metadata
            .topics()
            .iter()
            .all(|t| t.name() != topic || t.error().is_some());
        if gone {
            return Ok(());
        }
        if started.elapsed() > Duration::from_secs(300) {
            return Err(fail(format!(
                "{topic} still exists 300 s after its deletion"
            )));
        }
        std::thread::sleep(Duration::from_millis(500));
    }
}

/// Waits until metadata shows every partition with a leader (a producer needs one).
fn wait_for_leaders(
    admin: &AdminClient<DefaultClientContext>,
    topic: &str,
    partitions: u32,
) -> R<()> {
    await_metadata(
        admin.inner(),
        topic,
        partitions,
        |p| p.leader() >= 0,
        "have a leader",
    )
}

/// Waits until the producer's own metadata shows all `partitions` of `topic`: the admin client
/// that created them asked one broker, and a producer whose first metadata came from another
/// broker that had not yet learned of the partitions added last refuses to send to them
/// ("Unknown partition", seen at 10,000 partitions created in two requests).
fn await_partitions(producer: &BaseProducer, topic: &str, partitions: u32) -> R<()> {
    await_metadata(
        producer.client(),
        topic,
        partitions,
        |_| true,
        "are known to the producer",
    )
}

/// Asks `client` for `topic`'s metadata until `partitions` of its partitions pass `ready`
/// (at most 300 s).
fn await_metadata<C: ClientContext>(
    client: &Client<C>,
    topic: &str,
    partitions: u32,
    ready: fn(&MetadataPartition) -> bool,
    what: &str,
) -> R<()> {
    let started = Instant::now();
    loop {
        let metadata = client.fetch_metadata(Some(topic), Duration::from_secs(30))?;
        let seen = metadata
            .topics()
            .iter()
            .find(|t| t.name() == topic)
            .map_or(0, |t| t.partitions().iter().filter(|p| ready(p)).count());
        if seen == usize::try_from(partitions)? {
            return Ok(());
        }
        if started.elapsed() > Duration::from_secs(300) {
            return Err(fail(format!(
                "{topic}: {seen} of {partitions} partitions {what} after 300 s"
            )));
        }
        std::thread::sleep(Duration::from_millis(500));
    }
}

/// Writes `records` keyed records to every partition of `topic` (acks=all, idempotent).
pub fn fill(bootstrap: &str, topic: &str, partitions: u32, records: u64) -> R<()> {
    let producer: BaseProducer = ClientConfig::new()
        .set("bootstrap.servers", bootstrap)
        .set("enable.idempotence", "true")
        .set("acks", "all")
        .set("linger.ms", "100")
        .set("queue.buffering.max.kbytes", "262144")
        .set("queue.buffering.max.messages", "1000000")
        // 45 minutes: 10,000 partitions × 20 records at replication factor 3 took longer than 15
        // on the shared 2-core machine (the flush timed out); a slow fill is not a result.
        .set("message.timeout.ms", "2700000")
        .create()?;
    await_partitions(&producer, topic, partitions)?;
    // Partition by partition: each partition's records form one batch, and one produce request
    // carries the batches of hundreds of partitions. (Record by record across the partitions
    // made a batch of one record per partition and request, and at 5,000 partitions with
    // replication factor 3 did not finish 100,000 records in 300 s.)
    let mut lagging: Option<Instant> = None;
    for p in 0..partitions {
        for n in 0..records {
            let key = format!("action-{p}-{n}");
            let value = format!("{{\"step\":{n},\"status\":\"done\"}}");
            let mut record: BaseRecord<'_, str, str> = BaseRecord::to(topic)
                .partition(i32::try_from(p)?)
                .key(key.as_str())
                .payload(value.as_str());
            loop {
                match producer.send(record) {
                    Ok(()) => break,
                    Err((RdError::MessageProduction(RDKafkaErrorCode::QueueFull), back)) => {
                        record = back;
                        producer.poll(Duration::from_millis(20));
                    }
                    // The producer's metadata can still lag behind the partitions it was shown.
                    Err((RdError::MessageProduction(RDKafkaErrorCode::UnknownPartition), back))
                        if lagging.get_or_insert_with(Instant::now).elapsed()
                            < Duration::from_secs(60) =>
                    {
                        record = back;
                        producer.poll(Duration::from_millis(100));
                    }
                    Err((error, _)) => return Err(error.into()),
                }
            }
        }
        producer.poll(Duration::ZERO);
    }
    producer.flush(Duration::from_secs(2700))?;
    Ok(())
}

/// Kafka's own command-line tools, run as `kafka-run-class.sh` runs them (its default JVM
/// options), from the jars `scripts/kafka` fetched.
pub struct KafkaTools {
    /// `<libs>/*`, as `scripts/kafka classpath` prints it.
    classpath: String,
    /// The tools' log4j2 configuration (warnings to stderr only).
    log_config: String,
}

impl KafkaTools {
    pub fn new(repo: &Path) -> R<Self> {
        let output = Command::new(repo.join("scripts/kafka"))
            .arg("classpath")
            .output()?;
        if !output.status.success() {
            return Err(fail(format!(
                "scripts/kafka classpath failed: {}",
                String::from_utf8_lossy(&output.stderr)
            )));
        }
        let mut lines = String::from_utf8_lossy(&output.stdout)
            .lines()
            .map(str::to_owned)
            .collect::<Vec<_>>()
            .into_iter();
        let (Some(classpath), Some(log_config)) = (lines.next(), lines.next()) else {
            return Err(fail("scripts/kafka classpath printed less than two lines"));
        };
        Ok(KafkaTools {
            classpath,
            log_config,
        })
    }

    /// `java` with kafka-run-class.sh's default options (heap 256 MB, G1) and the class `main`.
    pub fn command(&self, main: &str) -> Command {
        let mut command = Command::new("java");
        command
            .args([
                "-Xmx256M",
                "-server",
                "-XX:+UseG1GC",
                "-XX:MaxGCPauseMillis=20",
            ])
            .args([
                "-XX:InitiatingHeapOccupancyPercent=35",
                "-XX:+ExplicitGCInvokesConcurrent",
            ])
            .args(["-XX:MaxInlineLevel=15", "-Djava.awt.headless=true"])
            .arg(format!("-Dlog4j2.configurationFile={}", self.log_config))
            .args(["-cp", &self.classpath, main]);
        command
    }
}

/// Every partition's beginning offset (log start), read by Kafka's `GetOffsetShell`
/// (`--time -2`) in a JVM: a reader independent of this project's clients.
pub fn beginnings_by_kafka(
    tools: &KafkaTools,
    bootstrap: &str,
    topic: &str,
) -> R<BTreeMap<u32, u64>> {
    let output = tools
        .command("org.apache.kafka.tools.GetOffsetShell")
        .args([
            "--bootstrap-server",
            bootstrap,
            "--topic",
            topic,
            "--time",
            "-2",
        ])
        .output()?;
    if !output.status.success() {
        return Err(fail(format!(
            "GetOffsetShell failed: {}",
            String::from_utf8_lossy(&output.stderr)
        )));
    }
    parse_offsets(topic, &String::from_utf8_lossy(&output.stdout))
}

/// GetOffsetShell's `topic:partition:offset` lines.
fn parse_offsets(topic: &str, text: &str) -> R<BTreeMap<u32, u64>> {
    let mut offsets = BTreeMap::new();
    for line in text.lines().filter(|l| !l.trim().is_empty()) {
        let mut fields = line.rsplitn(3, ':');
        let (Some(offset), Some(partition), Some(name)) =
            (fields.next(), fields.next(), fields.next())
        else {
            return Err(fail(format!("unexpected GetOffsetShell line {line:?}")));
        };
        if name != topic {
            continue;
        }
        offsets.insert(partition.trim().parse()?, offset.trim().parse()?);
    }
    Ok(offsets)
}

#[cfg(test)]
mod tests {
    use super::parse_offsets;

    #[test]
    fn get_offset_shell_lines_are_read_per_partition() {
        let text = "t-1:0:5\nt-1:1:7\nother:0:9\n";
        let offsets = parse_offsets("t-1", text).map_err(|e| e.0).unwrap();
        assert_eq!(offsets.into_iter().collect::<Vec<_>>(), [(0, 5), (1, 7)]);
    }
}
