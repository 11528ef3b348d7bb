//! End-to-end: an apply by a principal who may not delete records is refused BEFORE anything
//! durable happens. On a private single-node broker with SASL/PLAIN and ACLs
//! (`scripts/kafka start --sasl`), alice holds everything an operator needs except Delete on the
//! data topic: the host's DeleteRecords permission probe (a delete at the current beginnings,
//! run before the COMMITTED record is written) fails, so the apply exits 4 naming the probe,
//! the control topic holds no plan and the data topic is untouched. Once Delete is granted the
//! same apply succeeds. A principal with no ACLs at all (bob), and a wrong password, get a
//! Kafka error (exit 4) and change nothing; the wrong password at the brokers' first refusal
//! (not after the request timeout), naming the principal and the SASL mechanism. alice holds no
//! consumer-group ACL: the refusal librdkafka reports for the unused group does not stop a read.
//! Before alice holds DescribeConfigs on the cluster, her first apply cannot choose the new
//! control topic's production replication and is refused before anything is created.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    reason = "tests: a failure is a failed test"
)]

#[path = "support/cluster.rs"]
mod cluster;
mod support;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use action_state_cleanup::kafka::KafkaClients;
use action_state_cleanup::kafka::ffi::Spec;
use cluster::{Cluster, password};
use support::{CLI, expect_code, stderr, stdout, unique};

/// Runs the CLI (never with a failpoint) with these arguments.
fn cli(args: &[String]) -> Output {
    Command::new(CLI)
        .args(args)
        .env_remove("ASC_FAILPOINT")
        .env_remove("ASC_FAILPOINT_PAUSE")
        .env_remove("ASC_FAILPOINT_PAUSE_FILE")
        .output()
        .expect("the CLI runs")
}

fn strings(args: &[&str]) -> Vec<String> {
    args.iter().map(|a| (*a).to_owned()).collect()
}

/// `apply --plan P --control-topic C --json` plus the given connection arguments.
fn apply(plan: &Path, control: &str, connection: &[String]) -> Output {
    let mut args = strings(&["apply", "--yes", "--plan", plan.to_str().unwrap()]);
    args.extend_from_slice(connection);
    args.extend(strings(&[
        "--control-topic",
        control,
        "--json",
        "--timeout",
        "10",
    ]));
    cli(&args)
}

fn json(output: &Output) -> serde_json::Value {
    serde_json::from_str(&stdout(output)).unwrap_or_else(|e| {
        panic!(
            "not JSON ({e})\n--- stdout\n{}\n--- stderr\n{}",
            stdout(output),
            stderr(output)
        )
    })
}

/// `status --json` as admin: (plan id, status) of every operation.
fn operations(cluster: &Cluster, control: &str) -> Vec<(String, String)> {
    let mut args = strings(&["status"]);
    args.extend(cluster.cli_args(Some("admin")));
    args.extend(strings(&["--control-topic", control, "--json"]));
    let output = cli(&args);
    expect_code(&output, 0);
    json(&output)["operations"]
        .as_array()
        .unwrap()
        .iter()
        .map(|op| {
            (
                op["planId"].as_str().unwrap().to_owned(),
                op["status"].as_str().unwrap().to_owned(),
            )
        })
        .collect()
}

/// The control topic holds no record at all, or exists only empty (as alice's refused apply
/// may have created it): nothing was committed.
fn assert_nothing_committed(cluster: &Cluster, control: &str, why: &str) {
    let mut kafka = cluster.kafka();
    let exists = kafka
        .describe_topics(&[control.to_owned()])
        .expect("describe")[0]
        .is_some();
    if exists {
        assert_eq!(
            kafka.read_control_log(control).expect("read control log"),
            [],
            "{why}: the control topic must hold no record"
        );
        assert_eq!(operations(cluster, control), [], "{why}: status");
    }
}

fn beginnings(cluster: &Cluster, topic: &str) -> Vec<(u32, u64)> {
    cluster
        .kafka()
        .list_offsets(topic, &[0, 1], Spec::Earliest)
        .expect("list offsets")
}

/// The error of a `--json` run that exited 4: (kind, message, hint).
fn kafka_error(output: &Output, why: &str) -> (String, String, String) {
    assert_eq!(
        output.status.code(),
        Some(4),
        "{why}: exit code\n--- stdout\n{}\n--- stderr\n{}",
        stdout(output),
        stderr(output)
    );
    let error = &json(output)["error"];
    let text = |k: &str| error[k].as_str().unwrap_or("").to_owned();
    (text("kind"), text("message"), text("hint"))
}

/// `scripts/kafka acls --add --allow-principal User:<user> --operation O... <resource>`.
fn grant(cluster: &Cluster, user: &str, operations: &[&str], resource: &[&str]) {
    let principal = format!("User:{user}");
    let mut args = vec!["--add", "--allow-principal", principal.as_str()];
    for operation in operations {
        args.extend(["--operation", operation]);
    }
    args.extend_from_slice(resource);
    cluster.acls(&args);
}

fn write_plan(dir: &Path, topic: &str, id: &str, p0: u64, p1: u64) -> PathBuf {
    let markers = dir.join("marker.json");
    std::fs::write(
        &markers,
        format!(
            "{{\"schemaVersion\":1,\"topic\":\"{topic}\",\"topicId\":\"{id}\",\"offsets\":{{\"0\":{p0},\"1\":{p1}}}}}"
        ),
    )
    .unwrap();
    let path = dir.join("plan.json");
    expect_code(
        &support::cli(&[
            "plan",
            "--markers",
            markers.to_str().unwrap(),
            "--recovery-point",
            "CP-7",
            "--output",
            path.to_str().unwrap(),
        ]),
        0,
    );
    path
}

#[test]
fn without_delete_permission_apply_is_refused_before_commit_and_succeeds_once_granted() {
    let cluster = Cluster::start(1, true);
    let dir = support::scratch("authorization");

    // As admin (the super user): the data topic, safe for cleanup, with 30 + 20 records.
    let topic = unique("authz");
    let control = format!("{topic}-control");
    let mut admin = cluster.kafka();
    assert!(
        admin
            .create_topic(&topic, 2, 1, &support::configs(&support::SAFE))
            .expect("create data topic as admin")
    );
    support::wait_for_topic(&mut admin, &topic, 2);
    let records: Vec<(u32, String, String)> = (0..30)
        .map(|n| (0, format!("k0-{n}"), format!("v{n}")))
        .chain((0..20).map(|n| (1, format!("k1-{n}"), format!("v{n}"))))
        .collect();
    admin.produce_batch(&topic, &records).expect("produce");
    let id = support::topic_id(&mut admin, &topic);
    drop(admin);
    let plan = write_plan(&dir, &topic, &id, 20, 15);
    let untouched = [(0, 0), (1, 0)];

    // What an operator needs, except Delete on the data topic.
    let txn = format!("action-state-cleanup:{control}");
    let read = ["Describe", "DescribeConfigs", "Read"];
    grant(
        &cluster,
        "alice",
        &[&read[..], &["Write", "Create"]].concat(),
        &["--topic", &control],
    );
    grant(&cluster, "alice", &read, &["--topic", &topic]);
    grant(&cluster, "alice", &["IdempotentWrite"], &["--cluster"]);
    grant(
        &cluster,
        "alice",
        &["Write", "Describe"],
        &["--transactional-id", &txn],
    );
    // No consumer-group ACL: the control-log reader and the replay consumer are assign-only
    // (they never join their group, commit, or ask for committed offsets). librdkafka still
    // looks up their group's coordinator, and whether its refusal arrives before a short read
    // ends is a matter of timing; the component ignores it. alice holds no group ACL, and every
    // read below succeeds.

    // 0. Without DescribeConfigs on the cluster, alice's first apply cannot read the brokers'
    // default.replication.factor to choose the new control topic's replication: refused before
    // anything is created, naming both ways out.
    let as_alice = cluster.cli_args(Some("alice"));
    let refused = apply(&plan, &control, &as_alice);
    let (kind, message, hint) = kafka_error(&refused, "alice without cluster DescribeConfigs");
    assert_eq!(kind, "kafka", "{message}");
    for said in [
        "Kafka describe-cluster failed",
        &format!("new control topic {control}"),
        "default.replication.factor",
        "(authorization)",
        "--replication-factor",
        "DescribeConfigs on the cluster",
    ] {
        assert!(message.contains(said), "{said:?} in: {message}");
    }
    assert!(hint.contains("nothing was committed"), "{hint}");
    assert!(
        cluster
            .kafka()
            .describe_topics(std::slice::from_ref(&control))
            .expect("describe")[0]
            .is_none(),
        "the control topic was not created"
    );
    grant(&cluster, "alice", &["DescribeConfigs"], &["--cluster"]);

    // 1. alice with -X settings: refused by the permission probe, before COMMITTED.
    let refused = apply(&plan, &control, &as_alice);
    let (kind, message, hint) = kafka_error(&refused, "alice without Delete (-X)");
    assert_eq!(kind, "kafka", "{message}");
    assert!(
        message.contains("permission probe before commit")
            && message.to_lowercase().contains("authorization"),
        "the message names the probe and the authorization failure: {message}"
    );
    assert!(
        hint.contains("nothing was committed"),
        "the hint says nothing durable happened: {hint}"
    );
    // ...and who lacks which ACL, with the line that grants it (issue 38, item 2).
    for said in [
        "the principal this client authenticates as (User:alice)",
        &format!("Delete on topic {topic}"),
        &format!(
            "kafka-acls.sh --bootstrap-server {} --command-config ADMIN.properties --add --allow-principal 'User:alice' --operation Delete --topic {topic}",
            cluster.bootstrap
        ),
    ] {
        assert!(hint.contains(said), "{said:?} in: {hint}");
    }
    // Under --json the document is the whole answer: stderr stays empty (issue 38, item 5).
    assert_eq!(stderr(&refused), "", "stderr under --json");
    assert_nothing_committed(&cluster, &control, "after the -X refusal");
    assert_eq!(beginnings(&cluster, &topic), untouched, "nothing deleted");

    // 2. The same settings from a Java-style properties file (--kafka-config), bootstrap included.
    let config = dir.join("alice.properties");
    std::fs::write(
        &config,
        format!(
            "# alice, the operator\nbootstrap.servers={}\nsecurity.protocol = SASL_PLAINTEXT\nsasl.mechanism: PLAIN\nsasl.username=alice\nsasl.password={}\n",
            cluster.bootstrap,
            password("alice")
        ),
    )
    .unwrap();
    let from_file = strings(&["--kafka-config", config.to_str().unwrap()]);
    let refused = apply(&plan, &control, &from_file);
    let (kind, message, hint) = kafka_error(&refused, "alice without Delete (--kafka-config)");
    assert_eq!(kind, "kafka", "{message}");
    assert!(
        hint.contains("(User:alice)") && hint.contains("--operation Delete"),
        "the principal comes from the properties file too: {hint}"
    );
    assert!(
        message.contains("permission probe before commit")
            && message.to_lowercase().contains("authorization"),
        "{message}"
    );
    assert!(hint.contains("nothing was committed"), "{hint}");
    assert_nothing_committed(&cluster, &control, "after the --kafka-config refusal");
    assert_eq!(beginnings(&cluster, &topic), untouched, "nothing deleted");

    // 2b. The Kafka tools' own client.properties (a JAAS login) and spelling
    // (--bootstrap-server, --command-config) work as they are: alice reads the status.
    let tools = dir.join("client-alice.properties");
    std::fs::write(
        &tools,
        format!(
            "security.protocol=SASL_PLAINTEXT\nsasl.mechanism=PLAIN\nsasl.jaas.config=org.apache.kafka.common.security.plain.PlainLoginModule required \\\n  username=\"alice\" password=\"{}\";\n",
            password("alice")
        ),
    )
    .unwrap();
    let status = cli(&strings(&[
        "status",
        "--bootstrap-server",
        &cluster.bootstrap,
        "--command-config",
        tools.to_str().unwrap(),
        "--control-topic",
        &control,
        "--json",
    ]));
    assert!(
        status.status.code() == Some(0) || status.status.code() == Some(3),
        "alice logs in with the tools' JAAS file\n{}{}",
        stdout(&status),
        stderr(&status)
    );
    assert!(
        !stderr(&status).contains("authentication")
            && !stdout(&status).contains(&password("alice")),
        "{}{}",
        stdout(&status),
        stderr(&status)
    );

    // 3. bob has no ACL at all; a wrong password does not even authenticate.
    let bob = apply(&plan, &control, &cluster.cli_args(Some("bob")));
    let (kind, message, hint) = kafka_error(&bob, "bob without any ACL");
    assert_eq!(kind, "kafka", "{message}");
    assert!(
        message.to_lowercase().contains("authorization"),
        "bob's error names the authorization failure: {message}"
    );
    assert!(
        hint.contains("(User:bob)")
            && hint.contains("kafka-acls.sh")
            && hint.contains("--allow-principal 'User:bob'"),
        "bob's hint names him and the grant: {hint}"
    );
    eprintln!("bob's hint: {hint}");
    let mut wrong = cluster.cli_args(None);
    wrong.extend(
        [
            "security.protocol=SASL_PLAINTEXT",
            "sasl.mechanism=PLAIN",
            "sasl.username=alice",
            "sasl.password=not-her-password",
        ]
        .iter()
        .flat_map(|pair| ["-X".to_owned(), (*pair).to_owned()]),
    );
    // A wrong password ends at the brokers' first refusal, long before the request timeout
    // (a third of --timeout, here 20 s), and says whose credentials were refused.
    let mut args = strings(&["apply", "--yes", "--plan", plan.to_str().unwrap()]);
    args.extend_from_slice(&wrong);
    args.extend(strings(&[
        "--control-topic",
        &control,
        "--json",
        "--timeout",
        "60",
    ]));
    let started = std::time::Instant::now();
    let unauthenticated = cli(&args);
    let took = started.elapsed();
    let (kind, message, _) = kafka_error(&unauthenticated, "wrong password");
    assert_eq!(kind, "kafka", "{message}");
    assert!(
        took < std::time::Duration::from_secs(20),
        "a refused password must not wait out the request timeout: {took:?}\n{message}"
    );
    for said in [
        "(authentication)",
        "authentication failed",
        "principal alice",
        "sasl.mechanism PLAIN",
    ] {
        assert!(message.contains(said), "{said:?} in: {message}");
    }
    eprintln!("bob: {}", json(&bob)["error"]["message"]);
    eprintln!("wrong password: {message}");
    assert_nothing_committed(&cluster, &control, "after bob and the wrong password");
    assert_eq!(beginnings(&cluster, &topic), untouched, "nothing deleted");

    // 4. Delete granted: the same apply by alice succeeds.
    grant(&cluster, "alice", &["Delete"], &["--topic", &topic]);
    let applied = apply(&plan, &control, &as_alice);
    expect_code(&applied, 0);
    assert_eq!(json(&applied)["outcome"], "applied", "{}", stdout(&applied));
    let plan_id = json(&applied)["planId"].as_str().unwrap().to_owned();
    assert_eq!(
        operations(&cluster, &control),
        [(plan_id, "APPLIED".to_owned())]
    );
    assert_eq!(beginnings(&cluster, &topic), [(0, 20), (1, 15)]);
    // The control topic protected as the README says: DENY Delete and AlterConfigs for everyone
    // but the super user. A DENY wins over alice's own ALLOW, and applies go on regardless.
    grant(&cluster, "alice", &["Delete"], &["--topic", &control]);
    cluster.acls(&[
        "--add",
        "--deny-principal",
        "User:*",
        "--operation",
        "Delete",
        "--operation",
        "AlterConfigs",
        "--topic",
        &control,
    ]);
    let mut as_alice_clients = KafkaClients::new(cluster.settings_as(Some("alice"))).unwrap();
    let kept = as_alice_clients
        .delete_topic(&control)
        .expect_err("the DENY ACL keeps the control topic");
    assert_eq!(
        kept.kind,
        action_state_cleanup::kafka::ErrorKind::Authorization,
        "{kept:?}"
    );
    // Again, from the properties file: already APPLIED, nothing changes.
    let again = apply(&plan, &control, &from_file);
    expect_code(&again, 0);
    assert_eq!(json(&again)["outcome"], "already-applied");
    assert_eq!(beginnings(&cluster, &topic), [(0, 20), (1, 15)]);

    // 5. What the component ignores above, when it comes in time, is real: librdkafka looks up
    // the coordinator of the group id that alice's assign-only consumer must carry, and reports
    // the brokers' refusal from a poll (once: it suppresses repeats). Every read above
    // succeeded whether or not the refusal arrived before the read ended.
    let mut as_alice = KafkaClients::new(cluster.settings_as(Some("alice"))).unwrap();
    let mut consumer = as_alice
        .replay_consumer(&control)
        .expect("alice's consumer");
    consumer.assign(&[(0, 0)]).expect("assign");
    let started = std::time::Instant::now();
    let mut errors = Vec::new();
    while started.elapsed() < std::time::Duration::from_secs(5) {
        if let Err(error) = consumer.poll(100, std::time::Duration::from_millis(100)) {
            errors.push(error);
        }
    }
    assert_eq!(errors.len(), 1, "one refusal in 5 s of polling: {errors:?}");
    assert!(
        errors[0].is_unused_group_refusal(),
        "the refusal is the one the component ignores: {:?}",
        errors[0]
    );

    let _ = std::fs::remove_dir_all(&dir);
}

/// The conformance suite (world `conformance`) against this host on the SASL broker.
fn conformance(
    settings: action_state_cleanup::kafka::KafkaSettings,
    target: action_state_cleanup::cleanup::conformance::Target,
    existing_topic: Option<String>,
    lie: Option<action_state_cleanup::cleanup::Lie>,
) -> Vec<(String, bool, String)> {
    use action_state_cleanup::cleanup::conformance::{Inputs, run_with};
    let engine = action_state_cleanup::engine::new_engine().unwrap();
    let inputs = Inputs {
        target,
        topic_prefix: format!("{}-", unique("conformance")),
        existing_topic,
    };
    let report = run_with(
        &engine,
        action_state_cleanup::CONFORMANCE_COMPONENT_PATH,
        KafkaClients::new(settings).unwrap(),
        &inputs,
        lie,
    )
    .unwrap();
    report
        .checks
        .into_iter()
        .map(|c| (c.name, c.passed, c.detail))
        .collect()
}

#[test]
fn the_rust_host_passes_the_unauthorized_and_unauthenticated_conformance_targets() {
    use action_state_cleanup::cleanup::Lie;
    use action_state_cleanup::cleanup::conformance::Target;
    let cluster = Cluster::start(1, true);
    let topic = unique("forbidden");
    support::create_topic(&mut cluster.kafka(), &topic, 1, &[]);
    let wrong_password = || {
        let mut settings = cluster.settings_as(None);
        for pair in Cluster::sasl_pairs("alice") {
            let pair = if pair.starts_with("sasl.password=") {
                "sasl.password=not-her-password".to_owned()
            } else {
                pair
            };
            settings.set_pair(&pair).unwrap();
        }
        settings.timeout = std::time::Duration::from_secs(10);
        settings
    };
    let failures = |checks: &[(String, bool, String)]| -> Vec<String> {
        checks
            .iter()
            .filter(|(_, passed, _)| !passed)
            .map(|(name, _, detail)| format!("{name}: {detail}"))
            .collect()
    };

    // bob holds no ACL at all.
    let bob = conformance(
        cluster.settings_as(Some("bob")),
        Target::Unauthorized,
        Some(topic.clone()),
        None,
    );
    assert!(bob.len() >= 3, "{bob:?}");
    assert_eq!(failures(&bob), Vec::<String>::new());
    let unauthenticated = conformance(wrong_password(), Target::Unauthenticated, None, None);
    assert!(unauthenticated.len() >= 2, "{unauthenticated:?}");
    assert_eq!(failures(&unauthenticated), Vec::<String>::new());

    // The targets can fail: a host that reports every error as `other` fails both.
    let lying = conformance(
        cluster.settings_as(Some("bob")),
        Target::Unauthorized,
        Some(topic),
        Some(Lie::EverythingIsOther),
    );
    assert!(!failures(&lying).is_empty(), "{lying:?}");
    let lying = conformance(
        wrong_password(),
        Target::Unauthenticated,
        None,
        Some(Lie::EverythingIsOther),
    );
    assert!(!failures(&lying).is_empty(), "{lying:?}");
}
