//! `hdfs://namenode[:port]/path` snapshots through a native HDFS client: the NameNode's RPC for
//! where the blocks are, the DataNodes for the bytes. Cluster settings (HA name services,
//! Kerberos) come from `HADOOP_CONF_DIR` as for Hadoop's own clients.

use std::collections::HashMap;

use hdfs_native::{Client, ClientBuilder, HdfsError};

use super::StoreError;

pub struct HdfsStores {
    runtime: tokio::runtime::Runtime,
    /// One client per NameNode (or name service).
    clients: HashMap<String, Client>,
}

impl HdfsStores {
    pub fn new() -> Result<Self, StoreError> {
        let runtime = super::runtime("HDFS")?;
        Ok(HdfsStores {
            runtime,
            clients: HashMap::new(),
        })
    }

    pub fn read(
        &mut self,
        url: &str,
        location: &str,
        max_bytes: u64,
    ) -> Result<Vec<u8>, StoreError> {
        let (namenode, path) = split(url, location)?;
        let client = self.client(namenode, location)?;
        self.runtime.block_on(async {
            let mut reader = client
                .read(&path)
                .await
                .map_err(|e| classify(e, location, namenode))?;
            let size = reader.file_length() as u64;
            if size > max_bytes {
                return Err(StoreError::TooLarge(size));
            }
            let bytes = reader
                .read_bytes(reader.file_length())
                .await
                .map_err(|e| classify(e, location, namenode))?;
            Ok(bytes.to_vec())
        })
    }

    pub fn list(&mut self, url: &str, location: &str) -> Result<Vec<String>, StoreError> {
        let (namenode, path) = split(url, location)?;
        let client = self.client(namenode, location)?;
        let listed = self
            .runtime
            .block_on(client.list_status(&path, false))
            .map_err(|e| classify(e, location, namenode))?;
        let mut names: Vec<String> = listed
            .iter()
            .map(|status| {
                let name = status.path.rsplit('/').next().unwrap_or(&status.path);
                if status.isdir {
                    format!("{name}/")
                } else {
                    name.to_owned()
                }
            })
            .collect();
        names.sort();
        Ok(names)
    }

    fn client(&mut self, namenode: &str, location: &str) -> Result<Client, StoreError> {
        if let Some(client) = self.clients.get(namenode) {
            return Ok(client.clone());
        }
        let mut builder = ClientBuilder::new()
            .with_url(format!("hdfs://{namenode}"))
            .with_io_runtime(self.runtime.handle().clone());
        if namenode.contains(':') {
            // One NameNode named directly: a failure is reported at once, never retried with
            // back-off (the client's default is 15 attempts over minutes). A name service
            // keeps its configured failover between its NameNodes.
            builder = builder.with_config([
                ("dfs.client.failover.max.attempts", "0"),
                ("dfs.client.failover.sleep.base.millis", "0"),
                ("dfs.client.failover.sleep.max.millis", "0"),
            ]);
        }
        let client = builder
            .build()
            .map_err(|e| classify(e, location, namenode))?;
        self.clients.insert(namenode.to_owned(), client.clone());
        Ok(client)
    }
}

/// `hdfs://namenode:port/a/b` as the NameNode and the absolute path `/a/b`.
fn split<'a>(url: &'a str, location: &str) -> Result<(&'a str, String), StoreError> {
    let rest = url
        .split_once("://")
        .map(|(_, rest)| rest)
        .ok_or_else(|| StoreError::Unsupported(format!("{location} is not an hdfs:// URI")))?;
    let (namenode, path) = rest.split_once('/').unwrap_or((rest, ""));
    if namenode.is_empty() {
        return Err(StoreError::Unsupported(format!(
            "{location} names no NameNode: write hdfs://namenode:port/path (or the name service of HADOOP_CONF_DIR's configuration)"
        )));
    }
    Ok((namenode, format!("/{}", path.trim_matches('/'))))
}

fn classify(error: HdfsError, location: &str, namenode: &str) -> StoreError {
    use std::io::ErrorKind;
    // The server's Java stack trace stays out of the sentence: its first line says it.
    let said = error.to_string();
    let said = said.lines().next().unwrap_or_default().trim().to_owned();
    match &error {
        HdfsError::FileNotFound(_) | HdfsError::IsADirectoryError(_) => {
            StoreError::NotFound(location.to_owned())
        }
        HdfsError::RPCError(class, _) if class.ends_with("FileNotFoundException") => {
            StoreError::NotFound(location.to_owned())
        }
        HdfsError::IOError(io)
            if matches!(
                io.kind(),
                ErrorKind::ConnectionRefused
                    | ErrorKind::ConnectionReset
                    | ErrorKind::TimedOut
                    | ErrorKind::HostUnreachable
                    | ErrorKind::NetworkUnreachable
                    | ErrorKind::AddrNotAvailable
            ) =>
        {
            StoreError::Unreachable(format!("NameNode {namenode}: {said}"))
        }
        HdfsError::RPCError(class, _) | HdfsError::FatalRPCError(class, _)
            if class.contains("AccessControlException") =>
        {
            StoreError::Denied(format!("NameNode {namenode} refused the request: {said}"))
        }
        HdfsError::SASLError(_) | HdfsError::GSSAPIError(..) | HdfsError::NoSASLMechanism => {
            StoreError::Denied(format!(
                "NameNode {namenode} did not accept this client's login (Kerberos: KRB5CCNAME, HADOOP_CONF_DIR): {said}"
            ))
        }
        _ => StoreError::Failed(said),
    }
}
