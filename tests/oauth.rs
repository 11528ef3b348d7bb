//! End-to-end over OAuth (SASL/OAUTHBEARER with OIDC): on a private single-node broker whose
//! clients must present a JWT that it validates against a JWKS (`scripts/kafka start --oauth`:
//! the script's token server on 127.0.0.1 grants client-credentials tokens, the broker runs
//! Kafka's `OAuthBearerValidatorCallbackHandler`), the CLI takes markers, applies a plan and
//! checks and replays restores as alice, configured by nothing but the Kafka tools'
//! `client.properties` (`OAuthBearerLoginModule` with clientId and clientSecret) or librdkafka's
//! own `sasl.oauthbearer.method=oidc` keys. The token's subject is the principal the ACLs name.
//! A wrong client secret (the token endpoint refuses), a token signed with a key the JWKS does
//! not publish (the broker refuses) and a token endpoint that is down end with exit 4, as
//! authentication failures, long before the request timeout, and show no secret.

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
use std::process::Output;
use std::time::{Duration, Instant};

use action_state_cleanup::kafka::ffi::Spec;
use cluster::Cluster;
use support::{expect_code, json_doc, stdout, unique};

/// The CLI with `args`, logging in with `--kafka-config config` plus `-X extra` pairs.
fn cli(cluster: &Cluster, args: &[&str], config: &Path, extra: &[&str]) -> Output {
    let mut all: Vec<&str> = args.to_vec();
    let config = config.to_str().unwrap();
    all.extend([
        "--bootstrap-servers",
        &cluster.bootstrap,
        "--kafka-config",
        config,
    ]);
    for pair in extra {
        all.extend(["-X", pair]);
    }
    support::cli(&all)
}

/// What an operator needs on the data topic, the control topic, its transactional id and the
/// cluster (README, "Permissions an operator needs").
fn grant_operator(cluster: &Cluster, user: &str, topic: &str, control: &str) {
    let read = ["Describe", "DescribeConfigs", "Read"];
    cluster.grant(
        user,
        &[&read[..], &["Delete"]].concat(),
        &["--topic", topic],
    );
    cluster.grant(
        user,
        &[&read[..], &["Write", "Create"]].concat(),
        &["--topic", control],
    );
    cluster.grant(
        user,
        &["Write", "Describe"],
        &[
            "--transactional-id",
            &format!("action-state-cleanup:{control}"),
        ],
    );
    cluster.grant(
        user,
        &["IdempotentWrite", "DescribeConfigs"],
        &["--cluster"],
    );
}

/// The token endpoint's log: one `client scope` line per token granted.
fn tokens_issued(cluster: &Cluster) -> Vec<String> {
    std::fs::read_to_string(cluster.state.join("oauth").join("issued.log"))
        .unwrap_or_default()
        .lines()
        .map(str::to_owned)
        .collect()
}

fn marker_file(cluster: &Cluster, dir: &Path, name: &str, topic: &str, config: &Path) -> PathBuf {
    let output = cli(cluster, &["marker", "--topic", topic], config, &[]);
    expect_code(&output, 0);
    let path = dir.join(format!("{name}.json"));
    std::fs::write(&path, stdout(&output).trim()).unwrap();
    path
}

#[test]
fn version_names_the_client_librarys_oauthbearer_support() {
    let features = support::builtin_features();
    // oidc is librdkafka's token-endpoint client (it needs libcurl, built in).
    for wanted in ["sasl_oauthbearer", "http", "oidc"] {
        assert!(
            features.iter().any(|f| f == wanted),
            "{wanted} in {features:?}"
        );
    }
}

#[test]
fn markers_apply_and_restores_work_with_an_oidc_token_from_the_java_tools_properties() {
    let cluster = Cluster::start_oauth(1);
    let dir = support::scratch("oauth");
    let topic = unique("oauth");
    let control = format!("{topic}-control");
    let java = cluster.state.join("client-alice.properties");
    let librdkafka = cluster.state.join("rdkafka-alice.properties");
    let java_text = std::fs::read_to_string(&java).unwrap();
    assert!(
        java_text.contains("sasl.mechanism=OAUTHBEARER\n")
            && java_text.contains("OAuthBearerLoginModule required clientId=\"alice\"")
            && java_text.contains("sasl.login.callback.handler.class=org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginCallbackHandler\n")
            && java_text.contains(&format!(
                "sasl.oauthbearer.token.endpoint.url={}/token\n",
                cluster.oauth_url()
            )),
        "the Kafka tools' OIDC login: {java_text}"
    );

    // As admin (PLAIN, the super user): C0 after 100/40 records, C1 after 150/60, then 30 more.
    let mut kafka = cluster.kafka();
    support::create_topic(&mut kafka, &topic, 2, &support::SAFE);
    grant_operator(&cluster, "alice", &topic, &control);
    support::produce(&mut kafka, &topic, 0, 100);
    support::produce(&mut kafka, &topic, 1, 40);
    let c0 = marker_file(&cluster, &dir, "c0", &topic, &java);
    support::produce(&mut kafka, &topic, 0, 50);
    support::produce(&mut kafka, &topic, 1, 20);
    let c1 = marker_file(&cluster, &dir, "c1", &topic, &librdkafka);
    support::produce(&mut kafka, &topic, 0, 30);
    let (c0, c1) = (c0.to_str().unwrap(), c1.to_str().unwrap());
    // Both routes asked the token endpoint as alice, with the scope the files name.
    assert_eq!(tokens_issued(&cluster), ["alice kafka", "alice kafka"]);

    // Apply as alice with the Java tools' file, then check the beginnings as admin.
    let plan = support::plan_file(&dir, Path::new(c1), "C1");
    let applied = cli(
        &cluster,
        &[
            "apply",
            "--yes",
            "--plan",
            plan.to_str().unwrap(),
            "--control-topic",
            &control,
            "--json",
        ],
        &java,
        &[],
    );
    expect_code(&applied, 0);
    assert_eq!(
        json_doc(&applied)["outcome"],
        "applied",
        "{}",
        stdout(&applied)
    );
    let beginnings = kafka
        .list_offsets(&topic, &[0, 1], Spec::Earliest)
        .expect("list offsets");
    assert_eq!(beginnings, [(0, 150), (1, 60)], "the beginnings moved");

    // check-recovery and recover: C1 allowed (30 records replayed), C0 refused.
    let run = |command: &str, markers: &str| {
        cli(
            &cluster,
            &[
                command,
                "--markers",
                markers,
                "--control-topic",
                &control,
                "--json",
            ],
            &java,
            &[],
        )
    };
    expect_code(&run("check-recovery", c1), 0);
    let because =
        format!("{topic}-0 from offset 100 because the committed cleanup boundary is 150");
    let refused = run("check-recovery", c0);
    expect_code(&refused, 6);
    assert!(stdout(&refused).contains(&because), "{}", stdout(&refused));
    let recovered = run("recover", c1);
    expect_code(&recovered, 0);
    assert_eq!(
        json_doc(&recovered)["recordsReplayed"],
        30,
        "{}",
        stdout(&recovered)
    );

    // The token's subject is the principal: bob's token is valid, but bob holds no ACL.
    let bob = cluster.state.join("client-bob.properties");
    let output = cli(
        &cluster,
        &["marker", "--topic", &topic, "--json"],
        &bob,
        &[],
    );
    expect_code(&output, 4);
    let message = json_doc(&output)["error"]["message"]
        .as_str()
        .unwrap_or("")
        .to_owned();
    assert!(
        message.to_lowercase().contains("authorization"),
        "{message}"
    );
    assert!(
        tokens_issued(&cluster).contains(&"bob kafka".to_owned()),
        "bob got a token: {:?}",
        tokens_issued(&cluster)
    );
}

#[test]
fn a_refused_secret_a_forged_token_and_a_token_endpoint_that_is_down_fail_at_once() {
    let cluster = Cluster::start_oauth(1);
    let topic = unique("oauth-refused");
    let mut kafka = cluster.kafka();
    support::create_topic(&mut kafka, &topic, 1, &support::SAFE);
    grant_operator(&cluster, "alice", &topic, &format!("{topic}-control"));
    grant_operator(&cluster, "forged", &topic, &format!("{topic}-control"));
    let java = cluster.state.join("client-alice.properties");
    let librdkafka = cluster.state.join("rdkafka-alice.properties");
    expect_code(
        &cli(&cluster, &["marker", "--topic", &topic], &java, &[]),
        0,
    );

    // The Java file with another secret in its JAAS line; librdkafka's file pointed at the
    // forged client (a token the broker cannot verify), and at a port nobody listens on.
    const PLANTED: &str = "PLANTED-SECRET-4f2a";
    let wrong_secret = support::scratch("oauth-wrong").join("client.properties");
    std::fs::write(
        &wrong_secret,
        std::fs::read_to_string(&java).unwrap().replace(
            "clientSecret=\"alice-secret\"",
            &format!("clientSecret=\"{PLANTED}\""),
        ),
    )
    .unwrap();
    let forged_id = "sasl.oauthbearer.client.id=forged";
    let forged_secret = "sasl.oauthbearer.client.secret=forged-secret";
    let closed = {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        listener.local_addr().unwrap().port()
    };
    let down = format!("sasl.oauthbearer.token.endpoint.url=http://127.0.0.1:{closed}/token");
    let planted = format!("sasl.oauthbearer.client.secret={PLANTED}");
    let url = cluster.oauth_url();
    let no_token = format!("the OIDC token endpoint {url}/token gave client alice no token");
    let refused = format!(
        "the brokers refused the token that {url}/token gave client forged over security.protocol SASL_PLAINTEXT"
    );
    let unreachable = format!("Failed to connect to 127.0.0.1:{closed}");
    let down_hint = format!(
        "the OIDC token endpoint http://127.0.0.1:{closed}/token gave client alice no token"
    );
    let cases: [(&str, &Path, Vec<&str>, Vec<&str>); 3] = [
        (
            "a wrong client secret",
            &wrong_secret,
            vec![],
            vec![
                "Failed to acquire SASL OAUTHBEARER token",
                "invalid_client",
                &no_token,
            ],
        ),
        (
            "a forged token",
            &librdkafka,
            vec![forged_id, forged_secret],
            vec!["SASL authentication error", "invalid_token", &refused],
        ),
        (
            "a token endpoint that is down",
            &librdkafka,
            vec![&down, &planted],
            vec![
                "Failed to acquire SASL OAUTHBEARER token",
                &unreachable,
                &down_hint,
            ],
        ),
    ];
    for (case, config, extra, expected) in cases {
        let started = Instant::now();
        let output = cli(
            &cluster,
            &["marker", "--topic", &topic, "--json", "--timeout", "60"],
            config,
            &extra,
        );
        let took = started.elapsed();
        expect_code(&output, 4);
        let error = &json_doc(&output)["error"];
        let message = format!(
            "{} {}",
            error["message"].as_str().unwrap_or(""),
            error["hint"].as_str().unwrap_or("")
        );
        assert!(
            message.contains("(authentication)"),
            "{case}: an authentication failure: {message}"
        );
        for said in &expected {
            assert!(message.contains(said), "{case}: {said:?} in: {message}");
        }
        assert!(
            !stdout(&output).contains(PLANTED),
            "{case}: a secret shows: {message}"
        );
        assert!(
            !stdout(&output).contains("alice-secret"),
            "{case}: a secret shows"
        );
        assert!(
            took < Duration::from_secs(15),
            "{case}: ended within 15 s, not after the 20-s request timeout: {took:?}"
        );
    }
}
