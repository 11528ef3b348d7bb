package io.actionstate.cleanup.bench;

import io.actionstate.cleanup.Plans;
import java.nio.file.Path;
import java.util.Locale;

/**
 * Run in a fresh JVM by {@code java/bench}: times {@code Plans.load()} (class loading of Chicory
 * and of the ahead-of-time compiled module, parsing its metadata, instantiating) and the first
 * {@code verify} after it, and prints both in nanoseconds. With an argument {@code runtime FILE}
 * it times the old path instead: {@code Plans.load(FILE)}, which compiles at load.
 */
public final class LoadProbe {
  private LoadProbe() {}

  public static void main(String[] args) throws Exception {
    String plan =
        "{\"schemaVersion\":1,\"planId\":\"0\",\"sourceRecoveryPoint\":\"c\",\"topic\":\"t\","
            + "\"topicId\":\"AAAAAAAAAAAAAAAAAAAAAQ\",\"offsets\":{\"0\":1}}";
    long start = System.nanoTime();
    Plans plans = args.length == 2 ? Plans.load(Path.of(args[1])) : Plans.load();
    long loaded = System.nanoTime();
    try {
      plans.verify(plan);
    } catch (io.actionstate.cleanup.CleanupException expected) {
      // The ID is wrong on purpose: the call runs the whole parser and hasher, then refuses.
    }
    long verified = System.nanoTime();
    System.out.printf(Locale.ROOT, "%d %d%n", loaded - start, verified - loaded);
  }
}
