package io.actionstate.cleanup;

/**
 * What a refusal or failure means for whoever runs the component (WIT {@code types.failure-class},
 * cases in declaration order), decided by the component: map it to an exit code or an exception
 * class without reading the error's case.
 */
public enum FailureClass {
  /** A check refused the input: a plan, marker, option or control topic. */
  REFUSED,
  /** Kafka failed, or stopped making progress, beyond the component's retries. */
  FAILED,
  /** Another apply of the same control topic fenced this run's writer; nothing committed. */
  FENCED,
  /** The recovery rules refuse the restore: the input was well-formed, the answer is no. */
  RESTORE_REFUSED
}
