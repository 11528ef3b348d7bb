//! Kafka client configuration the way Kafka users write it: `--bootstrap-servers`, repeated
//! `-X key=value` librdkafka properties, and a Java-style `.properties` file.

use std::collections::BTreeMap;
use std::path::Path;
use std::time::Duration;

/// librdkafka properties plus the per-request timeout the host applies to every capability.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KafkaSettings {
    pub properties: BTreeMap<String, String>,
    pub timeout: Duration,
}

impl KafkaSettings {
    pub fn new(bootstrap_servers: &str) -> Self {
        let mut properties = BTreeMap::new();
        properties.insert("bootstrap.servers".to_owned(), bootstrap_servers.to_owned());
        KafkaSettings {
            properties,
            timeout: Duration::from_secs(30),
        }
    }

    /// Applies `key=value` (from `-X`); later settings win.
    pub fn set_pair(&mut self, pair: &str) -> Result<(), String> {
        let (key, value) = pair
            .split_once('=')
            .ok_or_else(|| format!("-X expects key=value, but got {pair:?}"))?;
        let key = key.trim();
        if key.is_empty() {
            return Err(format!(
                "-X expects key=value, but the key in {pair:?} is empty"
            ));
        }
        self.properties
            .insert(key.to_owned(), value.trim().to_owned());
        Ok(())
    }

    /// Loads a Java-style properties file: `key=value` or `key: value` lines, `#`/`!` comments,
    /// backslash line continuations.
    pub fn load_properties_file(&mut self, path: &Path) -> Result<(), String> {
        let text = std::fs::read_to_string(path).map_err(|e| {
            format!(
                "cannot read Kafka configuration file {}: {e}",
                path.display()
            )
        })?;
        for (key, value) in parse_properties(&text)
            .map_err(|e| format!("Kafka configuration file {}: {e}", path.display()))?
        {
            self.properties.insert(key, value);
        }
        Ok(())
    }

    /// The bound on one request: a third of the step's timeout (at least a second). A request
    /// sent to a leader that just died waits for it until this bound, and the component's retry
    /// then reaches the leader the cluster elected, within the same step (WIT `clock`).
    pub fn request_timeout(&self) -> Duration {
        (self.timeout / 3)
            .max(Duration::from_secs(1))
            .min(self.timeout)
    }

    pub fn bootstrap_servers(&self) -> &str {
        self.properties
            .get("bootstrap.servers")
            .map_or("", String::as_str)
    }
}

/// Parses Java `.properties` text into key/value pairs, in order.
pub fn parse_properties(text: &str) -> Result<Vec<(String, String)>, String> {
    let mut pairs = Vec::new();
    let mut logical = String::new();
    let mut start_line = 0;
    for (index, raw) in text.lines().enumerate() {
        let line = if logical.is_empty() {
            raw.trim_start()
        } else {
            raw.trim()
        };
        if logical.is_empty() {
            start_line = index + 1;
            if line.is_empty() || line.starts_with('#') || line.starts_with('!') {
                continue;
            }
        }
        if let Some(continued) = line.strip_suffix('\\') {
            logical.push_str(continued);
            continue;
        }
        logical.push_str(line);
        let entry = std::mem::take(&mut logical);
        let split = entry
            .find(['=', ':'])
            .ok_or_else(|| format!("line {start_line} is not key=value: {entry:?}"))?;
        let key = entry[..split].trim();
        if key.is_empty() {
            return Err(format!("line {start_line} has an empty key"));
        }
        pairs.push((key.to_owned(), entry[split + 1..].trim().to_owned()));
    }
    Ok(pairs)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_java_properties_with_comments_colons_and_continuations() {
        let text = "# comment\n! also\nsecurity.protocol=SASL_SSL\nsasl.mechanism : PLAIN\nsasl.jaas.config=a \\\n   b\n\n";
        let pairs = parse_properties(text).unwrap();
        assert_eq!(
            pairs,
            [
                ("security.protocol".into(), "SASL_SSL".into()),
                ("sasl.mechanism".into(), "PLAIN".into()),
                ("sasl.jaas.config".into(), "a b".into()),
            ]
        );
        assert!(
            parse_properties("novalue\n")
                .unwrap_err()
                .contains("line 1")
        );
    }

    #[test]
    fn a_request_gets_a_third_of_the_step_and_at_least_a_second() {
        let mut settings = KafkaSettings::new("a:1");
        assert_eq!(settings.request_timeout(), Duration::from_secs(10));
        settings.timeout = Duration::from_secs(2);
        assert_eq!(settings.request_timeout(), Duration::from_secs(1));
        settings.timeout = Duration::from_millis(500);
        assert_eq!(settings.request_timeout(), Duration::from_millis(500));
    }

    #[test]
    fn x_pairs_override_and_need_an_equals_sign() {
        let mut settings = KafkaSettings::new("a:1");
        settings.set_pair("bootstrap.servers=b:2").unwrap();
        assert_eq!(settings.bootstrap_servers(), "b:2");
        assert!(settings.set_pair("acks").is_err());
    }
}
