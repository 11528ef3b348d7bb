//! Kafka capabilities over librdkafka: the host half of the 0.3 imports, one plain Kafka
//! operation per call, split by job. No retries, waits or interpretation live here (the
//! component owns them); errors are mapped once in `errors`.

pub mod admin;
pub mod batch;
pub mod capabilities;
pub mod client_log;
pub mod config;
pub mod consumer;
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
    pub counts: RequestCounts,
}

impl KafkaClients {
    pub fn new(settings: KafkaSettings) -> std::io::Result<Self> {
        Ok(KafkaClients {
            settings,
            admin: None,
            counts: RequestCounts::default(),
        })
    }

    pub fn settings(&self) -> &KafkaSettings {
        &self.settings
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
            let runtime = tokio::runtime::Builder::new_current_thread()
                .enable_time()
                .build()
                .map_err(|e| errors::invalid(format!("cannot start the admin runtime: {e}")))?;
            // librdkafka lets a producer-type client (an admin client is one) ask the broker to
            // create a topic its Metadata request names, and brokers do by default
            // (auto.create.topics.enable): a metadata lookup of a deleted data or control
            // topic would bring it back, empty. Never, whatever the operator configured.
            let client = self
                .client_config()
                .set("allow.auto.create.topics", "false")
                .create_with_context(client_log::ClientLog)
                .map_err(|e| errors::from_rd(&e))?;
            self.admin = Some(admin::Admin {
                client,
                runtime,
                timeout: self.settings.request_timeout(),
                stale_leaders: std::sync::atomic::AtomicBool::new(false),
            });
        }
        self.counts.admin += 1;
        self.admin
            .as_ref()
            .ok_or_else(|| errors::invalid("the admin client is unavailable"))
    }

    pub fn open_writer(&mut self, transactional_id: Option<&str>) -> KafkaResult<writer::Writer> {
        writer::Writer::open(
            self.client_config(),
            transactional_id,
            self.settings.request_timeout(),
        )
    }

    pub fn open_consumer(&mut self, topic: &str) -> KafkaResult<consumer::Consumer> {
        consumer::Consumer::open(self.client_config(), topic)
    }
}
