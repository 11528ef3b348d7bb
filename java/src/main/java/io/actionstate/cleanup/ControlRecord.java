package io.actionstate.cleanup;

import java.util.Objects;

/** The value of one control-topic record (WIT {@code control-record}). */
public record ControlRecord(Status status, Plan plan) {
  public ControlRecord {
    Objects.requireNonNull(status, "status");
    Objects.requireNonNull(plan, "plan");
  }
}
