//! The Kafka tools' client properties (`client.properties` for `kafka-topics.sh`), translated to
//! their librdkafka equivalents where one exists, refused with the exact translation where not.
//! An operator's file works as it is for SASL/PLAIN and SCRAM logins, Kerberos logins from a
//! keytab or the ticket cache, OIDC client-credentials logins (OAUTHBEARER), and JKS, PKCS#12
//! or PEM trust and key stores (read in-process, `java_stores`); another login module gets the
//! properties to use instead.

use std::collections::BTreeMap;

use super::java_stores::{StoreFile, StoreFormat};

/// Rewrites the Java-only properties of `properties` in place. Errors are one sentence that
/// names the property and what to use instead, and never echo a secret value.
pub fn translate(properties: &mut BTreeMap<String, String>) -> Result<(), String> {
    if let Some(jaas) = properties.remove("sasl.jaas.config") {
        for (key, value) in parse_jaas(&jaas)? {
            properties.entry(key.to_owned()).or_insert(value);
        }
    }
    translate_login_handler(properties)?;
    translate_truststore(properties)?;
    translate_keystore(properties)?;
    // Java disables host name verification with an empty value; librdkafka spells it "none".
    if properties
        .get("ssl.endpoint.identification.algorithm")
        .is_some_and(|v| v.trim().is_empty())
    {
        properties.insert(
            "ssl.endpoint.identification.algorithm".to_owned(),
            "none".to_owned(),
        );
    }
    Ok(())
}

/// The librdkafka properties of a `sasl.jaas.config` line:
/// `org.apache.kafka.common.security.plain.PlainLoginModule required username="u" password="p";`
/// (or ScramLoginModule) gives `sasl.username` and `sasl.password`; `Krb5LoginModule` with
/// `useKeyTab=true keyTab="…" principal="…"` gives `sasl.kerberos.keytab` and
/// `sasl.kerberos.principal` (which `keytab` hands to MIT Kerberos), with `useTicketCache=true`
/// the login of the ticket cache kinit filled; neither needs librdkafka's kinit command.
fn parse_jaas(text: &str) -> Result<Vec<(&'static str, String)>, String> {
    let text = text.trim().trim_end_matches(';');
    let module = text.split_whitespace().next().unwrap_or("");
    let short = module.rsplit('.').next().unwrap_or(module);
    let options = jaas_options(&text[module.len()..]);
    match short {
        "PlainLoginModule" | "ScramLoginModule" => {
            match (options.get("username"), options.get("password")) {
                (Some(username), Some(password)) => Ok(vec![
                    ("sasl.username", username.clone()),
                    ("sasl.password", password.clone()),
                ]),
                _ => Err(format!(
                    "sasl.jaas.config with {short} needs username=\"…\" and password=\"…\" options"
                )),
            }
        }
        "Krb5LoginModule" => kerberos_login(&options),
        "OAuthBearerLoginModule" => oidc_login(&options),
        _ => Err(format!(
            "sasl.jaas.config names login module {}, which has no librdkafka equivalent; for SASL/PLAIN or SCRAM use PlainLoginModule or ScramLoginModule with username and password, or set sasl.username and sasl.password",
            if module.is_empty() { "(none)" } else { module }
        )),
    }
}

/// A `Krb5LoginModule` line's login: from a keytab, or from the ticket cache.
fn kerberos_login(
    options: &BTreeMap<String, String>,
) -> Result<Vec<(&'static str, String)>, String> {
    let flag = |name: &str| {
        options.iter().any(|(key, value)| {
            key.eq_ignore_ascii_case(name) && value.eq_ignore_ascii_case("true")
        })
    };
    let option = |name: &str| {
        options
            .iter()
            .find(|(key, _)| key.eq_ignore_ascii_case(name))
            .map(|(_, value)| value.clone())
    };
    // librdkafka would run `kinit` every minute otherwise; MIT Kerberos renews by itself.
    let no_kinit = ("sasl.kerberos.min.time.before.relogin", "0".to_owned());
    if flag("useKeyTab") {
        return match (option("keyTab"), option("principal")) {
            (Some(keytab), Some(principal)) => Ok(vec![
                ("sasl.kerberos.keytab", keytab),
                ("sasl.kerberos.principal", principal),
                no_kinit,
            ]),
            _ => Err("sasl.jaas.config with Krb5LoginModule and useKeyTab=true needs keyTab=\"…\" and principal=\"…\" options".to_owned()),
        };
    }
    if flag("useTicketCache") {
        return Ok(vec![no_kinit]);
    }
    Err("sasl.jaas.config with Krb5LoginModule needs useKeyTab=true with keyTab=\"…\" and principal=\"…\", or useTicketCache=true (a ticket kinit got); a password prompt cannot be answered here".to_owned())
}

/// An `OAuthBearerLoginModule` line with `clientId` and `clientSecret` (Kafka's OIDC
/// client-credentials login, KIP-768) is librdkafka's `sasl.oauthbearer.method=oidc`: the same
/// grant to the same `sasl.oauthbearer.token.endpoint.url`, which both clients name alike.
/// `scope` and the SASL extensions (`extension_NAME="value"`) carry over.
fn oidc_login(options: &BTreeMap<String, String>) -> Result<Vec<(&'static str, String)>, String> {
    let (Some(client_id), Some(client_secret)) =
        (options.get("clientId"), options.get("clientSecret"))
    else {
        return Err("sasl.jaas.config with OAuthBearerLoginModule needs clientId=\"…\" and clientSecret=\"…\" (the OIDC client-credentials login, with sasl.oauthbearer.token.endpoint.url); unsecured development tokens (unsecuredLoginStringClaim_sub) are not supported".to_owned());
    };
    let mut login = vec![
        ("sasl.oauthbearer.method", "oidc".to_owned()),
        ("sasl.oauthbearer.client.id", client_id.clone()),
        ("sasl.oauthbearer.client.secret", client_secret.clone()),
    ];
    if let Some(scope) = options.get("scope") {
        login.push(("sasl.oauthbearer.scope", scope.clone()));
    }
    let extensions: Vec<String> = options
        .iter()
        .filter_map(|(key, value)| Some(format!("{}={value}", key.strip_prefix("extension_")?)))
        .collect();
    if !extensions.is_empty() {
        login.push(("sasl.oauthbearer.extensions", extensions.join(",")));
    }
    Ok(login)
}

/// `sasl.login.callback.handler.class`: Kafka's own OIDC login handler is what librdkafka's
/// `oidc` method does, so it goes; any other class is Java code librdkafka cannot run.
fn translate_login_handler(properties: &mut BTreeMap<String, String>) -> Result<(), String> {
    let Some(class) = properties.remove("sasl.login.callback.handler.class") else {
        return Ok(());
    };
    let short = class.trim().rsplit('.').next().unwrap_or("");
    if short == "OAuthBearerLoginCallbackHandler" {
        if properties
            .get("sasl.oauthbearer.method")
            .map(String::as_str)
            != Some("oidc")
        {
            return Err(format!(
                "sasl.login.callback.handler.class {} needs an OAuthBearerLoginModule line with clientId and clientSecret in sasl.jaas.config",
                class.trim()
            ));
        }
        return Ok(());
    }
    Err(format!(
        "sasl.login.callback.handler.class {} is a Java class librdkafka cannot run; for OIDC use OAuthBearerLoginCallbackHandler with an OAuthBearerLoginModule line that has clientId and clientSecret",
        class.trim()
    ))
}

/// The option values of a `sasl.jaas.config` line that are secrets (password, secret, key…).
pub fn jaas_secrets(text: &str) -> Vec<String> {
    jaas_options(text)
        .into_iter()
        .filter(|(key, _)| super::config::is_secret(key) || key.eq_ignore_ascii_case("keytab"))
        .map(|(_, value)| value)
        .collect()
}

/// `key="value"` (or `key=value`) options after the module's control flag.
fn jaas_options(text: &str) -> BTreeMap<String, String> {
    let mut options = BTreeMap::new();
    let mut rest = text.trim();
    while let Some(eq) = rest.find('=') {
        let key = rest[..eq]
            .split_whitespace()
            .last()
            .unwrap_or("")
            .to_owned();
        let after = rest[eq + 1..].trim_start();
        let (value, next) = if let Some(quoted) = after.strip_prefix('"') {
            match quoted.find('"') {
                Some(end) => (&quoted[..end], &quoted[end + 1..]),
                None => (quoted, ""),
            }
        } else {
            let end = after.find(char::is_whitespace).unwrap_or(after.len());
            (&after[..end], &after[end..])
        };
        if !key.is_empty() {
            options.insert(key, value.to_owned());
        }
        rest = next;
    }
    options
}

/// `ssl.truststore.*`: a PEM file stays a file (`ssl.ca.location`); the certificates of a JKS
/// or PKCS#12 store become `ssl.ca.pem`. The store's first bytes tell its format, as Java's
/// keystore compatibility mode does, so `ssl.truststore.type` is not needed.
fn translate_truststore(properties: &mut BTreeMap<String, String>) -> Result<(), String> {
    let Some(location) = properties.remove("ssl.truststore.location") else {
        return Ok(());
    };
    properties.remove("ssl.truststore.type");
    let password = properties.remove("ssl.truststore.password");
    let store = StoreFile::read("ssl.truststore", &location)?;
    if store.format()? == StoreFormat::Pem {
        properties.insert("ssl.ca.location".to_owned(), location);
    } else {
        let pem = store.trusted_pem(password.as_deref().filter(|p| !p.is_empty()))?;
        properties.insert("ssl.ca.pem".to_owned(), pem);
    }
    Ok(())
}

/// `ssl.keystore.*`: librdkafka reads a PKCS#12 key store itself (its password is checked here
/// first, for a clear sentence); a JKS store's key and certificate chain become
/// `ssl.key.pem` and `ssl.certificate.pem`.
fn translate_keystore(properties: &mut BTreeMap<String, String>) -> Result<(), String> {
    let Some(location) = properties.get("ssl.keystore.location").cloned() else {
        return Ok(());
    };
    properties.remove("ssl.keystore.type");
    let store = StoreFile::read("ssl.keystore", &location)?;
    match store.format()? {
        StoreFormat::Pkcs12 => {
            let password = properties.get("ssl.keystore.password").cloned();
            store.check_pkcs12_password(password.as_deref())
        }
        StoreFormat::Pem => Err(format!(
            "ssl.keystore.location {location} is a PEM keystore: set ssl.certificate.location (the client certificate) and ssl.key.location (its key, with ssl.key.password if encrypted) instead"
        )),
        StoreFormat::Jks => {
            properties.remove("ssl.keystore.location");
            let store_password = properties.remove("ssl.keystore.password");
            let key_password = properties.remove("ssl.key.password");
            let non_empty = |p: &Option<String>| p.clone().filter(|p| !p.is_empty());
            let (chain, key) = store.key_pair_pem(
                non_empty(&store_password).as_deref(),
                non_empty(&key_password).as_deref(),
            )?;
            properties.insert("ssl.certificate.pem".to_owned(), chain);
            properties.insert("ssl.key.pem".to_owned(), key);
            Ok(())
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn props(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
        pairs
            .iter()
            .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
            .collect()
    }

    #[test]
    fn plain_and_scram_jaas_logins_become_sasl_username_and_password() {
        for module in [
            "org.apache.kafka.common.security.plain.PlainLoginModule",
            "org.apache.kafka.common.security.scram.ScramLoginModule",
        ] {
            let mut p = props(&[(
                "sasl.jaas.config",
                &format!("{module} required username=\"alice\" password=\"s3 cr=t\";"),
            )]);
            translate(&mut p).unwrap();
            assert_eq!(
                p,
                props(&[("sasl.username", "alice"), ("sasl.password", "s3 cr=t")])
            );
        }
    }

    #[test]
    fn kerberos_jaas_logins_become_librdkafka_properties_without_kinit() {
        let mut keytab = props(&[(
            "sasl.jaas.config",
            "com.sun.security.auth.module.Krb5LoginModule required useKeyTab=true storeKey=true keyTab=\"/k\" principal=\"alice@R\";",
        )]);
        translate(&mut keytab).unwrap();
        assert_eq!(
            keytab,
            props(&[
                ("sasl.kerberos.keytab", "/k"),
                ("sasl.kerberos.principal", "alice@R"),
                ("sasl.kerberos.min.time.before.relogin", "0"),
            ])
        );
        let mut cache = props(&[(
            "sasl.jaas.config",
            "com.sun.security.auth.module.Krb5LoginModule required useTicketCache=true;",
        )]);
        translate(&mut cache).unwrap();
        assert_eq!(
            cache,
            props(&[("sasl.kerberos.min.time.before.relogin", "0")])
        );
        for line in [
            "com.sun.security.auth.module.Krb5LoginModule required useKeyTab=true keyTab=\"/k\";",
            "com.sun.security.auth.module.Krb5LoginModule required;",
        ] {
            let mut p = props(&[("sasl.jaas.config", line)]);
            let error = translate(&mut p).unwrap_err();
            assert!(error.contains("useKeyTab=true"), "{error}");
            assert!(
                !error.contains("/k"),
                "the keytab path is not echoed: {error}"
            );
        }
    }

    #[test]
    fn stores_are_read_whatever_their_declared_type_and_missing_ones_named() {
        let mut missing = props(&[
            ("ssl.truststore.location", "/nonexistent/trust.jks"),
            ("ssl.truststore.password", "hidden"),
        ]);
        let error = translate(&mut missing).unwrap_err();
        assert!(
            error.starts_with("cannot read ssl.truststore.location /nonexistent/trust.jks"),
            "{error}"
        );
        assert!(!error.contains("hidden"), "{error}");

        let dir = std::env::temp_dir().join(format!("asc-stores-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let pem = dir.join("ca.pem");
        std::fs::write(&pem, "-----BEGIN CERTIFICATE-----\n").unwrap();
        let pem = pem.to_str().unwrap();
        let mut declared_jks = props(&[
            ("ssl.truststore.location", pem),
            ("ssl.truststore.type", "JKS"),
        ]);
        translate(&mut declared_jks).unwrap();
        assert_eq!(declared_jks, props(&[("ssl.ca.location", pem)]));

        let junk = dir.join("junk");
        std::fs::write(&junk, "junk").unwrap();
        let junk = junk.to_str().unwrap();
        let mut p = props(&[("ssl.keystore.location", junk)]);
        let error = translate(&mut p).unwrap_err();
        assert_eq!(
            error,
            format!("ssl.keystore.location {junk} is neither a JKS, a PKCS#12 nor a PEM store")
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn oidc_client_credentials_logins_become_librdkafka_oidc() {
        let endpoint = "https://idp.example/oauth2/token";
        let mut p = props(&[
            ("sasl.mechanism", "OAUTHBEARER"),
            (
                "sasl.login.callback.handler.class",
                "org.apache.kafka.common.security.oauthbearer.secured.OAuthBearerLoginCallbackHandler",
            ),
            ("sasl.oauthbearer.token.endpoint.url", endpoint),
            (
                "sasl.jaas.config",
                "org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule required clientId=\"svc\" clientSecret=\"s=cr t\" scope=\"kafka\" extension_logicalCluster=\"lkc-1\" extension_identityPoolId=\"pool-2\";",
            ),
        ]);
        translate(&mut p).unwrap();
        assert_eq!(
            p,
            props(&[
                ("sasl.mechanism", "OAUTHBEARER"),
                ("sasl.oauthbearer.token.endpoint.url", endpoint),
                ("sasl.oauthbearer.method", "oidc"),
                ("sasl.oauthbearer.client.id", "svc"),
                ("sasl.oauthbearer.client.secret", "s=cr t"),
                ("sasl.oauthbearer.scope", "kafka"),
                (
                    "sasl.oauthbearer.extensions",
                    "identityPoolId=pool-2,logicalCluster=lkc-1"
                ),
            ])
        );
    }

    #[test]
    fn oauth_logins_librdkafka_cannot_make_are_refused_by_name() {
        let mut unsecured = props(&[(
            "sasl.jaas.config",
            "org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule required unsecuredLoginStringClaim_sub=\"alice\";",
        )]);
        let error = translate(&mut unsecured).unwrap_err();
        assert!(
            error.contains("clientId=") && error.contains("unsecured"),
            "{error}"
        );
        let mut custom = props(&[
            (
                "sasl.login.callback.handler.class",
                "com.example.TokenHandler",
            ),
            (
                "sasl.jaas.config",
                "org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule required clientId=\"svc\" clientSecret=\"PLANTED\";",
            ),
        ]);
        let error = translate(&mut custom).unwrap_err();
        assert!(error.contains("com.example.TokenHandler"), "{error}");
        assert!(!error.contains("PLANTED"), "{error}");
        let mut handler_alone = props(&[(
            "sasl.login.callback.handler.class",
            "org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginCallbackHandler",
        )]);
        let error = translate(&mut handler_alone).unwrap_err();
        assert!(
            error.contains("needs an OAuthBearerLoginModule line"),
            "{error}"
        );
    }

    #[test]
    fn a_refused_jaas_line_never_shows_its_password() {
        let mut p = props(&[(
            "sasl.jaas.config",
            "com.example.Custom required password=\"PLANTED\";",
        )]);
        let error = translate(&mut p).unwrap_err();
        assert!(!error.contains("PLANTED"), "{error}");
        assert!(error.contains("com.example.Custom"), "{error}");
    }
}
