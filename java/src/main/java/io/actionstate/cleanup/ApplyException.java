package io.actionstate.cleanup;

import java.util.Optional;

/**
 * Why an apply stopped (WIT {@code coordinator.apply-failure}): the typed error, its sentence,
 * what the stop means ({@link #failureClass()}), the plan as verified, and the plan's status in
 * the control topic as the run last knew it. {@code COMMITTED} means a second apply of the same
 * plan finishes it.
 */
public final class ApplyException extends CleanupException {
  private static final long serialVersionUID = 1L;

  private final Status status;
  private final boolean commitAttempted;
  private final transient Plan plan;
  private final FailureClass failureClass;

  ApplyException(
      CleanupError error,
      String message,
      Optional<Status> status,
      boolean commitAttempted,
      Optional<Plan> plan,
      FailureClass failureClass) {
    super(error, message);
    this.status = status.orElse(null);
    this.commitAttempted = commitAttempted;
    this.plan = plan.orElse(null);
    this.failureClass = failureClass;
  }

  /** Input the JVM refused before calling the component (not UTF-8, say). */
  static ApplyException refusedBeforeCall(CleanupException refused) {
    return new ApplyException(
        refused.error(),
        refused.getMessage(),
        Optional.empty(),
        false,
        Optional.empty(),
        FailureClass.REFUSED);
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

  /** The plan as the component verified it; empty when the document was rejected. */
  public Optional<Plan> plan() {
    return Optional.ofNullable(plan);
  }

  /** What the stop means, as the component classed it: refused, failed or fenced. */
  public FailureClass failureClass() {
    return failureClass;
  }
}
