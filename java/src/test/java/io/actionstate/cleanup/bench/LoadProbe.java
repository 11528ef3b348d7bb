package io.actionstate.cleanup.bench;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.actionstate.cleanup.Plans;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.util.Locale;

/**
 * Run in a fresh JVM by {@code java/bench}. {@code LoadProbe PLAN_FILE} times
 * {@code Plans.load()} (class loading of Chicory and of the ahead-of-time compiled module,
 * parsing its metadata, instantiating), then the first {@code verify} of the plan file, then the
 * first Jackson {@code readTree} plus {@code MessageDigest} SHA-256 of the same bytes (class
 * loading included on both sides), and prints the three durations in nanoseconds.
 * {@code LoadProbe PLAN_FILE COMPONENT} loads with Chicory's runtime compiler instead;
 * {@code LoadProbe cleanup} times {@code Cleanup.connect} (the admin client is created, nothing
 * is sent) plus the first call into the compiled cleanup component (which instantiates it:
 * {@code planMarkerFiles}, no Kafka involved) and prints that duration.
 */
public final class LoadProbe {
  private LoadProbe() {}

  public static void main(String[] args) throws Exception {
    if (args[0].equals("cleanup")) {
      long start = System.nanoTime();
      io.actionstate.cleanup.Cleanup cleanup =
          io.actionstate.cleanup.Cleanup.connect(
              java.util.Map.of("bootstrap.servers", "127.0.0.1:1"), java.time.Duration.ofSeconds(30));
      try {
        cleanup.planMarkerFiles("C1").close();
        System.out.printf(Locale.ROOT, "%d%n", System.nanoTime() - start);
      } finally {
        cleanup.close();
      }
      return;
    }
    String text = Files.readString(Path.of(args[0]));
    long start = System.nanoTime();
    Plans plans = args.length == 2 ? Plans.load(Path.of(args[1])) : Plans.load();
    long loaded = System.nanoTime();
    plans.verify(text);
    long verified = System.nanoTime();
    JsonNode node = new ObjectMapper().readTree(text);
    byte[] digest =
        MessageDigest.getInstance("SHA-256").digest(text.getBytes(StandardCharsets.UTF_8));
    long floor = System.nanoTime();
    if (node == null || digest.length != 32) {
      throw new IllegalStateException("no baseline result");
    }
    System.out.printf(
        Locale.ROOT, "%d %d %d%n", loaded - start, verified - loaded, floor - verified);
  }
}
