package io.actionstate.cleanup.internal;

/**
 * The guest broke the canonical ABI or trapped: a bug in the component or its host, never a
 * verdict about the input. The instance it happened in is discarded.
 */
public final class GuestFault extends RuntimeException {
  private static final long serialVersionUID = 1L;

  public GuestFault(String message) {
    super(message);
  }

  public GuestFault(String message, Throwable cause) {
    super(message, cause);
  }
}
