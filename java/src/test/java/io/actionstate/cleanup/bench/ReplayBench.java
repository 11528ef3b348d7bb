package io.actionstate.cleanup.bench;

import io.actionstate.cleanup.ApplyOptions;
import io.actionstate.cleanup.ApplyReport;
import io.actionstate.cleanup.Cleanup;
import io.actionstate.cleanup.Plan;
import io.actionstate.cleanup.Plans;
import io.actionstate.cleanup.RecoveryPolicy;
import io.actionstate.cleanup.RecoverySession;
import io.actionstate.cleanup.ReplayBatch;
import io.actionstate.cleanup.ReplayOptions;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.UUID;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;

/**
 * Replay and apply through the Java host against their floors, in one run (run by
 * {@code java/bench}): a {@link RecoverySession} replaying N records of 1 KiB against a plain
 * {@link KafkaConsumer} loop (assign, seek to the beginning, read_committed, String keys and
 * values) over the same records; and fresh applies ({@code Cleanup.connect} plus {@code apply} of
 * a new plan) timed end to end.
 *
 * <p>Arguments: bootstrap address, record count, and optionally the Rust CLI binary, whose
 * {@code apply} (a process end to end, on a plan of the same shape) then alternates with the Java
 * apply.
 */
public final class ReplayBench {
  private ReplayBench() {}

  private static final int PARTITIONS = 4;

  public static void main(String[] args) throws Exception {
    String bootstrap = args[0];
    int records = Integer.parseInt(args[1]);
    Map<String, Object> client = new HashMap<>();
    client.put("bootstrap.servers", bootstrap);
    String topic = "java-bench-replay-" + UUID.randomUUID().toString().substring(0, 8);
    createTopic(client, topic, PARTITIONS);

    try (Cleanup cleanup = Cleanup.connect(client, Duration.ofSeconds(60))) {
      String start = cleanup.snapshotMarker(topic);
      long produceStart = System.nanoTime();
      produce(client, topic, records);
      System.out.printf(
          Locale.ROOT,
          "Wrote %,d records of 1 KiB to %d partitions in %.1f s.%n%n",
          records,
          PARTITIONS,
          (System.nanoTime() - produceStart) / 1e9);

      // Alternate the two readers so that both see the same page cache and machine load. The
      // process's CPU time per round is printed beside the wall time: on a shared machine the
      // wall time also measures the other tenants.
      double[] session = new double[3];
      double[] plain = new double[3];
      double[] sessionCpu = new double[3];
      double[] plainCpu = new double[3];
      for (int round = 0; round < 3; round++) {
        long cpu = processCpuNanos();
        plain[round] = plainLoop(client, topic, records);
        plainCpu[round] = (processCpuNanos() - cpu) / 1e9;
        cpu = processCpuNanos();
        session[round] = replay(cleanup, topic, start, records);
        sessionCpu[round] = (processCpuNanos() - cpu) / 1e9;
      }
      Arrays.sort(session);
      Arrays.sort(plain);
      Arrays.sort(sessionCpu);
      Arrays.sort(plainCpu);
      System.out.println("| replay of " + String.format(Locale.ROOT, "%,d", records)
          + " × 1 KiB | median of 3 | records/s | process CPU, median of 3 |");
      System.out.println("|---|---|---|---|");
      System.out.printf(Locale.ROOT, "| plain `KafkaConsumer` loop (String key and value) | %.2f s | %,.0f | %.2f s |%n",
          plain[1], records / plain[1], plainCpu[1]);
      System.out.printf(Locale.ROOT, "| `RecoverySession.nextBatch(10000)` | %.2f s | %,.0f | %.2f s |%n",
          session[1], records / session[1], sessionCpu[1]);
      System.out.printf(Locale.ROOT,
          "%nreplay throughput / plain consumer: %.2fx (goal >= 0.8x); CPU time plain / session:"
              + " %.2fx%n%n",
          plain[1] / session[1], plainCpu[1] / sessionCpu[1]);
    }

    // Fresh applies: a new Cleanup (instantiation, admin client) and one apply, end to end.
    String cli = args.length > 2 ? args[2] : null;
    double[] applies = new double[5];
    double[] cliApplies = new double[5];
    Plans plans = Plans.load();
    java.nio.file.Path work = java.nio.file.Files.createTempDirectory("java-bench-apply");
    for (int i = 0; i < applies.length; i++) {
      if (cli != null) {
        String data = "cli-bench-apply-" + UUID.randomUUID().toString().substring(0, 8);
        createTopic(client, data, 8);
        produce(client, data, 800);
        String marker;
        try (Cleanup cleanup = Cleanup.connect(client, Duration.ofSeconds(60))) {
          marker = cleanup.snapshotMarker(data);
        }
        java.nio.file.Path planFile = work.resolve(data + ".json");
        java.nio.file.Files.writeString(
            planFile, plans.render(plans.fromMarkers("bench", List.of(marker))));
        long t0 = System.nanoTime();
        Process p =
            new ProcessBuilder(
                    cli, "apply", "--yes", "--plan", planFile.toString(), "--control-topic",
                    data + "-control", "--bootstrap-servers", bootstrap)
                .redirectOutput(ProcessBuilder.Redirect.DISCARD)
                .redirectError(ProcessBuilder.Redirect.DISCARD)
                .start();
        if (p.waitFor() != 0) {
          throw new IllegalStateException(cli + " apply exited with " + p.exitValue());
        }
        cliApplies[i] = (System.nanoTime() - t0) / 1e6;
      }
      String data = "java-bench-apply-" + UUID.randomUUID().toString().substring(0, 8);
      createTopic(client, data, 8);
      produce(client, data, 800);
      long t0 = System.nanoTime();
      try (Cleanup cleanup = Cleanup.connect(client, Duration.ofSeconds(60))) {
        String marker = cleanup.snapshotMarker(data);
        Plan plan = plans.fromMarkers("bench", List.of(marker));
        ApplyReport report = cleanup.apply(plans.render(plan), ApplyOptions.of(data + "-control"));
        if (report.outcome() != ApplyReport.Outcome.APPLIED) {
          throw new IllegalStateException("apply answered " + report.outcome());
        }
      }
      applies[i] = (System.nanoTime() - t0) / 1e6;
    }
    Arrays.sort(applies);
    Arrays.sort(cliApplies);
    if (cli != null) {
      System.out.printf(
          Locale.ROOT,
          "Rust CLI `apply` (same plan shape, process end to end), 5 runs: median %.0f ms, min %.0f"
              + " ms, max %.0f ms.%nJava / CLI, medians: %.2fx (goal <= 1.5x)%n",
          cliApplies[2], cliApplies[0], cliApplies[4], applies[2] / cliApplies[2]);
    }
    System.out.printf(
        Locale.ROOT,
        "Fresh apply (8 partitions, new control topic; Cleanup.connect + snapshotMarker + apply +"
            + " close), 5 runs: median %.0f ms, min %.0f ms, max %.0f ms.%n",
        applies[2],
        applies[0],
        applies[4]);
  }

  /** CPU time of this process (all its threads: the consumer's network thread included). */
  private static long processCpuNanos() {
    return ((com.sun.management.OperatingSystemMXBean)
            java.lang.management.ManagementFactory.getOperatingSystemMXBean())
        .getProcessCpuTime();
  }

  private static void createTopic(Map<String, Object> client, String topic, int partitions)
      throws Exception {
    try (Admin admin = Admin.create(client)) {
      admin
          .createTopics(
              List.of(
                  new NewTopic(topic, partitions, (short) 1)
                      .configs(
                          Map.of(
                              "cleanup.policy", "compact,delete",
                              "retention.ms", "-1",
                              "retention.bytes", "-1"))))
          .all()
          .get();
      while (!admin.listTopics().names().get().contains(topic)) {
        Thread.sleep(50);
      }
    }
  }

  private static void produce(Map<String, Object> client, String topic, int records) {
    Map<String, Object> config = new HashMap<>(client);
    config.put("acks", "1");
    config.put("linger.ms", 20);
    config.put("batch.size", 1 << 20);
    char[] filler = new char[1024 - 40];
    Arrays.fill(filler, 'x');
    String pad = new String(filler);
    try (KafkaProducer<String, String> producer =
        new KafkaProducer<>(config, new StringSerializer(), new StringSerializer())) {
      for (int i = 0; i < records; i++) {
        producer.send(
            new ProducerRecord<>(topic, i % PARTITIONS, "action-" + i, "{\"n\":" + i + ",\"pad\":\"" + pad + "\"}"));
      }
      producer.flush();
    }
  }

  /** Seconds to read every record with a plain consumer; checks the count. */
  private static double plainLoop(Map<String, Object> client, String topic, int records) {
    Map<String, Object> config = new HashMap<>(client);
    config.put("isolation.level", "read_committed");
    config.put("enable.auto.commit", false);
    config.put("max.poll.records", 10_000);
    long t0 = System.nanoTime();
    long seen = 0;
    long bytes = 0;
    try (KafkaConsumer<String, String> consumer =
        new KafkaConsumer<>(config, new StringDeserializer(), new StringDeserializer())) {
      List<TopicPartition> partitions = new ArrayList<>();
      for (int p = 0; p < PARTITIONS; p++) {
        partitions.add(new TopicPartition(topic, p));
      }
      consumer.assign(partitions);
      consumer.seekToBeginning(partitions);
      Map<TopicPartition, Long> ends = consumer.endOffsets(partitions);
      while (true) {
        boolean done = true;
        for (TopicPartition tp : partitions) {
          if (consumer.position(tp) < ends.get(tp)) {
            done = false;
          }
        }
        if (done) {
          break;
        }
        for (ConsumerRecord<String, String> r : consumer.poll(Duration.ofMillis(500))) {
          seen++;
          bytes += r.key().length() + r.value().length();
        }
      }
    }
    if (seen != records || bytes == 0) {
      throw new IllegalStateException("the plain loop read " + seen + " of " + records);
    }
    return (System.nanoTime() - t0) / 1e9;
  }

  /** Seconds for a recovery session to restore from {@code start} and replay to the end. */
  private static double replay(Cleanup cleanup, String topic, String start, int records)
      throws Exception {
    long t0 = System.nanoTime();
    long seen = 0;
    long bytes = 0;
    try (RecoverySession session =
        cleanup.startRecovery(
            topic, new RecoveryPolicy(Optional.of(topic), Optional.empty(), false))) {
      session.restore(List.of(start), ReplayOptions.defaults());
      ReplayBatch batch;
      do {
        batch = session.nextBatch(10_000);
        for (ReplayBatch.Record r : batch.records()) {
          seen++;
          bytes += r.key().length() + r.value().length();
        }
      } while (!batch.done());
    }
    if (seen != records || bytes == 0) {
      throw new IllegalStateException("the session replayed " + seen + " of " + records);
    }
    return (System.nanoTime() - t0) / 1e9;
  }
}
