//! Java's own key store format, JKS (`keytool`'s default before Java 9, still what the
//! Confluent and AWS MSK guides make): read in-process so that a `client.properties` naming a
//! `.jks` trust or key store works as it is. The format: magic 0xFEEDFEED, version 1 or 2, a
//! count of entries (trusted certificates, and private keys protected by Sun's key protector,
//! each with its certificate chain), then a SHA-1 digest that binds the store password to the
//! contents.

use openssl::sha::Sha1;

const MAGIC: u32 = 0xFEED_FEED;
/// JCEKS, the JCE's variant (secret keys, a stronger key protector): not read here.
pub const JCEKS_MAGIC: u32 = 0xCECE_CECE;
const TRUSTED_CERTIFICATE: u32 = 2;
const PRIVATE_KEY: u32 = 1;
/// The text Java mixes into the integrity digest after the password.
const WHITENER: &[u8] = b"Mighty Aphrodite";
/// OID 1.3.6.1.4.1.42.2.17.1.1, Sun's proprietary JKS key protector, DER-encoded.
const KEY_PROTECTOR_OID: &[u8] = &[0x2b, 0x06, 0x01, 0x04, 0x01, 0x2a, 0x02, 0x11, 0x01, 0x01];

/// One entry of a store, its certificates as X.509 DER.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Entry {
    Trusted {
        alias: String,
        certificate: Vec<u8>,
    },
    PrivateKey {
        alias: String,
        /// The key as Sun's key protector left it (an EncryptedPrivateKeyInfo).
        protected_key: Vec<u8>,
        chain: Vec<Vec<u8>>,
    },
}

/// Why a store could not be read; the caller names the file and the property.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum JksError {
    NotJks,
    /// The integrity digest does not match the password given.
    WrongPassword,
    /// Truncated or malformed contents; the text says where.
    Damaged(String),
}

/// Whether `bytes` start like a JKS store.
pub fn is_jks(bytes: &[u8]) -> bool {
    bytes.starts_with(&MAGIC.to_be_bytes())
}

/// The entries of a JKS store. With a password the integrity digest is checked (a wrong
/// password is an error); without one it is not, as Java's `KeyStore.load(…, null)` does.
pub fn parse(bytes: &[u8], password: Option<&str>) -> Result<Vec<Entry>, JksError> {
    let mut reader = Reader { bytes, at: 0 };
    if reader.u32()? != MAGIC {
        return Err(JksError::NotJks);
    }
    let version = reader.u32()?;
    if version != 1 && version != 2 {
        return Err(JksError::Damaged(format!("unknown JKS version {version}")));
    }
    let count = reader.u32()?;
    let mut entries = Vec::new();
    for _ in 0..count {
        let tag = reader.u32()?;
        let alias = reader.utf()?;
        let _created_ms = reader.take(8)?;
        match tag {
            TRUSTED_CERTIFICATE => {
                let certificate = reader.certificate(version)?;
                entries.push(Entry::Trusted { alias, certificate });
            }
            PRIVATE_KEY => {
                let protected_key = reader.block()?.to_vec();
                let chain_length = reader.u32()?;
                let mut chain = Vec::new();
                for _ in 0..chain_length {
                    chain.push(reader.certificate(version)?);
                }
                entries.push(Entry::PrivateKey {
                    alias,
                    protected_key,
                    chain,
                });
            }
            other => {
                return Err(JksError::Damaged(format!(
                    "entry {alias:?} has unknown tag {other}"
                )));
            }
        }
    }
    let contents_end = reader.at;
    let digest = reader.take(20)?;
    if let Some(password) = password {
        let mut sha = Sha1::new();
        sha.update(&utf16_be(password));
        sha.update(WHITENER);
        sha.update(&bytes[..contents_end]);
        if sha.finish() != digest {
            return Err(JksError::WrongPassword);
        }
    }
    Ok(entries)
}

/// The PKCS#8 DER key that Sun's key protector hid in `protected_key` with `password`: the key
/// XORed with a SHA-1 stream seeded by a salt, followed by SHA-1(password, key) as a check.
pub fn recover_key(protected_key: &[u8], password: &str) -> Result<Vec<u8>, JksError> {
    let sealed = key_protector_contents(protected_key)?;
    if sealed.len() < 40 {
        return Err(JksError::Damaged(
            "the protected key is too short".to_owned(),
        ));
    }
    let (salt, rest) = sealed.split_at(20);
    let (encrypted, check) = rest.split_at(rest.len() - 20);
    let password = utf16_be(password);
    let mut stream = Vec::with_capacity(encrypted.len() + 20);
    let mut digest = salt.to_vec();
    while stream.len() < encrypted.len() {
        let mut sha = Sha1::new();
        sha.update(&password);
        sha.update(&digest);
        digest = sha.finish().to_vec();
        stream.extend_from_slice(&digest);
    }
    let key: Vec<u8> = encrypted.iter().zip(&stream).map(|(e, s)| e ^ s).collect();
    let mut sha = Sha1::new();
    sha.update(&password);
    sha.update(&key);
    if sha.finish() != check {
        return Err(JksError::WrongPassword);
    }
    Ok(key)
}

/// The encrypted bytes of an EncryptedPrivateKeyInfo whose algorithm is Sun's key protector:
/// SEQUENCE { SEQUENCE { OID, NULL }, OCTET STRING }.
fn key_protector_contents(der: &[u8]) -> Result<&[u8], JksError> {
    let damaged = |what: &str| JksError::Damaged(format!("the protected key: {what}"));
    let (outer, _) = der_element(der, 0x30).ok_or_else(|| damaged("not a DER SEQUENCE"))?;
    let (algorithm, rest) =
        der_element(outer, 0x30).ok_or_else(|| damaged("no algorithm identifier"))?;
    let (oid, _) = der_element(algorithm, 0x06).ok_or_else(|| damaged("no algorithm OID"))?;
    if oid != KEY_PROTECTOR_OID {
        return Err(JksError::Damaged(
            "the key is not protected by Sun's JKS key protector (a JCEKS or PKCS#8 key)"
                .to_owned(),
        ));
    }
    let (sealed, _) = der_element(rest, 0x04).ok_or_else(|| damaged("no encrypted key"))?;
    Ok(sealed)
}

/// The contents of the DER element at the start of `der` if its tag is `tag`, and what
/// follows it.
fn der_element(der: &[u8], tag: u8) -> Option<(&[u8], &[u8])> {
    let (&found, rest) = der.split_first()?;
    if found != tag {
        return None;
    }
    let (&first, mut rest) = rest.split_first()?;
    let length = if first < 0x80 {
        usize::from(first)
    } else {
        let octets = usize::from(first & 0x7f);
        if octets == 0 || octets > 4 || rest.len() < octets {
            return None;
        }
        let length = rest[..octets]
            .iter()
            .fold(0usize, |n, &b| (n << 8) | usize::from(b));
        rest = &rest[octets..];
        length
    };
    (rest.len() >= length).then(|| rest.split_at(length))
}

/// A Java `char[]` password as the bytes Java digests: UTF-16, big-endian.
fn utf16_be(password: &str) -> Vec<u8> {
    password.encode_utf16().flat_map(u16::to_be_bytes).collect()
}

struct Reader<'a> {
    bytes: &'a [u8],
    at: usize,
}

impl<'a> Reader<'a> {
    fn take(&mut self, n: usize) -> Result<&'a [u8], JksError> {
        let end = self
            .at
            .checked_add(n)
            .filter(|&end| end <= self.bytes.len());
        let end = end.ok_or_else(|| {
            JksError::Damaged(format!(
                "truncated at byte {} of {}",
                self.at,
                self.bytes.len()
            ))
        })?;
        let taken = &self.bytes[self.at..end];
        self.at = end;
        Ok(taken)
    }

    fn u32(&mut self) -> Result<u32, JksError> {
        let b = self.take(4)?;
        Ok(u32::from_be_bytes([b[0], b[1], b[2], b[3]]))
    }

    /// Java's `writeUTF`: a 16-bit length, then modified UTF-8 (read leniently).
    fn utf(&mut self) -> Result<String, JksError> {
        let b = self.take(2)?;
        let length = usize::from(u16::from_be_bytes([b[0], b[1]]));
        Ok(String::from_utf8_lossy(self.take(length)?).into_owned())
    }

    /// A 32-bit length, then that many bytes.
    fn block(&mut self) -> Result<&'a [u8], JksError> {
        let length = self.u32()?;
        self.take(usize::try_from(length).unwrap_or(usize::MAX))
    }

    /// A certificate: in version 2 its type first (Java writes only "X.509").
    fn certificate(&mut self, version: u32) -> Result<Vec<u8>, JksError> {
        if version == 2 {
            let kind = self.utf()?;
            if kind != "X.509" {
                return Err(JksError::Damaged(format!(
                    "a certificate of type {kind:?}, not X.509"
                )));
            }
        }
        Ok(self.block()?.to_vec())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A version-2 store with one trusted certificate (bytes `cert`) sealed with `password`.
    fn store(cert: &[u8], password: &str) -> Vec<u8> {
        let mut bytes = Vec::new();
        bytes.extend(MAGIC.to_be_bytes());
        bytes.extend(2u32.to_be_bytes());
        bytes.extend(1u32.to_be_bytes());
        bytes.extend(TRUSTED_CERTIFICATE.to_be_bytes());
        bytes.extend(2u16.to_be_bytes());
        bytes.extend(b"ca");
        bytes.extend(0u64.to_be_bytes());
        bytes.extend(5u16.to_be_bytes());
        bytes.extend(b"X.509");
        bytes.extend(u32::try_from(cert.len()).unwrap().to_be_bytes());
        bytes.extend(cert);
        let mut sha = Sha1::new();
        sha.update(&utf16_be(password));
        sha.update(WHITENER);
        sha.update(&bytes);
        bytes.extend(sha.finish());
        bytes
    }

    #[test]
    fn trusted_certificates_are_read_and_the_password_is_checked() {
        let bytes = store(b"DER", "changeit");
        let expected = vec![Entry::Trusted {
            alias: "ca".to_owned(),
            certificate: b"DER".to_vec(),
        }];
        assert_eq!(parse(&bytes, Some("changeit")).unwrap(), expected);
        assert_eq!(parse(&bytes, None).unwrap(), expected);
        assert_eq!(
            parse(&bytes, Some("wrong")).unwrap_err(),
            JksError::WrongPassword
        );
        assert!(matches!(
            parse(&bytes[..bytes.len() - 1], None).unwrap_err(),
            JksError::Damaged(_)
        ));
        assert_eq!(
            parse(b"\x30\x82", None).unwrap_err(),
            JksError::Damaged("truncated at byte 0 of 2".to_owned())
        );
    }

    #[test]
    fn a_key_protected_by_suns_key_protector_is_recovered_with_its_password() {
        // Seal a key the way Java's KeyProtector does, then recover it.
        let key: Vec<u8> = (0u8..=60).collect();
        let password = utf16_be("k3y");
        let salt = [7u8; 20];
        let mut stream = Vec::new();
        let mut digest = salt.to_vec();
        while stream.len() < key.len() {
            let mut sha = Sha1::new();
            sha.update(&password);
            sha.update(&digest);
            digest = sha.finish().to_vec();
            stream.extend_from_slice(&digest);
        }
        let mut sealed = salt.to_vec();
        sealed.extend(key.iter().zip(&stream).map(|(k, s)| k ^ s));
        let mut sha = Sha1::new();
        sha.update(&password);
        sha.update(&key);
        sealed.extend(sha.finish());
        let mut algorithm = vec![0x06, 10];
        algorithm.extend(KEY_PROTECTOR_OID);
        algorithm.extend([0x05, 0x00]);
        let mut inner = vec![0x30, u8::try_from(algorithm.len()).unwrap()];
        inner.extend(algorithm);
        inner.extend([0x04, 0x81, u8::try_from(sealed.len()).unwrap()]);
        inner.extend(&sealed);
        let mut der = vec![0x30, 0x81, u8::try_from(inner.len()).unwrap()];
        der.extend(inner);

        assert_eq!(recover_key(&der, "k3y").unwrap(), key);
        assert_eq!(
            recover_key(&der, "other").unwrap_err(),
            JksError::WrongPassword
        );
    }
}
