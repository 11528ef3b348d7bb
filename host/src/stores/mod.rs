//! The `snapshot-store` import: whole objects by location, from local files or the object stores
//! Flink writes snapshots to. One call is one request; which locations to read, and what a
//! failure means for the plan, is the component's. Retries of the store clients are off.

mod flink_config;
mod hdfs;
mod local;
mod object;
mod object_error;

use std::path::PathBuf;

pub use action_state_format::snapshot::store::StoreError;
pub use flink_config::FlinkConfig;

/// Every store this host reads, made on first use and kept for the process's later reads.
#[derive(Default)]
pub struct SnapshotStores {
    /// Flink's own configuration (`--flink-config`, or `FLINK_CONF_DIR`): the `s3.*`, `gs.*`,
    /// `fs.azure.*` keys the job's filesystem plugins read.
    flink: Option<FlinkConfig>,
    flink_loaded: bool,
    flink_path: Option<PathBuf>,
    objects: Option<object::ObjectStores>,
    hdfs: Option<hdfs::HdfsStores>,
}

impl SnapshotStores {
    /// Stores that read Flink's configuration from `path` (a `config.yaml`/`flink-conf.yaml`
    /// file or the directory holding it) instead of `FLINK_CONF_DIR`.
    pub fn with_flink_config(path: PathBuf) -> Self {
        SnapshotStores {
            flink_path: Some(path),
            ..SnapshotStores::default()
        }
    }

    pub fn read(&mut self, location: &str, max_bytes: u64) -> Result<Vec<u8>, StoreError> {
        match Location::of(location)? {
            Location::Local(path) => local::read(&path, location, max_bytes),
            Location::Object(url) => self.objects()?.read(&url, location, max_bytes),
            Location::Hdfs(url) => self.hdfs()?.read(&url, location, max_bytes),
        }
    }

    pub fn list(&mut self, location: &str) -> Result<Vec<String>, StoreError> {
        match Location::of(location)? {
            Location::Local(path) => local::list(&path, location),
            Location::Object(url) => self.objects()?.list(&url, location),
            Location::Hdfs(url) => self.hdfs()?.list(&url, location),
        }
    }

    fn hdfs(&mut self) -> Result<&mut hdfs::HdfsStores, StoreError> {
        if self.hdfs.is_none() {
            self.hdfs = Some(hdfs::HdfsStores::new()?);
        }
        self.hdfs
            .as_mut()
            .ok_or_else(|| StoreError::Failed("no HDFS client".into()))
    }

    fn objects(&mut self) -> Result<&mut object::ObjectStores, StoreError> {
        if !self.flink_loaded {
            self.flink = FlinkConfig::load(self.flink_path.as_deref())?;
            self.flink_loaded = true;
        }
        if self.objects.is_none() {
            self.objects = Some(object::ObjectStores::new(self.flink.clone())?);
        }
        self.objects
            .as_mut()
            .ok_or_else(|| StoreError::Failed("no object store client".into()))
    }
}

/// The runtime a store client's requests run on: one worker thread, started on first use.
fn runtime(what: &str) -> Result<tokio::runtime::Runtime, StoreError> {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .map_err(|e| StoreError::Failed(format!("cannot start the {what} client runtime: {e}")))
}

/// Where a location is: a local file (a plain path or `file:` URI) or an object in a store.
enum Location {
    Local(PathBuf),
    Object(String),
    Hdfs(String),
}

/// The schemes Flink writes snapshots to that this build reads.
pub const OBJECT_SCHEMES: &[&str] = &[
    "s3", "s3a", "s3p", "s3n", "gs", "wasb", "wasbs", "abfs", "abfss",
];

impl Location {
    fn of(location: &str) -> Result<Location, StoreError> {
        let Some((scheme, rest)) = location.split_once(':') else {
            return Ok(Location::Local(PathBuf::from(location)));
        };
        // A Windows drive letter or a relative path with a colon is a path, not a scheme.
        let is_scheme = scheme.len() > 1
            && scheme.starts_with(|c: char| c.is_ascii_alphabetic())
            && scheme
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || "+-.".contains(c));
        if !is_scheme {
            return Ok(Location::Local(PathBuf::from(location)));
        }
        let scheme = scheme.to_ascii_lowercase();
        if scheme == "file" {
            // file:/p, file:///p and file://localhost/p are all the local /p.
            let path = rest.strip_prefix("//localhost").unwrap_or(rest);
            let path = path.trim_start_matches('/');
            return Ok(Location::Local(PathBuf::from(format!("/{path}"))));
        }
        if OBJECT_SCHEMES.contains(&scheme.as_str()) {
            return Ok(Location::Object(location.to_owned()));
        }
        if scheme == "hdfs" {
            return Ok(Location::Hdfs(location.to_owned()));
        }
        Err(StoreError::Unsupported(format!(
            "this build reads snapshots from local paths, file://, hdfs:// and {} URIs, not {scheme}://",
            OBJECT_SCHEMES
                .iter()
                .map(|s| format!("{s}://"))
                .collect::<Vec<_>>()
                .join(", ")
        )))
    }
}
