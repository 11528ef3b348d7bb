//! A private Kafka cluster for one test binary: `scripts/kafka start` in a state directory of
//! its own, stopped (and its directory removed) when the guard drops. It never touches the
//! shared cluster of the other end-to-end tests (`.cache/kafka-run`, `ASC_KAFKA_BOOTSTRAP`).
//!
//! Include it next to `mod support;` with `#[path = "support/cluster.rs"] mod cluster;`.

#![allow(dead_code, reason = "each test binary uses a different subset")]
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    reason = "test support: a failure is a failed test"
)]

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::time::{Duration, Instant};

use action_state_cleanup::kafka::{KafkaClients, KafkaSettings};

/// SASL password of a user of a `--sasl` or `--tls` cluster (see `scripts/kafka --help`).
pub fn password(user: &str) -> String {
    format!("{user}-secret")
}

/// One partition as `topics --describe` shows it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PartitionState {
    pub partition: u32,
    /// `None` while no leader is elected (`Leader: none`).
    pub leader: Option<u32>,
    pub replicas: Vec<u32>,
    pub isr: Vec<u32>,
}

/// A topic as `topics --describe` shows it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TopicState {
    pub replication_factor: u32,
    /// The `Configs:` column, e.g. `cleanup.policy=compact,min.insync.replicas=2`.
    pub configs: String,
    pub partitions: Vec<PartitionState>,
}

impl TopicState {
    pub fn leader(&self, partition: u32) -> Option<u32> {
        self.partitions
            .iter()
            .find(|p| p.partition == partition)
            .and_then(|p| p.leader)
    }
}

/// Parses the output of `TopicCommand --describe --topic T` for one topic.
pub fn parse_describe(text: &str) -> Option<TopicState> {
    let field = |line: &str, name: &str| -> Option<String> {
        line.split('\t')
            .map(str::trim)
            .find_map(|f| f.strip_prefix(name).map(|v| v.trim().to_owned()))
    };
    let ids = |value: &str| -> Vec<u32> {
        value
            .split(',')
            .filter_map(|v| v.trim().parse().ok())
            .collect()
    };
    let mut topic = None;
    for line in text.lines() {
        if let Some(rf) = field(line, "ReplicationFactor:") {
            topic = Some(TopicState {
                replication_factor: rf.parse().ok()?,
                configs: field(line, "Configs:").unwrap_or_default(),
                partitions: Vec::new(),
            });
        } else if let (Some(state), Some(partition)) = (topic.as_mut(), field(line, "Partition:")) {
            let leader = field(line, "Leader:").unwrap_or_default();
            state.partitions.push(PartitionState {
                partition: partition.parse().ok()?,
                leader: leader
                    .parse()
                    .ok()
                    .filter(|&l: &i64| l >= 0)
                    .map(|l| l as u32),
                replicas: ids(&field(line, "Replicas:").unwrap_or_default()),
                isr: ids(&field(line, "Isr:").unwrap_or_default()),
            });
        }
    }
    topic
}

/// A running cluster in a private state directory; stopped when dropped.
pub struct Cluster {
    pub state: PathBuf,
    pub bootstrap: String,
    pub brokers: u32,
    /// Clients must authenticate (`--sasl`, or `--tls`, which implies it) and ACLs apply.
    pub sasl: bool,
    /// `--tls`: clients use SASL_SSL with SCRAM-SHA-512 and trust `ca_path()`.
    pub tls: bool,
    /// `--kerberos`: clients use SASL_PLAINTEXT with GSSAPI; a user's key is `keytab(user)`,
    /// handed to MIT Kerberos in the environment (`kerberos_env`).
    pub kerberos: bool,
    /// Started by this guard, which stops it; an attached cluster (`attach`) is left running.
    owned: bool,
}

fn script_path() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../scripts/kafka")
}

impl Cluster {
    /// `scripts/kafka start --brokers N [--sasl] --state-dir <fresh temp dir>`.
    pub fn start(brokers: u32, sasl: bool) -> Cluster {
        Self::launch_as(
            brokers,
            if sasl {
                Security::Sasl
            } else {
                Security::Plain
            },
        )
    }

    /// `scripts/kafka start --brokers N --default-replication-factor 1 --state-dir <fresh temp
    /// dir>`: brokers left at the `default.replication.factor` Kafka ships (an untuned cluster).
    pub fn start_untuned(brokers: u32) -> Cluster {
        Self::launch_with(
            brokers,
            Security::Plain,
            &["--default-replication-factor", "1"],
        )
    }

    /// `scripts/kafka start --brokers N --tls --state-dir <fresh temp dir>`: SASL_SSL with
    /// SCRAM-SHA-512, a certificate signed by the script's CA (`ca_path()`), ACLs as `--sasl`.
    pub fn start_tls(brokers: u32) -> Cluster {
        Self::launch_as(brokers, Security::Tls)
    }

    /// `scripts/kafka start --brokers N --tls --client-certs --state-dir <fresh temp dir>`: as
    /// `start_tls`, and clients must present a certificate the CA signed (mutual TLS); the
    /// users' properties present `client_cert()`.
    pub fn start_tls_client_certs(brokers: u32) -> Cluster {
        Self::launch_with(brokers, Security::Tls, &["--client-certs"])
    }

    /// The client certificate and key (PEM) of a `--tls --client-certs` cluster, if it has one.
    pub fn client_cert(&self) -> Option<(PathBuf, PathBuf)> {
        let dir = self.state.join("tls");
        let cert = dir.join("client.crt");
        cert.exists().then(|| (cert, dir.join("client.key")))
    }

    /// `scripts/kafka start --brokers N --kerberos --state-dir <fresh temp dir>`: SASL_PLAINTEXT
    /// with GSSAPI against the script's KDC, ACLs as `--sasl`.
    pub fn start_kerberos(brokers: u32) -> Cluster {
        Self::launch_as(brokers, Security::Kerberos)
    }

    /// `scripts/kafka start --brokers N --oauth --state-dir <fresh temp dir>`: clients log in
    /// with SASL/OAUTHBEARER and a token of the script's OIDC endpoint (`oauth_url()`), admin
    /// with SASL/PLAIN (`kafka()`); ACLs as `--sasl`.
    pub fn start_oauth(brokers: u32) -> Cluster {
        Self::launch_as(brokers, Security::OAuth)
    }

    /// The OIDC token server of an `--oauth` cluster (`http://127.0.0.1:PORT`).
    pub fn oauth_url(&self) -> String {
        std::fs::read_to_string(self.state.join("oauth").join("ready"))
            .expect("an --oauth cluster's token server")
            .trim()
            .to_owned()
    }

    fn launch_as(brokers: u32, security: Security) -> Cluster {
        Self::launch_with(brokers, security, &[])
    }

    fn launch_with(brokers: u32, security: Security, extra: &[&str]) -> Cluster {
        let state = std::env::temp_dir().join(super::support::unique("asc-kafka"));
        std::fs::create_dir_all(&state).expect("state dir");
        let mut cluster = Cluster {
            state,
            bootstrap: String::new(),
            brokers,
            sasl: security != Security::Plain,
            tls: security == Security::Tls,
            kerberos: security == Security::Kerberos,
            owned: true,
        };
        let brokers_arg = brokers.to_string();
        let mut args = vec!["start", "--brokers", brokers_arg.as_str()];
        args.extend(security.flag());
        args.extend_from_slice(extra);
        let started = Instant::now();
        // From here on the guard stops whatever started, even if start fails half-way.
        let output = cluster.script(&args);
        assert!(
            output.status.success(),
            "scripts/kafka {args:?} failed:\n{}",
            String::from_utf8_lossy(&output.stderr)
        );
        cluster.bootstrap = String::from_utf8(output.stdout)
            .expect("utf-8")
            .trim()
            .to_owned();
        eprintln!(
            "cluster of {brokers} node(s){} at {} in {} ready after {:.1} s",
            security.description(),
            cluster.bootstrap,
            cluster.state.display(),
            started.elapsed().as_secs_f64()
        );
        cluster
    }

    /// The plaintext cluster already running in `state` (`scripts/kafka start --brokers N
    /// --state-dir DIR`), for a test that runs many rounds, several times: left running, and
    /// its directory kept, when the guard drops.
    pub fn attach(state: PathBuf) -> Cluster {
        let mut cluster = Cluster {
            state,
            bootstrap: String::new(),
            brokers: 0,
            sasl: false,
            tls: false,
            kerberos: false,
            owned: false,
        };
        cluster.bootstrap = cluster.script_ok(&["bootstrap"]).trim().to_owned();
        cluster.brokers = u32::try_from(cluster.bootstrap.split(',').count()).unwrap();
        eprintln!(
            "attached to the cluster of {} node(s) at {} in {}",
            cluster.brokers,
            cluster.bootstrap,
            cluster.state.display()
        );
        cluster
    }

    /// Runs `scripts/kafka CMD --state-dir <ours> ARGS...` (first element of `args` is CMD),
    /// never against the shared cluster.
    pub fn script(&self, args: &[&str]) -> Output {
        let (command, rest) = args.split_first().expect("a command");
        Command::new(script_path())
            .arg(command)
            .arg("--state-dir")
            .arg(&self.state)
            .args(rest)
            .env_remove("ASC_KAFKA_BOOTSTRAP")
            .env("ASC_KAFKA_STATE", &self.state)
            .output()
            .expect("scripts/kafka runs")
    }

    /// Like `script`, but the command must succeed; returns its stdout.
    pub fn script_ok(&self, args: &[&str]) -> String {
        let output = self.script(args);
        assert!(
            output.status.success(),
            "scripts/kafka {args:?} failed ({:?}):\n{}\n{}",
            output.status.code(),
            String::from_utf8_lossy(&output.stdout),
            String::from_utf8_lossy(&output.stderr)
        );
        String::from_utf8_lossy(&output.stdout).into_owned()
    }

    pub fn kill_node(&self, node: u32) {
        self.script_ok(&["kill-node", &node.to_string()]);
    }

    /// Restarts a killed node and waits (in the script) until it is an unfenced broker again.
    pub fn start_node(&self, node: u32) {
        self.script_ok(&["start-node", &node.to_string()]);
    }

    /// `topics --describe --topic T`, parsed; `None` if the tool failed or showed nothing.
    pub fn describe(&self, topic: &str) -> Option<TopicState> {
        let output = self.script(&["topics", "--describe", "--topic", topic]);
        if !output.status.success() {
            return None;
        }
        parse_describe(&String::from_utf8_lossy(&output.stdout))
    }

    /// Waits until every partition of every topic has a leader and `want` in-sync replicas;
    /// returns how long that took. Panics after `limit`.
    pub fn wait_for_isr(&self, topics: &[&str], want: usize, limit: Duration) -> Duration {
        let started = Instant::now();
        loop {
            let states: Vec<Option<TopicState>> = topics.iter().map(|t| self.describe(t)).collect();
            let healthy = states.iter().all(|state| {
                state.as_ref().is_some_and(|s| {
                    !s.partitions.is_empty()
                        && s.partitions
                            .iter()
                            .all(|p| p.leader.is_some() && p.isr.len() == want)
                })
            });
            if healthy {
                return started.elapsed();
            }
            assert!(
                started.elapsed() < limit,
                "in-sync replicas of {topics:?} did not recover to {want} within {limit:?}: {states:?}"
            );
            std::thread::sleep(Duration::from_millis(500));
        }
    }

    /// The CA certificate (PEM) that signed a `--tls` cluster's broker certificate.
    pub fn ca_path(&self) -> PathBuf {
        self.state.join("ca.pem")
    }

    /// `scripts/kafka acls ARGS...` (as admin on a `--sasl` cluster), which must succeed.
    pub fn acls(&self, args: &[&str]) {
        let mut all = vec!["acls"];
        all.extend_from_slice(args);
        self.script_ok(&all);
    }

    /// `acls --add --allow-principal User:<user> --operation O... <resource>` (as admin).
    pub fn grant(&self, user: &str, operations: &[&str], resource: &[&str]) {
        let principal = format!("User:{user}");
        let mut args = vec!["--add", "--allow-principal", principal.as_str()];
        for operation in operations {
            args.extend(["--operation", operation]);
        }
        args.extend_from_slice(resource);
        self.acls(&args);
    }

    /// librdkafka settings that authenticate as `user` on this cluster (see `auth_pairs`).
    pub fn settings_as(&self, user: Option<&str>) -> KafkaSettings {
        let mut settings = KafkaSettings::new(&self.bootstrap);
        settings.timeout = Duration::from_secs(30);
        if let Some(user) = user {
            for pair in self.auth_pairs(user) {
                settings.set_pair(&pair).unwrap();
            }
        }
        settings
    }

    /// Host-library clients; on a `--sasl` cluster they authenticate as admin (on a `--kerberos`
    /// cluster with the keytab this process's environment names: `kerberos_env("admin")`).
    pub fn kafka(&self) -> KafkaClients {
        let user = self.sasl.then_some("admin");
        KafkaClients::new(self.settings_as(user)).expect("kafka clients")
    }

    /// `key=value` librdkafka properties that log in as `user` with SASL/PLAIN.
    pub fn sasl_pairs(user: &str) -> Vec<String> {
        vec![
            "security.protocol=SASL_PLAINTEXT".to_owned(),
            "sasl.mechanism=PLAIN".to_owned(),
            format!("sasl.username={user}"),
            format!("sasl.password={}", password(user)),
        ]
    }

    /// The krb5.conf of a `--kerberos` cluster: its realm and KDC.
    pub fn krb5_conf(&self) -> PathBuf {
        self.state.join("krb5.conf")
    }

    /// The keytab of `user` on a `--kerberos` cluster (`retired`: a principal the KDC deleted).
    pub fn keytab(&self, user: &str) -> PathBuf {
        self.state.join("kerberos").join(format!("{user}.keytab"))
    }

    /// The environment in which the CLI's MIT Kerberos logs in as `user` on a `--kerberos`
    /// cluster without kinit: the realm's krb5.conf, the client keytab it takes the ticket
    /// from, and a ticket cache in memory, so that no ticket of another principal (a file
    /// cache of an earlier login) decides who the client is.
    pub fn kerberos_env(&self, user: &str) -> Vec<(String, String)> {
        vec![
            (
                "KRB5_CONFIG".to_owned(),
                self.krb5_conf().display().to_string(),
            ),
            (
                "KRB5_CLIENT_KTNAME".to_owned(),
                self.keytab(user).display().to_string(),
            ),
            ("KRB5CCNAME".to_owned(), "MEMORY:".to_owned()),
        ]
    }

    /// `key=value` librdkafka properties that log in as `user` on this cluster: SASL/PLAIN, on
    /// a `--tls` cluster SCRAM-SHA-512 over SASL_SSL trusting the cluster's CA, on a
    /// `--kerberos` cluster GSSAPI with no kinit (the user is the keytab of `kerberos_env`).
    pub fn auth_pairs(&self, user: &str) -> Vec<String> {
        if self.kerberos {
            return vec![
                "security.protocol=SASL_PLAINTEXT".to_owned(),
                "sasl.mechanism=GSSAPI".to_owned(),
                "sasl.kerberos.service.name=kafka".to_owned(),
                "sasl.kerberos.min.time.before.relogin=0".to_owned(),
            ];
        }
        if !self.tls {
            return Self::sasl_pairs(user);
        }
        let mut pairs = vec![
            "security.protocol=SASL_SSL".to_owned(),
            "sasl.mechanism=SCRAM-SHA-512".to_owned(),
            format!("sasl.username={user}"),
            format!("sasl.password={}", password(user)),
            format!("ssl.ca.location={}", self.ca_path().display()),
        ];
        if let Some((cert, key)) = self.client_cert() {
            pairs.push(format!("ssl.certificate.location={}", cert.display()));
            pairs.push(format!("ssl.key.location={}", key.display()));
        }
        pairs
    }

    /// CLI arguments `--bootstrap-servers B` plus `-X ...` logging in as `user` (if any).
    pub fn cli_args(&self, user: Option<&str>) -> Vec<String> {
        let mut args = vec!["--bootstrap-servers".to_owned(), self.bootstrap.clone()];
        if let Some(user) = user {
            for pair in self.auth_pairs(user) {
                args.push("-X".to_owned());
                args.push(pair);
            }
        }
        args
    }

    /// `apply --yes --plan P --control-topic C --replication-factor 3 --json` against this
    /// cluster, with no test failpoint inherited from the environment.
    pub fn apply_command(&self, plan: &Path, control: &str) -> Command {
        let mut command = Command::new(crate::support::CLI);
        command
            .args([
                "apply",
                "--yes",
                "--plan",
                plan.to_str().expect("utf-8 path"),
            ])
            .args(self.cli_args(None))
            .args([
                "--control-topic",
                control,
                "--replication-factor",
                "3",
                "--json",
            ])
            .env_remove("ASC_FAILPOINT")
            .env_remove("ASC_FAILPOINT_PAUSE")
            .env_remove("ASC_FAILPOINT_PAUSE_FILE");
        command
    }

    /// The tail of every node's log, for a failure message.
    pub fn log_tails(&self, lines: usize) -> String {
        let mut text = String::new();
        for node in 1..=self.brokers {
            let path = self.state.join(format!("node-{node}.log"));
            let log = std::fs::read_to_string(&path).unwrap_or_default();
            let all: Vec<&str> = log.lines().collect();
            let from = all.len().saturating_sub(lines);
            text.push_str(&format!("---- {} ----\n", path.display()));
            text.push_str(&all[from..].join("\n"));
            text.push('\n');
        }
        text
    }
}

/// How clients authenticate to a cluster: the `scripts/kafka start` flag.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Security {
    Plain,
    Sasl,
    Tls,
    Kerberos,
    OAuth,
}

impl Security {
    fn flag(self) -> Option<&'static str> {
        match self {
            Security::Plain => None,
            Security::Sasl => Some("--sasl"),
            Security::Tls => Some("--tls"),
            Security::Kerberos => Some("--kerberos"),
            Security::OAuth => Some("--oauth"),
        }
    }

    fn description(self) -> &'static str {
        match self {
            Security::Plain => "",
            Security::Sasl => " (SASL/PLAIN, ACLs)",
            Security::Tls => " (SASL_SSL/SCRAM-SHA-512, ACLs)",
            Security::Kerberos => " (SASL_PLAINTEXT/GSSAPI, a KDC, ACLs)",
            Security::OAuth => " (SASL_PLAINTEXT/OAUTHBEARER, an OIDC token endpoint, ACLs)",
        }
    }
}

impl Drop for Cluster {
    fn drop(&mut self) {
        if !self.owned {
            return;
        }
        let output = self.script(&["stop"]);
        if !output.status.success() {
            eprintln!(
                "scripts/kafka stop --state-dir {} failed: {}",
                self.state.display(),
                String::from_utf8_lossy(&output.stderr)
            );
        }
        if std::thread::panicking() {
            eprintln!(
                "cluster state (logs, data) kept for inspection in {}",
                self.state.display()
            );
        } else {
            let _ = std::fs::remove_dir_all(&self.state);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_topic_command_describe_output() {
        let text = "Topic: t\tTopicId: abc\tPartitionCount: 2\tReplicationFactor: 3\tConfigs: min.insync.replicas=2,cleanup.policy=compact,delete\n\tTopic: t\tPartition: 0\tLeader: 2\tReplicas: 2,3,1\tIsr: 2,1\tElr: \tLastKnownElr: \n\tTopic: t\tPartition: 1\tLeader: none\tReplicas: 3,1,2\tIsr: 3\tElr: \tLastKnownElr: \n";
        let state = parse_describe(text).unwrap();
        assert_eq!(state.replication_factor, 3);
        assert_eq!(
            state.configs,
            "min.insync.replicas=2,cleanup.policy=compact,delete"
        );
        assert_eq!(
            state.partitions,
            [
                PartitionState {
                    partition: 0,
                    leader: Some(2),
                    replicas: vec![2, 3, 1],
                    isr: vec![2, 1]
                },
                PartitionState {
                    partition: 1,
                    leader: None,
                    replicas: vec![3, 1, 2],
                    isr: vec![3]
                },
            ]
        );
        assert_eq!(state.leader(0), Some(2));
        assert_eq!(parse_describe(""), None);
    }
}
