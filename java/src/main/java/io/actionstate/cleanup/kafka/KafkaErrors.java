package io.actionstate.cleanup.kafka;

import io.actionstate.cleanup.CleanupError.KafkaError;
import io.actionstate.cleanup.CleanupError.KafkaErrorKind;
import io.actionstate.cleanup.capability.KafkaFailure;
import java.util.Map;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutionException;
import org.apache.kafka.clients.consumer.InvalidOffsetException;
import org.apache.kafka.common.KafkaException;
import org.apache.kafka.common.errors.AuthenticationException;
import org.apache.kafka.common.errors.DisconnectException;
import org.apache.kafka.common.errors.NetworkException;
import org.apache.kafka.common.protocol.Errors;

/**
 * The one mapping from a kafka-clients exception to the WIT {@code kafka-error} case, by the
 * Kafka protocol code the exception stands for (the codes {@code types.wit} lists per case). The
 * code and its name are kept; client-side failures without a protocol code keep code 0 and the
 * exception's class name.
 */
public final class KafkaErrors {
  private KafkaErrors() {}

  /**
   * The protocol codes this host tells apart from {@code other}: exactly the positive codes
   * {@code types.wit} lists (KafkaErrorsTableTest checks it). The component classifies these codes
   * itself too; the host keeps them so that its own answers, which the conformance suite checks,
   * already carry the case.
   */
  static final Map<Errors, KafkaErrorKind> BY_CODE =
      Map.ofEntries(
          Map.entry(Errors.UNKNOWN_TOPIC_OR_PARTITION, KafkaErrorKind.UNKNOWN_TOPIC),
          Map.entry(Errors.UNKNOWN_TOPIC_ID, KafkaErrorKind.UNKNOWN_TOPIC),
          Map.entry(Errors.TOPIC_AUTHORIZATION_FAILED, KafkaErrorKind.AUTHORIZATION),
          Map.entry(Errors.GROUP_AUTHORIZATION_FAILED, KafkaErrorKind.AUTHORIZATION),
          Map.entry(Errors.CLUSTER_AUTHORIZATION_FAILED, KafkaErrorKind.AUTHORIZATION),
          Map.entry(Errors.TRANSACTIONAL_ID_AUTHORIZATION_FAILED, KafkaErrorKind.AUTHORIZATION),
          Map.entry(Errors.SASL_AUTHENTICATION_FAILED, KafkaErrorKind.AUTHENTICATION),
          Map.entry(Errors.UNSUPPORTED_SASL_MECHANISM, KafkaErrorKind.AUTHENTICATION),
          Map.entry(Errors.ILLEGAL_SASL_STATE, KafkaErrorKind.AUTHENTICATION),
          Map.entry(Errors.REQUEST_TIMED_OUT, KafkaErrorKind.TIMEOUT),
          Map.entry(Errors.BROKER_NOT_AVAILABLE, KafkaErrorKind.TRANSPORT),
          Map.entry(Errors.NETWORK_EXCEPTION, KafkaErrorKind.TRANSPORT),
          Map.entry(Errors.NOT_LEADER_OR_FOLLOWER, KafkaErrorKind.NOT_LEADER),
          Map.entry(Errors.LEADER_NOT_AVAILABLE, KafkaErrorKind.NOT_LEADER),
          Map.entry(Errors.COORDINATOR_LOAD_IN_PROGRESS, KafkaErrorKind.NOT_LEADER),
          Map.entry(Errors.COORDINATOR_NOT_AVAILABLE, KafkaErrorKind.NOT_LEADER),
          Map.entry(Errors.NOT_COORDINATOR, KafkaErrorKind.NOT_LEADER),
          Map.entry(Errors.NOT_ENOUGH_REPLICAS, KafkaErrorKind.NOT_LEADER),
          Map.entry(Errors.NOT_ENOUGH_REPLICAS_AFTER_APPEND, KafkaErrorKind.NOT_LEADER),
          Map.entry(Errors.FENCED_LEADER_EPOCH, KafkaErrorKind.NOT_LEADER),
          Map.entry(Errors.UNKNOWN_LEADER_EPOCH, KafkaErrorKind.NOT_LEADER),
          Map.entry(Errors.OFFSET_NOT_AVAILABLE, KafkaErrorKind.NOT_LEADER),
          Map.entry(Errors.PRODUCER_FENCED, KafkaErrorKind.FENCED),
          Map.entry(Errors.INVALID_PRODUCER_EPOCH, KafkaErrorKind.FENCED),
          Map.entry(Errors.POLICY_VIOLATION, KafkaErrorKind.POLICY_VIOLATION),
          Map.entry(Errors.INVALID_PARTITIONS, KafkaErrorKind.POLICY_VIOLATION),
          Map.entry(Errors.INVALID_REPLICATION_FACTOR, KafkaErrorKind.POLICY_VIOLATION),
          Map.entry(Errors.INVALID_CONFIG, KafkaErrorKind.POLICY_VIOLATION),
          Map.entry(Errors.OFFSET_OUT_OF_RANGE, KafkaErrorKind.OFFSET_OUT_OF_RANGE));

  /** The exception that says what happened, under the wrappers futures and the client add. */
  static Throwable unwrap(Throwable t) {
    Throwable e = t;
    while ((e instanceof ExecutionException || e instanceof CompletionException
            || (e.getClass() == KafkaException.class))
        && e.getCause() != null
        && e.getCause() != e) {
      e = e.getCause();
    }
    return e;
  }

  /** The {@code kafka-error} for {@code t}. */
  public static KafkaError map(Throwable t) {
    Throwable e = unwrap(t);
    String message = e.getMessage() == null ? e.getClass().getSimpleName() : e.getMessage();
    if (e instanceof InvalidOffsetException) {
      // The consumer's own OffsetOutOfRangeException / NoOffsetForPartitionException
      // (auto.offset.reset=none): a position outside the log.
      return new KafkaError(
          KafkaErrorKind.OFFSET_OUT_OF_RANGE,
          Errors.OFFSET_OUT_OF_RANGE.code(),
          Errors.OFFSET_OUT_OF_RANGE.name(),
          message);
    }
    Errors code = Errors.forException(e);
    KafkaErrorKind kind = BY_CODE.get(code);
    if (kind != null) {
      return new KafkaError(kind, code.code(), code.name(), message);
    }
    if (e instanceof AuthenticationException) {
      kind = KafkaErrorKind.AUTHENTICATION;
    } else if (e instanceof DisconnectException || e instanceof NetworkException) {
      kind = KafkaErrorKind.TRANSPORT;
    } else {
      kind = KafkaErrorKind.OTHER;
    }
    if (code != Errors.UNKNOWN_SERVER_ERROR) {
      return new KafkaError(kind, code.code(), code.name(), message);
    }
    return new KafkaError(kind, 0, e.getClass().getSimpleName(), message);
  }

  /** {@link #map} as the exception a capability throws. */
  public static KafkaFailure failure(Throwable t) {
    return new KafkaFailure(map(t));
  }
}
