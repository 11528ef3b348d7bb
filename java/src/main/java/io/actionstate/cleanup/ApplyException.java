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
  private final boolean commitAttempted;

  ApplyException(
      CleanupError error, String message, Optional<Status> status, boolean commitAttempted) {
    super(error, message);
    this.status = status.orElse(null);
    this.commitAttempted = commitAttempted;
  }

  /**
   * Whether this run sent its COMMITTED append. {@code false}: this run committed nothing (the
   * failure came before the point of no return), whatever {@link #status()} says an earlier run
   * left; {@code true} with an empty status: the append's outcome is unknown.
   */
  public boolean commitAttempted() {
    return commitAttempted;
  }

  /** The plan's status as this run last knew it; empty when the run does not know it. */
  public Optional<Status> status() {
    return Optional.ofNullable(status);
  }
}
