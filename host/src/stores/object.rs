//! Objects in the stores Flink writes snapshots to, through Apache Arrow's `object_store`: S3
//! and S3-compatible stores (`s3://`, `s3a://`, `s3p://`, `s3n://`), GCS (`gs://`), Azure Blob
//! and ADLS Gen2 (`wasb[s]://`, `abfs[s]://`). Credentials and endpoints come from each cloud's
//! standard environment and from Flink's configuration (which wins: it is what the job reads).
//! The client's own retries are off: one `read` is one GET.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

use object_store::aws::AmazonS3Builder;
use object_store::azure::MicrosoftAzureBuilder;
use object_store::gcp::GoogleCloudStorageBuilder;
use object_store::path::Path;
use object_store::{ClientOptions, ObjectStore, RetryConfig};

use super::{FlinkConfig, StoreError};

/// A connection that does not open within this is reported unreachable.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(5);
/// The longest one request may take, body included (a state file is at most 1 GiB).
const REQUEST_TIMEOUT: Duration = Duration::from_secs(300);

/// One client per bucket or container, and the runtime their requests run on.
pub struct ObjectStores {
    runtime: tokio::runtime::Runtime,
    flink: Option<FlinkConfig>,
    clients: HashMap<String, Client>,
}

#[derive(Clone)]
struct Client {
    store: Arc<dyn ObjectStore>,
    /// Where its endpoint and credentials came from, for the sentences of refusals.
    endpoint: String,
    credentials: String,
}

/// A location split into the parts a client needs.
struct Parts<'a> {
    scheme: String,
    /// The bucket, or `container@account.host` for Azure.
    authority: &'a str,
    path: &'a str,
}

fn parts(location: &str) -> Result<Parts<'_>, StoreError> {
    let (scheme, rest) = location
        .split_once("://")
        .ok_or_else(|| StoreError::Unsupported(format!("{location} is not a store URI")))?;
    let (authority, path) = rest.split_once('/').unwrap_or((rest, ""));
    if authority.is_empty() {
        return Err(StoreError::Unsupported(format!(
            "{location} names no bucket or container"
        )));
    }
    Ok(Parts {
        scheme: scheme.to_ascii_lowercase(),
        authority,
        path: path.trim_matches('/'),
    })
}

impl ObjectStores {
    pub fn new(flink: Option<FlinkConfig>) -> Result<Self, StoreError> {
        let runtime = super::runtime("object store")?;
        Ok(ObjectStores {
            runtime,
            flink,
            clients: HashMap::new(),
        })
    }

    pub fn read(
        &mut self,
        url: &str,
        location: &str,
        max_bytes: u64,
    ) -> Result<Vec<u8>, StoreError> {
        let (target, path) = self.target(url, location)?;
        let classify = |e| target.classify(e, location);
        self.runtime.block_on(async {
            let got = target.store.get(&path).await.map_err(classify)?;
            if got.meta.size > max_bytes {
                return Err(StoreError::TooLarge(got.meta.size));
            }
            let bytes = got.bytes().await.map_err(classify)?;
            Ok(bytes.to_vec())
        })
    }

    pub fn list(&mut self, url: &str, location: &str) -> Result<Vec<String>, StoreError> {
        let (target, prefix) = self.target(url, location)?;
        let listed = self
            .runtime
            .block_on(target.store.list_with_delimiter(Some(&prefix)))
            .map_err(|e| target.classify(e, location))?;
        let mut names: Vec<String> = listed
            .common_prefixes
            .iter()
            .filter_map(|p| p.filename().map(|name| format!("{name}/")))
            .chain(
                listed
                    .objects
                    .iter()
                    .filter_map(|o| o.location.filename().map(str::to_owned)),
            )
            .collect();
        names.sort();
        Ok(names)
    }

    /// The client of `url`'s bucket and the object path inside it.
    fn target(&mut self, url: &str, location: &str) -> Result<(Client, Path), StoreError> {
        let parts = parts(url)?;
        let path = object_path(parts.path, location)?;
        Ok((self.client(&parts)?.clone(), path))
    }

    fn client(&mut self, parts: &Parts<'_>) -> Result<&Client, StoreError> {
        let key = format!("{}://{}", parts.scheme, parts.authority);
        if !self.clients.contains_key(&key) {
            let client = match parts.scheme.as_str() {
                "s3" | "s3a" | "s3p" | "s3n" => s3(parts.authority, self.flink.as_ref())?,
                "gs" => gcs(parts.authority)?,
                "wasb" | "wasbs" | "abfs" | "abfss" => azure(parts, self.flink.as_ref())?,
                other => {
                    return Err(StoreError::Unsupported(format!(
                        "no store client for {other}://"
                    )));
                }
            };
            self.clients.insert(key.clone(), client);
        }
        self.clients
            .get(&key)
            .ok_or_else(|| StoreError::Failed(format!("no client for {key}")))
    }
}

fn object_path(path: &str, location: &str) -> Result<Path, StoreError> {
    Path::parse(path)
        .map_err(|e| StoreError::Unsupported(format!("{location} is not a valid object path: {e}")))
}

/// No retries and bounded waits: the component decides what a failure means.
fn client_options(endpoint: Option<&str>) -> (ClientOptions, RetryConfig) {
    let options = ClientOptions::new()
        .with_connect_timeout(CONNECT_TIMEOUT)
        .with_timeout(REQUEST_TIMEOUT)
        // An endpoint the operator wrote as http:// (MinIO, a local test server) is meant.
        .with_allow_http(endpoint.is_some_and(|e| e.starts_with("http://")));
    let retry = RetryConfig {
        max_retries: 0,
        retry_timeout: Duration::from_secs(1),
        ..RetryConfig::default()
    };
    (options, retry)
}

fn env(name: &str) -> Option<String> {
    std::env::var(name).ok().filter(|v| !v.is_empty())
}

fn s3(bucket: &str, flink: Option<&FlinkConfig>) -> Result<Client, StoreError> {
    let mut builder = AmazonS3Builder::from_env().with_bucket_name(bucket);
    let mut endpoint = env("AWS_ENDPOINT_URL").or_else(|| env("AWS_ENDPOINT"));
    let profile = env("AWS_ACCESS_KEY_ID")
        .is_none()
        .then(aws_profile)
        .flatten();
    let mut credentials = if env("AWS_ACCESS_KEY_ID").is_some() {
        "AWS_ACCESS_KEY_ID from the environment".to_owned()
    } else if let Some(profile) = profile {
        builder = builder
            .with_access_key_id(&profile.key)
            .with_secret_access_key(&profile.secret);
        if let Some(token) = &profile.token {
            builder = builder.with_token(token);
        }
        if let Some(region) = &profile.region {
            builder = builder.with_region(region);
        }
        if let Some(url) = profile.endpoint.as_ref().filter(|_| endpoint.is_none()) {
            builder = builder.with_endpoint(url);
            endpoint = Some(url.clone());
        }
        profile.source
    } else if env("AWS_WEB_IDENTITY_TOKEN_FILE").is_some() {
        "the web identity token in AWS_WEB_IDENTITY_TOKEN_FILE".to_owned()
    } else {
        "the instance's metadata service (no AWS_ACCESS_KEY_ID, no s3.access-key)".to_owned()
    };
    if let Some(flink) = flink {
        let file = flink.file.display();
        if let Some(value) = flink.get(&["s3.endpoint", "fs.s3a.endpoint"]) {
            // Flink's presto and hadoop plugins take an endpoint without a scheme as https.
            let value = if value.contains("://") {
                value.to_owned()
            } else {
                format!("https://{value}")
            };
            builder = builder.with_endpoint(&value);
            endpoint = Some(value);
        }
        let key = flink.get(&["s3.access-key", "s3.access.key", "fs.s3a.access.key"]);
        let secret = flink.get(&["s3.secret-key", "s3.secret.key", "fs.s3a.secret.key"]);
        if let (Some(key), Some(secret)) = (key, secret) {
            builder = builder
                .with_access_key_id(key)
                .with_secret_access_key(secret)
                .with_token(String::new());
            credentials = format!("s3.access-key in {file}");
        }
        if let Some(region) =
            flink.get(&["s3.region", "s3.endpoint.region", "fs.s3a.endpoint.region"])
        {
            builder = builder.with_region(region);
        }
        if let Some(path_style) = flink.get(&[
            "s3.path.style.access",
            "s3.path-style-access",
            "fs.s3a.path.style.access",
        ]) {
            builder = builder.with_virtual_hosted_style_request(path_style.trim() != "true");
        }
    }
    let (options, retry) = client_options(endpoint.as_deref());
    let store = builder
        .with_client_options(options)
        .with_retry(retry)
        .build()
        .map_err(|e| {
            StoreError::Failed(format!(
                "cannot configure the S3 client for bucket {bucket}: {e}"
            ))
        })?;
    Ok(Client {
        store: Arc::new(store),
        endpoint: endpoint.unwrap_or_else(|| "AWS S3".to_owned()),
        credentials,
    })
}

/// Keys of an AWS shared-credentials profile (`AWS_PROFILE`, else `default`).
struct AwsProfile {
    key: String,
    secret: String,
    token: Option<String>,
    region: Option<String>,
    endpoint: Option<String>,
    source: String,
}

/// The profile in `AWS_SHARED_CREDENTIALS_FILE` (default `~/.aws/credentials`), with the region
/// and endpoint_url of `AWS_CONFIG_FILE` (default `~/.aws/config`), as the AWS CLI reads them.
fn aws_profile() -> Option<AwsProfile> {
    let home = std::env::var_os("HOME").map(std::path::PathBuf::from);
    let credentials_file = env("AWS_SHARED_CREDENTIALS_FILE")
        .map(std::path::PathBuf::from)
        .or_else(|| home.as_ref().map(|h| h.join(".aws/credentials")))?;
    let config_file = env("AWS_CONFIG_FILE")
        .map(std::path::PathBuf::from)
        .or_else(|| home.as_ref().map(|h| h.join(".aws/config")));
    let name = env("AWS_PROFILE").unwrap_or_else(|| "default".to_owned());
    let text = std::fs::read_to_string(&credentials_file).ok()?;
    let section = ini_section(&text, &name);
    let key = section.get("aws_access_key_id")?.clone();
    let secret = section.get("aws_secret_access_key")?.clone();
    let config = config_file
        .and_then(|f| std::fs::read_to_string(f).ok())
        .map(|text| {
            let header = if name == "default" {
                name.clone()
            } else {
                format!("profile {name}")
            };
            ini_section(&text, &header)
        })
        .unwrap_or_default();
    Some(AwsProfile {
        key,
        secret,
        token: section.get("aws_session_token").cloned(),
        region: config.get("region").cloned(),
        endpoint: config.get("endpoint_url").cloned(),
        source: format!("profile {name} in {}", credentials_file.display()),
    })
}

/// The `key = value` lines of section `[name]` of an INI text.
fn ini_section(text: &str, name: &str) -> HashMap<String, String> {
    let mut values = HashMap::new();
    let mut inside = false;
    for line in text.lines().map(str::trim) {
        if let Some(header) = line.strip_prefix('[').and_then(|l| l.strip_suffix(']')) {
            inside = header.trim() == name;
        } else if inside && let Some((key, value)) = line.split_once('=') {
            values.insert(key.trim().to_owned(), value.trim().to_owned());
        }
    }
    values
}

fn gcs(bucket: &str) -> Result<Client, StoreError> {
    let key_file = env("GOOGLE_SERVICE_ACCOUNT").or_else(|| env("GOOGLE_APPLICATION_CREDENTIALS"));
    // A service-account file may name another endpoint (`gcs_base_url`: an emulator such as
    // fake-gcs-server, or a private endpoint).
    let endpoint = key_file
        .as_ref()
        .and_then(|file| std::fs::read_to_string(file).ok())
        .and_then(|text| serde_json::from_str::<serde_json::Value>(&text).ok())
        .and_then(|key| key["gcs_base_url"].as_str().map(str::to_owned));
    let (options, retry) = client_options(endpoint.as_deref());
    let credentials = match &key_file {
        Some(file) => format!("the service account in {file}"),
        None => "the application default credentials".to_owned(),
    };
    let store = GoogleCloudStorageBuilder::from_env()
        .with_bucket_name(bucket)
        .with_client_options(options)
        .with_retry(retry)
        .build()
        .map_err(|e| {
            StoreError::Failed(format!(
                "cannot configure the GCS client for bucket {bucket}: {e}"
            ))
        })?;
    Ok(Client {
        store: Arc::new(store),
        endpoint: endpoint.unwrap_or_else(|| "Google Cloud Storage".to_owned()),
        credentials,
    })
}

/// `wasb[s]://container@account.blob.core.windows.net/…`, `abfs[s]://container@account.dfs…`.
fn azure(parts: &Parts<'_>, flink: Option<&FlinkConfig>) -> Result<Client, StoreError> {
    let (container, host) = parts.authority.split_once('@').ok_or_else(|| {
        StoreError::Unsupported(format!(
            "{}://{} names no storage account: Azure locations are {}://container@account.dfs.core.windows.net/path",
            parts.scheme, parts.authority, parts.scheme
        ))
    })?;
    let account = host.split('.').next().unwrap_or(host);
    let mut builder = MicrosoftAzureBuilder::from_env()
        .with_account(account)
        .with_container_name(container);
    let mut credentials = if env("AZURE_STORAGE_ACCOUNT_KEY").is_some() {
        "AZURE_STORAGE_ACCOUNT_KEY from the environment".to_owned()
    } else {
        "Azure's managed identity or environment credentials".to_owned()
    };
    if let Some(flink) = flink {
        let keys = [
            format!("fs.azure.account.key.{host}"),
            format!("fs.azure.account.key.{account}.dfs.core.windows.net"),
            format!("fs.azure.account.key.{account}.blob.core.windows.net"),
        ];
        let keys: Vec<&str> = keys.iter().map(String::as_str).collect();
        if let Some(key) = flink.get(&keys) {
            builder = builder.with_access_key(key);
            credentials = format!(
                "fs.azure.account.key of {account} in {}",
                flink.file.display()
            );
        }
    }
    // Azurite (and the legacy emulator) take their endpoint from AZURITE_BLOB_STORAGE_URL.
    let emulator = env("AZURE_STORAGE_USE_EMULATOR").is_some_and(|v| v == "true" || v == "1");
    let endpoint = if emulator {
        Some(env("AZURITE_BLOB_STORAGE_URL").unwrap_or_else(|| "http://127.0.0.1:10000".to_owned()))
    } else {
        env("AZURE_STORAGE_ENDPOINT")
    };
    let (options, retry) = client_options(endpoint.as_deref());
    let store = builder
        .with_client_options(options)
        .with_retry(retry)
        .build()
        .map_err(|e| {
            StoreError::Failed(format!(
                "cannot configure the Azure client for {}: {e}",
                parts.authority
            ))
        })?;
    Ok(Client {
        store: Arc::new(store),
        endpoint: endpoint.unwrap_or_else(|| format!("account {account}")),
        credentials,
    })
}

impl Client {
    /// The client's error as the WIT's `store-error`; the text never holds a secret (the
    /// clients do not print credentials).
    fn classify(&self, error: object_store::Error, location: &str) -> StoreError {
        super::object_error::classify(error, location, &self.endpoint, &self.credentials)
    }
}
