//! Building a cleanup-component instance with the operator's Kafka settings.

use std::cell::OnceCell;
use std::rc::Rc;

use action_state_cleanup::CLEANUP_COMPONENT;
use action_state_cleanup::cleanup::{
    CleanupComponent, CleanupError, CleanupInstance, NewControlTopic, OperatorEvents,
    PartitionPreview, Review,
};
use action_state_cleanup::engine::new_engine;
use action_state_cleanup::kafka::{KafkaClients, KafkaSettings};
use action_state_cleanup::trace;

use super::args::KafkaArgs;
use super::failure::Failure;

/// Kafka settings from the command line: the properties file first, then `-X`, then
/// `--bootstrap-servers`, so the most specific setting wins.
pub fn kafka_settings(args: &KafkaArgs) -> Result<KafkaSettings, Failure> {
    let mut settings = KafkaSettings::new("");
    settings.properties.clear();
    if let Some(path) = &args.kafka_config {
        settings
            .load_properties_file(path)
            .map_err(Failure::usage)?;
    }
    for pair in &args.properties {
        settings.set_pair(pair).map_err(Failure::usage)?;
    }
    if let Some(servers) = &args.bootstrap_servers {
        settings
            .properties
            .insert("bootstrap.servers".into(), servers.clone());
    }
    // From here on no output shows a secret the operator configured, whatever echoes it: the
    // Java properties' secrets, and those the translation derives from them (a JKS key as
    // ssl.key.pem).
    let mut secrets = settings.secrets();
    if args.debug {
        action_state_cleanup::kafka::client_log::show_client_logs(|line| errln!("{line}"));
    }
    let translated = action_state_cleanup::kafka::java_client::translate(&mut settings.properties);
    secrets.extend(settings.secrets());
    secrets.sort_by_key(|s| std::cmp::Reverse(s.len()));
    secrets.dedup();
    super::output::hide_secrets(secrets);
    translated.map_err(|e| Failure::usage(format!("Kafka client configuration: {e}")))?;
    kerberos_keytab_login(&mut settings)?;
    check_client_properties(&settings)?;
    if settings.bootstrap_servers().trim().is_empty() {
        return Err(Failure::usage(
            "no Kafka bootstrap servers: pass --bootstrap-servers, -X bootstrap.servers=… or set it in --kafka-config",
        ));
    }
    if args.timeout == 0 {
        return Err(Failure::usage("--timeout must be at least 1 second"));
    }
    settings.timeout = std::time::Duration::from_secs(args.timeout);
    Ok(settings)
}

/// A GSSAPI login from `sasl.kerberos.keytab` (a Java `Krb5LoginModule` line's keyTab): the
/// keytab goes to the MIT Kerberos in this process through its environment, since librdkafka
/// only hands the keytab to a kinit command (which is then not run).
fn kerberos_keytab_login(settings: &mut KafkaSettings) -> Result<(), Failure> {
    let properties = &mut settings.properties;
    let gssapi = properties
        .get("sasl.mechanism")
        .or_else(|| properties.get("sasl.mechanisms"))
        .is_some_and(|m| m.trim().eq_ignore_ascii_case("GSSAPI"));
    let Some(keytab) = properties.get("sasl.kerberos.keytab").filter(|_| gssapi) else {
        return Ok(());
    };
    let environment = action_state_cleanup::kafka::keytab::login_environment(
        keytab,
        properties
            .get("sasl.kerberos.principal")
            .map(String::as_str),
    )
    .map_err(|e| Failure::usage(format!("Kafka client configuration: {e}")))?;
    properties
        .entry("sasl.kerberos.min.time.before.relogin".to_owned())
        .or_insert_with(|| "0".to_owned());
    for (name, value) in environment {
        // SAFETY: the CLI reads its Kafka settings before any thread of its own, of the
        // component runtime or of librdkafka exists (see `interrupt::block` in apply), so no
        // thread reads the environment meanwhile.
        unsafe { std::env::set_var(name, value) };
    }
    Ok(())
}

/// librdkafka checks every property name and value now, so that a local configuration mistake
/// is a usage error (exit 2) before any Kafka call, not a failed request.
fn check_client_properties(settings: &KafkaSettings) -> Result<(), Failure> {
    let mut config = rdkafka::ClientConfig::new();
    for (key, value) in &settings.properties {
        config.set(key, value);
    }
    config.create_native_config().map(|_| ()).map_err(|e| {
        Failure::usage(format!("Kafka client configuration is not valid: {e}"))
            .with_hint("the properties are librdkafka's (-X key=value, --kafka-config FILE); a Java client.properties works for SASL/PLAIN, SCRAM, Kerberos keytab and OIDC (OAuthBearerLoginModule with clientId and clientSecret) logins and JKS, PKCS#12 or PEM stores")
    })
}

/// Shows the component's retries as progress lines on stderr, so that an unreachable cluster is
/// not silence until the deadline; never asks (every review proceeds).
pub struct Progress;

impl Progress {
    pub fn retrying(&self, message: &str, remaining_ms: u64) {
        errln!(
            "waiting: {message}; trying again for up to {} s more",
            remaining_ms.div_ceil(1000)
        );
    }

    /// A request still waiting for its answer (a wide DeleteRecords waits for every replica):
    /// a line after 2 s, then every 5 s, so a long wait is never silence.
    pub fn waiting(&self, what: &str, elapsed: std::time::Duration) {
        let seconds = elapsed.as_secs();
        if seconds >= 2 && (seconds - 2).is_multiple_of(5) {
            errln!("progress: {what}: waiting for the brokers' answer for {seconds} s");
        }
    }
}

impl OperatorEvents for Progress {
    fn before_commit(
        &mut self,
        _plan_id: &str,
        _preview: &[PartitionPreview],
        _created: Option<&NewControlTopic>,
    ) -> Review {
        Review::Proceed
    }

    fn retrying(&mut self, message: &str, remaining_ms: u64) {
        Progress::retrying(self, message, remaining_ms);
    }

    fn waiting(&mut self, what: &str, elapsed: std::time::Duration) {
        Progress::waiting(self, what, elapsed);
    }
}

/// An instance of the embedded cleanup component wired to `settings`.
pub fn instance(
    settings: KafkaSettings,
    events: Box<dyn OperatorEvents>,
) -> Result<CleanupInstance, Failure> {
    let kafka = KafkaClients::new(settings)
        .map_err(|e| Failure::failed(format!("cannot start the Kafka client runtime: {e}")))?;
    instance_with(kafka, events)
}

/// An instance of the embedded cleanup component over `kafka` (whose clients may already be
/// warming up).
pub fn instance_with(
    kafka: KafkaClients,
    events: Box<dyn OperatorEvents>,
) -> Result<CleanupInstance, Failure> {
    let component = component()?;
    trace::timed(
        "component instantiate",
        || component.instantiate(kafka, events),
        trace::outcome,
    )
    .map_err(|e| Failure::internal(&e))
}

/// The engine and the compiled component, made once per process: `apply` instantiates it twice
/// (first for an offline look at the plan), and a second engine would load the component and
/// start an epoch ticker again.
fn component() -> Result<Rc<CleanupComponent>, Failure> {
    thread_local! {
        static COMPONENT: OnceCell<Rc<CleanupComponent>> = const { OnceCell::new() };
    }
    if let Some(component) = COMPONENT.with(|c| c.get().cloned()) {
        return Ok(component);
    }
    let engine =
        trace::timed("engine", new_engine, trace::outcome).map_err(|e| Failure::internal(&e))?;
    let component = trace::timed(
        "component load",
        || CleanupComponent::new(&engine, CLEANUP_COMPONENT),
        trace::outcome,
    )
    .map_err(|e| Failure::internal(&e))?;
    let component = Rc::new(component);
    COMPONENT.with(|c| c.set(Rc::clone(&component)).ok());
    Ok(component)
}

/// An instance for offline commands: its Kafka capabilities are never called.
pub fn offline_instance() -> Result<CleanupInstance, Failure> {
    instance(
        KafkaSettings::new("offline.invalid:9092"),
        Box::new(action_state_cleanup::cleanup::NoEvents),
    )
}

/// Turns a component answer into a command result with the component's own message.
pub fn answer<T>(
    instance: &mut CleanupInstance,
    result: wasmtime::Result<Result<T, CleanupError>>,
) -> Result<T, Failure> {
    match result {
        Ok(Ok(value)) => Ok(value),
        Ok(Err(error)) => {
            let message = instance
                .message(&error)
                .map_err(|e| Failure::internal(&e))?;
            Err(explained(&error, message, instance.settings()))
        }
        Err(trap) => Err(Failure::internal(&trap)),
    }
}

/// A component error as the operator sees it: its sentence (`message`, rendered by the
/// component), the credentials a refused login used, and what to check when no broker answered
/// or an ACL is missing.
pub fn explained(error: &CleanupError, mut message: String, settings: &KafkaSettings) -> Failure {
    if let Some(who) = refused_credentials(error, settings) {
        message.push_str(&format!(" ({who})"));
    }
    let failure = Failure::from_component(error, message);
    let hint = match error {
        CleanupError::Kafka(kafka) => {
            unreachable(error, settings).or_else(|| super::acl::hint(kafka, settings))
        }
        _ => None,
    };
    match hint {
        Some(hint) => failure.with_hint(hint),
        None => failure,
    }
}

/// For a failure to reach any broker: which address, and whether its name did not resolve
/// (DNS) or the connection was refused, as the client reported it.
fn unreachable(error: &CleanupError, settings: &KafkaSettings) -> Option<String> {
    use action_state_cleanup::cleanup::KafkaError;
    let CleanupError::Kafka(failure) = error else {
        return None;
    };
    let (transport, detail) = match &failure.cause {
        Some(KafkaError::Transport(detail)) => (true, detail),
        Some(KafkaError::Timeout(detail)) => (false, detail),
        _ => return None,
    };
    let servers = settings.bootstrap_servers();
    let seconds = settings.timeout.as_secs();
    Some(
        if detail.name == "_RESOLVE" || detail.message.contains("Failed to resolve") {
            format!(
                "the host name in --bootstrap-servers {servers} does not resolve (DNS): check its spelling and the resolver of this machine"
            )
        } else if detail.message.contains("Connection refused") {
            format!(
                "the connection to {servers} was refused: the host answers but nothing listens on that port; check the port and that the brokers run"
            )
        } else if transport {
            format!(
                "no broker at --bootstrap-servers {servers} answered within --timeout {seconds} s: check the address, the network path and the brokers"
            )
        } else {
            return None;
        },
    )
}

/// For a failure the brokers' authentication caused: which credentials they refused, so the
/// operator sees at once that the password or mechanism is wrong, not the cluster.
fn refused_credentials(error: &CleanupError, settings: &KafkaSettings) -> Option<String> {
    use action_state_cleanup::cleanup::KafkaError;
    let CleanupError::Kafka(failure) = error else {
        return None;
    };
    let Some(KafkaError::Authentication(detail)) = &failure.cause else {
        return None;
    };
    let property = |key: &str| property(settings, key);
    if property("sasl.mechanism").eq_ignore_ascii_case("GSSAPI") {
        return Some(kerberos_login(settings));
    }
    if property("sasl.mechanism").eq_ignore_ascii_case("OAUTHBEARER") {
        return Some(oauth_login(settings, &detail.message));
    }
    if detail.name == "_SSL" {
        return Some(format!(
            "TLS handshake failed over security.protocol {}: ssl.ca.location {} must hold the CA \
             that signed the brokers' certificates",
            property("security.protocol"),
            property("ssl.ca.location")
        ));
    }
    Some(format!(
        "authentication failed: the brokers refused principal {} with sasl.mechanism {} over security.protocol {}",
        property("sasl.username"),
        property("sasl.mechanism"),
        property("security.protocol")
    ))
}

/// A client property's value as messages show it ("(not set)" when absent).
fn property(settings: &KafkaSettings, key: &str) -> String {
    settings
        .properties
        .get(key)
        .map_or("(not set)", String::as_str)
        .to_owned()
}

/// For a failed OAuth login: either the token endpoint gave the client no token (librdkafka
/// says "Failed to acquire SASL OAUTHBEARER token"), or the brokers refused the token it gave.
fn oauth_login(settings: &KafkaSettings, message: &str) -> String {
    let property = |key: &str| property(settings, key);
    let client = property("sasl.oauthbearer.client.id");
    let endpoint = property("sasl.oauthbearer.token.endpoint.url");
    if message.contains("Failed to acquire SASL OAUTHBEARER token") {
        format!(
            "authentication failed: the OIDC token endpoint {endpoint} gave client {client} no token: check sasl.oauthbearer.token.endpoint.url, the client id and its secret (in the Kafka tools' properties: the JAAS line's clientId and clientSecret)"
        )
    } else {
        format!(
            "authentication failed: the brokers refused the token that {endpoint} gave client {client} over security.protocol {}: the brokers must trust that issuer's signing keys (their sasl.oauthbearer.jwks.endpoint.url) and accept the token's audience and issuer",
            property("security.protocol")
        )
    }
}

/// For a failed Kerberos login (librdkafka's text names the step: no key for the client, a
/// principal the KDC does not know, no KDC): where each of its inputs comes from. The client's
/// key is a keytab that MIT Kerberos reads itself (KRB5_CLIENT_KTNAME), or the ticket cache a
/// kinit command filled from sasl.kerberos.keytab.
fn kerberos_login(settings: &KafkaSettings) -> String {
    let property = |key: &str, unset: &str| {
        settings
            .properties
            .get(key)
            .map_or(unset, String::as_str)
            .to_owned()
    };
    let environment = |name: &str, unset: &str| {
        std::env::var_os(name).map_or_else(
            || unset.to_owned(),
            |value| value.to_string_lossy().into_owned(),
        )
    };
    format!(
        "Kerberos (GSSAPI) login failed over security.protocol {}: check the client's keytab \
         (KRB5_CLIENT_KTNAME {}; or sasl.kerberos.keytab {} and sasl.kerberos.principal {} \
         when sasl.kerberos.kinit.cmd gets the ticket), the realm's KDC in KRB5_CONFIG {}, and \
         that the brokers' principal is sasl.kerberos.service.name {}/<broker host>",
        property("security.protocol", "(not set)"),
        environment("KRB5_CLIENT_KTNAME", "(not set)"),
        property("sasl.kerberos.keytab", "(not set)"),
        property("sasl.kerberos.principal", "(not set)"),
        environment("KRB5_CONFIG", "(not set: /etc/krb5.conf)"),
        property("sasl.kerberos.service.name", "kafka"),
    )
}
