//! The Kafka tools' client properties (`client.properties` for `kafka-topics.sh`), translated to
//! their librdkafka equivalents where one exists, refused with the exact translation where not.
//! An operator's file works as it is for SASL/PLAIN and SCRAM logins and PEM or PKCS#12 stores;
//! a JKS store or another login module gets the command that converts it.

use std::collections::BTreeMap;

/// Rewrites the Java-only properties of `properties` in place. Errors are one sentence that
/// names the property and what to use instead, and never echo a secret value.
pub fn translate(properties: &mut BTreeMap<String, String>) -> Result<(), String> {
    if let Some(jaas) = properties.remove("sasl.jaas.config") {
        let login = parse_jaas(&jaas)?;
        for (key, value) in [
            ("sasl.username", login.username),
            ("sasl.password", login.password),
        ] {
            if let Some(value) = value {
                properties.entry(key.to_owned()).or_insert(value);
            }
        }
    }
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

/// The credentials of a `sasl.jaas.config` line.
struct JaasLogin {
    username: Option<String>,
    password: Option<String>,
}

/// `org.apache.kafka.common.security.plain.PlainLoginModule required username="u" password="p";`
/// (or ScramLoginModule): the module must be one whose login librdkafka makes from
/// `sasl.username` and `sasl.password`.
fn parse_jaas(text: &str) -> Result<JaasLogin, String> {
    let text = text.trim().trim_end_matches(';');
    let module = text.split_whitespace().next().unwrap_or("");
    let short = module.rsplit('.').next().unwrap_or(module);
    match short {
        "PlainLoginModule" | "ScramLoginModule" => {}
        "Krb5LoginModule" => {
            // The CLI's MIT Kerberos takes the ticket from a client keytab it finds in the
            // environment (tests/kerberos.rs); no librdkafka property names that keytab.
            return Err("sasl.jaas.config with Krb5LoginModule has no librdkafka form here: keep sasl.mechanism=GSSAPI and sasl.kerberos.service.name, set sasl.kerberos.min.time.before.relogin=0 instead, and give the login's keyTab in the environment: KRB5_CLIENT_KTNAME=<keyTab> KRB5CCNAME=MEMORY: (and KRB5_CONFIG=<krb5.conf> for the realm)".to_owned());
        }
        "OAuthBearerLoginModule" => {
            return Err("sasl.jaas.config with OAuthBearerLoginModule has no librdkafka form here: set sasl.mechanism=OAUTHBEARER with sasl.oauthbearer.method=oidc, sasl.oauthbearer.client.id, sasl.oauthbearer.client.secret and sasl.oauthbearer.token.endpoint.url instead".to_owned());
        }
        _ => {
            return Err(format!(
                "sasl.jaas.config names login module {}, which has no librdkafka equivalent; for SASL/PLAIN or SCRAM use PlainLoginModule or ScramLoginModule with username and password, or set sasl.username and sasl.password",
                if module.is_empty() { "(none)" } else { module }
            ));
        }
    }
    let options = jaas_options(&text[module.len()..]);
    let username = options.get("username").cloned();
    let password = options.get("password").cloned();
    if username.is_none() || password.is_none() {
        return Err(format!(
            "sasl.jaas.config with {short} needs username=\"…\" and password=\"…\" options"
        ));
    }
    Ok(JaasLogin { username, password })
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

/// The type a Java store property names, upper-cased; Java's default is JKS.
fn store_type(properties: &BTreeMap<String, String>, key: &str) -> String {
    properties
        .get(key)
        .map_or_else(|| "JKS".to_owned(), |t| t.trim().to_uppercase())
}

fn translate_truststore(properties: &mut BTreeMap<String, String>) -> Result<(), String> {
    let Some(location) = properties.remove("ssl.truststore.location") else {
        return Ok(());
    };
    let kind = store_type(properties, "ssl.truststore.type");
    properties.remove("ssl.truststore.type");
    properties.remove("ssl.truststore.password");
    if kind == "PEM" {
        properties.insert("ssl.ca.location".to_owned(), location);
        return Ok(());
    }
    Err(format!(
        "ssl.truststore.location {location} is a {kind} store, which librdkafka cannot read: export its CA certificate as PEM (keytool -exportcert -rfc -keystore {location} -alias <CA alias> -file ca.pem) and set ssl.ca.location=ca.pem instead"
    ))
}

fn translate_keystore(properties: &mut BTreeMap<String, String>) -> Result<(), String> {
    let Some(location) = properties.get("ssl.keystore.location").cloned() else {
        return Ok(());
    };
    let kind = store_type(properties, "ssl.keystore.type");
    properties.remove("ssl.keystore.type");
    match kind.as_str() {
        // librdkafka reads PKCS#12 keystores itself (ssl.keystore.location/.password).
        "PKCS12" => Ok(()),
        "PEM" => Err(format!(
            "ssl.keystore.location {location} is a PEM keystore: set ssl.certificate.location (the client certificate) and ssl.key.location (its key, with ssl.key.password if encrypted) instead"
        )),
        _ => Err(format!(
            "ssl.keystore.location {location} is a {kind} store, which librdkafka cannot read: convert it to PKCS#12 (keytool -importkeystore -srckeystore {location} -destkeystore client.p12 -deststoretype PKCS12) and set ssl.keystore.location=client.p12 instead"
        )),
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
    fn other_login_modules_and_jks_stores_are_refused_with_the_translation() {
        let mut kerberos = props(&[(
            "sasl.jaas.config",
            "com.sun.security.auth.module.Krb5LoginModule required useKeyTab=true keyTab=\"/k\";",
        )]);
        let error = translate(&mut kerberos).unwrap_err();
        for said in [
            "sasl.kerberos.min.time.before.relogin=0",
            "KRB5_CLIENT_KTNAME=<keyTab>",
        ] {
            assert!(error.contains(said), "{said} in: {error}");
        }
        assert!(
            !error.contains("/k"),
            "the keytab path is not echoed: {error}"
        );

        let mut jks = props(&[
            ("ssl.truststore.location", "/etc/kafka/trust.jks"),
            ("ssl.truststore.password", "hidden"),
        ]);
        let error = translate(&mut jks).unwrap_err();
        assert!(error.contains("keytool -exportcert -rfc"), "{error}");
        assert!(!error.contains("hidden"), "{error}");

        let mut pem = props(&[
            ("ssl.truststore.location", "/ca.pem"),
            ("ssl.truststore.type", "PEM"),
        ]);
        translate(&mut pem).unwrap();
        assert_eq!(pem, props(&[("ssl.ca.location", "/ca.pem")]));
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
