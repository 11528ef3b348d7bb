//! For a step the brokers refused for want of an ACL: who was refused what, on which resource,
//! and the `kafka-acls.sh` line that grants it. The principal is what the client configuration
//! says it authenticates as; the operation and resource follow from the step that failed and
//! the topics of the command that ran it.

use std::sync::Mutex;

use action_state_cleanup::cleanup::{KafkaError, KafkaFailure};
use action_state_cleanup::kafka::KafkaSettings;

/// The topics the running command works on, named in the grant (set once per command).
static TOPICS: Mutex<Topics> = Mutex::new(Topics {
    data: None,
    control: None,
});

struct Topics {
    data: Option<String>,
    control: Option<String>,
}

/// Names the command's data topic and control topic, for the grant a refusal needs.
pub fn set_topics(data: Option<&str>, control: Option<&str>) {
    if let Ok(mut topics) = TOPICS.lock() {
        topics.data = data.map(str::to_owned);
        topics.control = control.map(str::to_owned);
    }
}

/// What one Kafka step needs: ACL operations on one resource (`--topic T`, `--cluster`, …).
struct Grant {
    operations: &'static [&'static str],
    /// The `kafka-acls.sh` resource arguments, e.g. `--topic orders`.
    resource: String,
    /// The resource in words, e.g. "topic orders".
    named: String,
}

fn topic(name: &str) -> (String, String) {
    (format!("--topic {name}"), format!("topic {name}"))
}

/// The grants a failed step needs, from its operation name (`kafka-failure.operation`).
fn grants(operation: &str, topics: &Topics) -> Vec<Grant> {
    let data = topics.data.as_deref();
    let control = topics.control.as_deref();
    let on = |name: Option<&str>, operations: &'static [&'static str]| {
        name.map(|name| {
            let (resource, named) = topic(name);
            Grant {
                operations,
                resource,
                named,
            }
        })
    };
    let step = operation.split(' ').next().unwrap_or(operation);
    match step {
        "describe" => [
            on(data, &["Describe", "DescribeConfigs"]),
            on(control, &["Describe", "DescribeConfigs"]),
        ]
        .into_iter()
        .flatten()
        .collect(),
        "list-offsets" => on(data, &["Describe"]).into_iter().collect(),
        "delete-records" => on(data, &["Delete"]).into_iter().collect(),
        "read-control-log" => on(control, &["Read"]).into_iter().collect(),
        "append-control" => on(control, &["Write"]).into_iter().collect(),
        "create-topic" => on(control, &["Create"]).into_iter().collect(),
        "fence-control" => control
            .map(|control| Grant {
                operations: &["Write", "Describe"],
                resource: format!("--transactional-id action-state-cleanup:{control}"),
                named: format!("transactional id action-state-cleanup:{control}"),
            })
            .into_iter()
            .collect(),
        "describe-cluster" => vec![Grant {
            operations: &["DescribeConfigs"],
            resource: "--cluster".into(),
            named: "the cluster".into(),
        }],
        // The replay consumer's steps read the data topic.
        _ if operation.contains("replay") || operation.contains("poll") => {
            on(data, &["Read"]).into_iter().collect()
        }
        _ => Vec::new(),
    }
}

/// The principal the brokers see, as far as the client configuration says, and whether it is
/// known exactly (a placeholder otherwise, with where to find it).
fn principal(settings: &KafkaSettings) -> (String, bool) {
    let property = |key: &str| settings.properties.get(key).map(String::as_str);
    let protocol = property("security.protocol")
        .unwrap_or("PLAINTEXT")
        .to_ascii_uppercase();
    let mechanism = property("sasl.mechanism")
        .unwrap_or("GSSAPI")
        .to_ascii_uppercase();
    if !protocol.starts_with("SASL") {
        return if protocol == "SSL" {
            (
                "User:<distinguished name of the client certificate in ssl.certificate.location>"
                    .into(),
                false,
            )
        } else {
            ("User:ANONYMOUS".into(), true)
        };
    }
    match mechanism.as_str() {
        "PLAIN" | "SCRAM-SHA-256" | "SCRAM-SHA-512" => match property("sasl.username") {
            Some(user) => (format!("User:{user}"), true),
            None => ("User:<sasl.username>".into(), false),
        },
        "GSSAPI" => match property("sasl.kerberos.principal") {
            // The brokers' default principal.to.local rule keeps the primary name.
            Some(principal) => {
                let primary = principal.split(['/', '@']).next().unwrap_or(principal);
                (format!("User:{primary}"), true)
            }
            None => (
                "User:<primary of the Kerberos principal in the client's keytab (klist -k)>".into(),
                false,
            ),
        },
        _ => (
            "User:<subject (sub claim) of the client's OAuth token>".into(),
            false,
        ),
    }
}

/// The hint for a step the brokers refused for want of an ACL (`None` for anything else, and
/// for a step whose resource this command does not know).
pub fn hint(failure: &KafkaFailure, settings: &KafkaSettings) -> Option<String> {
    let Some(KafkaError::Authorization(_)) = &failure.cause else {
        return None;
    };
    let needed = match TOPICS.lock() {
        Ok(topics) => grants(&failure.operation, &topics),
        Err(_) => Vec::new(),
    };
    if needed.is_empty() {
        return None;
    }
    let (principal, known) = principal(settings);
    let who = if known {
        format!("the principal this client authenticates as ({principal})")
    } else {
        format!("the principal this client authenticates as, {principal},")
    };
    let what = needed
        .iter()
        .map(|g| format!("{} on {}", g.operations.join(" and "), g.named))
        .collect::<Vec<_>>()
        .join(", and ");
    let bootstrap = settings.bootstrap_servers();
    let commands = needed
        .iter()
        .map(|g| {
            let operations = g
                .operations
                .iter()
                .map(|o| format!("--operation {o}"))
                .collect::<Vec<_>>()
                .join(" ");
            format!(
                "kafka-acls.sh --bootstrap-server {bootstrap} --command-config ADMIN.properties --add --allow-principal '{principal}' {operations} {}",
                g.resource
            )
        })
        .collect::<Vec<_>>()
        .join("; ");
    Some(format!(
        "the brokers' ACLs do not allow {who} {what} ({}); an administrator grants it with: {commands}",
        failure.operation
    ))
}
