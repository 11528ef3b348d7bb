package io.actionstate.cleanup;

import java.util.Objects;

/**
 * A snapshot's store did not give one of its files (the WIT {@code snapshot-failure.store}): the
 * message is the component's sentence, naming the snapshot and the object. Nothing was done.
 */
public final class SnapshotUnavailableException extends Exception {
  private static final long serialVersionUID = 1L;

  private final SnapshotStoreException.Kind reason;
  private final String location;

  SnapshotUnavailableException(SnapshotStoreException.Kind reason, String location, String message) {
    super(message);
    this.reason = Objects.requireNonNull(reason, "reason");
    this.location = Objects.requireNonNull(location, "location");
  }

  /** Why the store did not give it. */
  public SnapshotStoreException.Kind reason() {
    return reason;
  }

  /** The object that was asked for. */
  public String location() {
    return location;
  }
}
