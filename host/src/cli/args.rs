//! The command line, as clap types. The help texts are the operator's manual.

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand};

#[derive(Debug, Parser)]
#[command(
    name = "action-state-cleanup",
    version,
    about = "Checkpoint-aligned, crash-safe cleanup of Kafka action-state topics",
    long_about = "Checkpoint-aligned, crash-safe cleanup of the Kafka topics in which agent runtimes \
(Apache Flink Agents) record completed actions.\n\n\
Workflow: `plan` computes, from the recovery markers of the oldest checkpoint or savepoint you \
still need, the first offset to keep on every partition; review the plan file; `apply` records \
it durably in a control topic (COMMITTED) and only then asks Kafka to delete the older records, \
verifies, and records APPLIED. Runtimes configured with the control topic refuse to restore \
from any recovery point below the committed boundary; `check-recovery` asks the same question \
from the command line.\n\n\
Exit codes: 0 success; 1 apply declined at the confirmation question (nothing committed); 2 \
usage error; 3 input rejected or refused by a safety check (nothing durable happened, or the plan \
stays COMMITTED for a retry, as the message says); 4 Kafka, I/O or internal failure; 5 status: \
the history needs an operator (a plan left COMMITTED, a broken history); 6 check-recovery and \
recover: the restore is refused; 7 apply: another apply of the control topic took it over \
(nothing committed by this run); 130 apply interrupted (^C) and 143 apply terminated (SIGTERM), \
after saying where the plan stands; 141 the output's reader went away.",
    after_help = "Run `action-state-cleanup demo` to watch the whole story against a local broker."
)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
    /// Print a timeline on stderr: when each step started (ms since the process started) and
    /// how long it took — each Kafka request and client set-up, each wait and poll, the
    /// component's start. `--trace=json`: one JSON object per line. Same as ASC_TRACE=1 / json.
    #[arg(long, global = true, value_name = "FORMAT", num_args = 0..=1, default_missing_value = "text", value_parser = ["text", "json"])]
    pub trace: Option<String>,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Compute a cleanup plan from the recovery markers of one checkpoint or savepoint (offline).
    #[command(
        long_about = "Compute a cleanup plan from the recovery markers of one checkpoint or \
savepoint: straight from the Flink snapshot (--checkpoint PATH with --operator-uid UID or \
--operator-uid-hash HASH, the Flink Agents Java tool's command line, no JVM needed), or from \
marker JSON files (--markers with --recovery-point). Every marker must be versioned (schema 1) \
and name the same physical topic and partition set; the plan keeps, per partition, the minimum \
offset any subtask still needs. Without --output the plan JSON goes to stdout; with it, an \
existing file is never overwritten.\n\n\
With --bootstrap-servers (or a Kafka configuration) the plan is also checked against the live \
topic (identity, partitions, offsets within range) and the review shows, per partition, the \
current beginning, the plan offset and how many records the plan would delete; nothing is \
written to Kafka. Without it the review says how to see that (`apply --dry-run`).",
        after_help = "Example (a savepoint of a job whose action operator has uid agent-operator):\n  \
action-state-cleanup plan --checkpoint /flink/savepoints/savepoint-3f2a1b-0123456789ab \\\n      \
--operator-uid agent-operator --output cleanup-plan.json"
    )]
    Plan(PlanArgs),
    /// List what a Flink checkpoint or savepoint holds: operators, uids, states, markers (offline).
    #[command(
        long_about = "List what a Flink checkpoint or savepoint holds, read straight from its \
_metadata and state files: the format version and checkpoint ID, every operator with its \
OperatorID (what --operator-uid-hash takes), uid and name (Flink 2.x records them), parallelism, \
its operator states with their distribution and element counts, whether it has keyed, channel \
(in-flight data of unaligned checkpoints) or coordinator state, and the recovery markers of the \
Flink Agents action operator."
    )]
    Snapshot(SnapshotArgs),
    /// Check a plan file strictly and print its plan ID (offline).
    Verify(VerifyArgs),
    /// Apply a plan: commit the boundary, delete the older records, verify, mark APPLIED.
    #[command(
        long_about = "Apply a reviewed plan with the commit-before-delete protocol. Before \
anything durable happens the plan, the data topic (identity, partitions, cleanup.policy=compact,delete \
with retention.ms=-1 and retention.bytes=-1), the control topic and every plan offset are checked, \
and a per-partition preview is printed. On a terminal apply then asks for confirmation (the \
question names the topic, the partitions and the records to delete; only y or yes proceeds, \
anything else exits 1 with nothing committed, and nothing created). --yes skips the question; \
with a standard input that is not a terminal (a script, a pipe, cron, CI, ssh or kubectl exec \
without -t) nobody can answer, so apply refuses with exit 2 before anything durable unless \
--yes is given (--dry-run needs no --yes). A missing control topic is created only then, with \
the commit. Then COMMITTED is written, Kafka deletes the records below \
the boundary, the result is verified, and APPLIED is written. A failure after COMMITTED leaves the \
plan COMMITTED: run the same apply again to finish it. Applying an APPLIED plan changes nothing. \
^C (SIGINT) stops at once and says where the plan stands: nothing committed before the point \
of no return, or left COMMITTED (run the same apply again) after it; exit 130 (SIGTERM, a \
scheduler's deadline: the same, exit 143).\n\n\
On a schedule: `apply --retained LOCATION… --operator-uid UID --yes` plans from every recovery \
point kept in those checkpoint and savepoint directories (as `plan --retained`) and applies that \
plan in the same run; --max-delete-records / --max-delete-fraction refuse a plan that reaches \
further than expected, --metrics-file records every run for alerting, and a run with nothing new \
to delete is a no-op (exit 0). Every option has an ASC_* environment variable (named in its \
help), so a CronJob or systemd unit keeps no secret on its command line.\n\n\
Kafka ACLs the principal needs: Describe, DescribeConfigs, Read and Delete on the data topic; \
Describe, DescribeConfigs, Read, Write (and Create, to create it) on the control topic; Write and \
Describe on the transactional id action-state-cleanup:<control topic>; IdempotentWrite on the \
cluster. No consumer-group ACL: the readers are assign-only and never join, commit or look up a \
group. A refused login ends at once with exit 4 naming the principal and SASL mechanism."
    )]
    Apply(ApplyArgs),
    /// Show a control topic's history, its effective boundary and the live data topic.
    #[command(
        long_about = "Show a control topic's history: every plan with its status, when it was \
COMMITTED and APPLIED (the control records' Kafka timestamps; a COMMITTED time compaction \
removed is said to be unknown), the effective boundary and which plan's recovery point each \
partition's boundary came from, and the live data topic (beginning, boundary and end per \
partition). Exit 0 when every plan is APPLIED and the history is whole; 5 when a plan is left \
COMMITTED (run the same apply again) or the live topic begins past the boundary (records were \
deleted outside this history)."
    )]
    Status(StatusArgs),
    /// Would a restore from these markers be allowed now? (decision table, no replay)
    #[command(
        long_about = "Would a restore from these markers be allowed now? Applies the decision \
table of the cleanup boundary, topic identity and live ranges; replays nothing. Exit 0 when \
allowed; 6 when the restore is refused (every partition below the committed boundary is listed, \
and in --json as error.violations with partition, requested and boundary; the hint names the \
plan and recovery point that committed the boundary); 3 when the markers or arguments are \
malformed or the control topic does not exist; 4 when Kafka fails."
    )]
    CheckRecovery(CheckRecoveryArgs),
    /// Replay a restore as a dry run: the decision table, then every record of the range.
    #[command(
        long_about = "Perform the full validated restore of a runtime as a dry run: the \
decision table of the cleanup boundary, topic identity, live ranges, then a replay of exactly \
[requested, captured end) per partition through the component, applying tombstones. Reports per \
partition the replayed range, records and tombstones, and the number of states recovered. The \
markers come from files (--markers) or straight from a Flink checkpoint or savepoint \
(--checkpoint PATH with --operator-uid or --operator-uid-hash), as for check-recovery. Exit 6 \
when the restore is refused (every partition below the committed boundary is listed, and in \
--json as error.violations with partition, requested and boundary; the hint names the plan and \
recovery point that committed the boundary), 3 for malformed markers or a control topic that \
does not exist, 4 when Kafka fails or the replay stalls.\n\n\
Kafka ACLs: Describe, DescribeConfigs and Read on the data topic and the control topic; no \
consumer-group ACL (the consumers are assign-only and never join, commit or look up a group)."
    )]
    Recover(RecoverArgs),
    /// Print the versioned recovery marker of a topic as of now.
    Marker(MarkerArgs),
    /// Run the whole story (plan, apply, refused and allowed restores) against a broker.
    #[command(
        long_about = "Run the acceptance story end to end: checkpoint C0 needs partition 0 \
from offset 100 and C1 from 150; a plan from C1 is applied; restoring C1 is allowed and \
restoring C0 is refused naming 100 and 150. Without --bootstrap-servers a local single-node \
broker is started with scripts/kafka and stopped afterwards."
    )]
    Demo(DemoArgs),
}

/// Options shared by every command.
#[derive(Debug, Args, Clone)]
pub struct OutputArgs {
    /// Print one JSON document on stdout instead of text (errors too, with the same exit codes),
    /// and nothing on stderr unless --verbose; its fields: README, "JSON output".
    #[arg(long, global = true)]
    pub json: bool,
    /// With --json: also print the text a person reads on stderr (progress, warnings, reviews,
    /// the error sentence); without it stderr stays empty and the JSON document says it all.
    #[arg(long, global = true)]
    pub verbose: bool,
    /// Print every partition's row and offset: without it, tables and offset maps of more than
    /// 20 partitions are summarised and show their first rows (--json always has every row).
    #[arg(long, global = true)]
    pub all: bool,
}

/// How to reach Kafka: the usual client settings.
#[derive(Debug, Args, Clone)]
pub struct KafkaArgs {
    /// Kafka bootstrap servers, e.g. broker1:9092,broker2:9092 (--bootstrap-server, the Kafka
    /// tools' spelling, works too).
    #[arg(
        long,
        value_name = "SERVERS",
        visible_alias = "bootstrap-server",
        env = "ASC_BOOTSTRAP_SERVERS"
    )]
    pub bootstrap_servers: Option<String>,
    /// A librdkafka client property, e.g. -X security.protocol=SASL_SSL (repeatable; wins over the file).
    #[arg(short = 'X', value_name = "KEY=VALUE")]
    pub properties: Vec<String>,
    /// A .properties file with client settings (key=value lines): librdkafka properties, or the
    /// Kafka tools' client.properties (--command-config works too): a sasl.jaas.config with
    /// PlainLoginModule, ScramLoginModule, Krb5LoginModule (keytab or ticket cache) or
    /// OAuthBearerLoginModule (OIDC clientId and clientSecret), and JKS,
    /// PKCS#12 or PEM trust and key stores (read with their passwords) are translated; anything
    /// else is refused with the exact property to use. No output ever shows a password or key.
    #[arg(
        long,
        value_name = "FILE",
        visible_alias = "command-config",
        env = "ASC_KAFKA_CONFIG"
    )]
    pub kafka_config: Option<PathBuf>,
    /// How long one Kafka step may take, retries included, in seconds; each single request gets a
    /// third of it, so a request to a leader that died leaves time to ask the new one. A
    /// DeleteRecords step, and each of its requests, gets 5 ms more per partition, an append 50 ms
    /// more per KiB of its record.
    #[arg(
        long,
        value_name = "SECONDS",
        default_value_t = 30,
        env = "ASC_TIMEOUT"
    )]
    pub timeout: u64,
    /// Show librdkafka's own log lines on stderr (hidden otherwise: the CLI says in its own words
    /// what it waits for and why a step failed); with -X debug=CONTEXTS (e.g. broker,protocol)
    /// librdkafka adds its debug lines.
    #[arg(long)]
    pub debug: bool,
}

#[derive(Debug, Args)]
#[command(group(clap::ArgGroup::new("source").required(true).args(["markers", "checkpoint", "retained"])))]
pub struct PlanArgs {
    /// Marker sources: a marker file (one marker, a JSON array of markers, or markers one per
    /// line), a directory of *.json marker files, or - for standard input.
    #[arg(long, num_args = 1.., value_name = "PATH", requires = "recovery_point")]
    pub markers: Vec<PathBuf>,
    /// The checkpoint or savepoint the markers come from, exactly as you will name it later.
    /// Required with --markers; with --checkpoint it defaults to the location as given, and
    /// names the original location of a snapshot copied from where the job keeps it.
    #[arg(long, value_name = "ID")]
    pub recovery_point: Option<String>,
    #[command(flatten)]
    pub snapshot: CheckpointArgs,
    /// Plan from every recovery point kept here (with --operator-uid or --operator-uid-hash):
    /// a Flink checkpoint directory (every <job-id>/chk-N/_metadata, or one job's chk-N), a
    /// savepoint directory (every savepoint-*), or one snapshot; a local path or a URI as for
    /// --checkpoint (s3://, gs://, abfss://, hdfs://…); several may be given. The plan
    /// keeps, per partition, the smallest offset any of them needs, and records the point that
    /// bounds every partition (the review and --json say which point bounds which partition). A
    /// point that cannot be planned stops the plan (exit 3, naming it); leave one out with
    /// --exclude.
    #[arg(long, num_args = 1.., value_name = "LOCATION", conflicts_with_all = ["checkpoint", "recovery_point"])]
    pub retained: Vec<String>,
    /// With --retained: a snapshot found there to leave out on purpose (another job's
    /// savepoint in a shared directory); repeatable.
    #[arg(long, value_name = "SNAPSHOT", requires = "retained")]
    pub exclude: Vec<String>,
    /// Write the plan here (refuses to overwrite an existing file) instead of stdout.
    #[arg(long, value_name = "FILE")]
    pub output: Option<PathBuf>,
    /// Optional: with --bootstrap-servers, review what the plan would delete on the live topic.
    #[command(flatten)]
    pub kafka: KafkaArgs,
    #[command(flatten)]
    pub out: OutputArgs,
}

/// A Flink checkpoint or savepoint and the operator whose recovery markers are read from it.
#[derive(Debug, Args)]
pub struct CheckpointArgs {
    /// Read the markers straight from a Flink checkpoint or savepoint (its directory or its
    /// _metadata file), as the Flink Agents Java tool's `plan --checkpoint` does, with no JVM:
    /// a local path or a URI where Flink keeps it (file://, s3://, s3a://, s3p://, gs://,
    /// wasb[s]://, abfs[s]://). The location, exactly as given, names the recovery point (the
    /// plan's sourceRecoveryPoint) unless --recovery-point names another.
    #[arg(long, value_name = "LOCATION")]
    pub checkpoint: Option<String>,
    /// Flink's configuration (config.yaml or flink-conf.yaml, or the directory holding it),
    /// read for the store settings the job's filesystem plugins use: s3.endpoint,
    /// s3.access-key, s3.secret-key, s3.path.style.access, fs.azure.account.key.*. Default:
    /// the one in FLINK_CONF_DIR. The cloud's own environment (AWS_*, GOOGLE_*, AZURE_*) is read
    /// too; Flink's settings win.
    #[arg(long, value_name = "PATH", env = "ASC_FLINK_CONFIG")]
    pub flink_config: Option<PathBuf>,
    /// With --checkpoint (or plan --retained): the uid the job gave the Flink Agents action
    /// operator.
    #[arg(long, value_name = "UID", conflicts_with = "operator_uid_hash")]
    pub operator_uid: Option<String>,
    /// With --checkpoint (or plan --retained): the operator's 32-hex-digit OperatorID, for an
    /// operator without a uid (`action-state-cleanup snapshot PATH` lists them).
    #[arg(long, value_name = "HASH")]
    pub operator_uid_hash: Option<String>,
}

/// `apply --retained`: the plan made in the run itself, from every recovery point kept (as
/// `plan --retained` makes it), for a schedule that plans and applies unattended.
#[derive(Debug, Args)]
pub struct RetainedSource {
    /// apply: plan from every recovery point kept here and apply that plan, in one run (one
    /// exit code, one metrics file): what `plan --retained` does (see its help), then the
    /// apply; a point that cannot be planned stops the run before Kafka is contacted (exit 3).
    /// status: show the records held below the newest of these points. With --operator-uid or
    /// --operator-uid-hash. (ASC_RETAINED: locations separated by commas.)
    #[arg(long, num_args = 1.., value_name = "LOCATION", env = "ASC_RETAINED", value_delimiter = ',')]
    pub retained: Vec<String>,
    /// With --retained: a snapshot found there to leave out on purpose; repeatable.
    /// (ASC_EXCLUDE: snapshots separated by commas.)
    #[arg(
        long,
        value_name = "SNAPSHOT",
        requires = "retained",
        env = "ASC_EXCLUDE",
        value_delimiter = ','
    )]
    pub exclude: Vec<String>,
    /// With --retained: the uid the job gave the Flink Agents action operator.
    #[arg(
        long,
        value_name = "UID",
        requires = "retained",
        conflicts_with = "operator_uid_hash",
        env = "ASC_OPERATOR_UID"
    )]
    pub operator_uid: Option<String>,
    /// With --retained: the operator's 32-hex-digit OperatorID, for an operator without a uid.
    #[arg(
        long,
        value_name = "HASH",
        requires = "retained",
        env = "ASC_OPERATOR_UID_HASH"
    )]
    pub operator_uid_hash: Option<String>,
    /// With --retained: Flink's configuration, for the store settings (as for plan --checkpoint).
    #[arg(
        long,
        value_name = "PATH",
        requires = "retained",
        env = "ASC_FLINK_CONFIG"
    )]
    pub flink_config: Option<PathBuf>,
}

/// A fraction between 0 and 1, for --max-delete-fraction.
fn fraction(text: &str) -> Result<f64, String> {
    match text.trim().parse::<f64>() {
        Ok(f) if (0.0..=1.0).contains(&f) => Ok(f),
        _ => Err(format!(
            "a fraction between 0 and 1 is needed (0.25 for a quarter), not {text:?}"
        )),
    }
}

#[derive(Debug, Args)]
pub struct SnapshotArgs {
    /// The checkpoint or savepoint directory, or its _metadata file: a local path or a URI
    /// (file://, s3://, gs://, abfss://… as for plan --checkpoint).
    #[arg(value_name = "LOCATION")]
    pub path: String,
    /// Flink's configuration, for the store settings (as for plan --checkpoint).
    #[arg(long, value_name = "PATH", env = "ASC_FLINK_CONFIG")]
    pub flink_config: Option<PathBuf>,
    #[command(flatten)]
    pub out: OutputArgs,
}

#[derive(Debug, Args)]
pub struct VerifyArgs {
    /// The plan file to check (- reads standard input).
    #[arg(long, value_name = "FILE")]
    pub plan: PathBuf,
    #[command(flatten)]
    pub out: OutputArgs,
}

#[derive(Debug, Args)]
pub struct ApplyArgs {
    /// The reviewed plan file (- reads standard input). Or, instead, --retained: plan in the
    /// same run from every recovery point kept.
    #[arg(
        long,
        value_name = "FILE",
        env = "ASC_PLAN",
        required_unless_present = "retained",
        conflicts_with = "retained"
    )]
    pub plan: Option<PathBuf>,
    #[command(flatten)]
    pub retained: RetainedSource,
    /// The control topic holding this job's cleanup history. Created if missing, but only
    /// for a data topic that was never cleaned (every partition begins at 0); the preview
    /// announces the creation.
    #[arg(long, value_name = "TOPIC", env = "ASC_CONTROL_TOPIC")]
    pub control_topic: String,
    /// Create a missing control topic even though the data topic was already cleaned. Its
    /// earlier history is then not consulted: restores are checked against the new one only.
    /// Without this flag such an apply is refused (exit 3), since a mistyped --control-topic
    /// would otherwise start a second history silently.
    #[arg(long)]
    pub start_new_history: bool,
    /// Replication factor if apply must create the control topic (1..=32767; min.insync.replicas
    /// becomes 2 from 3 on, else 1). Without it: the production default read from the cluster,
    /// 3 replicas, or one per broker when there are fewer, whatever the brokers'
    /// default.replication.factor says, so 3 with min.insync.replicas 2 on three or more
    /// brokers and 1 on a single broker. Describing the cluster needs DescribeConfigs on it; a
    /// factor given here needs nothing. An existing control topic with fewer replicas than that default only
    /// warns, with the kafka-reassign-partitions command that adds them.
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u16).range(1..=32767), env = "ASC_REPLICATION_FACTOR")]
    pub replication_factor: Option<u16>,
    /// Make every check and print the preview, but commit and delete nothing.
    #[arg(long)]
    pub dry_run: bool,
    /// Do not ask for confirmation before COMMITTED: the consent of a script. Without it apply
    /// asks on the terminal, and refuses (exit 2, before anything durable) when standard input
    /// is not a terminal.
    /// (ASC_YES takes true/false, 1/0, yes/no, on/off.)
    #[arg(long, short = 'y', env = "ASC_YES", value_parser = clap::builder::BoolishValueParser::new())]
    pub yes: bool,
    /// Refuse (exit 3, before anything durable) a plan that would delete more records than
    /// this, over all partitions: a scheduled apply's guard against a wrong recovery point.
    #[arg(long, value_name = "N", env = "ASC_MAX_DELETE_RECORDS")]
    pub max_delete_records: Option<u64>,
    /// Refuse (exit 3, before anything durable) a plan that would delete more than this
    /// fraction (0 to 1) of the records the data topic holds now, over all partitions.
    #[arg(long, value_name = "F", value_parser = fraction, env = "ASC_MAX_DELETE_FRACTION")]
    pub max_delete_fraction: Option<f64>,
    /// Write this run's outcome in the Prometheus text format (for node_exporter's textfile
    /// collector) on every run, success or failure (^C too: exit code 130): exit code, records
    /// deleted, duration, and the time of the last successful run (kept from the file's
    /// previous contents), so that "no successful cleanup for N days" is one alert rule.
    /// Written atomically.
    #[arg(long, value_name = "FILE", env = "ASC_METRICS_FILE")]
    pub metrics_file: Option<PathBuf>,
    #[command(flatten)]
    pub kafka: KafkaArgs,
    #[command(flatten)]
    pub out: OutputArgs,
}

#[derive(Debug, Args)]
pub struct StatusArgs {
    /// The control topic to read.
    #[arg(long, value_name = "TOPIC", env = "ASC_CONTROL_TOPIC")]
    pub control_topic: String,
    /// With --retained (as for apply): also read the recovery points kept there and show the
    /// records held below the newest one, kept only for the older ones.
    #[command(flatten)]
    pub retained: RetainedSource,
    #[command(flatten)]
    pub kafka: KafkaArgs,
    #[command(flatten)]
    pub out: OutputArgs,
}

#[derive(Debug, Args)]
#[command(group(clap::ArgGroup::new("source").required(true).args(["markers", "checkpoint"])))]
pub struct CheckRecoveryArgs {
    /// The markers of the recovery point to restore (same forms as `plan --markers`).
    #[arg(long, num_args = 1.., value_name = "PATH")]
    pub markers: Vec<PathBuf>,
    /// Or read the markers from the Flink checkpoint or savepoint the job would restore.
    #[command(flatten)]
    pub snapshot: CheckpointArgs,
    /// The control topic the runtime is configured with; omit for standard recovery.
    #[arg(long, value_name = "TOPIC", env = "ASC_CONTROL_TOPIC")]
    pub control_topic: Option<String>,
    /// The runtime has per-key tombstones enabled (conflicts with a control topic).
    #[arg(long)]
    pub tombstones: bool,
    /// The data topic the runtime is configured with: markers of another topic are refused.
    /// Defaults to the topic the versioned markers name; required when every marker is legacy.
    #[arg(long, value_name = "TOPIC")]
    pub topic: Option<String>,
    #[command(flatten)]
    pub kafka: KafkaArgs,
    #[command(flatten)]
    pub out: OutputArgs,
}

#[derive(Debug, Args)]
#[command(group(clap::ArgGroup::new("source").required(true).args(["markers", "checkpoint"])))]
pub struct RecoverArgs {
    /// The markers of the recovery point to restore (same forms as `plan --markers`).
    #[arg(long, num_args = 1.., value_name = "PATH")]
    pub markers: Vec<PathBuf>,
    /// Or read the markers from the Flink checkpoint or savepoint the job would restore.
    #[command(flatten)]
    pub snapshot: CheckpointArgs,
    /// The control topic the runtime is configured with; omit for standard recovery.
    #[arg(long, value_name = "TOPIC", env = "ASC_CONTROL_TOPIC")]
    pub control_topic: Option<String>,
    /// The runtime has per-key tombstones enabled (conflicts with a control topic).
    #[arg(long)]
    pub tombstones: bool,
    /// The data topic (defaults to the topic the versioned markers name).
    #[arg(long, value_name = "TOPIC")]
    pub topic: Option<String>,
    /// Fail when the replay makes no progress for this long.
    #[arg(long, value_name = "SECONDS", default_value_t = 30, value_parser = clap::value_parser!(u32).range(1..=86_400))]
    pub stall_timeout: u32,
    /// Records per batch crossing from the component.
    #[arg(long, value_name = "N", default_value_t = 5_000, value_parser = clap::value_parser!(u32).range(1..=1_000_000))]
    pub batch: u32,
    /// Write the recovered key→value state here as one JSON object (keys sorted).
    #[arg(long, value_name = "FILE")]
    pub dump_state: Option<PathBuf>,
    #[command(flatten)]
    pub kafka: KafkaArgs,
    #[command(flatten)]
    pub out: OutputArgs,
}

#[derive(Debug, Args)]
pub struct MarkerArgs {
    /// The data topic.
    #[arg(long, value_name = "TOPIC")]
    pub topic: String,
    #[command(flatten)]
    pub kafka: KafkaArgs,
    #[command(flatten)]
    pub out: OutputArgs,
}

#[derive(Debug, Args)]
pub struct DemoArgs {
    #[command(flatten)]
    pub kafka: KafkaArgs,
    #[command(flatten)]
    pub out: OutputArgs,
}
