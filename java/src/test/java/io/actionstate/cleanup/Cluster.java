package io.actionstate.cleanup;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * A private three-node KRaft cluster started with {@code scripts/kafka start --brokers 3} in a
 * state folder of its own (every node is broker and controller; node ids 1..3), for tests that
 * kill nodes. Always private: killing nodes of a shared broker would break other suites.
 */
final class Cluster {
  final String bootstrap;
  private final Path state;

  private Cluster(String bootstrap, Path state) {
    this.bootstrap = bootstrap;
    this.state = state;
  }

  private static Path script() {
    return Path.of(System.getProperty("asc.repo.dir", "..")).resolve("scripts/kafka");
  }

  private static String run(Path state, String... args) throws IOException, InterruptedException {
    String[] command = new String[args.length + 3];
    command[0] = script().toString();
    command[1] = args[0];
    command[2] = "--state-dir";
    command[3] = state.toString();
    System.arraycopy(args, 1, command, 4, args.length - 1);
    Process p =
        new ProcessBuilder(command).redirectError(ProcessBuilder.Redirect.INHERIT).start();
    String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8).trim();
    if (!p.waitFor(600, TimeUnit.SECONDS) || p.exitValue() != 0) {
      throw new IllegalStateException("scripts/kafka " + String.join(" ", args) + " failed");
    }
    return out;
  }

  static Cluster start() throws IOException, InterruptedException {
    Path state = Files.createTempDirectory("java-kafka-cluster");
    return new Cluster(run(state, "start", "--brokers", "3"), state);
  }

  Map<String, Object> client() {
    Map<String, Object> client = new HashMap<>();
    client.put("bootstrap.servers", bootstrap);
    return client;
  }

  /** SIGKILLs node {@code id}. */
  void killNode(int id) throws IOException, InterruptedException {
    run(state, "kill-node", Integer.toString(id));
  }

  void stop() throws IOException, InterruptedException {
    run(state, "stop");
    SaslBroker.deleteTree(state); // run() threw, keeping the logs, when the stop failed
  }
}
