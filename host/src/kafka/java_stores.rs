//! A Java client's trust and key stores (`ssl.truststore.*`, `ssl.keystore.*`) read in-process
//! and handed to librdkafka as PEM text (`ssl.ca.pem`, `ssl.certificate.pem`, `ssl.key.pem`),
//! so no converted copy is written anywhere. The store's format is told by its first bytes,
//! as Java's keystore compatibility mode does: JKS, PKCS#12 or PEM, whatever `*.type` says.
//! Errors are one sentence naming the property and the file, never a password.

use openssl::pkcs12::Pkcs12;
use openssl::pkey::PKey;
use openssl::x509::X509;

use super::jks::{self, Entry, JksError};

/// What the first bytes of a store say it is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StoreFormat {
    Jks,
    Pkcs12,
    Pem,
}

/// A store's file, the property that named it (`ssl.truststore` or `ssl.keystore`), and its
/// contents.
pub struct StoreFile {
    pub role: &'static str,
    pub location: String,
    bytes: Vec<u8>,
}

impl StoreFile {
    pub fn read(role: &'static str, location: &str) -> Result<StoreFile, String> {
        let bytes = std::fs::read(location)
            .map_err(|e| format!("cannot read {role}.location {location}: {e}"))?;
        Ok(StoreFile {
            role,
            location: location.to_owned(),
            bytes,
        })
    }

    pub fn format(&self) -> Result<StoreFormat, String> {
        let bytes = &self.bytes;
        if jks::is_jks(bytes) {
            Ok(StoreFormat::Jks)
        } else if bytes.starts_with(&jks::JCEKS_MAGIC.to_be_bytes()) {
            Err(format!(
                "{}.location {} is a JCEKS store, which is not read here: convert it to PKCS#12 (keytool -importkeystore -srckeystore {} -srcstoretype JCEKS -destkeystore store.p12 -deststoretype PKCS12) and name that instead",
                self.role, self.location, self.location
            ))
        } else if bytes.first() == Some(&0x30) {
            Ok(StoreFormat::Pkcs12)
        } else if String::from_utf8_lossy(bytes).contains("-----BEGIN ") {
            Ok(StoreFormat::Pem)
        } else {
            Err(format!(
                "{}.location {} is neither a JKS, a PKCS#12 nor a PEM store",
                self.role, self.location
            ))
        }
    }

    /// Every certificate of a JKS or PKCS#12 trust store, as PEM text. A JKS store's digest is
    /// checked when a password is given (Java reads certificates without one).
    pub fn trusted_pem(&self, password: Option<&str>) -> Result<String, String> {
        let certificates = match self.format()? {
            StoreFormat::Jks => self
                .jks_entries(password)?
                .into_iter()
                .flat_map(|entry| match entry {
                    Entry::Trusted { certificate, .. } => vec![certificate],
                    Entry::PrivateKey { chain, .. } => chain,
                })
                .map(|der| self.certificate(&der))
                .collect::<Result<Vec<_>, _>>()?,
            StoreFormat::Pkcs12 => {
                let parsed = self.pkcs12(password)?;
                parsed
                    .cert
                    .into_iter()
                    .chain(parsed.ca.into_iter().flatten())
                    .collect()
            }
            StoreFormat::Pem => {
                return Ok(String::from_utf8_lossy(&self.bytes).into_owned());
            }
        };
        if certificates.is_empty() {
            return Err(format!(
                "{}.location {} holds no certificate",
                self.role, self.location
            ));
        }
        self.pem_of(&certificates)
    }

    /// The client certificate chain and private key of a JKS key store, as PEM text: the key
    /// (unencrypted PKCS#8) is recovered with `key_password` (Java's `ssl.key.password`,
    /// else the store's password).
    pub fn key_pair_pem(
        &self,
        store_password: Option<&str>,
        key_password: Option<&str>,
    ) -> Result<(String, String), String> {
        let entries = self.jks_entries(store_password)?;
        let mut keys = entries.into_iter().filter_map(|entry| match entry {
            Entry::PrivateKey {
                alias,
                protected_key,
                chain,
            } => Some((alias, protected_key, chain)),
            Entry::Trusted { .. } => None,
        });
        let (alias, protected_key, chain) = keys.next().ok_or_else(|| {
            format!(
                "{}.location {} holds no private key entry",
                self.role, self.location
            )
        })?;
        if keys.next().is_some() {
            return Err(format!(
                "{}.location {} holds more than one private key entry; keep only the client's (keytool -delete -alias …)",
                self.role, self.location
            ));
        }
        let password = key_password.or(store_password).ok_or_else(|| {
            format!(
                "{}.location {}: the key {alias:?} needs ssl.key.password or {}.password",
                self.role, self.location, self.role
            )
        })?;
        let pkcs8 = jks::recover_key(&protected_key, password).map_err(|e| match e {
            JksError::WrongPassword => format!(
                "{}.location {}: the key {alias:?} does not open with {}: the password is wrong",
                self.role,
                self.location,
                if key_password.is_some() {
                    "ssl.key.password"
                } else {
                    "the store password (set ssl.key.password if the key has its own)"
                }
            ),
            other => self.jks_error(other),
        })?;
        let key = PKey::private_key_from_pkcs8(&pkcs8)
            .and_then(|key| key.private_key_to_pem_pkcs8())
            .map_err(|e| {
                format!(
                    "{}.location {}: the key {alias:?} is not a PKCS#8 private key: {e}",
                    self.role, self.location
                )
            })?;
        let chain = chain
            .iter()
            .map(|der| self.certificate(der))
            .collect::<Result<Vec<_>, _>>()?;
        if chain.is_empty() {
            return Err(format!(
                "{}.location {}: the key {alias:?} has no certificate",
                self.role, self.location
            ));
        }
        Ok((
            self.pem_of(&chain)?,
            String::from_utf8_lossy(&key).into_owned(),
        ))
    }

    /// Whether a PKCS#12 store opens with `password`, which librdkafka is then given.
    pub fn check_pkcs12_password(&self, password: Option<&str>) -> Result<(), String> {
        self.pkcs12(password).map(|_| ())
    }

    fn jks_entries(&self, password: Option<&str>) -> Result<Vec<Entry>, String> {
        jks::parse(&self.bytes, password).map_err(|e| self.jks_error(e))
    }

    fn jks_error(&self, error: JksError) -> String {
        let (role, location) = (self.role, &self.location);
        match error {
            JksError::NotJks => format!("{role}.location {location} is not a JKS store"),
            JksError::WrongPassword => format!(
                "{role}.location {location}: the JKS store's integrity check fails with {role}.password: the password is wrong or the file was changed"
            ),
            JksError::Damaged(why) => {
                format!("{role}.location {location} is not a readable JKS store: {why}")
            }
        }
    }

    fn pkcs12(&self, password: Option<&str>) -> Result<openssl::pkcs12::ParsedPkcs12_2, String> {
        let (role, location) = (self.role, &self.location);
        let store = Pkcs12::from_der(&self.bytes).map_err(|e| {
            format!("{role}.location {location} is not a readable PKCS#12 store: {e}")
        })?;
        store.parse2(password.unwrap_or("")).map_err(|e| {
            let said = e.to_string();
            if said.contains("mac verify failure") || password.is_none() {
                format!(
                    "{role}.location {location}: the PKCS#12 store does not open with {role}.password{}: the password is wrong",
                    if password.is_none() { " (not set)" } else { "" }
                )
            } else {
                format!("{role}.location {location}: cannot read the PKCS#12 store: {said}")
            }
        })
    }

    fn certificate(&self, der: &[u8]) -> Result<X509, String> {
        X509::from_der(der).map_err(|e| {
            format!(
                "{}.location {} holds a certificate that is not X.509: {e}",
                self.role, self.location
            )
        })
    }

    fn pem_of(&self, certificates: &[X509]) -> Result<String, String> {
        let mut pem = String::new();
        for certificate in certificates {
            let text = certificate.to_pem().map_err(|e| {
                format!(
                    "{}.location {}: cannot write a certificate as PEM: {e}",
                    self.role, self.location
                )
            })?;
            pem.push_str(&String::from_utf8_lossy(&text));
        }
        Ok(pem)
    }
}
