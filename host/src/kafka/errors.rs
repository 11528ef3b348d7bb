//! The client's errors mapped once to the WIT `kafka-error` cases (the core's `KafkaError`),
//! keeping the code, its name and the client's message: librdkafka's own codes by this host's
//! table, Kafka's protocol codes by the core's. No retry, no interpretation.

use rdkafka::error::{KafkaError as RdError, RDKafkaErrorCode as C};

pub use action_state_kafka::capabilities::{ErrorKind, KafkaError, KafkaResult};
use action_state_kafka::kafka_codes::protocol_case;

/// The case of a librdkafka code. Broker codes (positive) mean the same in every client, so
/// the core's table classifies them (`action_state_kafka::kafka_codes`); this host maps only
/// librdkafka's own codes (negative), as `wit/types.wit` lists them.
pub fn kind_of(code: C) -> ErrorKind {
    let number = code as i32;
    if number > 0 {
        return protocol_case(number).unwrap_or(ErrorKind::Other);
    }
    match code {
        // librdkafka's ListOffsets answers a missing topic with _NOENT ("No leaders found").
        C::UnknownTopic | C::UnknownPartition | C::NoEnt => ErrorKind::UnknownTopic,
        // A failed TLS handshake (SSL) is an authentication error too, as in Kafka's Java
        // client (SslAuthenticationException): a bad certificate does not heal on retry.
        C::Authentication | C::SSL => ErrorKind::Authentication,
        C::OperationTimedOut | C::MessageTimedOut | C::TimedOutQueue => ErrorKind::Timeout,
        C::BrokerTransportFailure
        | C::AllBrokersDown
        | C::Resolve
        | C::DestroyBroker
        | C::BrokerDestroy => ErrorKind::Transport,
        C::WaitingForCoordinator | C::NoOffset => ErrorKind::NotLeader,
        C::Fenced => ErrorKind::Fenced,
        C::AutoOffsetReset => ErrorKind::OffsetOutOfRange,
        _ => ErrorKind::Other,
    }
}

/// The code's name in Kafka's style, e.g. `UNKNOWN_TOPIC_OR_PARTITION`; the client's own codes
/// (negative) start with `_`, e.g. `_OPERATION_TIMED_OUT`. An acronym stays one word: `_SSL`,
/// `UNSUPPORTED_SASL_MECHANISM`.
pub fn code_name(code: C) -> String {
    let camel: Vec<char> = format!("{code:?}").chars().collect();
    let mut name = String::with_capacity(camel.len() + 4);
    if (code as i32) < 0 {
        name.push('_');
    }
    for (i, &ch) in camel.iter().enumerate() {
        // A word starts at an upper-case letter after a lower-case one, or at the last capital
        // of an acronym that a lower-case letter follows ("SASLMechanism": before the "M").
        let starts_word = i > 0
            && ch.is_ascii_uppercase()
            && (!camel[i - 1].is_ascii_uppercase()
                || camel.get(i + 1).is_some_and(char::is_ascii_lowercase));
        if starts_word {
            name.push('_');
        }
        name.push(ch.to_ascii_uppercase());
    }
    name
}

pub fn from_code(code: C, message: impl Into<String>) -> KafkaError {
    KafkaError {
        kind: kind_of(code),
        code: code as i32,
        name: code_name(code),
        message: message.into(),
    }
}

/// An rdkafka error; errors without a code (configuration, canceled futures) are `other`.
pub fn from_rd(error: &RdError) -> KafkaError {
    // rdkafka reports no code for a failed admin operation, though the variant carries one.
    if let RdError::AdminOp(code) = error {
        return from_code(*code, error.to_string());
    }
    match error.rdkafka_error_code() {
        Some(code) => from_code(code, error.to_string()),
        None => KafkaError::new(ErrorKind::Other, error.to_string()),
    }
}

/// A value the host cannot put into a Kafka request (it came from the guest).
pub fn invalid(message: impl Into<String>) -> KafkaError {
    KafkaError::new(ErrorKind::Other, message)
}

impl From<super::ffi::NativeError> for KafkaError {
    fn from(error: super::ffi::NativeError) -> Self {
        from_code(C::from(error.code), error.message)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn code_names_are_kafka_style_and_keep_acronyms_whole() {
        assert_eq!(
            code_name(C::UnknownTopicOrPartition),
            "UNKNOWN_TOPIC_OR_PARTITION"
        );
        assert_eq!(code_name(C::OperationTimedOut), "_OPERATION_TIMED_OUT");
        assert_eq!(code_name(C::SSL), "_SSL");
        assert_eq!(
            code_name(C::UnsupportedSASLMechanism),
            "UNSUPPORTED_SASL_MECHANISM"
        );
        assert_eq!(code_name(C::PartitionEOF), "_PARTITION_EOF");
        assert_eq!(kind_of(C::SSL), ErrorKind::Authentication);
    }
}
