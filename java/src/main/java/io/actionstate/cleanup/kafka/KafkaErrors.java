package io.actionstate.cleanup.kafka;

import io.actionstate.cleanup.CleanupError.KafkaError;
import io.actionstate.cleanup.CleanupError.KafkaErrorKind;
import io.actionstate.cleanup.capability.KafkaFailure;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutionException;
import org.apache.kafka.clients.consumer.InvalidOffsetException;
import org.apache.kafka.common.KafkaException;
import org.apache.kafka.common.errors.AuthenticationException;
import org.apache.kafka.common.errors.DisconnectException;
import org.apache.kafka.common.errors.InvalidProducerEpochException;
import org.apache.kafka.common.errors.NetworkException;
import org.apache.kafka.common.errors.ProducerFencedException;
import org.apache.kafka.common.protocol.Errors;

/**
 * A kafka-clients exception as the WIT {@code kafka-error}: the Kafka protocol code the exception
 * stands for and its name, kept as they came (the component classifies protocol codes itself, by
 * the one table in its core, so this host lists none), and the case of what only the client
 * knows: a failed login, a lost connection, a position outside the log. Client-side failures
 * without a protocol code keep code 0 and the exception's class name.
 */
public final class KafkaErrors {
  private KafkaErrors() {}

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
    KafkaErrorKind kind;
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

  /**
   * Whether the client's metadata may be stale after {@code error}: a broker answered with an
   * error (a moved leader, a recreated topic: a protocol code), or the client lost or waited on a
   * connection. Telling those codes apart is the component's job; a fresh client after any of
   * them costs one metadata request.
   */
  public static boolean mayBeStale(KafkaError error) {
    return error.code() > 0
        || error.kind() == KafkaErrorKind.TRANSPORT
        || error.kind() == KafkaErrorKind.TIMEOUT;
  }

  /**
   * Whether {@code t} says a newer producer with the same transactional id took over (the
   * client's own exception classes): a transaction that must not be aborted.
   */
  public static boolean fenced(Throwable t) {
    Throwable e = unwrap(t);
    return e instanceof ProducerFencedException || e instanceof InvalidProducerEpochException;
  }

  /** {@link #map} as the exception a capability throws. */
  public static KafkaFailure failure(Throwable t) {
    return new KafkaFailure(map(t));
  }
}
