//! Kafka capabilities over librdkafka: the host half of the 0.3 imports, one plain Kafka
//! operation per call, split by job. No retries, waits or interpretation live here (the
//! component owns them); errors are mapped once in `errors`.

pub mod admin;
pub mod batch;
pub mod capabilities;
pub mod client_log;
pub mod config;
pub mod consumer;
mod delete_records;
pub mod errors;
pub mod ffi;
pub mod java_client;
pub mod java_stores;
mod jks;
pub mod keytab;
pub mod progress;
pub mod writer;

use rdkafka::config::ClientConfig;

pub use capabilities::KafkaCapabilities;
pub use config::KafkaSettings;
pub use errors::{ErrorKind, KafkaError, KafkaResult};

/// The librdkafka this host is linked with: its version and its `builtin.features` (e.g.
/// `gzip,snappy,ssl,sasl,...,sasl_scram,...`), read from the library at run time.
pub fn client_build() -> (String, String) {
    let (_, version) = rdkafka::util::get_rdkafka_version();
    let features = ClientConfig::new()
        .create_native_config()
        .and_then(|config| config.get("builtin.features"))
        .unwrap_or_else(|e| format!("unknown ({e})"));
    (version, features)
}

/// How many capability calls one operation made, by kind.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct RequestCounts {
    pub admin: u32,
    /// Polls that asked for keys and values (reads of the control topic).
    pub control_reads: u32,
    pub control_writes: u32,
    /// Polls without data (replay).
    pub consumer_polls: u32,
}

/// The Kafka clients of one host: settings and an admin client created on first use.
pub struct KafkaClients {
    settings: KafkaSettings,
    admin: Option<admin::Admin>,
    /// Clients being made ahead of time (`warm_up`), not taken yet.
    warming: Option<std::thread::JoinHandle<Warmed>>,
    /// A producer client made ahead of time for the writer the component is expected to open.
    warm_writer: Option<writer::Unopened>,
    pub counts: RequestCounts,
}

/// What `warm_up` made: each client, or why it could not be made (then it is made again on
/// first use, where its error is reported as it always was).
struct Warmed {
    admin: KafkaResult<admin::Admin>,
    writer: Option<KafkaResult<writer::Unopened>>,
}

impl KafkaClients {
    pub fn new(settings: KafkaSettings) -> std::io::Result<Self> {
        Ok(KafkaClients {
            settings,
            admin: None,
            warming: None,
            warm_writer: None,
            counts: RequestCounts::default(),
        })
    }

    pub fn settings(&self) -> &KafkaSettings {
        &self.settings
    }

    /// Starts making, on a thread of its own, the clients an operation is about to need: the
    /// admin client and, for `transactional_id`, the producer client of that transactional
    /// writer. Making a client connects it to the cluster (its bootstrap, API versions and
    /// metadata requests run in librdkafka's threads): a CLI process that makes them while the
    /// component starts and checks does not wait for those round trips later. Nothing is sent
    /// that changes anything: the producer fences nobody until the component opens its writer
    /// (`open_writer` initialises it then, as it would a new one), and a client nobody takes is
    /// closed unused.
    pub fn warm_up(&mut self, transactional_id: Option<&str>) {
        if self.warming.is_some() || self.admin.is_some() {
            return;
        }
        let config = self.client_config();
        let timeout = self.settings.request_timeout();
        let id = transactional_id.map(str::to_owned);
        let spawned = std::thread::Builder::new()
            .name("kafka-warm-up".into())
            .spawn(move || {
                let started = std::time::Instant::now();
                let admin = admin_client(config.clone(), timeout);
                // Nothing that waits on the cluster here: `take_warmed` joins this thread, and a
                // blocking request (a metadata lookup) would hold the operation for as long as
                // it waits (a refused password: the whole request timeout).
                let writer = id.map(|id| writer::Writer::create(config, Some(&id), timeout));
                crate::trace::step("warm-up: clients made", started, String::new);
                Warmed { admin, writer }
            });
        // Without a thread (resource exhaustion) every client is made on first use instead.
        self.warming = spawned.ok();
    }

    /// Takes what `warm_up` made (waiting for it to finish).
    fn take_warmed(&mut self) {
        let Some(handle) = self.warming.take() else {
            return;
        };
        let started = std::time::Instant::now();
        let Ok(warmed) = handle.join() else {
            return;
        };
        crate::trace::step("warm-up: joined", started, String::new);
        if self.admin.is_none() {
            self.admin = warmed.admin.ok();
        }
        self.warm_writer = warmed.writer.and_then(Result::ok);
    }

    /// The operator's librdkafka properties. Without a CA of the operator's (`ssl.ca.location`,
    /// `ssl.ca.pem`), TLS trusts the system's CA certificates: librdkafka looks for them in the
    /// usual places (`probe`), since the OpenSSL built into this binary knows no system paths.
    pub fn client_config(&self) -> ClientConfig {
        let mut config = ClientConfig::new();
        let properties = &self.settings.properties;
        if !properties.contains_key("ssl.ca.location") && !properties.contains_key("ssl.ca.pem") {
            config.set("ssl.ca.location", "probe");
        }
        for (key, value) in properties {
            config.set(key, value);
        }
        client_log::quiet_unless_shown(&mut config);
        config
    }

    /// The admin client, created on first use; every call through it is counted.
    pub fn admin(&mut self) -> KafkaResult<&admin::Admin> {
        if self.admin.is_none() {
            self.take_warmed();
        }
        if self.admin.is_none() {
            self.admin = Some(admin_client(
                self.client_config(),
                self.settings.request_timeout(),
            )?);
        }
        self.counts.admin += 1;
        self.admin
            .as_ref()
            .ok_or_else(|| errors::invalid("the admin client is unavailable"))
    }

    /// Opens a writer: the producer made ahead of time for this transactional id when there is
    /// one (`warm_up`), else a new one; either is initialised now.
    pub fn open_writer(&mut self, transactional_id: Option<&str>) -> KafkaResult<writer::Writer> {
        self.take_warmed();
        let warm = self
            .warm_writer
            .take_if(|w| transactional_id.is_some() && w.transactional_id() == transactional_id);
        let unopened = match warm {
            Some(warm) => warm,
            None => writer::Writer::create(
                self.client_config(),
                transactional_id,
                self.settings.request_timeout(),
            )?,
        };
        unopened.initialise()
    }

    pub fn open_consumer(&mut self, topic: &str) -> KafkaResult<consumer::Consumer> {
        consumer::Consumer::open(self.client_config(), topic)
    }
}

impl Drop for KafkaClients {
    /// The clients close on a thread of their own (`close_in_background`): a CLI process that
    /// is done exits without waiting for librdkafka's threads to wind down.
    fn drop(&mut self) {
        if let Some(admin) = self.admin.take() {
            close_in_background(admin);
        }
        if let Some(writer) = self.warm_writer.take() {
            close_in_background(writer);
        }
    }
}

/// Closes a client nobody needs any more on a thread of its own. librdkafka's close waits for
/// its threads (about 100 ms per consumer or producer, measured), time in which nothing is
/// pending: every append was acknowledged before it returned, and consumers commit nothing.
/// The caller goes on without that wait; a process that exits first loses nothing.
pub fn close_in_background<T: Send + 'static>(client: T) {
    let spawned = std::thread::Builder::new()
        .name("kafka-close".into())
        .spawn(move || drop(client));
    // Without a thread (resource exhaustion), the client was moved into the failed closure and
    // is closed there, on this thread.
    drop(spawned);
}

/// A new admin client and the runtime its futures run on.
fn admin_client(config: ClientConfig, timeout: std::time::Duration) -> KafkaResult<admin::Admin> {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .build()
        .map_err(|e| errors::invalid(format!("cannot start the admin runtime: {e}")))?;
    // librdkafka lets a producer-type client (an admin client is one) ask the broker to create a
    // topic its Metadata request names, and brokers do by default (auto.create.topics.enable): a
    // metadata lookup of a deleted data or control topic would bring it back, empty. Never,
    // whatever the operator configured.
    let mut config = config;
    config.set("allow.auto.create.topics", "false");
    // Error events on the main queue, where `ffi::Pending::wait` looks for a refused login:
    // without them librdkafka only logs some refusals, such as an OIDC token endpoint's
    // (`Failed to acquire SASL OAUTHBEARER token`), and the request waits out its timeout.
    // 8 is RD_KAFKA_EVENT_ERROR (what rd_kafka_conf_set_events sets; rust-rdkafka's admin client
    // sets none).
    config.set("enabled_events", "8");
    let client = crate::trace::timed(
        "admin: create client",
        || config.create_with_context(client_log::ClientLog),
        crate::trace::outcome,
    )
    .map_err(|e| errors::from_rd(&e))?;
    Ok(admin::Admin {
        client,
        runtime,
        timeout,
        stale_leaders: std::sync::atomic::AtomicBool::new(false),
    })
}
