package io.actionstate.cleanup;

import java.time.Duration;
import java.util.Objects;

/**
 * How a restore replays (WIT {@code recovery.replay-options}).
 *
 * @param pollTimeout how long one poll may wait for records
 * @param stallTimeout replay fails with {@code replay-stalled} after this long without progress
 */
public record ReplayOptions(Duration pollTimeout, Duration stallTimeout) {
  private static final Duration MAX = Duration.ofMillis(0xFFFF_FFFFL);

  /**
   * Refuses durations the WIT's {@code u32} milliseconds cannot carry now, when the options are
   * made: refused at {@link RecoverySession#restore} instead, they would fail the restore in the
   * host, where the component's failed-restore rule never runs. (Values the WIT carries but the
   * component refuses, such as a zero poll timeout, fail the restore there.)
   *
   * @throws IllegalArgumentException a duration below 0 or above 2^32-1 ms
   */
  public ReplayOptions {
    u32(Objects.requireNonNull(pollTimeout, "pollTimeout"), "pollTimeout");
    u32(Objects.requireNonNull(stallTimeout, "stallTimeout"), "stallTimeout");
  }

  /** 500 ms polls, 60 s without progress. */
  public static ReplayOptions defaults() {
    return new ReplayOptions(Duration.ofMillis(500), Duration.ofSeconds(60));
  }

  private static long u32(Duration d, String what) {
    if (d.isNegative() || d.compareTo(MAX) > 0) {
      throw new IllegalArgumentException(what + " must be 0 .. 2^32-1 ms, but was " + d);
    }
    return d.toMillis();
  }

  Object[] lower() {
    return new Object[] {pollTimeout.toMillis(), stallTimeout.toMillis()};
  }
}
