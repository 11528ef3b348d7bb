package io.actionstate.flinkjob;

import java.time.Duration;
import java.util.concurrent.Callable;

/** Polling for a condition the test cannot be told about, with a deadline that fails the test. */
final class Waits {
  private Waits() {}

  static void until(String what, Duration limit, Callable<Boolean> condition) throws Exception {
    long deadline = System.nanoTime() + limit.toNanos();
    while (!condition.call()) {
      if (System.nanoTime() > deadline) {
        throw new AssertionError("not within " + limit.toSeconds() + " s: " + what);
      }
      Thread.sleep(50);
    }
  }
}
