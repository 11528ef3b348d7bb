//! Kafka's protocol error codes classified once into the WIT `kafka-error` cases. A broker
//! answers these positive codes the same way to every client, so their meaning belongs to the
//! core and not to each host; a host maps only what its client adds on its own (librdkafka's
//! negative codes, kafka-clients' exceptions without a code). `wit/types.wit` lists each case's
//! codes, and every host's tests check their table against it.

use crate::capabilities::{ErrorKind, KafkaError};

/// Every protocol code the component tells apart from `other`: the code, its name in Kafka's
/// protocol (`org.apache.kafka.common.protocol.Errors`) and its case. Ascending by code.
pub const PROTOCOL_CODES: [(i32, &str, ErrorKind); 29] = [
    (1, "OFFSET_OUT_OF_RANGE", ErrorKind::OffsetOutOfRange),
    (3, "UNKNOWN_TOPIC_OR_PARTITION", ErrorKind::UnknownTopic),
    (5, "LEADER_NOT_AVAILABLE", ErrorKind::NotLeader),
    (6, "NOT_LEADER_OR_FOLLOWER", ErrorKind::NotLeader),
    (7, "REQUEST_TIMED_OUT", ErrorKind::Timeout),
    // The broker a request was meant for is not in the cluster right now: as transient as a
    // broken connection, and what librdkafka reports for a broker that went away.
    (8, "BROKER_NOT_AVAILABLE", ErrorKind::Transport),
    (13, "NETWORK_EXCEPTION", ErrorKind::Transport),
    (14, "COORDINATOR_LOAD_IN_PROGRESS", ErrorKind::NotLeader),
    (15, "COORDINATOR_NOT_AVAILABLE", ErrorKind::NotLeader),
    (16, "NOT_COORDINATOR", ErrorKind::NotLeader),
    (19, "NOT_ENOUGH_REPLICAS", ErrorKind::NotLeader),
    (20, "NOT_ENOUGH_REPLICAS_AFTER_APPEND", ErrorKind::NotLeader),
    (29, "TOPIC_AUTHORIZATION_FAILED", ErrorKind::Authorization),
    (30, "GROUP_AUTHORIZATION_FAILED", ErrorKind::Authorization),
    (31, "CLUSTER_AUTHORIZATION_FAILED", ErrorKind::Authorization),
    (33, "UNSUPPORTED_SASL_MECHANISM", ErrorKind::Authentication),
    (34, "ILLEGAL_SASL_STATE", ErrorKind::Authentication),
    (37, "INVALID_PARTITIONS", ErrorKind::PolicyViolation),
    (38, "INVALID_REPLICATION_FACTOR", ErrorKind::PolicyViolation),
    (40, "INVALID_CONFIG", ErrorKind::PolicyViolation),
    (44, "POLICY_VIOLATION", ErrorKind::PolicyViolation),
    (47, "INVALID_PRODUCER_EPOCH", ErrorKind::Fenced),
    (
        53,
        "TRANSACTIONAL_ID_AUTHORIZATION_FAILED",
        ErrorKind::Authorization,
    ),
    (58, "SASL_AUTHENTICATION_FAILED", ErrorKind::Authentication),
    (74, "FENCED_LEADER_EPOCH", ErrorKind::NotLeader),
    (75, "UNKNOWN_LEADER_EPOCH", ErrorKind::NotLeader),
    (78, "OFFSET_NOT_AVAILABLE", ErrorKind::NotLeader),
    (90, "PRODUCER_FENCED", ErrorKind::Fenced),
    (100, "UNKNOWN_TOPIC_ID", ErrorKind::UnknownTopic),
];

/// The case of a Kafka protocol code, or `None` when the code is no protocol code (zero, or a
/// client's own negative code) or one the component does not tell apart from `other`.
pub fn protocol_case(code: i32) -> Option<ErrorKind> {
    if code <= 0 {
        return None;
    }
    PROTOCOL_CODES
        .binary_search_by_key(&code, |(known, _, _)| *known)
        .ok()
        .and_then(|at| PROTOCOL_CODES.get(at))
        .map(|(_, _, kind)| *kind)
}

/// The error with the case the core's table gives its protocol code; any other error as the
/// host reported it. When the host's case and the code disagree, the code wins: the code is
/// what the broker answered, the same number in every client, while the case is only the host's
/// reading of it, so a host whose table drifted (or that reports `other` for every code it does
/// not know) still retries, refuses and reports exactly like the others. A host can add meaning
/// only where there is no protocol code.
pub fn classified(mut error: KafkaError) -> KafkaError {
    if let Some(kind) = protocol_case(error.code) {
        error.kind = kind;
    }
    error
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_table_is_ascending_without_repeats_so_the_search_finds_every_code() {
        assert!(PROTOCOL_CODES.windows(2).all(|w| w[0].0 < w[1].0));
        for (code, name, kind) in PROTOCOL_CODES {
            assert_eq!(protocol_case(code), Some(kind), "{name} ({code})");
        }
    }

    #[test]
    fn codes_outside_the_table_have_no_case() {
        for code in [0, 2, 4, 9, 36, 101, i32::MAX, -1, -185, i32::MIN] {
            assert_eq!(protocol_case(code), None, "{code}");
        }
    }

    #[test]
    fn a_protocol_code_reported_as_other_takes_its_case_from_the_table() {
        let host = KafkaError {
            kind: ErrorKind::Other,
            code: 8,
            name: "BROKER_NOT_AVAILABLE".into(),
            message: "Broker not available".into(),
        };
        let classified = classified(host.clone());
        assert_eq!(classified.kind, ErrorKind::Transport);
        assert_eq!(
            (classified.code, classified.name, classified.message),
            (host.code, host.name, host.message),
            "only the case changes"
        );
    }

    #[test]
    fn the_code_wins_over_a_host_case_that_disagrees() {
        let host = KafkaError {
            kind: ErrorKind::Timeout,
            code: 29,
            name: "TOPIC_AUTHORIZATION_FAILED".into(),
            message: "denied".into(),
        };
        assert_eq!(classified(host).kind, ErrorKind::Authorization);
    }

    #[test]
    fn without_a_protocol_code_the_hosts_case_stands() {
        let client_side = KafkaError {
            kind: ErrorKind::Timeout,
            code: -185,
            name: "_TIMED_OUT".into(),
            message: "Local: Timed out".into(),
        };
        assert_eq!(classified(client_side.clone()), client_side);
        let unknown = KafkaError {
            kind: ErrorKind::Transport,
            code: 87,
            name: "INVALID_RECORD".into(),
            message: "odd".into(),
        };
        assert_eq!(classified(unknown.clone()), unknown);
        let plain = KafkaError::new(ErrorKind::Authentication, "no code");
        assert_eq!(classified(plain.clone()), plain);
    }
}
