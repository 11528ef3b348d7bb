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

/**
 * Per-call cost of {@code verify} in the JVM, warm, against the Rust CLI end to end
 * ({@code action-state-cleanup verify --plan FILE}, a process per call) and against a plain
 * Jackson parse of the same file text, in one run. Run by {@code java/bench}.
 *
 * <p>Arguments: {@code validator.wasm}, the CLI binary, a work directory.
 */
public final class VerifyBench {
  private VerifyBench() {}

  private interface Call {
    Object run() throws Exception;
  }

  /** Median, minimum and maximum of {@code runs} timed calls after {@code warmup} untimed ones. */
  private static double[] measure(int warmup, int runs, Call call) throws Exception {
    Object sink = null;
    for (int i = 0; i < warmup; i++) {
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
    if (args.length != 3) {
      System.err.println("usage: VerifyBench VALIDATOR_WASM CLI WORK_DIR");
      System.exit(2);
    }
    Path component = Path.of(args[0]);
    String cli = args[1];
    Path work = Files.createDirectories(Path.of(args[2]));
    int scale = Integer.parseInt(System.getenv().getOrDefault("ASC_BENCH_JVM_SCALE", "1"));

    long loadStart = System.nanoTime();
    Plans compiled = Plans.load(component, Plans.Engine.COMPILER);
    long loadCompiler = System.nanoTime() - loadStart;
    loadStart = System.nanoTime();
    Plans interpreted = Plans.load(component, Plans.Engine.INTERPRETER);
    long loadInterpreter = System.nanoTime() - loadStart;

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
    System.out.printf(
        Locale.ROOT,
        "Component load (parse the component, extract and parse the core module, compile,"
            + " instantiate): compiler %s, interpreter %s.%n%n",
        time(loadCompiler),
        time(loadInterpreter));
    System.out.println("| call | runs | median | min–max |");
    System.out.println("|---|---|---|---|");
    for (Path file : List.of(specFile, bigFile)) {
      String text = Files.readString(file);
      boolean small = file.equals(specFile);
      String name = small ? "SPEC plan (2 partitions)" : "10,000-partition plan";
      String id = compiled.verify(text).planId();
      if (!id.equals(interpreted.verify(text).planId())) {
        throw new IllegalStateException("the engines disagree on " + file);
      }
      int warm = (small ? 2000 : 50) * scale;
      int runs = (small ? 2001 : 101) * scale;
      row(name + ": JVM `Plans.verify`, Chicory compiler", runs,
          measure(warm, runs, () -> compiled.verify(text)));
      // The interpreter is far slower (seconds per 10,000-partition call): fewer runs.
      int interpretedRuns = small ? 201 * scale : 3;
      row(name + ": JVM `Plans.verify`, Chicory interpreter", interpretedRuns,
          measure(small ? 200 * scale : 1, interpretedRuns, () -> interpreted.verify(text)));
      row(name + ": Jackson `readTree` of the same text", runs,
          measure(warm, runs, () -> {
            JsonNode node = jackson.readTree(text);
            return node;
          }));
      int cliRuns = 31;
      row(name + ": Rust CLI `verify --plan`, process end to end", cliRuns,
          measure(3, cliRuns, () -> runCli(cli, file)));
    }
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
