package io.actionstate.cleanup;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.dylibso.chicory.compiler.MachineFactoryCompiler;
import com.dylibso.chicory.runtime.Instance;
import com.dylibso.chicory.runtime.Machine;
import com.dylibso.chicory.wasm.Parser;
import com.dylibso.chicory.wasm.WasmModule;
import io.actionstate.cleanup.capability.Capabilities;
import io.actionstate.cleanup.internal.AbiType.Case;
import io.actionstate.cleanup.internal.ComponentBinary;
import io.actionstate.cleanup.kafka.KafkaCapabilities;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.function.Function;
import java.util.function.UnaryOperator;
import org.apache.kafka.common.protocol.Errors;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The capability conformance suite ({@code conformance.wasm}, world {@code conformance}) against
 * the Java host's capabilities and a real broker: every check of all five targets passes (a live
 * broker, a dead address, a principal without ACLs and a wrong password, the last two on a SASL
 * broker with ACLs, and a topic deleted and recreated while a deletion is in flight), and the
 * suite fails a Java host that lies in each way checked here. A host conforms to the capability
 * contract exactly when this suite passes.
 */
class ConformanceTest {
  private static WasmModule module;
  private static Function<Instance, Machine> machine;
  private static SaslBroker sasl;

  /** A check of the suite's report. */
  record Check(String name, boolean passed, String detail) {}

  @BeforeAll
  static void load() throws Exception {
    Path component = Components.validatorPath().resolveSibling("conformance.wasm");
    for (byte[] bytes : ComponentBinary.coreModules(Files.readAllBytes(component))) {
      WasmModule m = Parser.parse(bytes);
      var exports = m.exportSection();
      for (int i = 0; i < exports.exportCount(); i++) {
        if (exports.getExport(i).name().equals("cabi_realloc")) {
          module = m;
        }
      }
    }
    if (module == null) {
      throw new IllegalStateException(component + " has no main core module");
    }
    machine = MachineFactoryCompiler.compile(module);
  }

  @AfterAll
  static void stopSasl() throws Exception {
    if (sasl != null) {
      sasl.stop();
    }
  }

  private static synchronized SaslBroker sasl() throws Exception {
    if (sasl == null) {
      sasl = SaslBroker.start();
    }
    return sasl;
  }

  static List<Check> run(Capabilities caps, String target, String existingTopic) {
    return run(caps, target, existingTopic, () -> {});
  }

  /** {@link #run}, calling {@code started} right before the suite's {@code run} is called. */
  static List<Check> run(
      Capabilities caps, String target, String existingTopic, Runnable started) {
    // In the order of the WIT's enum `target`: the index is the case lowered.
    List<String> targets =
        List.of(
            "live", "unreachable", "unauthorized", "unauthenticated", "recreated-during-delete");
    try (ComponentHost host = new ComponentHost(module, machine, caps)) {
      Object[] inputs = {
        new Case(targets.indexOf(target), null),
        Broker.unique("java-conformance") + "-",
        existingTopic == null ? new Case(0, null) : new Case(1, existingTopic)
      };
      started.run();
      Object[] report = (Object[]) host.call(CleanupWit.SUITE_RUN, (Object) inputs);
      List<Check> checks = new ArrayList<>();
      for (Object item : (List<?>) report[0]) {
        Object[] c = (Object[]) item;
        checks.add(new Check((String) c[0], (Boolean) c[1], (String) c[2]));
      }
      return checks;
    } finally {
      caps.admin().close();
    }
  }

  static List<String> failures(List<Check> checks) {
    List<String> failed = new ArrayList<>();
    for (Check c : checks) {
      if (!c.passed()) {
        failed.add(c.name() + ": " + c.detail());
      }
    }
    return failed;
  }

  private static Capabilities live() {
    return KafkaCapabilities.connect(Broker.client(), Duration.ofSeconds(30));
  }

  /** An existing topic on the SASL broker with one record, created by admin; bob has no ACL. */
  private static String forbiddenTopic() throws Exception {
    String topic = Broker.unique("java-forbidden");
    try (var admin = org.apache.kafka.clients.admin.Admin.create(sasl().client("admin"))) {
      admin.createTopics(List.of(new org.apache.kafka.clients.admin.NewTopic(topic, 1, (short) 1)))
          .all().get();
    }
    Map<String, Object> producer = new java.util.HashMap<>(sasl().client("admin"));
    try (var p = new org.apache.kafka.clients.producer.KafkaProducer<String, String>(
        producer,
        new org.apache.kafka.common.serialization.StringSerializer(),
        new org.apache.kafka.common.serialization.StringSerializer())) {
      p.send(new org.apache.kafka.clients.producer.ProducerRecord<>(topic, 0, "k", "v")).get();
    }
    return topic;
  }

  @Test
  void theJavaHostPassesEveryCheckAgainstALiveBroker() {
    List<Check> checks = run(live(), "live", null);
    assertTrue(checks.size() >= 30, checks.toString());
    assertEquals(List.of(), failures(checks));
  }

  /**
   * The same on the SASL broker as its super user: every capability, delete-records' own
   * connection to the leader included, authenticates with the client's {@code sasl.*} settings.
   */
  @Test
  void theJavaHostPassesEveryCheckAgainstALiveBrokerOverSasl() throws Exception {
    Capabilities superUser =
        KafkaCapabilities.connect(sasl().client("admin"), Duration.ofSeconds(30));
    List<Check> checks = run(superUser, "live", null);
    assertTrue(checks.size() >= 30, checks.toString());
    assertEquals(List.of(), failures(checks));
  }

  @Test
  void theJavaHostPassesEveryCheckOnADeadConnection() {
    // Nothing listens on port 1.
    List<Check> checks =
        run(
            KafkaCapabilities.connect(
                Map.of("bootstrap.servers", "127.0.0.1:1"), Duration.ofSeconds(3)),
            "unreachable",
            null);
    assertTrue(checks.size() >= 6, checks.toString());
    assertEquals(List.of(), failures(checks));
  }

  @Test
  void theJavaHostPassesEveryCheckAsAPrincipalWithoutAcls() throws Exception {
    String topic = forbiddenTopic();
    List<Check> checks =
        run(
            KafkaCapabilities.connect(sasl().client("bob"), Duration.ofSeconds(30)),
            "unauthorized",
            topic);
    assertTrue(checks.size() >= 4, checks.toString());
    assertEquals(List.of(), failures(checks));
  }

  @Test
  void theJavaHostPassesEveryCheckWithAWrongPassword() throws Exception {
    List<Check> checks =
        run(
            KafkaCapabilities.connect(
                sasl().client("bob", "not-bobs-password"), Duration.ofSeconds(30)),
            "unauthenticated",
            null);
    assertTrue(checks.size() >= 1, checks.toString());
    assertEquals(List.of(), failures(checks));
  }

  /** Target {@code recreated-during-delete}'s operation timeout (wit/suite.wit's harness). */
  private static final Duration RECREATION_TIMEOUT = Duration.ofSeconds(10);

  /** The check a host fails that does not answer a missing topic as such. */
  private static final String UNKNOWN_TOPIC_AT_ONCE =
      "delete-records of a topic deleted a moment ago fails with unknown-topic";

  /** The check a resent deletion fails: the recreated topic lost records to it. */
  private static final String KEEPS_EVERY_RECORD = "the recreated topic keeps every record";

  /** Runs target {@code recreated-during-delete} against {@code caps} with its harness. */
  private static List<Check> runWhileTheTopicIsRecreated(Capabilities caps) throws Exception {
    RecreatedTopicHarness harness = RecreatedTopicHarness.create();
    // The suite's first describe must come before the harness's deletion: one that first sees
    // the recreated topic waits for a second deletion that never comes (twice so in a cold JVM on
    // a loaded machine). So the host's client is connected and its classes are loaded first, and
    // the harness's 500 ms count from the call of `run`, not from loading the component.
    caps.admin().describe(List.of(harness.topic()), List.of(), true);
    List<Check> checks = run(caps, "recreated-during-delete", harness.topic(), harness::start);
    harness.finish();
    return checks;
  }

  @Test
  void theJavaHostSendsADeletionOnceWhileTheTopicIsRecreated() throws Exception {
    List<Check> checks =
        runWhileTheTopicIsRecreated(KafkaCapabilities.connect(Broker.client(), RECREATION_TIMEOUT));
    assertTrue(
        checks.stream().anyMatch(c -> c.name().startsWith(KEEPS_EVERY_RECORD)),
        "the suite stopped before its last check: " + checks);
    assertEquals(List.of(), failures(checks));
  }

  /**
   * kafka-clients' Admin.deleteRecords with the library's own retries: after
   * UNKNOWN_TOPIC_OR_PARTITION it looks the leader up again until the topic is back and sends the
   * deletion to the recreated topic. Whether that lands before or after the harness wrote the
   * records is a race (before, the empty topic answers OFFSET_OUT_OF_RANGE); certain are the two
   * checks of the answer.
   */
  @Test
  void theSuiteFailsAJavaHostWhoseClientLibraryResendsADeletion() throws Exception {
    Capabilities honest = KafkaCapabilities.connect(Broker.client(), RECREATION_TIMEOUT);
    Capabilities caps =
        lying(
            honest,
            admin ->
                LibraryDeleteRecordsAdmin.withLibraryRetries(
                    admin, Broker.client(), honest.clock().operationTimeoutMs()));
    List<Check> checks = runWhileTheTopicIsRecreated(caps);
    assertFailsCheck(checks, UNKNOWN_TOPIC_AT_ONCE);
    assertFailsCheck(checks, "answers at once, before the topic is recreated");
  }

  /**
   * The JVM host's delete-records before issue 34, exactly: kafka-clients' Admin.deleteRecords
   * with {@code retries=0}. Its driver may send one leader lookup, so for a topic that is gone it
   * answers {@code timeout} ("Exceeded maxRetries after 1 tries"), not {@code unknown-topic}.
   */
  @Test
  void theSuiteFailsTheFormerJavaHostWhoseClientLibraryLooksTheLeaderUpAgain() throws Exception {
    Capabilities honest = KafkaCapabilities.connect(Broker.client(), RECREATION_TIMEOUT);
    Capabilities caps =
        lying(
            honest,
            admin ->
                LibraryDeleteRecordsAdmin.asClientAdminHadIt(
                    admin, Broker.client(), honest.clock().operationTimeoutMs()));
    assertFailsCheck(runWhileTheTopicIsRecreated(caps), UNKNOWN_TOPIC_AT_ONCE);
  }

  /**
   * A host whose own code sends a failed deletion again every 200 ms until the operation timeout
   * (as the Rust tests' {@code Lie::ResendsDeletes}, but through every error): once the harness
   * has written the recreated topic's records, a resend deletes some of them.
   */
  @Test
  void theSuiteFailsAJavaHostThatResendsAFailedDeletion() throws Exception {
    Capabilities honest = KafkaCapabilities.connect(Broker.client(), RECREATION_TIMEOUT);
    Capabilities.Clock clock = honest.clock();
    Capabilities caps =
        lying(
            honest,
            admin ->
                new LyingAdmin(admin) {
                  @Override
                  public List<PartitionOffset> deleteRecords(
                      String topic, List<PartitionOffset> before)
                      throws io.actionstate.cleanup.capability.KafkaFailure {
                    long deadline = clock.nowMs() + clock.operationTimeoutMs();
                    while (true) {
                      try {
                        return super.deleteRecords(topic, before);
                      } catch (io.actionstate.cleanup.capability.KafkaFailure e) {
                        if (clock.nowMs() >= deadline) {
                          throw e;
                        }
                        clock.sleepMs(200);
                      }
                    }
                  }
                });
    assertFailsCheck(runWhileTheTopicIsRecreated(caps), KEEPS_EVERY_RECORD);
  }

  // --- lying hosts: decorators of the honest capabilities --------------------------------------

  private static Capabilities lying(Capabilities honest, UnaryOperator<Capabilities.Admin> admin) {
    return new Capabilities(
        honest.clock(), admin.apply(honest.admin()), honest.writers(), honest.consumers());
  }

  private static void assertFailsCheck(List<Check> checks, String check) {
    List<String> failed = failures(checks);
    assertTrue(failed.stream().anyMatch(f -> f.contains(check)), failed.toString());
  }

  @Test
  void theSuiteFailsAJavaHostWhoseLatestOffsetIsOnePastTheEnd() {
    Capabilities caps =
        lying(
            live(),
            admin ->
                new LyingAdmin(admin) {
                  @Override
                  public List<PartitionOffset> listOffsets(
                      String topic, List<Integer> partitions, Capabilities.OffsetSpec spec)
                      throws io.actionstate.cleanup.capability.KafkaFailure {
                    List<PartitionOffset> out = new ArrayList<>();
                    for (PartitionOffset po : super.listOffsets(topic, partitions, spec)) {
                      out.add(
                          spec == Capabilities.OffsetSpec.LATEST
                              ? new PartitionOffset(po.partition(), po.offset() + 1)
                              : po);
                    }
                    return out;
                  }
                });
    assertFailsCheck(run(caps, "live", null), "list-offsets latest is the end");
  }

  @Test
  void theSuiteFailsAJavaHostThatHidesTheFactsOfReplication() {
    Capabilities caps =
        lying(
            live(),
            admin ->
                new LyingAdmin(admin) {
                  @Override
                  public List<java.util.Optional<Capabilities.TopicMetadata>> describe(
                      List<String> topics, List<String> names, boolean withOffsets)
                      throws io.actionstate.cleanup.capability.KafkaFailure {
                    List<java.util.Optional<Capabilities.TopicMetadata>> out = new ArrayList<>();
                    for (var m : super.describe(topics, names, withOffsets)) {
                      out.add(
                          m.map(
                              t ->
                                  new Capabilities.TopicMetadata(
                                      t.topic(), t.topicId(), t.partitions(), t.configs(),
                                      t.offsets(), 0)));
                    }
                    return out;
                  }

                  @Override
                  public Capabilities.ClusterDescription describeCluster(List<String> names)
                      throws io.actionstate.cleanup.capability.KafkaFailure {
                    List<Capabilities.ConfigEntry> none = new ArrayList<>();
                    for (String name : names) {
                      none.add(new Capabilities.ConfigEntry(name, java.util.Optional.empty()));
                    }
                    return new Capabilities.ClusterDescription(
                        super.describeCluster(names).brokers(), none);
                  }
                });
    List<Check> checks = run(caps, "live", null);
    assertFailsCheck(checks, "describe gives the replication factor a topic was created with");
    assertFailsCheck(
        checks, "describe-cluster answers every requested broker config name in order");
  }

  @Test
  void theSuiteFailsAJavaHostThatReportsAMissingTopicAsAnError() {
    Capabilities caps =
        lying(
            live(),
            admin ->
                new LyingAdmin(admin) {
                  @Override
                  public List<java.util.Optional<Capabilities.TopicMetadata>> describe(
                      List<String> topics, List<String> names, boolean withOffsets)
                      throws io.actionstate.cleanup.capability.KafkaFailure {
                    var found = super.describe(topics, names, withOffsets);
                    if (found.stream().anyMatch(java.util.Optional::isEmpty)) {
                      throw new io.actionstate.cleanup.capability.KafkaFailure(
                          new CleanupError.KafkaError(
                              CleanupError.KafkaErrorKind.UNKNOWN_TOPIC, 3,
                              "UNKNOWN_TOPIC_OR_PARTITION", "no such topic (lie)"));
                    }
                    return found;
                  }
                });
    assertFailsCheck(run(caps, "live", null), "describe answers none for a topic that does not exist");
  }

  @Test
  void theSuiteFailsAJavaHostThatReportsEveryErrorAsOtherWithoutItsCode() {
    Capabilities caps =
        lying(
            live(),
            admin ->
                new LyingAdmin(admin) {
                  @Override
                  public List<PartitionOffset> listOffsets(
                      String topic, List<Integer> partitions, Capabilities.OffsetSpec spec)
                      throws io.actionstate.cleanup.capability.KafkaFailure {
                    try {
                      return super.listOffsets(topic, partitions, spec);
                    } catch (io.actionstate.cleanup.capability.KafkaFailure e) {
                      // Without the broker's code nothing says what happened: the component
                      // classifies a protocol code the host reports as other, not this.
                      var err = e.error();
                      throw new io.actionstate.cleanup.capability.KafkaFailure(
                          new CleanupError.KafkaError(
                              CleanupError.KafkaErrorKind.OTHER, 0, "", err.message()));
                    }
                  }
                });
    assertFailsCheck(
        run(caps, "live", null), "list-offsets of a missing topic fails with unknown-topic");
  }

  @Test
  void theSuiteFailsAJavaHostThatDoesNotFenceAnOlderWriter() {
    Capabilities honest = live();
    Capabilities.Writers unfenced =
        id -> {
          Capabilities.Writer w = honest.writers().open(id);
          return new Capabilities.Writer() {
            @Override
            public long append(String topic, int partition, String key, String value)
                throws io.actionstate.cleanup.capability.KafkaFailure {
              try {
                return w.append(topic, partition, key, value);
              } catch (io.actionstate.cleanup.capability.KafkaFailure e) {
                // The broker's fencing, as the host reports it (its code, case other).
                int code = e.error().code();
                if (code == Errors.PRODUCER_FENCED.code()
                    || code == Errors.INVALID_PRODUCER_EPOCH.code()
                    || e.error().kind() == CleanupError.KafkaErrorKind.FENCED) {
                  return 0;
                }
                throw e;
              }
            }

            @Override
            public void close() {
              w.close();
            }
          };
        };
    Capabilities caps =
        new Capabilities(honest.clock(), honest.admin(), unfenced, honest.consumers());
    assertFailsCheck(run(caps, "live", null), "the older writer's append fails with fenced");
  }

  @Test
  void theSuiteFailsAJavaHostWhoseSleepDoesNotWait() {
    Capabilities honest = live();
    Capabilities.Clock noSleep =
        new Capabilities.Clock() {
          @Override
          public long nowMs() {
            return honest.clock().nowMs();
          }

          @Override
          public void sleepMs(int ms) {}

          @Override
          public int operationTimeoutMs() {
            return honest.clock().operationTimeoutMs();
          }
        };
    Capabilities caps =
        new Capabilities(noSleep, honest.admin(), honest.writers(), honest.consumers());
    assertFailsCheck(run(caps, "live", null), "sleep-ms(30) lets now-ms advance");
  }

  @Test
  void theSuiteFailsAJavaHostThatReportsARefusedLoginAsATimeout() throws Exception {
    Capabilities honest =
        KafkaCapabilities.connect(sasl().client("bob", "not-bobs-password"), Duration.ofSeconds(30));
    Capabilities caps =
        lying(
            honest,
            admin ->
                new LyingAdmin(admin) {
                  @Override
                  public List<java.util.Optional<Capabilities.TopicMetadata>> describe(
                      List<String> topics, List<String> names, boolean withOffsets)
                      throws io.actionstate.cleanup.capability.KafkaFailure {
                    try {
                      return super.describe(topics, names, withOffsets);
                    } catch (io.actionstate.cleanup.capability.KafkaFailure e) {
                      if (e.error().kind() != CleanupError.KafkaErrorKind.AUTHENTICATION) {
                        throw e;
                      }
                      throw new io.actionstate.cleanup.capability.KafkaFailure(
                          new CleanupError.KafkaError(
                              CleanupError.KafkaErrorKind.TIMEOUT, 7, "REQUEST_TIMED_OUT",
                              "timed out (lie)"));
                    }
                  }
                });
    assertFailsCheck(
        run(caps, "unauthenticated", null), "describe with wrong credentials fails with authentication");
  }

  /** Forwards every call to the honest admin; a liar overrides one. */
  static class LyingAdmin implements Capabilities.Admin {
    private final Capabilities.Admin honest;

    LyingAdmin(Capabilities.Admin honest) {
      this.honest = honest;
    }

    @Override
    public List<java.util.Optional<Capabilities.TopicMetadata>> describe(
        List<String> topics, List<String> configNames, boolean withOffsets)
        throws io.actionstate.cleanup.capability.KafkaFailure {
      return honest.describe(topics, configNames, withOffsets);
    }

    @Override
    public Capabilities.ClusterDescription describeCluster(List<String> configNames)
        throws io.actionstate.cleanup.capability.KafkaFailure {
      return honest.describeCluster(configNames);
    }

    @Override
    public boolean createTopic(
        String topic, int partitions, short replicationFactor,
        List<Capabilities.ConfigEntry> configs)
        throws io.actionstate.cleanup.capability.KafkaFailure {
      return honest.createTopic(topic, partitions, replicationFactor, configs);
    }

    @Override
    public List<PartitionOffset> listOffsets(
        String topic, List<Integer> partitions, Capabilities.OffsetSpec spec)
        throws io.actionstate.cleanup.capability.KafkaFailure {
      return honest.listOffsets(topic, partitions, spec);
    }

    @Override
    public List<PartitionOffset> deleteRecords(String topic, List<PartitionOffset> before)
        throws io.actionstate.cleanup.capability.KafkaFailure {
      return honest.deleteRecords(topic, before);
    }

    @Override
    public void close() {
      honest.close();
    }
  }
}
