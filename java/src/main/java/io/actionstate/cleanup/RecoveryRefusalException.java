package io.actionstate.cleanup;

import java.util.List;

/**
 * Why {@link Cleanup#checkRecovery} refused (WIT {@code recovery.recovery-refusal}): the error
 * and, for a {@code boundary-violation}, every partition whose requested offset is below the
 * committed boundary, ascending by partition (empty for every other error).
 */
public final class RecoveryRefusalException extends CleanupException {
  private static final long serialVersionUID = 1L;

  private final transient List<CleanupError.BoundaryViolation> violations;

  RecoveryRefusalException(
      CleanupError error, String message, List<CleanupError.BoundaryViolation> violations) {
    super(error, message);
    this.violations = List.copyOf(violations);
  }

  /** Every violating partition of a {@code boundary-violation}; empty otherwise. */
  public List<CleanupError.BoundaryViolation> violations() {
    return violations;
  }
}
