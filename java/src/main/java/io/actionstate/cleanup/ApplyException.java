package io.actionstate.cleanup;

import java.util.Optional;

/**
 * Why an apply stopped (WIT {@code coordinator.apply-failure}): the typed error, its sentence,
 * and the plan's status in the control topic as the run last knew it. {@code COMMITTED} means a
 * second apply of the same plan finishes it.
 */
public final class ApplyException extends CleanupException {
  private static final long serialVersionUID = 1L;

  private final Status status;

  ApplyException(CleanupError error, String message, Optional<Status> status) {
    super(error, message);
    this.status = status.orElse(null);
  }

  /** The plan's status as this run last knew it; empty when the run does not know it. */
  public Optional<Status> status() {
    return Optional.ofNullable(status);
  }
}
