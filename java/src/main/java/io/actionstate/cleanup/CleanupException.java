package io.actionstate.cleanup;

import java.util.Objects;

/**
 * The component refused or failed: carries the typed {@link CleanupError} (its WIT case and
 * fields) and, as {@link #getMessage()}, the one sentence the component renders for it
 * ({@code plans.message}), the same text every host prints.
 */
public class CleanupException extends Exception {
  private static final long serialVersionUID = 1L;

  private final transient CleanupError error;

  public CleanupException(CleanupError error, String message) {
    super(message);
    this.error = Objects.requireNonNull(error, "error");
  }

  /** The typed error with its fields. */
  public CleanupError error() {
    return error;
  }

  /** The WIT case name, e.g. {@code "invalid-plan"}. */
  public String kind() {
    return error.kind();
  }
}
