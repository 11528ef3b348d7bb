package io.actionstate.cleanup.bench;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.actionstate.cleanup.PartitionOffset;
import io.actionstate.cleanup.Plan;
import io.actionstate.cleanup.Plans;
import java.io.File;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.security.MessageDigest;
import java.nio.charset.StandardCharsets;

/**
 * Per-call cost of {@code verify} in the JVM, warm, on the ahead-of-time compiled component,
 * against Jackson {@code readTree} plus a {@code MessageDigest} SHA-256 of the same bytes and,
 * when a CLI binary is given, the Rust CLI end to end ({@code action-state-cleanup verify --plan
 * FILE}, a process per call), in one run. Run by {@code java/bench}.
 *
 * <p>Arguments: the CLI binary or {@code -}, a work directory.
 */
public final class VerifyBench {
  private VerifyBench() {}

  private interface Call {
    Object run() throws Exception;
  }

  /**
   * Least time spent warming up: HotSpot compiles the generated guest classes (about a megabyte
   * of bytecode) on its compiler threads, which on a busy machine takes seconds; timing before
   * that measures the bytecode interpreter, not warm code.
   */
  private static final long WARMUP_NANOS = 10_000_000_000L;

  /**
   * Median, minimum and maximum of {@code runs} timed calls after at least {@code warmup}
   * untimed ones and {@code warmupNanos}.
   */
  private static double[] measure(int warmup, long warmupNanos, int runs, Call call)
      throws Exception {
    Object sink = null;
    long warmStart = System.nanoTime();
    for (int i = 0; i < warmup || System.nanoTime() - warmStart < warmupNanos; i++) {
      sink = call.run();
    }
    double[] ns = new double[runs];
    for (int i = 0; i < runs; i++) {
      long start = System.nanoTime();
      sink = call.run();
      ns[i] = System.nanoTime() - start;
    }
    if (sink == null) {
      throw new IllegalStateException("the measured call returned nothing");
    }
    Arrays.sort(ns);
    double median =
        runs % 2 == 1 ? ns[runs / 2] : (ns[runs / 2 - 1] + ns[runs / 2]) / 2.0;
    return new double[] {median, ns[0], ns[runs - 1]};
  }

  /**
   * Medians of {@code runs} pairs of timed calls, {@code a} then {@code b} (after the warm-up
   * the phases before gave both): {@code {{median a}, {median b}}}.
   */
  private static double[][] interleaved(int runs, Call a, Call b) throws Exception {
    double[] as = new double[runs];
    double[] bs = new double[runs];
    Object sink = null;
    for (int i = 0; i < runs; i++) {
      long start = System.nanoTime();
      sink = a.run();
      long middle = System.nanoTime();
      sink = b.run();
      bs[i] = System.nanoTime() - middle;
      as[i] = middle - start;
    }
    if (sink == null) {
      throw new IllegalStateException("the measured call returned nothing");
    }
    Arrays.sort(as);
    Arrays.sort(bs);
    return new double[][] {{as[runs / 2]}, {bs[runs / 2]}};
  }

  private static String time(double ns) {
    if (ns < 1e3) {
      return String.format(Locale.ROOT, "%.0f ns", ns);
    } else if (ns < 1e6) {
      return String.format(Locale.ROOT, "%.1f µs", ns / 1e3);
    }
    return String.format(Locale.ROOT, "%.2f ms", ns / 1e6);
  }

  private static void row(String what, int runs, double[] m) {
    System.out.printf(
        Locale.ROOT,
        "| %s | %d | %s | %s–%s |%n",
        what,
        runs,
        time(m[0]),
        time(m[1]),
        time(m[2]));
  }

  public static void main(String[] args) throws Exception {
    if (args.length != 2) {
      System.err.println("usage: VerifyBench CLI|- WORK_DIR");
      System.exit(2);
    }
    String cli = args[0].equals("-") ? null : args[0];
    Path work = Files.createDirectories(Path.of(args[1]));
    int scale = Integer.parseInt(System.getenv().getOrDefault("ASC_BENCH_JVM_SCALE", "1"));

    Plans compiled = Plans.load();
    Plan spec =
        compiled.seal(
            "checkpoint-42",
            "action-state",
            "topic-id",
            List.of(new PartitionOffset(0, 10), new PartitionOffset(1, 20)));
    List<PartitionOffset> many = new ArrayList<>();
    for (int p = 0; p < 10_000; p++) {
      many.add(new PartitionOffset(p, 1_000_000L + 37L * p));
    }
    Plan big = compiled.seal("checkpoint-10000", "action-state", "AAAAAAAAAAAAAAAAAAAAAQ", many);
    Path specFile = work.resolve("spec-plan.json");
    Path bigFile = work.resolve("plan-10000.json");
    Files.writeString(specFile, compiled.render(spec));
    Files.writeString(bigFile, compiled.render(big));

    ObjectMapper jackson = new ObjectMapper();
    System.out.println("| call | runs | median | min–max |");
    System.out.println("|---|---|---|---|");
    double[] ratio = new double[2];
    double interleavedRatio = Double.NaN;
    for (Path file : List.of(specFile, bigFile)) {
      String text = Files.readString(file);
      boolean small = file.equals(specFile);
      String name = small ? "SPEC plan (2 partitions)" : "10,000-partition plan";
      int warm = (small ? 2000 : 50) * scale;
      // A thousand calls of the large plan span seconds. Under G1 (the default collector) both
      // verify and Jackson run ~1.7x slower in windows of one to three seconds, at any time of a
      // run (not with -XX:+UseParallelGC); a median over 101 calls, a quarter of a second, fell
      // wholly inside or outside one, and the two-phase ratio moved between 0.7x and 2.5x.
      int runs = (small ? 2001 : 1001) * scale;
      double[] ours = measure(warm, WARMUP_NANOS, runs, () -> compiled.verify(text));
      row(name + ": JVM `Plans.verify` (ahead-of-time compiled)", runs, ours);
      // The baseline does less than verify (no field rules, no canonical form), but it reads the
      // same characters and hashes the same bytes: the cost floor of any JSON-plus-digest check.
      double[] floor =
          measure(
              warm,
              WARMUP_NANOS,
              runs,
              () -> {
                JsonNode node = jackson.readTree(text);
                MessageDigest sha = MessageDigest.getInstance("SHA-256");
                byte[] digest = sha.digest(text.getBytes(StandardCharsets.UTF_8));
                return digest.length > 0 ? node : null;
              });
      row(name + ": Jackson `readTree` + `MessageDigest` SHA-256 of the same bytes", runs, floor);
      ratio[small ? 0 : 1] = ours[0] / floor[0];
      if (!small) {
        // The two phases above are tens of seconds apart; on a shared machine the load moves
        // in between. Here each timed verify is followed by a timed baseline call, so both
        // sides see the same load: the ratio of the medians, and each side's median.
        double[][] pairs = interleaved(runs * 3, () -> compiled.verify(text), () -> {
          JsonNode node = jackson.readTree(text);
          MessageDigest sha = MessageDigest.getInstance("SHA-256");
          byte[] digest = sha.digest(text.getBytes(StandardCharsets.UTF_8));
          return digest.length > 0 ? node : null;
        });
        System.out.printf(
            Locale.ROOT,
            "| %s: verify and baseline interleaved, call by call | %d | %s and %s | ratio %.2fx |%n",
            name,
            runs * 3,
            time(pairs[0][0]),
            time(pairs[1][0]),
            pairs[0][0] / pairs[1][0]);
        interleavedRatio = pairs[0][0] / pairs[1][0];
      }
      if (cli != null) {
        int cliRuns = 31;
        row(name + ": Rust CLI `verify --plan`, process end to end", cliRuns,
            measure(3, 0, cliRuns, () -> runCli(cli, file)));
      }
    }
    System.out.printf(
        Locale.ROOT,
        "%nverify / (Jackson + SHA-256), medians: SPEC plan %.2fx, 10,000 partitions %.2fx"
            + " (goal for 10,000: <= 1.5x); interleaved, 10,000 partitions %.2fx%n",
        ratio[0],
        ratio[1],
        interleavedRatio);
  }

  private static Object runCli(String cli, Path plan) throws IOException, InterruptedException {
    Process process =
        new ProcessBuilder(cli, "verify", "--plan", plan.toString())
            .redirectOutput(ProcessBuilder.Redirect.DISCARD)
            .redirectError(ProcessBuilder.Redirect.to(new File("/dev/null")))
            .start();
    int code = process.waitFor();
    if (code != 0) {
      throw new IllegalStateException(cli + " verify --plan " + plan + " exited with " + code);
    }
    return code;
  }

}
