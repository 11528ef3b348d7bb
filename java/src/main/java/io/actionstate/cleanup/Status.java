package io.actionstate.cleanup;

/** The status of a plan in the control topic (WIT {@code status}). */
public enum Status {
  /** The boundary is durable and binding; deletion may not have finished. */
  COMMITTED,
  /** Kafka confirmed that every partition begins at or after the boundary. */
  APPLIED
}
