//! Wire-level request counts from the broker's own request log: `kafka.request.logger` at DEBUG
//! logs every completed request with its API name, client id and connection. The harness turns it
//! on (a dynamic broker-logger config, no restart) only around the counted applies, and gives each
//! counted apply its own `client.id`.

use std::collections::{BTreeMap, BTreeSet};
use std::io::{Read, Seek, SeekFrom};
use std::path::PathBuf;
use std::process::Command;

use crate::{Ctx, R, fail};

#[derive(Debug, Default, Clone)]
pub struct ClientRequests {
    /// Requests by API name (METADATA, DESCRIBE_CONFIGS, …).
    pub by_api: BTreeMap<String, u32>,
    /// Distinct TCP connections the client used.
    pub connections: BTreeSet<String>,
}

impl ClientRequests {
    pub fn total(&self) -> u32 {
        self.by_api.values().sum()
    }

    /// Requests other than the per-connection handshake (ApiVersions).
    pub fn without_handshake(&self) -> u32 {
        self.total() - self.by_api.get("API_VERSIONS").copied().unwrap_or(0)
    }

    pub fn describe(&self) -> String {
        self.by_api
            .iter()
            .map(|(api, n)| format!("{api} {n}"))
            .collect::<Vec<_>>()
            .join(", ")
    }
}

pub struct RequestLog {
    script: PathBuf,
    state: PathBuf,
    log: PathBuf,
    start: u64,
}

impl RequestLog {
    /// Turns the request logger on; `None` when this run did not start the broker.
    pub fn enable(ctx: &Ctx) -> R<Option<RequestLog>> {
        let Some(state) = ctx.broker_state.clone() else {
            return Ok(None);
        };
        let log = state.join("node-1.log");
        if !log.is_file() {
            return Ok(None);
        }
        let this = RequestLog {
            script: ctx.repo.join("scripts/kafka"),
            state,
            log,
            start: 0,
        };
        this.set_level("DEBUG")?;
        // The change is applied asynchronously by the broker; give it a moment.
        std::thread::sleep(std::time::Duration::from_millis(500));
        let start = std::fs::metadata(&this.log)?.len();
        Ok(Some(RequestLog { start, ..this }))
    }

    pub fn disable(&self) -> R<()> {
        self.set_level("INFO")
    }

    fn set_level(&self, level: &str) -> R<()> {
        let output = Command::new(&self.script)
            .args([
                "configs",
                "--entity-type",
                "broker-loggers",
                "--entity-name",
                "1",
                "--alter",
                "--add-config",
            ])
            .arg(format!("kafka.request.logger={level}"))
            .env("ASC_KAFKA_STATE", &self.state)
            .output()?;
        if !output.status.success() {
            return Err(fail(format!(
                "scripts/kafka configs failed: {}",
                String::from_utf8_lossy(&output.stderr)
            )));
        }
        Ok(())
    }

    /// Requests logged since `enable`, by client id.
    pub fn read(&self) -> R<BTreeMap<String, ClientRequests>> {
        let mut file = std::fs::File::open(&self.log)?;
        file.seek(SeekFrom::Start(self.start))?;
        let mut bytes = Vec::new();
        file.read_to_end(&mut bytes)?;
        let text = String::from_utf8_lossy(&bytes);
        let mut clients: BTreeMap<String, ClientRequests> = BTreeMap::new();
        for line in text.lines() {
            let Some(at) = line.find("Completed request:") else {
                continue;
            };
            let json = &line[at + "Completed request:".len()..];
            let json = json.strip_suffix(" (kafka.request.logger)").unwrap_or(json);
            let Ok(value) = serde_json::from_str::<serde_json::Value>(json) else {
                continue;
            };
            let header = &value["requestHeader"];
            let (Some(client), Some(api)) = (
                header["clientId"].as_str(),
                header["requestApiKeyName"].as_str(),
            ) else {
                continue;
            };
            let entry = clients.entry(client.to_owned()).or_default();
            *entry.by_api.entry(api.to_owned()).or_default() += 1;
            if let Some(connection) = value["connection"].as_str() {
                entry.connections.insert(connection.to_owned());
            }
        }
        Ok(clients)
    }
}
