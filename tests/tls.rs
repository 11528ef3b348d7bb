//! End-to-end over TLS: on a private single-node broker that only speaks SASL_SSL with
//! SCRAM-SHA-512 (`scripts/kafka start --tls`: a broker certificate signed by a CA the script
//! makes), the CLI takes markers, applies a plan, and checks and replays restores, allowed and
//! refused, with nothing but `-X` client properties. A principal without ACLs is refused by the
//! authorizer (SCRAM identified it); a wrong SCRAM password, and a client without the cluster's
//! CA, are refused at once as authentication failures that say what to check. `--version` names
//! the client's TLS and SCRAM support.

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

use action_state_cleanup::kafka::ffi::Spec;
use cluster::Cluster;
use support::{CLI, expect_code, stderr, stdout, unique};

/// Runs the CLI (never with a failpoint): `args`, then the connection arguments.
fn cli(args: &[&str], connection: &[String]) -> Output {
    Command::new(CLI)
        .args(args)
        .args(connection)
        .env_remove("ASC_FAILPOINT")
        .env_remove("ASC_FAILPOINT_PAUSE")
        .env_remove("ASC_FAILPOINT_PAUSE_FILE")
        .output()
        .expect("the CLI runs")
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

/// `--bootstrap-servers B` and `-X` for every pair.
fn connection(cluster: &Cluster, pairs: &[String]) -> Vec<String> {
    let mut args = vec!["--bootstrap-servers".to_owned(), cluster.bootstrap.clone()];
    for pair in pairs {
        args.extend(["-X".to_owned(), pair.clone()]);
    }
    args
}

/// The `--json` error message of a run that exited 4, and how long it took.
fn kafka_failure(args: &[&str], connection: &[String]) -> (String, std::time::Duration) {
    let started = std::time::Instant::now();
    let output = cli(args, connection);
    let took = started.elapsed();
    expect_code(&output, 4);
    let message = json(&output)["error"]["message"]
        .as_str()
        .unwrap_or("")
        .to_owned();
    (message, took)
}

/// `marker --topic T` over the connection, written to `<dir>/<name>.json`.
fn marker_file(dir: &Path, name: &str, topic: &str, connection: &[String]) -> PathBuf {
    let output = cli(&["marker", "--topic", topic], connection);
    expect_code(&output, 0);
    let path = dir.join(format!("{name}.json"));
    std::fs::write(&path, stdout(&output).trim()).unwrap();
    path
}

/// The comma-separated `builtin.features` line of `--version`.
fn builtin_features(version: &str) -> Vec<String> {
    version
        .lines()
        .find_map(|line| line.strip_prefix("builtin.features:"))
        .unwrap_or_else(|| panic!("no builtin.features line in:\n{version}"))
        .trim()
        .split(',')
        .map(str::to_owned)
        .collect()
}

#[test]
fn version_names_the_client_library_and_its_tls_and_scram_support() {
    let output = support::cli(&["--version"]);
    expect_code(&output, 0);
    let text = stdout(&output);
    assert!(
        text.starts_with(&format!(
            "action-state-cleanup {}\n",
            env!("CARGO_PKG_VERSION")
        )),
        "{text}"
    );
    assert!(text.contains("\nlibrdkafka 2."), "{text}");
    let features = builtin_features(&text);
    for wanted in ["ssl", "sasl_plain", "sasl_scram"] {
        assert!(
            features.iter().any(|f| f == wanted),
            "{wanted} in {features:?}"
        );
    }
    eprintln!("{text}");
}

#[test]
fn markers_apply_and_restores_work_over_sasl_ssl_with_scram() {
    let cluster = Cluster::start_tls(1);
    let dir = support::scratch("tls");
    let topic = unique("tls");
    let control = format!("{topic}-control");
    let admin = cluster.cli_args(Some("admin"));
    assert!(
        admin.iter().any(|a| a == "security.protocol=SASL_SSL")
            && admin.iter().any(|a| a == "sasl.mechanism=SCRAM-SHA-512"),
        "{admin:?}"
    );

    // As admin, through the host library (which speaks SASL_SSL too): a data topic safe for
    // cleanup; C0 taken after 100/40 records, C1 after 150/60, then 30 more on partition 0.
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

    // Plan from C1 (offline) and apply it over TLS.
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

    // SCRAM names the principal the authorizer checks: bob holds no ACL.
    let marker = ["marker", "--topic", &topic, "--json", "--timeout", "60"];
    let (message, _) = kafka_failure(&marker, &cluster.cli_args(Some("bob")));
    assert!(
        message.to_lowercase().contains("authorization"),
        "bob is refused by the authorizer: {message}"
    );

    // A wrong SCRAM password, and a client that does not trust the cluster's CA (the system's
    // CAs, which the CLI falls back to, did not sign the broker's certificate), both end at the
    // first refusal, not after the request timeout (a third of --timeout, 20 s), and say why.
    let wrong_password: Vec<String> = cluster
        .auth_pairs("alice")
        .into_iter()
        .map(|pair| {
            if pair.starts_with("sasl.password=") {
                "sasl.password=not-her-password".to_owned()
            } else {
                pair
            }
        })
        .collect();
    let untrusted: Vec<String> = cluster
        .auth_pairs("admin")
        .into_iter()
        .filter(|pair| !pair.starts_with("ssl.ca.location="))
        .collect();
    for (pairs, expected) in [
        (
            wrong_password,
            &[
                "(authentication)",
                "authentication failed",
                "principal alice",
                "sasl.mechanism SCRAM-SHA-512",
                "security.protocol SASL_SSL",
            ][..],
        ),
        (
            untrusted,
            &[
                "_SSL",
                "certificate verify failed",
                "(authentication)",
                "TLS handshake failed over security.protocol SASL_SSL",
                "ssl.ca.location (not set)",
            ][..],
        ),
    ] {
        let (message, took) = kafka_failure(&marker, &connection(&cluster, &pairs));
        for said in expected {
            assert!(message.contains(said), "{said:?} in: {message}");
        }
        assert!(
            took < std::time::Duration::from_secs(20),
            "a refusal must not wait out the request timeout: {took:?}\n{message}"
        );
    }

    let _ = std::fs::remove_dir_all(&dir);
}

/// Runs `program args` and panics with its output if it fails.
fn run_ok(program: &str, args: &[&str]) {
    let output = Command::new(program)
        .args(args)
        .output()
        .unwrap_or_else(|e| panic!("{program} runs: {e}"));
    assert!(
        output.status.success(),
        "{program} {args:?}\n{}{}",
        stdout(&output),
        stderr(&output)
    );
}

/// Java trust stores of the cluster's CA made by keytool (Java's own tool, as the Confluent,
/// AWS MSK and Strimzi guides make them): `trust.jks` and `trust.p12`, with `password`.
fn java_trust_stores(
    cluster: &Cluster,
    dir: &Path,
    password: &str,
) -> [(PathBuf, &'static str); 2] {
    ["JKS", "PKCS12"].map(|kind| {
        let path = dir.join(format!("trust-{kind}"));
        run_ok(
            "keytool",
            &[
                "-importcert",
                "-noprompt",
                "-alias",
                "cluster-ca",
                "-file",
                cluster.ca_path().to_str().unwrap(),
                "-keystore",
                path.to_str().unwrap(),
                "-storetype",
                kind,
                "-storepass",
                password,
            ],
        );
        (path, kind)
    })
}

/// A Java `client.properties` for SASL_SSL/SCRAM-SHA-512 as `user` with the given `ssl.*` lines.
fn java_client_properties(dir: &Path, name: &str, user: &str, ssl: &[String]) -> PathBuf {
    let path = dir.join(format!("{name}.properties"));
    let mut text = format!(
        "security.protocol=SASL_SSL\nsasl.mechanism=SCRAM-SHA-512\nsasl.jaas.config=org.apache.kafka.common.security.scram.ScramLoginModule required username=\"{user}\" password=\"{}\";\n",
        cluster::password(user)
    );
    for line in ssl {
        text.push_str(line);
        text.push('\n');
    }
    std::fs::write(&path, text).unwrap();
    path
}

/// A client key and certificate for `cn`, signed by the cluster's CA (`ca_key` Some) or by
/// itself, in a JKS key store made by keytool from PKCS#12 (store password `store`, key
/// password `key`).
fn java_key_store(
    cluster: &Cluster,
    dir: &Path,
    cn: &str,
    signed_by_cluster_ca: bool,
    store: &str,
    key: &str,
) -> PathBuf {
    let base = dir.join(cn);
    let base = base.to_str().unwrap();
    let (key_file, csr, crt, p12, jks) = (
        format!("{base}.key"),
        format!("{base}.csr"),
        format!("{base}.crt"),
        format!("{base}.p12"),
        format!("{base}.jks"),
    );
    if signed_by_cluster_ca {
        run_ok(
            "openssl",
            &[
                "req",
                "-newkey",
                "rsa:2048",
                "-nodes",
                "-subj",
                &format!("/CN={cn}"),
                "-keyout",
                &key_file,
                "-out",
                &csr,
            ],
        );
        let ca_key = cluster.state.join("tls").join("ca.key");
        run_ok(
            "openssl",
            &[
                "x509",
                "-req",
                "-days",
                "2",
                "-in",
                &csr,
                "-CA",
                cluster.ca_path().to_str().unwrap(),
                "-CAkey",
                ca_key.to_str().unwrap(),
                "-set_serial",
                "0x5eed",
                "-out",
                &crt,
            ],
        );
    } else {
        run_ok(
            "openssl",
            &[
                "req",
                "-x509",
                "-newkey",
                "rsa:2048",
                "-nodes",
                "-days",
                "2",
                "-subj",
                &format!("/CN={cn}"),
                "-keyout",
                &key_file,
                "-out",
                &crt,
            ],
        );
    }
    run_ok(
        "openssl",
        &[
            "pkcs12",
            "-export",
            "-name",
            "client",
            "-in",
            &crt,
            "-inkey",
            &key_file,
            "-passout",
            &format!("pass:{store}"),
            "-out",
            &p12,
        ],
    );
    run_ok(
        "keytool",
        &[
            "-importkeystore",
            "-noprompt",
            "-srckeystore",
            &p12,
            "-srcstoretype",
            "PKCS12",
            "-srcstorepass",
            store,
            "-destkeystore",
            &jks,
            "-deststoretype",
            "JKS",
            "-deststorepass",
            store,
            "-destkeypass",
            key,
        ],
    );
    PathBuf::from(jks)
}

/// The Java client properties of the usual enterprise setup, on brokers that require a client
/// certificate signed by their CA (mutual TLS): JKS and PKCS#12 trust stores (keytool's, of
/// the cluster's CA) are read with their passwords, and so are a JKS key store's client key and
/// certificate (a PKCS#12 key store goes to librdkafka). A client without a certificate, or
/// with one the brokers do not trust, is refused by the brokers. A wrong store or key password
/// is a usage error naming the file, and no store password ever shows.
#[test]
fn java_trust_and_key_stores_are_read_with_their_passwords() {
    let cluster = Cluster::start_tls_client_certs(1);
    let dir = support::scratch("tls-stores");
    let topic = unique("tls-stores");
    let mut kafka = cluster.kafka();
    support::create_topic(&mut kafka, &topic, 1, &support::SAFE);
    let store_password = "trust-PLANTED-7";
    let marker = ["marker", "--topic", &topic, "--json", "--timeout", "60"];
    let run = |config: &Path| {
        let output = cli(
            &marker,
            &[
                "--bootstrap-servers".to_owned(),
                cluster.bootstrap.clone(),
                "--kafka-config".to_owned(),
                config.display().to_string(),
            ],
        );
        let shown = format!("{}{}", stdout(&output), stderr(&output));
        assert!(
            !shown.contains("PLANTED"),
            "a store password shows:\n{shown}"
        );
        output
    };

    // The script's PKCS#12 client key store, which librdkafka reads itself.
    let client_p12 = [
        format!(
            "ssl.keystore.location={}",
            cluster.state.join("tls").join("client.p12").display()
        ),
        "ssl.keystore.password=broker-secret".to_owned(),
    ];
    let trust_stores = java_trust_stores(&cluster, &dir, store_password);
    for (store, kind) in &trust_stores {
        let location = store.display().to_string();
        let mut ssl = vec![
            format!("ssl.truststore.location={location}"),
            format!("ssl.truststore.password={store_password}"),
            format!("ssl.truststore.type={kind}"),
        ];
        ssl.extend(client_p12.iter().cloned());
        let trusted = java_client_properties(&dir, &format!("trusted-{kind}"), "admin", &ssl);
        let output = run(&trusted);
        expect_code(&output, 0);
        assert_eq!(
            json(&output)["marker"]["topic"],
            topic.as_str(),
            "{}",
            stdout(&output)
        );

        let wrong = java_client_properties(
            &dir,
            &format!("wrong-{kind}"),
            "admin",
            &[
                format!("ssl.truststore.location={location}"),
                "ssl.truststore.password=not-the-PLANTED-one".to_owned(),
            ],
        );
        let output = run(&wrong);
        expect_code(&output, 2);
        let message = json(&output)["error"]["message"]
            .as_str()
            .unwrap_or("")
            .to_owned();
        assert!(
            message.contains(&format!("ssl.truststore.location {location}"))
                && message.contains("password is wrong"),
            "{message}"
        );
    }

    // A JKS key store (key password apart from the store's): its certificate, signed by the
    // cluster's CA, is accepted; one the brokers do not trust ends the TLS handshake, which
    // shows the certificate is presented.
    let (trust, _) = &trust_stores[0];
    let ssl = |keystore: &Path, key_password: &str| {
        vec![
            format!("ssl.truststore.location={}", trust.display()),
            format!("ssl.truststore.password={store_password}"),
            format!("ssl.keystore.location={}", keystore.display()),
            format!("ssl.keystore.password=keystore-PLANTED-8"),
            format!("ssl.key.password={key_password}"),
        ]
    };
    let signed = java_key_store(
        &cluster,
        &dir,
        "signed",
        true,
        "keystore-PLANTED-8",
        "key-PLANTED-9",
    );
    let output = run(&java_client_properties(
        &dir,
        "signed",
        "admin",
        &ssl(&signed, "key-PLANTED-9"),
    ));
    expect_code(&output, 0);

    let output = run(&java_client_properties(
        &dir,
        "signed-wrong-key",
        "admin",
        &ssl(&signed, "not-PLANTED"),
    ));
    expect_code(&output, 2);
    let message = json(&output)["error"]["message"]
        .as_str()
        .unwrap_or("")
        .to_owned();
    assert!(
        message.contains(&format!("ssl.keystore.location {}", signed.display()))
            && message.contains("does not open with ssl.key.password: the password is wrong"),
        "{message}"
    );

    // Without a client certificate, or with one the brokers' CA did not sign, the brokers
    // end the TLS handshake: they require one, so the certificates above were presented.
    let stranger = java_key_store(
        &cluster,
        &dir,
        "stranger",
        false,
        "keystore-PLANTED-8",
        "key-PLANTED-9",
    );
    let no_certificate = vec![
        format!("ssl.truststore.location={}", trust.display()),
        format!("ssl.truststore.password={store_password}"),
    ];
    for (name, ssl) in [
        ("stranger", ssl(&stranger, "key-PLANTED-9")),
        ("no-certificate", no_certificate),
    ] {
        let output = run(&java_client_properties(&dir, name, "admin", &ssl));
        expect_code(&output, 4);
        let message = json(&output)["error"]["message"]
            .as_str()
            .unwrap_or("")
            .to_owned();
        // Java answers both with the TLS alert "bad certificate" (42).
        assert!(
            message.contains("SSL alert number"),
            "{name}: the brokers end the handshake: {message}"
        );
        eprintln!("{name}: {message}");
    }

    let _ = std::fs::remove_dir_all(&dir);
}
