#![allow(
    dead_code,
    clippy::expect_used,
    clippy::panic,
    reason = "test support: a failure is a failed test"
)]

//! The object-store servers of `scripts/stores`, for the snapshot-store tests: started once
//! per test process (a server already running is reused), filled with plain HTTP requests.

use std::io::{Read, Write};
use std::net::TcpStream;
use std::path::Path;
use std::process::Command;
use std::sync::OnceLock;

/// The endpoint of moto's S3 server (`scripts/stores start s3`), or of the one in
/// `ASC_S3_ENDPOINT`.
pub fn s3_endpoint() -> &'static str {
    static ENDPOINT: OnceLock<String> = OnceLock::new();
    ENDPOINT.get_or_init(|| {
        std::env::var("ASC_S3_ENDPOINT")
            .ok()
            .filter(|e| !e.is_empty())
            .unwrap_or_else(|| start("s3"))
    })
}

/// The endpoint of moto's S3 server with authentication on (`scripts/stores start s3-auth`).
pub fn s3_auth_endpoint() -> &'static str {
    static ENDPOINT: OnceLock<String> = OnceLock::new();
    ENDPOINT.get_or_init(|| start("s3-auth"))
}

fn start(store: &str) -> String {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("../scripts/stores");
    let output = Command::new(script)
        .args(["start", store])
        .output()
        .expect("scripts/stores runs");
    assert!(
        output.status.success(),
        "scripts/stores start {store} failed: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8(output.stdout)
        .expect("endpoint")
        .trim()
        .to_owned()
}

/// One unsigned HTTP request (moto's server takes them while authentication is off); the
/// status code.
fn request(endpoint: &str, method: &str, path: &str, body: &[u8]) -> u16 {
    request_typed(endpoint, method, path, "application/octet-stream", body)
}

fn request_typed(endpoint: &str, method: &str, path: &str, content_type: &str, body: &[u8]) -> u16 {
    let host = endpoint.trim_start_matches("http://");
    let mut stream = TcpStream::connect(host).expect("the S3 server accepts connections");
    let head = format!(
        "{method} {path} HTTP/1.1\r\nHost: {host}\r\nContent-Type: {content_type}\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
        body.len()
    );
    stream.write_all(head.as_bytes()).expect("request head");
    stream.write_all(body).expect("request body");
    let mut answer = String::new();
    stream.read_to_string(&mut answer).ok();
    answer
        .split_whitespace()
        .nth(1)
        .and_then(|code| code.parse().ok())
        .unwrap_or(0)
}

pub fn create_bucket(endpoint: &str, bucket: &str) {
    let status = request(endpoint, "PUT", &format!("/{bucket}"), b"");
    assert_eq!(status, 200, "creating bucket {bucket}");
}

/// Creates `bucket` unless the (long-lived) server already holds it.
pub fn ensure_bucket(endpoint: &str, bucket: &str) {
    if request(endpoint, "HEAD", &format!("/{bucket}"), b"") != 200 {
        create_bucket(endpoint, bucket);
    }
}

/// Uploads every file below `dir` under its relative path into `bucket`, leaving alone the keys
/// the server already holds. moto lets an anonymous request create an object but not read or
/// overwrite one (403), and answers 404 for a missing key; the fixtures' keys hold random UUIDs,
/// so an existing key is the same file from an earlier test run against the same server.
pub fn upload_tree_once(endpoint: &str, bucket: &str, dir: &Path) -> usize {
    let files = files(dir);
    for (relative, bytes) in &files {
        let key = format!("/{bucket}/{relative}");
        if request(endpoint, "HEAD", &key, b"") != 404 {
            continue;
        }
        let status = request(endpoint, "PUT", &key, bytes);
        assert_eq!(status, 200, "uploading {key}");
    }
    files.len()
}

/// The endpoint of fake-gcs-server (`scripts/stores start gcs`).
pub fn gcs_endpoint() -> &'static str {
    static ENDPOINT: OnceLock<String> = OnceLock::new();
    ENDPOINT.get_or_init(|| start("gcs"))
}

/// The files below `dir`, by path relative to it.
fn files(dir: &Path) -> Vec<(String, Vec<u8>)> {
    let mut found = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(folder) = stack.pop() {
        for entry in std::fs::read_dir(&folder).expect("fixture folder") {
            let path = entry.expect("entry").path();
            if path.is_dir() {
                stack.push(path);
            } else {
                let relative = path
                    .strip_prefix(dir)
                    .expect("below dir")
                    .display()
                    .to_string();
                found.push((relative, std::fs::read(&path).expect("fixture")));
            }
        }
    }
    found
}

/// Creates `bucket` in fake-gcs-server and uploads every file below `dir` as `prefix/…`, through
/// the JSON API's media uploads.
pub fn gcs_upload_tree(endpoint: &str, bucket: &str, dir: &Path, prefix: &str) -> usize {
    let created = request_typed(
        endpoint,
        "POST",
        "/storage/v1/b",
        "application/json",
        format!("{{\"name\":\"{bucket}\"}}").as_bytes(),
    );
    assert_eq!(created, 200, "creating GCS bucket {bucket}");
    let files = files(dir);
    for (relative, bytes) in &files {
        let name = format!("{prefix}/{relative}").replace('/', "%2F");
        let path = format!("/upload/storage/v1/b/{bucket}/o?uploadType=media&name={name}");
        let status = request(endpoint, "POST", &path, bytes);
        assert_eq!(status, 200, "uploading {relative} to GCS");
    }
    files.len()
}

/// Uploads every file below `dir` as `prefix/<relative path>` into `bucket`.
pub fn upload_tree(endpoint: &str, bucket: &str, dir: &Path, prefix: &str) -> usize {
    let files = files(dir);
    for (relative, bytes) in &files {
        let key = format!("/{bucket}/{prefix}/{relative}");
        let status = request(endpoint, "PUT", &key, bytes);
        assert_eq!(status, 200, "uploading {key}");
    }
    files.len()
}

/// The endpoint of Azurite's blob service (`scripts/stores start azure`).
pub fn azure_endpoint() -> &'static str {
    static ENDPOINT: OnceLock<String> = OnceLock::new();
    ENDPOINT.get_or_init(|| start("azure"))
}

/// Creates `container` in Azurite and uploads every file below `dir` as `prefix/…` (through
/// the Azure SDK, `scripts/stores upload azure`); the number of blobs.
pub fn azure_upload_tree(container: &str, dir: &Path, prefix: &str) -> usize {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("../scripts/stores");
    let output = Command::new(script)
        .args(["upload", "azure", container])
        .arg(dir)
        .arg(prefix)
        .output()
        .expect("scripts/stores runs");
    assert!(
        output.status.success(),
        "scripts/stores upload azure failed: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8_lossy(&output.stdout)
        .trim()
        .parse()
        .expect("a count")
}

/// The NameNode URI of the MiniDFSCluster (`scripts/stores start hdfs`).
pub fn hdfs_endpoint() -> &'static str {
    static ENDPOINT: OnceLock<String> = OnceLock::new();
    ENDPOINT.get_or_init(|| start("hdfs"))
}

/// Writes every file below `dir` as `/prefix/…` into HDFS, through a native HDFS client.
pub fn hdfs_upload_tree(namenode: &str, dir: &Path, prefix: &str) -> usize {
    use hdfs_native::{ClientBuilder, WriteOptions};
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .expect("a runtime");
    let client = ClientBuilder::new()
        .with_url(namenode)
        .with_io_runtime(runtime.handle().clone())
        .build()
        .expect("an HDFS client");
    let files = files(dir);
    runtime.block_on(async {
        for (relative, bytes) in &files {
            let path = format!("/{prefix}/{relative}");
            let mut writer = client
                .create(&path, WriteOptions::default().replication(1))
                .await
                .unwrap_or_else(|e| panic!("creating {path} in HDFS: {e}"));
            writer
                .write_bytes(bytes.clone().into())
                .await
                .unwrap_or_else(|e| panic!("writing {path}: {e}"));
            writer
                .close()
                .await
                .unwrap_or_else(|e| panic!("closing {path}: {e}"));
        }
    });
    files.len()
}
