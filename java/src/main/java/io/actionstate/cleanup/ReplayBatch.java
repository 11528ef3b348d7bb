package io.actionstate.cleanup;

import java.util.List;

/**
 * What one {@link RecoverySession#nextBatch} returned: the records to apply, in order, each in
 * [requested, captured end) of its partition with a key and valid UTF-8; {@code done} once every
 * partition reached its captured end and the topic identity was re-checked.
 */
public record ReplayBatch(List<Record> records, boolean done, List<Progress> progress) {

  /** One replayed record: key as text, value as text or {@code null} for a tombstone. */
  public record Record(int partition, long offset, String key, String value) {}

  /** Replay progress of one partition: the next offset and the captured end. */
  public record Progress(int partition, long position, long target) {}
}
