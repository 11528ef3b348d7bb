//! The top layer: the protocol steps that talk to Kafka through `kafka::policy::Policy`. Imports
//! from `format` and `kafka`.

pub mod apply;
pub mod preview;
pub mod recovery;
pub mod replay;
pub mod replication;
pub mod status;
