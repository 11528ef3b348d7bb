package io.actionstate.cleanup.capability;

import io.actionstate.cleanup.CleanupError.KafkaError;
import java.util.Objects;

/** A capability call that Kafka refused or that failed: the {@code kafka-error} to report. */
public final class KafkaFailure extends Exception {
  private static final long serialVersionUID = 1L;

  private final transient KafkaError error;

  public KafkaFailure(KafkaError error) {
    super(error.kind().witName() + " (" + error.code() + " " + error.name() + "): "
        + error.message());
    this.error = Objects.requireNonNull(error);
  }

  /** The case, code, name and message the host reports. */
  public KafkaError error() {
    return error;
  }
}
