package io.actionstate.cleanup;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * A broker that requires SASL/PLAIN and checks ACLs (users admin, alice and bob, password
 * {@code <user>-secret}; admin is the super user, bob holds no ACL): {@code
 * $ASC_KAFKA_SASL_BOOTSTRAP} when set, else one this test run starts with {@code scripts/kafka
 * start --sasl} in a state folder of its own and stops when it is done.
 */
final class SaslBroker {
  final String bootstrap;
  private final Path state;

  private SaslBroker(String bootstrap, Path state) {
    this.bootstrap = bootstrap;
    this.state = state;
  }

  private static Path script() {
    return Path.of(System.getProperty("asc.repo.dir", "..")).resolve("scripts/kafka");
  }

  static SaslBroker start() throws IOException, InterruptedException {
    String given = System.getenv("ASC_KAFKA_SASL_BOOTSTRAP");
    if (given != null && !given.isBlank()) {
      return new SaslBroker(given.trim(), null);
    }
    Path state = Files.createTempDirectory("java-kafka-sasl");
    Process p =
        new ProcessBuilder(script().toString(), "start", "--sasl", "--state-dir", state.toString())
            .redirectError(ProcessBuilder.Redirect.INHERIT)
            .start();
    String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8).trim();
    if (!p.waitFor(600, TimeUnit.SECONDS) || p.exitValue() != 0 || out.isEmpty()) {
      throw new IllegalStateException("scripts/kafka start --sasl failed: " + out);
    }
    return new SaslBroker(out, state);
  }

  /** Client properties for SASL/PLAIN as {@code user} with {@code password}. */
  Map<String, Object> client(String user, String password) {
    Map<String, Object> client = new HashMap<>();
    client.put("bootstrap.servers", bootstrap);
    client.put("security.protocol", "SASL_PLAINTEXT");
    client.put("sasl.mechanism", "PLAIN");
    client.put(
        "sasl.jaas.config",
        "org.apache.kafka.common.security.plain.PlainLoginModule required username=\""
            + user + "\" password=\"" + password + "\";");
    return client;
  }

  Map<String, Object> client(String user) {
    return client(user, user + "-secret");
  }

  /** Stops the broker if this run started it. */
  void stop() throws IOException, InterruptedException {
    if (state == null) {
      return;
    }
    Process p =
        new ProcessBuilder(script().toString(), "stop", "--state-dir", state.toString())
            .redirectErrorStream(true)
            .redirectOutput(ProcessBuilder.Redirect.DISCARD)
            .start();
    if (p.waitFor(60, TimeUnit.SECONDS) && p.exitValue() == 0) {
      deleteTree(state); // kept when the stop failed: its node logs say why
    }
  }

  static void deleteTree(Path dir) throws IOException {
    try (var paths = Files.walk(dir)) {
      for (Path path : paths.sorted(java.util.Comparator.reverseOrder()).toList()) {
        Files.deleteIfExists(path);
      }
    }
  }
}
