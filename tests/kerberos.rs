//! End-to-end over Kerberos: on a private single-node broker whose clients must log in with
//! SASL/GSSAPI (`scripts/kafka start --kerberos`: a KDC run from Apache Kerby's Maven artifacts,
//! keytabs for the brokers and the users), the CLI takes markers, applies a plan, and checks
//! and replays restores, allowed and refused. It is configured by nothing but `--kafka-config`
//! (the script's `rdkafka-<user>.properties`) and the environment MIT Kerberos reads
//! (`KRB5_CONFIG`, `KRB5_CLIENT_KTNAME`, `KRB5CCNAME`): no kinit runs, the Kerberos compiled into
//! the CLI takes the ticket from the client keytab itself. The keytab decides the principal:
//! bob's is refused by the authorizer, unless a file ticket cache still holds admin's ticket
//! (hence `KRB5CCNAME=MEMORY:`). The keytab of a principal the KDC deleted, a wrong service
//! name, a krb5.conf without reverse lookup (the brokers advertise 127.0.0.1, their principal is
//! kafka/localhost) and a KDC that is down are refused at once as authentication failures that
//! say what to check and show no secret; the Kafka tools' `Krb5LoginModule` properties (a
//! keytab login) work as they are.
//! `--version` names the client's GSSAPI support.

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
use std::time::{Duration, Instant};

use action_state_cleanup::kafka::ffi::Spec;
use cluster::Cluster;
use support::{CLI, expect_code, stderr, stdout, unique};

/// How the CLI logs in: `--bootstrap-servers`, `--kafka-config FILE`, `-X` pairs, and the
/// Kerberos environment of one keytab.
struct Login {
    args: Vec<String>,
    env: Vec<(String, String)>,
}

impl Login {
    /// `user`'s keytab with the script's `rdkafka-<user>.properties`.
    fn user(cluster: &Cluster, user: &str) -> Login {
        let config = cluster.state.join(format!("rdkafka-{user}.properties"));
        Login {
            args: vec![
                "--bootstrap-servers".to_owned(),
                cluster.bootstrap.clone(),
                "--kafka-config".to_owned(),
                config.display().to_string(),
            ],
            env: cluster.kerberos_env(user),
        }
    }

    /// The same login with `-X key=value` added (a later setting wins).
    fn with(mut self, pair: &str) -> Login {
        self.args.extend(["-X".to_owned(), pair.to_owned()]);
        self
    }
}

/// Runs the CLI (never with a failpoint, never with this process's Kerberos environment):
/// `args`, then the login's arguments, in the login's environment.
fn cli(args: &[&str], login: &Login) -> Output {
    let mut command = Command::new(CLI);
    command
        .args(args)
        .args(&login.args)
        .env_remove("ASC_FAILPOINT")
        .env_remove("ASC_FAILPOINT_PAUSE")
        .env_remove("ASC_FAILPOINT_PAUSE_FILE");
    for name in ["KRB5_CONFIG", "KRB5_CLIENT_KTNAME", "KRB5CCNAME"] {
        command.env_remove(name);
    }
    command.envs(login.env.iter().map(|(k, v)| (k, v)));
    command.output().expect("the CLI runs")
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

/// The `--json` error message of a run that exited 4, and how long it took.
fn kafka_failure(args: &[&str], login: &Login) -> (String, Duration) {
    let started = Instant::now();
    let output = cli(args, login);
    let took = started.elapsed();
    expect_code(&output, 4);
    let message = json(&output)["error"]["message"]
        .as_str()
        .unwrap_or("")
        .to_owned();
    (message, took)
}

/// `marker --topic T` as `login`, written to `<dir>/<name>.json`.
fn marker_file(dir: &Path, name: &str, topic: &str, login: &Login) -> PathBuf {
    let output = cli(&["marker", "--topic", topic], login);
    expect_code(&output, 0);
    let path = dir.join(format!("{name}.json"));
    std::fs::write(&path, stdout(&output).trim()).unwrap();
    path
}

#[test]
fn version_names_the_client_library_and_its_kerberos_support() {
    let output = support::cli(&["--version"]);
    expect_code(&output, 0);
    let text = stdout(&output);
    let features: Vec<&str> = text
        .lines()
        .find_map(|line| line.strip_prefix("builtin.features:"))
        .unwrap_or_else(|| panic!("no builtin.features line in:\n{text}"))
        .trim()
        .split(',')
        .collect();
    for wanted in ["sasl", "sasl_gssapi"] {
        assert!(features.contains(&wanted), "{wanted} in {features:?}");
    }
}

#[test]
fn markers_apply_and_restores_work_over_sasl_gssapi_from_a_keytab_without_kinit() {
    let cluster = Cluster::start_kerberos(1);
    let dir = support::scratch("kerberos");
    let topic = unique("kerberos");
    let control = format!("{topic}-control");
    let admin = Login::user(&cluster, "admin");
    let config = std::fs::read_to_string(cluster.state.join("rdkafka-admin.properties")).unwrap();
    assert!(
        config.contains("security.protocol=SASL_PLAINTEXT\n")
            && config.contains("sasl.mechanism=GSSAPI\n")
            && config.contains("sasl.kerberos.min.time.before.relogin=0\n"),
        "{config}"
    );

    // The data setup goes through the host library in this process, whose MIT Kerberos reads
    // this process's environment: admin's, set before any Kafka client of the process exists.
    for (name, value) in cluster.kerberos_env("admin") {
        // SAFETY: no thread of this process reads the environment through libc meanwhile: no
        // Kafka client exists yet, and the other test of this binary only spawns the CLI, which
        // std does under the same lock as set_var.
        unsafe { std::env::set_var(name, value) };
    }
    // C0 taken after 100/40 records, C1 after 150/60, then 30 more on partition 0.
    let mut kafka = cluster.kafka();
    support::create_topic(&mut kafka, &topic, 2, &support::SAFE);
    support::produce(&mut kafka, &topic, 0, 100);
    support::produce(&mut kafka, &topic, 1, 40);
    let c0 = marker_file(&dir, "c0", &topic, &admin);
    support::produce(&mut kafka, &topic, 0, 50);
    support::produce(&mut kafka, &topic, 1, 20);
    let c1 = marker_file(&dir, "c1", &topic, &admin);
    support::produce(&mut kafka, &topic, 0, 30);
    let (c0, c1) = (c0.to_str().unwrap(), c1.to_str().unwrap());

    // Plan from C1 (offline) and apply it over GSSAPI.
    let plan = support::plan_file(&dir, Path::new(c1), "C1");
    let applied = cli(
        &[
            "apply",
            "--yes",
            "--plan",
            plan.to_str().unwrap(),
            "--control-topic",
            &control,
            "--json",
        ],
        &admin,
    );
    expect_code(&applied, 0);
    assert_eq!(json(&applied)["outcome"], "applied", "{}", stdout(&applied));
    let beginnings = kafka
        .list_offsets(&topic, &[0, 1], Spec::Earliest)
        .expect("list offsets");
    assert_eq!(beginnings, [(0, 150), (1, 60)], "the beginnings moved");

    // check-recovery: C1 is allowed, C0 refused naming partition, offset and boundary.
    let check = |markers: &str| {
        cli(
            &[
                "check-recovery",
                "--markers",
                markers,
                "--control-topic",
                &control,
            ],
            &admin,
        )
    };
    expect_code(&check(c1), 0);
    let refused = check(c0);
    expect_code(&refused, 6);
    let because =
        format!("{topic}-0 from offset 100 because the committed cleanup boundary is 150");
    assert!(stderr(&refused).contains(&because), "{}", stderr(&refused));

    // recover: C1 replays [150, 180) and [60, 60); C0 is refused the same way.
    let recover = |markers: &str| {
        cli(
            &[
                "recover",
                "--markers",
                markers,
                "--control-topic",
                &control,
                "--json",
            ],
            &admin,
        )
    };
    let recovered = recover(c1);
    expect_code(&recovered, 0);
    assert_eq!(
        json(&recovered)["recordsReplayed"],
        30,
        "{}",
        stdout(&recovered)
    );
    let refused = recover(c0);
    expect_code(&refused, 6);
    assert!(stdout(&refused).contains(&because), "{}", stdout(&refused));

    // The keytab is the principal: bob's logs in as bob (the broker says so), who holds no
    // ACL, so the authorizer refuses him.
    let marker = ["marker", "--topic", &topic, "--json", "--timeout", "60"];
    let (message, _) = kafka_failure(&marker, &Login::user(&cluster, "bob"));
    assert!(
        message.to_lowercase().contains("authorization"),
        "bob is refused by the authorizer: {message}"
    );
    let broker_log = std::fs::read_to_string(cluster.state.join("node-1.log")).unwrap();
    assert!(
        broker_log.contains("authenticationID=bob@ASC.TEST"),
        "the broker authenticated bob@ASC.TEST:\n{}",
        cluster.log_tails(20)
    );

    // Why KRB5CCNAME=MEMORY:: with a file cache that holds admin's ticket (MIT keeps the
    // ticket it got from admin's keytab there), bob's keytab is not even read: the client
    // is admin again, and passes where bob would be refused.
    let cache = format!("FILE:{}", dir.join("ticket-cache").display());
    let in_file_cache = |user: &str| {
        let mut login = Login::user(&cluster, user);
        for (name, value) in &mut login.env {
            if name == "KRB5CCNAME" {
                value.clone_from(&cache);
            }
        }
        login
    };
    expect_code(&cli(&marker, &in_file_cache("admin")), 0);
    expect_code(&cli(&marker, &in_file_cache("bob")), 0);

    // A keytab whose principal the KDC deleted, and a service name the brokers do not use,
    // end at the first refusal (not after the request timeout, a third of --timeout: 20 s),
    // naming what to check. A password left in the file from another login never shows.
    const PLANTED: &str = "PLANTED-SECRET-9c1e";
    let retired = Login {
        env: cluster.kerberos_env("retired"),
        ..Login::user(&cluster, "admin")
    }
    .with(&format!("sasl.password={PLANTED}"));
    let wrong_service = Login::user(&cluster, "admin")
        .with("sasl.kerberos.service.name=kafka-broker")
        .with(&format!("sasl.password={PLANTED}"));
    // The brokers advertise 127.0.0.1; the script's krb5.conf has MIT canonicalize that to
    // localhost by reverse lookup (rdns), as Kafka's Java clients do. Without it the client
    // asks for kafka/127.0.0.1, which the KDC does not know.
    let literal = dir.join("krb5-no-rdns.conf");
    let conf = std::fs::read_to_string(cluster.krb5_conf()).unwrap();
    assert!(conf.contains("  rdns = true\n"), "{conf}");
    std::fs::write(
        &literal,
        conf.replace("  rdns = true\n", "  rdns = false\n"),
    )
    .unwrap();
    let mut no_rdns = Login::user(&cluster, "admin");
    for (name, value) in &mut no_rdns.env {
        if name == "KRB5_CONFIG" {
            *value = literal.display().to_string();
        }
    }
    let (message, _) = kafka_failure(&marker, &no_rdns);
    assert!(
        message.contains("Server kafka/127.0.0.1@ASC.TEST not found in Kerberos database")
            && message.contains(&format!("KRB5_CONFIG {}", literal.display())),
        "{message}"
    );

    let krb5_conf = format!("KRB5_CONFIG {}", cluster.krb5_conf().display());
    let retired_keytab = format!("KRB5_CLIENT_KTNAME {}", cluster.keytab("retired").display());
    let admin_keytab = format!("KRB5_CLIENT_KTNAME {}", cluster.keytab("admin").display());
    for (login, expected) in [
        (
            retired,
            [
                "Client 'retired@ASC.TEST' not found in Kerberos database",
                retired_keytab.as_str(),
                "sasl.kerberos.service.name kafka/<broker host>",
            ],
        ),
        (
            wrong_service,
            [
                "Server kafka-broker/localhost@ASC.TEST not found in Kerberos database",
                admin_keytab.as_str(),
                "sasl.kerberos.service.name kafka-broker/<broker host>",
            ],
        ),
    ] {
        let (message, took) = kafka_failure(&marker, &login);
        for said in expected.iter().copied().chain([
            "_AUTHENTICATION",
            "(authentication)",
            "Kerberos (GSSAPI) login failed over security.protocol SASL_PLAINTEXT",
            krb5_conf.as_str(),
        ]) {
            assert!(message.contains(said), "{said:?} in: {message}");
        }
        assert!(!message.contains(PLANTED), "a secret shows: {message}");
        assert!(
            took < Duration::from_secs(20),
            "a refusal must not wait out the request timeout: {took:?}\n{message}"
        );
    }

    // The Kafka tools' properties (a Krb5LoginModule JAAS line with useKeyTab, keyTab and
    // principal) work as they are: the CLI hands the keyTab to its MIT Kerberos, with nothing
    // in the environment but the realm's krb5.conf. The keytab decides the principal: bob's is
    // refused by the authorizer. A principal that is not the keytab's is a usage error.
    let java_tools = |user: &str| Login {
        args: vec![
            "--bootstrap-server".to_owned(),
            cluster.bootstrap.clone(),
            "--command-config".to_owned(),
            cluster
                .state
                .join(format!("client-{user}.properties"))
                .display()
                .to_string(),
        ],
        env: vec![(
            "KRB5_CONFIG".to_owned(),
            cluster.krb5_conf().display().to_string(),
        )],
    };
    let config = std::fs::read_to_string(cluster.state.join("client-admin.properties")).unwrap();
    assert!(
        config.contains("Krb5LoginModule required useKeyTab=true")
            && !config.contains("min.time.before.relogin"),
        "{config}"
    );
    let output = cli(&marker, &java_tools("admin"));
    expect_code(&output, 0);
    assert_eq!(
        json(&output)["marker"]["topic"],
        topic.as_str(),
        "{}",
        stdout(&output)
    );
    let (message, _) = kafka_failure(&marker, &java_tools("bob"));
    assert!(
        message.to_lowercase().contains("authorization"),
        "bob's keytab logs in as bob, whom the authorizer refuses: {message}"
    );
    let mismatched = dir.join("client-admin-as-bob.properties");
    std::fs::write(
        &mismatched,
        config.replace("principal=\"admin@ASC.TEST\"", "principal=\"bob@ASC.TEST\""),
    )
    .unwrap();
    let mut login = java_tools("admin");
    login.args[3] = mismatched.display().to_string();
    let output = cli(&["status", "--control-topic", &control, "--json"], &login);
    expect_code(&output, 2);
    let message = json(&output)["error"]["message"]
        .as_str()
        .unwrap_or("")
        .to_owned();
    assert!(
        message
            .contains("sasl.kerberos.principal bob@ASC.TEST is not the first principal of keytab")
            && message.contains("(admin@ASC.TEST)"),
        "{message}"
    );

    // With the KDC gone, no ticket can be had: refused at once too, naming KRB5_CONFIG.
    let kdc = std::fs::read_to_string(cluster.state.join("kdc.pid")).unwrap();
    let kdc = kdc.trim();
    let killed = Command::new("bash")
        .args(["-c", "kill -KILL \"$1\"", "kill", kdc])
        .status()
        .unwrap();
    assert!(killed.success(), "kill -KILL {kdc}");
    let started = Instant::now();
    while Path::new(&format!("/proc/{kdc}")).exists() {
        assert!(started.elapsed() < Duration::from_secs(10), "the KDC stays");
        std::thread::sleep(Duration::from_millis(100));
    }
    let (message, took) = kafka_failure(&marker, &admin);
    for said in [
        "Cannot contact any KDC for realm 'ASC.TEST'",
        "(authentication)",
        "Kerberos (GSSAPI) login failed",
        krb5_conf.as_str(),
    ] {
        assert!(message.contains(said), "{said:?} in: {message}");
    }
    assert!(took < Duration::from_secs(20), "{took:?}\n{message}");

    let _ = std::fs::remove_dir_all(&dir);
}
