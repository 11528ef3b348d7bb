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

    /// Applies `key=value` (from `-X`); later settings win. The error never shows the value:
    /// it may be a secret.
    pub fn set_pair(&mut self, pair: &str) -> Result<(), String> {
        let (key, value) = pair.split_once('=').ok_or_else(|| {
            "-X expects key=value, but one argument has no '=' (its text is not shown: it may hold a secret)".to_owned()
        })?;
        let key = key.trim();
        if key.is_empty() {
            return Err("-X expects key=value, but one argument has an empty key".to_owned());
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

    /// The values no message may show: every property that holds a password, a private key or
    /// a secret, and the credentials inside a Java `sasl.jaas.config`.
    pub fn secrets(&self) -> Vec<String> {
        let mut secrets: Vec<String> = self
            .properties
            .iter()
            .filter(|(key, _)| is_secret(key))
            .map(|(_, value)| value.clone())
            .collect();
        if let Some(jaas) = self.properties.get("sasl.jaas.config") {
            secrets.extend(super::java_client::jaas_secrets(jaas));
        }
        secrets.retain(|s| !s.trim().is_empty());
        // Longest first, so that a secret containing another is replaced whole.
        secrets.sort_by_key(|s| std::cmp::Reverse(s.len()));
        secrets.dedup();
        secrets
    }

    pub fn bootstrap_servers(&self) -> &str {
        self.properties
            .get("bootstrap.servers")
            .map_or("", String::as_str)
    }
}

/// Whether a client property holds a secret (librdkafka's and the Java client's names).
pub fn is_secret(key: &str) -> bool {
    let key = key.to_ascii_lowercase();
    key.contains("password")
        || key.contains("secret")
        || key == "sasl.jaas.config"
        || key.starts_with("ssl.key.")
        || key == "ssl.key"
        || key.starts_with("ssl.keystore.key")
        || key == "ssl_key"
        || key.ends_with(".token")
}

/// `text` with every secret replaced by `[redacted]`.
pub fn redact(text: &str, secrets: &[String]) -> String {
    let mut text = text.to_owned();
    for secret in secrets {
        if text.contains(secret.as_str()) {
            text = text.replace(secret.as_str(), "[redacted]");
        }
    }
    text
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
    fn secrets_are_every_password_key_and_jaas_credential_and_are_redacted() {
        let mut settings = KafkaSettings::new("a:1");
        for pair in [
            "sasl.password=p4ss",
            "ssl.key.password=k3y",
            "sasl.jaas.config=x.PlainLoginModule required username=\"u\" password=\"j44s\";",
            "sasl.username=alice",
        ] {
            settings.set_pair(pair).unwrap();
        }
        let secrets = settings.secrets();
        let text = "user alice, p4ss k3y j44s";
        assert_eq!(
            redact(text, &secrets),
            "user alice, [redacted] [redacted] [redacted]"
        );
        // Java store passwords, and the key a JKS key store becomes (ssl.key.pem), too.
        for key in [
            "ssl.truststore.password",
            "ssl.keystore.password",
            "ssl.key.password",
            "ssl.key.pem",
        ] {
            assert!(is_secret(key), "{key}");
        }
        assert!(!is_secret("ssl.ca.pem") && !is_secret("ssl.certificate.pem"));
        let error = settings.set_pair("sasl.password:no-equals").unwrap_err();
        assert!(!error.contains("no-equals"), "{error}");
    }

    #[test]
    fn x_pairs_override_and_need_an_equals_sign() {
        let mut settings = KafkaSettings::new("a:1");
        settings.set_pair("bootstrap.servers=b:2").unwrap();
        assert_eq!(settings.bootstrap_servers(), "b:2");
        assert!(settings.set_pair("acks").is_err());
    }
}
