package io.actionstate.flinkjob;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * The Rust CLI ({@code action-state-cleanup}) named by {@code ASC_CLI}, which scripts/test sets
 * to the debug build. A missing variable fails the test: the CLI's snapshot reader is part of what
 * these tests check, so they never run without it.
 */
final class Cli {
  private Cli() {}

  record Result(int exit, String stdout, String stderr) {}

  static Path path() {
    String cli = System.getenv("ASC_CLI");
    if (cli == null || cli.isBlank() || !Files.isExecutable(Path.of(cli))) {
      throw new IllegalStateException(
          "ASC_CLI is not set to the action-state-cleanup binary (it is " + cli + "): build it"
              + " with cargo build -p action-state-cleanup and set ASC_CLI=<target>/debug/"
              + "action-state-cleanup, as scripts/test does");
    }
    return Path.of(cli);
  }

  static Result run(String... args) throws Exception {
    return run(Map.of(), args);
  }

  /**
   * The CLI as a scheduler runs it: standard input not a terminal, and of the CLI's ASC_*
   * settings exactly {@code env} (none inherited from the test's environment).
   */
  static Result run(Map<String, String> env, String... args) throws Exception {
    List<String> command = new ArrayList<>();
    command.add(path().toString());
    command.addAll(List.of(args));
    ProcessBuilder builder = new ProcessBuilder(command).redirectInput(ProcessBuilder.Redirect.PIPE);
    builder.environment().keySet().removeIf(name -> name.startsWith("ASC_"));
    builder.environment().putAll(env);
    Process process = builder.start();
    process.getOutputStream().close();
    byte[] out = process.getInputStream().readAllBytes();
    byte[] err = process.getErrorStream().readAllBytes();
    if (!process.waitFor(120, TimeUnit.SECONDS)) {
      process.destroyForcibly();
      throw new AssertionError("the CLI did not end within 120 s: " + command);
    }
    return new Result(
        process.exitValue(),
        new String(out, StandardCharsets.UTF_8),
        new String(err, StandardCharsets.UTF_8));
  }
}
