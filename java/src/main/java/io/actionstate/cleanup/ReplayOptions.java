package io.actionstate.cleanup;

import java.time.Duration;

/**
 * How a restore replays (WIT {@code recovery.replay-options}).
 *
 * @param pollTimeout how long one poll may wait for records
 * @param stallTimeout replay fails with {@code replay-stalled} after this long without progress
 */
public record ReplayOptions(Duration pollTimeout, Duration stallTimeout) {
  /** 500 ms polls, 60 s without progress. */
  public static ReplayOptions defaults() {
    return new ReplayOptions(Duration.ofMillis(500), Duration.ofSeconds(60));
  }

  private static long u32(Duration d, String what) {
    long ms = d.toMillis();
    if (ms < 0 || ms > 0xFFFF_FFFFL) {
      throw new IllegalArgumentException(what + " must be 0 .. 2^32-1 ms");
    }
    return ms;
  }

  Object[] lower() {
    return new Object[] {u32(pollTimeout, "pollTimeout"), u32(stallTimeout, "stallTimeout")};
  }
}
