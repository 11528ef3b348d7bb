//! Flink's own configuration file, so the CLI reads snapshots with the settings the job's
//! filesystem plugins use: `config.yaml` (Flink 2.x: YAML, nested or with dotted keys) or
//! `flink-conf.yaml` (Flink 1.x: one `key: value` a line), found through `--flink-config` or
//! `FLINK_CONF_DIR`. Only the store keys are used; no value is ever printed.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use super::StoreError;

#[derive(Debug, Clone, Default)]
pub struct FlinkConfig {
    /// The file the values came from, named when a store refuses its credentials.
    pub file: PathBuf,
    values: BTreeMap<String, String>,
}

impl FlinkConfig {
    /// The configuration at `path` (a file, or a directory holding `config.yaml` or
    /// `flink-conf.yaml`), else the one in `FLINK_CONF_DIR`, else none.
    pub fn load(path: Option<&Path>) -> Result<Option<FlinkConfig>, StoreError> {
        let (dir_or_file, explicit) = match path {
            Some(path) => (path.to_path_buf(), true),
            None => match std::env::var_os("FLINK_CONF_DIR") {
                Some(dir) => (PathBuf::from(dir), false),
                None => return Ok(None),
            },
        };
        let file = if dir_or_file.is_dir() {
            ["config.yaml", "flink-conf.yaml"]
                .iter()
                .map(|name| dir_or_file.join(name))
                .find(|file| file.is_file())
        } else {
            Some(dir_or_file.clone()).filter(|file| file.is_file())
        };
        let Some(file) = file else {
            if explicit {
                return Err(StoreError::Failed(format!(
                    "the Flink configuration {} is neither a config.yaml or flink-conf.yaml file nor a directory holding one",
                    dir_or_file.display()
                )));
            }
            return Ok(None);
        };
        let text = std::fs::read_to_string(&file).map_err(|e| {
            StoreError::Failed(format!(
                "cannot read the Flink configuration {}: {e}",
                file.display()
            ))
        })?;
        Ok(Some(FlinkConfig {
            file,
            values: flatten(&text),
        }))
    }

    /// The first of `keys` that is set.
    pub fn get(&self, keys: &[&str]) -> Option<&str> {
        keys.iter()
            .find_map(|key| self.values.get(*key))
            .map(String::as_str)
    }

    /// Every key beginning with `prefix`, with its value.
    pub fn with_prefix<'a>(&'a self, prefix: &'a str) -> impl Iterator<Item = (&'a str, &'a str)> {
        self.values
            .range(prefix.to_owned()..)
            .take_while(move |(k, _)| k.starts_with(prefix))
            .map(|(k, v)| (k.as_str(), v.as_str()))
    }
}

/// The YAML Flink writes as flat dotted keys: nested maps are joined with `.`, lists and
/// anything fancier are left out (no store key is a list).
fn flatten(text: &str) -> BTreeMap<String, String> {
    let mut values = BTreeMap::new();
    // The open maps: (indent, key path).
    let mut parents: Vec<(usize, String)> = Vec::new();
    for line in text.lines() {
        let content = strip_comment(line);
        if content.trim().is_empty() || content.trim_start().starts_with('-') {
            continue;
        }
        let indent = content.len() - content.trim_start().len();
        let Some((key, value)) = content.trim().split_once(':') else {
            continue;
        };
        while parents.last().is_some_and(|(i, _)| *i >= indent) {
            parents.pop();
        }
        let key = unquote(key.trim());
        let key = match parents.last() {
            Some((_, parent)) => format!("{parent}.{key}"),
            None => key.to_owned(),
        };
        let value = value.trim();
        if value.is_empty() {
            parents.push((indent, key));
        } else {
            values.insert(key, unquote(value).to_owned());
        }
    }
    values
}

fn strip_comment(line: &str) -> &str {
    let mut quote = None;
    for (at, c) in line.char_indices() {
        match (c, quote) {
            ('"' | '\'', None) => quote = Some(c),
            (q, Some(open)) if q == open => quote = None,
            ('#', None) if at == 0 || line[..at].ends_with(char::is_whitespace) => {
                return &line[..at];
            }
            _ => {}
        }
    }
    line
}

fn unquote(value: &str) -> &str {
    for q in ['"', '\''] {
        if let Some(inner) = value.strip_prefix(q).and_then(|v| v.strip_suffix(q)) {
            return inner;
        }
    }
    value
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nested_and_dotted_keys_flatten_alike() {
        let values = flatten(
            "# Flink 2\ns3:\n  endpoint: http://127.0.0.1:9000   # moto\n  path.style.access: true\n  access-key: 'AK'\ns3.secret-key: \"a#b\"\nstate:\n  checkpoints:\n    dir: s3://b/c\nlist:\n  - x\nother: 1\n",
        );
        assert_eq!(values["s3.endpoint"], "http://127.0.0.1:9000");
        assert_eq!(values["s3.path.style.access"], "true");
        assert_eq!(values["s3.access-key"], "AK");
        assert_eq!(values["s3.secret-key"], "a#b");
        assert_eq!(values["state.checkpoints.dir"], "s3://b/c");
        assert_eq!(values["other"], "1");
        assert!(!values.contains_key("list"));
    }
}
