package io.actionstate.cleanup;

/**
 * One record read from the control topic, exactly as Kafka returned it (WIT
 * {@code control-entry}).
 *
 * @param offset offset in the control topic's single partition
 * @param key the record key, {@code null} when the record has none
 * @param value the record value, {@code null} for a tombstone
 */
public record ControlEntry(long offset, String key, String value) {
  public ControlEntry {
    if (offset < 0) {
      throw new IllegalArgumentException("control-topic offset " + offset + " is negative");
    }
  }
}
