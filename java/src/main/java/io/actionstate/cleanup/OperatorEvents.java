package io.actionstate.cleanup;

import java.util.List;
import java.util.Optional;

/**
 * What the component tells the operator while it works (WIT {@code operator-events}); the host
 * decides how to show it. Every method has a default: proceed, and show nothing.
 */
public interface OperatorEvents {
  /** The operator's answer to the review before COMMITTED (WIT {@code review}). */
  enum Review {
    /** Commit the plan. */
    PROCEED,
    /** Do not commit: the apply returns outcome {@code DECLINED}; nothing is committed or deleted. */
    DECLINE
  }

  /** No review, nothing shown. */
  OperatorEvents NONE = new OperatorEvents() {};

  /**
   * Called once per apply when the component verified the plan document, before any Kafka
   * request: the plan being applied (not called for a document that is no plan).
   */
  default void verified(Plan plan) {}

  /**
   * Called once per apply, after every check passed and right before COMMITTED is written (in a
   * dry run too, where the answer is ignored); {@code created} names the control topic this apply
   * created.
   */
  default Review beforeCommit(
      String planId,
      List<ApplyReport.PartitionPreview> preview,
      Optional<ApplyReport.NewControlTopic> created) {
    return Review.PROCEED;
  }

  /**
   * The plan is COMMITTED in the control topic: from here on an interrupted apply leaves it
   * COMMITTED and the same apply finishes it.
   */
  default void committed(String planId) {}

  /**
   * A Kafka step failed in a way that may pass and the component tries again until the step's
   * deadline, {@code remainingMs} from now; {@code message} is the sentence the step would fail
   * with. At most once a second; return at once.
   */
  default void retrying(String message, long remainingMs) {}
}
