//! A client keytab named by `sasl.kerberos.keytab` (or a Java `Krb5LoginModule` JAAS line),
//! handed to the MIT Kerberos compiled into the CLI: librdkafka only passes the keytab to a
//! `kinit` command, which the CLI does not need. MIT Kerberos takes a ticket from the client
//! keytab in `KRB5_CLIENT_KTNAME` itself, as the first principal the keytab holds, into a
//! ticket cache in memory (`KRB5CCNAME=MEMORY:`), so no cached ticket of another principal
//! decides who the client is. The principal asked for must therefore be the keytab's first.

/// The environment MIT Kerberos reads for a login from `keytab` as `principal` (if named).
/// Errors are one sentence naming the keytab and the principals.
pub fn login_environment(
    keytab: &str,
    principal: Option<&str>,
) -> Result<Vec<(&'static str, String)>, String> {
    let bytes = std::fs::read(keytab)
        .map_err(|e| format!("cannot read sasl.kerberos.keytab {keytab}: {e}"))?;
    let principals = principals(&bytes)
        .map_err(|why| format!("sasl.kerberos.keytab {keytab} is not a readable keytab: {why}"))?;
    let first = principals
        .first()
        .ok_or_else(|| format!("sasl.kerberos.keytab {keytab} holds no key"))?;
    if let Some(wanted) = principal.map(str::trim).filter(|p| !p.is_empty())
        && !same_principal(wanted, first)
    {
        return Err(format!(
            "sasl.kerberos.principal {wanted} is not the first principal of keytab {keytab} ({}): MIT Kerberos logs in as the keytab's first principal, so use a keytab whose first key is {wanted}",
            principals.join(", ")
        ));
    }
    Ok(vec![
        ("KRB5_CLIENT_KTNAME", keytab.to_owned()),
        ("KRB5CCNAME", "MEMORY:".to_owned()),
    ])
}

/// `wanted` names `actual` (`name@REALM`); without a realm it names any realm's `name`.
fn same_principal(wanted: &str, actual: &str) -> bool {
    if wanted.contains('@') {
        wanted == actual
    } else {
        actual.rsplit_once('@').map_or(actual, |(name, _)| name) == wanted
    }
}

/// The distinct principals of an MIT keytab (format 0x0502), in file order.
fn principals(bytes: &[u8]) -> Result<Vec<String>, String> {
    if bytes.get(..2) != Some(&[0x05, 0x02][..]) {
        return Err("it does not start with keytab version 0x0502".to_owned());
    }
    let mut principals: Vec<String> = Vec::new();
    let mut at = 2;
    while at + 4 <= bytes.len() {
        let size = i32::from_be_bytes([bytes[at], bytes[at + 1], bytes[at + 2], bytes[at + 3]]);
        at += 4;
        let length = usize::try_from(size.unsigned_abs()).unwrap_or(usize::MAX);
        let entry = bytes
            .get(at..at.saturating_add(length))
            .ok_or_else(|| format!("an entry at byte {} runs past the end", at - 4))?;
        at += length;
        // A negative size is a hole left by a deleted entry.
        if size > 0 {
            let principal = entry_principal(entry)
                .ok_or_else(|| format!("the entry before byte {at} is malformed"))?;
            if !principals.contains(&principal) {
                principals.push(principal);
            }
        }
    }
    Ok(principals)
}

/// `component/component@REALM` of one keytab entry.
fn entry_principal(entry: &[u8]) -> Option<String> {
    let mut at = 0;
    let u16_at = |at: &mut usize| -> Option<usize> {
        let b = entry.get(*at..*at + 2)?;
        *at += 2;
        Some(usize::from(u16::from_be_bytes([b[0], b[1]])))
    };
    let components = u16_at(&mut at)?;
    let string = |at: &mut usize| -> Option<String> {
        let length = u16_at(at)?;
        let text = entry.get(*at..*at + length)?;
        *at += length;
        Some(String::from_utf8_lossy(text).into_owned())
    };
    let realm = string(&mut at)?;
    let names = (0..components)
        .map(|_| string(&mut at))
        .collect::<Option<Vec<_>>>()?;
    Some(format!("{}@{realm}", names.join("/")))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(realm: &str, names: &[&str]) -> Vec<u8> {
        let mut body = Vec::new();
        body.extend(u16::try_from(names.len()).unwrap().to_be_bytes());
        for text in std::iter::once(&realm).chain(names) {
            body.extend(u16::try_from(text.len()).unwrap().to_be_bytes());
            body.extend(text.as_bytes());
        }
        // name type, timestamp, kvno, enctype, key
        body.extend([0, 0, 0, 1, 0, 0, 0, 0, 1, 0, 18, 0, 2, 0xaa, 0xbb]);
        let mut bytes = i32::try_from(body.len()).unwrap().to_be_bytes().to_vec();
        bytes.extend(body);
        bytes
    }

    fn keytab(entries: &[Vec<u8>]) -> Vec<u8> {
        let mut bytes = vec![0x05, 0x02];
        for e in entries {
            bytes.extend(e);
        }
        bytes
    }

    #[test]
    fn the_principals_of_a_keytab_are_read_in_order_skipping_holes() {
        let mut hole = (-3i32).to_be_bytes().to_vec();
        hole.extend([0, 0, 0]);
        let bytes = keytab(&[
            entry("ASC.TEST", &["alice"]),
            hole,
            entry("ASC.TEST", &["alice"]),
            entry("ASC.TEST", &["kafka", "localhost"]),
        ]);
        assert_eq!(
            principals(&bytes).unwrap(),
            ["alice@ASC.TEST", "kafka/localhost@ASC.TEST"]
        );
        assert!(principals(&bytes[..bytes.len() - 1]).is_err());
        assert!(principals(b"\x05\x01").is_err());
    }

    #[test]
    fn the_principal_asked_for_must_be_the_keytabs_first() {
        let path = std::env::temp_dir().join(format!("asc-keytab-{}", std::process::id()));
        std::fs::write(
            &path,
            keytab(&[entry("R", &["alice"]), entry("R", &["bob"])]),
        )
        .unwrap();
        let file = path.to_str().unwrap();
        for ok in [None, Some("alice@R"), Some("alice")] {
            let env = login_environment(file, ok).unwrap();
            assert_eq!(
                env,
                [
                    ("KRB5_CLIENT_KTNAME", file.to_owned()),
                    ("KRB5CCNAME", "MEMORY:".to_owned())
                ]
            );
        }
        let error = login_environment(file, Some("bob@R")).unwrap_err();
        assert!(
            error.contains("sasl.kerberos.principal bob@R is not the first principal")
                && error.contains("(alice@R, bob@R)"),
            "{error}"
        );
        std::fs::remove_file(&path).unwrap();
    }
}
