package io.actionstate.cleanup;

import java.util.Objects;

/** Why a {@link SnapshotStore} did not give an object: the WIT {@code store-error}. */
public final class SnapshotStoreException extends Exception {
  private static final long serialVersionUID = 1L;

  /** The WIT cases, in declaration order. */
  public enum Kind {
    NOT_FOUND,
    DENIED,
    UNREACHABLE,
    UNSUPPORTED,
    TOO_LARGE,
    FAILED
  }

  private final Kind kind;
  private final long size;

  /** A failure with the store client's words (never a secret). */
  public SnapshotStoreException(Kind kind, String message) {
    super(message);
    this.kind = Objects.requireNonNull(kind, "kind");
    this.size = -1;
  }

  /** {@code TOO_LARGE}: the object's size. */
  public static SnapshotStoreException tooLarge(long size) {
    return new SnapshotStoreException(size);
  }

  private SnapshotStoreException(long size) {
    super("the object holds " + size + " bytes");
    this.kind = Kind.TOO_LARGE;
    this.size = size;
  }

  public Kind kind() {
    return kind;
  }

  /** For {@code TOO_LARGE}: the object's size; else -1. */
  public long size() {
    return size;
  }
}
