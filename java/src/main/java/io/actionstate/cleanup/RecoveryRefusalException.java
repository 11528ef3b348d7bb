package io.actionstate.cleanup;

import java.util.List;
import java.util.Optional;

/**
 * Why {@link Cleanup#checkRecovery} refused (WIT {@code recovery.recovery-refusal}): the error
 * and, for a {@code boundary-violation}, every partition whose requested offset is below the
 * committed boundary, ascending by partition (empty for every other error), and the
 * component's hint naming the plan and recovery point that committed the boundary.
 */
public final class RecoveryRefusalException extends CleanupException {
  private static final long serialVersionUID = 1L;

  private final transient List<CleanupError.BoundaryViolation> violations;
  private final String hint;
  private final FailureClass failureClass;

  RecoveryRefusalException(
      CleanupError error,
      String message,
      List<CleanupError.BoundaryViolation> violations,
      Optional<String> hint,
      FailureClass failureClass) {
    super(error, message);
    this.violations = List.copyOf(violations);
    this.hint = hint.orElse(null);
    this.failureClass = failureClass;
  }

  /**
   * What the refusal means, as the component classed it: {@code RESTORE_REFUSED} when the
   * recovery rules say no, {@code REFUSED} for wrong markers, policy or control topic (no
   * boundary was checked), {@code FAILED} for Kafka.
   */
  public FailureClass failureClass() {
    return failureClass;
  }

  /**
   * For a {@code boundary-violation}: which plan, from which recovery point, committed the
   * boundary, and that a restore may use that recovery point or a newer one; empty otherwise.
   */
  public Optional<String> hint() {
    return Optional.ofNullable(hint);
  }

  /** Every violating partition of a {@code boundary-violation}; empty otherwise. */
  public List<CleanupError.BoundaryViolation> violations() {
    return violations;
  }
}
