package io.actionstate.cleanup.kafka;

import io.actionstate.cleanup.PartitionOffset;
import io.actionstate.cleanup.capability.Capabilities.Admin;
import io.actionstate.cleanup.capability.Capabilities.ClusterDescription;
import io.actionstate.cleanup.capability.Capabilities.ConfigEntry;
import io.actionstate.cleanup.capability.Capabilities.OffsetSpec;
import io.actionstate.cleanup.capability.Capabilities.PartitionRange;
import io.actionstate.cleanup.capability.Capabilities.TopicMetadata;
import io.actionstate.cleanup.capability.KafkaFailure;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ExecutionException;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.Config;
import org.apache.kafka.clients.admin.CreateTopicsOptions;
import org.apache.kafka.clients.admin.DescribeConfigsOptions;
import org.apache.kafka.clients.admin.DescribeTopicsOptions;
import org.apache.kafka.clients.admin.ListOffsetsOptions;
import org.apache.kafka.clients.admin.ListOffsetsResult.ListOffsetsResultInfo;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.admin.TopicDescription;
import org.apache.kafka.common.Node;
import org.apache.kafka.common.TopicPartitionInfo;
import org.apache.kafka.common.IsolationLevel;
import org.apache.kafka.common.KafkaFuture;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.config.ConfigResource;
import org.apache.kafka.common.errors.LeaderNotAvailableException;
import org.apache.kafka.common.errors.TopicExistsException;
import org.apache.kafka.common.errors.UnknownTopicOrPartitionException;

/**
 * {@code kafka-admin} over kafka-clients' {@link org.apache.kafka.clients.admin.Admin}. The client
 * is configured with {@code retries=0} and every request bounded by the per-request bound (a third
 * of the operation timeout, at least one second). {@code delete-records} does not go through it:
 * the Admin's driver looks a leader up again and resends a deletion after answers such as
 * UNKNOWN_TOPIC_OR_PARTITION, so a topic recreated meanwhile would receive it. Its leaders come
 * from one description of the topic here, and {@link DeleteRecordsOnce} sends each leader its
 * request exactly once.
 *
 * <p>After a {@code not-leader}, {@code transport} or {@code timeout} answer the client is replaced
 * by a fresh one before the next request: the Admin client caches partition leaders for
 * {@code list-offsets}, and a leader that was SIGKILLed stayed cached ({@code BrokerFailureTest}:
 * every retry went to the dead node until the step's deadline). A fresh client looks the leaders
 * up again, so the component's next attempt reaches the leader the cluster elected.
 */
final class ClientAdmin implements Admin {
  private final Map<String, Object> config;
  private final int requestBoundMs;
  private org.apache.kafka.clients.admin.Admin admin;
  private DeleteRecordsOnce deletions;

  ClientAdmin(Map<String, Object> client, int requestBoundMs) {
    Map<String, Object> config = new HashMap<>(client);
    config.put(AdminClientConfig.RETRIES_CONFIG, 0);
    config.put(AdminClientConfig.REQUEST_TIMEOUT_MS_CONFIG, requestBoundMs);
    config.put(AdminClientConfig.DEFAULT_API_TIMEOUT_MS_CONFIG, requestBoundMs);
    this.config = Map.copyOf(config);
    this.requestBoundMs = requestBoundMs;
  }

  /**
   * The client for the next request, created on first use and afresh after an answer that made
   * the last one stale. A client that cannot be created (e.g. no bootstrap address resolves) is
   * that request's failure, reported like any other.
   */
  private synchronized org.apache.kafka.clients.admin.Admin admin() throws KafkaFailure {
    if (admin == null) {
      try {
        admin = org.apache.kafka.clients.admin.Admin.create(config);
      } catch (RuntimeException e) {
        throw KafkaErrors.failure(e);
      }
    }
    return admin;
  }

  /** The sender of DeleteRecords requests, made on first use from the admin's properties. */
  private synchronized DeleteRecordsOnce deletions() throws KafkaFailure {
    if (deletions == null) {
      try {
        deletions = new DeleteRecordsOnce(new AdminClientConfig(config), requestBoundMs);
      } catch (RuntimeException e) {
        throw KafkaErrors.failure(e);
      }
    }
    return deletions;
  }

  /** Reports {@code failure}; drops the client when its metadata may be stale. */
  private KafkaFailure stale(KafkaFailure failure) {
    if (KafkaErrors.mayBeStale(failure.error())) {
      synchronized (this) {
        if (admin != null) {
          admin.close(Duration.ZERO);
          admin = null;
        }
      }
    }
    return failure;
  }

  @Override
  public List<Optional<TopicMetadata>> describe(
      List<String> topics, List<String> configNames, boolean withOffsets) throws KafkaFailure {
    try {
      return describeOnce(topics, configNames, withOffsets);
    } catch (KafkaFailure e) {
      throw stale(e);
    }
  }

  @Override
  public ClusterDescription describeCluster(List<String> configNames) throws KafkaFailure {
    try {
      return describeClusterOnce(configNames);
    } catch (KafkaFailure e) {
      throw stale(e);
    }
  }

  @Override
  public boolean createTopic(
      String topic, int partitions, short replicationFactor, List<ConfigEntry> configs)
      throws KafkaFailure {
    try {
      return createTopicOnce(topic, partitions, replicationFactor, configs);
    } catch (KafkaFailure e) {
      throw stale(e);
    }
  }

  @Override
  public List<PartitionOffset> listOffsets(String topic, List<Integer> partitions, OffsetSpec spec)
      throws KafkaFailure {
    try {
      return listOffsetsOnce(topic, partitions, spec);
    } catch (KafkaFailure e) {
      throw stale(e);
    }
  }

  @Override
  public List<PartitionOffset> deleteRecords(String topic, List<PartitionOffset> before)
      throws KafkaFailure {
    try {
      return deleteRecordsOnce(topic, before);
    } catch (KafkaFailure e) {
      throw stale(e);
    }
  }

  private static <T> T await(KafkaFuture<T> future) throws KafkaFailure {
    try {
      return future.get();
    } catch (ExecutionException e) {
      throw KafkaErrors.failure(e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw KafkaErrors.failure(e);
    }
  }

  private static boolean unknownTopic(ExecutionException e) {
    return KafkaErrors.unwrap(e) instanceof UnknownTopicOrPartitionException;
  }

  private List<Optional<TopicMetadata>> describeOnce(
      List<String> topics, List<String> configNames, boolean withOffsets) throws KafkaFailure {
    org.apache.kafka.clients.admin.Admin admin = admin();
    // The description and the configurations are independent: both requests leave at once.
    Map<String, KafkaFuture<TopicDescription>> described =
        admin
            .describeTopics(topics, new DescribeTopicsOptions().timeoutMs(requestBoundMs))
            .topicNameValues();
    Map<ConfigResource, KafkaFuture<Config>> configs = Map.of();
    if (!configNames.isEmpty()) {
      List<ConfigResource> resources = new ArrayList<>();
      for (String topic : new java.util.LinkedHashSet<>(topics)) {
        resources.add(new ConfigResource(ConfigResource.Type.TOPIC, topic));
      }
      configs =
          admin
              .describeConfigs(resources, new DescribeConfigsOptions().timeoutMs(requestBoundMs))
              .values();
    }
    Map<String, TopicDescription> found = new LinkedHashMap<>();
    for (String topic : topics) {
      try {
        found.put(topic, described.get(topic).get());
      } catch (ExecutionException e) {
        if (!unknownTopic(e)) {
          throw KafkaErrors.failure(e);
        }
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        throw KafkaErrors.failure(e);
      }
    }
    Map<String, List<ConfigEntry>> entries = new HashMap<>();
    for (String topic : found.keySet()) {
      if (configNames.isEmpty()) {
        entries.put(topic, List.of());
        continue;
      }
      Config config;
      try {
        config = configs.get(new ConfigResource(ConfigResource.Type.TOPIC, topic)).get();
      } catch (ExecutionException e) {
        if (unknownTopic(e)) {
          // Deleted between the two answers: as the description of a missing topic.
          found.put(topic, null);
          continue;
        }
        throw KafkaErrors.failure(e);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        throw KafkaErrors.failure(e);
      }
      List<ConfigEntry> list = new ArrayList<>();
      for (String name : configNames) {
        org.apache.kafka.clients.admin.ConfigEntry entry = config.get(name);
        list.add(
            new ConfigEntry(
                name, entry == null ? Optional.empty() : Optional.ofNullable(entry.value())));
      }
      entries.put(topic, list);
    }
    Map<String, List<PartitionRange>> ranges = new HashMap<>();
    if (withOffsets) {
      Map<TopicPartition, org.apache.kafka.clients.admin.OffsetSpec> earliest = new HashMap<>();
      Map<TopicPartition, org.apache.kafka.clients.admin.OffsetSpec> latest = new HashMap<>();
      for (TopicDescription d : found.values()) {
        if (d == null) {
          continue;
        }
        for (var p : d.partitions()) {
          TopicPartition tp = new TopicPartition(d.name(), p.partition());
          earliest.put(tp, org.apache.kafka.clients.admin.OffsetSpec.earliest());
          latest.put(tp, org.apache.kafka.clients.admin.OffsetSpec.latest());
        }
      }
      ListOffsetsOptions options = new ListOffsetsOptions(IsolationLevel.READ_COMMITTED);
      options.timeoutMs(requestBoundMs);
      Map<TopicPartition, KafkaFuture<ListOffsetsResultInfo>> begins = Map.of();
      Map<TopicPartition, KafkaFuture<ListOffsetsResultInfo>> ends = Map.of();
      if (!earliest.isEmpty()) {
        var b = admin.listOffsets(earliest, options);
        var e = admin.listOffsets(latest, options);
        begins = new HashMap<>();
        ends = new HashMap<>();
        for (TopicPartition tp : earliest.keySet()) {
          begins.put(tp, b.partitionResult(tp));
          ends.put(tp, e.partitionResult(tp));
        }
      }
      for (TopicDescription d : found.values()) {
        if (d == null) {
          continue;
        }
        List<PartitionRange> list = new ArrayList<>();
        for (int p : partitions(d)) {
          TopicPartition tp = new TopicPartition(d.name(), p);
          list.add(
              new PartitionRange(
                  p, await(begins.get(tp)).offset(), await(ends.get(tp)).offset()));
        }
        ranges.put(d.name(), list);
      }
    }
    List<Optional<TopicMetadata>> out = new ArrayList<>();
    for (String topic : topics) {
      TopicDescription d = found.get(topic);
      if (d == null) {
        out.add(Optional.empty());
        continue;
      }
      out.add(
          Optional.of(
              new TopicMetadata(
                  topic,
                  d.topicId().toString(),
                  partitions(d),
                  entries.getOrDefault(topic, List.of()),
                  ranges.getOrDefault(topic, List.of()),
                  replicationFactor(d))));
    }
    return out;
  }

  /** The smallest number of assigned replicas over the partitions (0 without partitions). */
  private static int replicationFactor(TopicDescription d) {
    int smallest = Integer.MAX_VALUE;
    for (var p : d.partitions()) {
      smallest = Math.min(smallest, p.replicas().size());
    }
    return d.partitions().isEmpty() ? 0 : smallest;
  }

  /**
   * DescribeCluster, then (with names) DescribeConfigs of the broker with the lowest ID, which
   * only that broker answers: CLUSTER_AUTHORIZATION_FAILED without DescribeConfigs on the
   * cluster.
   */
  private ClusterDescription describeClusterOnce(List<String> configNames) throws KafkaFailure {
    org.apache.kafka.clients.admin.Admin admin = admin();
    java.util.TreeSet<Integer> ids = new java.util.TreeSet<>();
    for (org.apache.kafka.common.Node node :
        await(
            admin
                .describeCluster(
                    new org.apache.kafka.clients.admin.DescribeClusterOptions()
                        .timeoutMs(requestBoundMs))
                .nodes())) {
      ids.add(node.id());
    }
    List<Integer> brokers = List.copyOf(ids);
    List<ConfigEntry> configs = new ArrayList<>();
    if (configNames.isEmpty()) {
      return new ClusterDescription(brokers, configs);
    }
    Config config = null;
    if (!brokers.isEmpty()) {
      ConfigResource broker =
          new ConfigResource(ConfigResource.Type.BROKER, Integer.toString(brokers.get(0)));
      config =
          await(
              admin
                  .describeConfigs(
                      List.of(broker), new DescribeConfigsOptions().timeoutMs(requestBoundMs))
                  .values()
                  .get(broker));
    }
    for (String name : configNames) {
      org.apache.kafka.clients.admin.ConfigEntry entry = config == null ? null : config.get(name);
      configs.add(
          new ConfigEntry(
              name, entry == null ? Optional.empty() : Optional.ofNullable(entry.value())));
    }
    return new ClusterDescription(brokers, configs);
  }

  private static List<Integer> partitions(TopicDescription d) {
    List<Integer> partitions = new ArrayList<>();
    for (var p : d.partitions()) {
      partitions.add(p.partition());
    }
    partitions.sort(null);
    return partitions;
  }

  private boolean createTopicOnce(
      String topic, int partitions, short replicationFactor, List<ConfigEntry> configs)
      throws KafkaFailure {
    org.apache.kafka.clients.admin.Admin admin = admin();
    Map<String, String> values = new LinkedHashMap<>();
    for (ConfigEntry entry : configs) {
      entry.value().ifPresent(v -> values.put(entry.name(), v));
    }
    NewTopic request =
        new NewTopic(topic, Optional.of(partitions), Optional.of(replicationFactor))
            .configs(values);
    try {
      admin
          .createTopics(List.of(request), new CreateTopicsOptions().timeoutMs(requestBoundMs))
          .all()
          .get();
      return true;
    } catch (ExecutionException e) {
      if (KafkaErrors.unwrap(e) instanceof TopicExistsException) {
        return false;
      }
      throw KafkaErrors.failure(e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw KafkaErrors.failure(e);
    }
  }

  private List<PartitionOffset> listOffsetsOnce(
      String topic, List<Integer> partitions, OffsetSpec spec) throws KafkaFailure {
    org.apache.kafka.clients.admin.Admin admin = admin();
    Map<TopicPartition, org.apache.kafka.clients.admin.OffsetSpec> request = new LinkedHashMap<>();
    for (int p : partitions) {
      request.put(
          new TopicPartition(topic, p),
          spec == OffsetSpec.EARLIEST
              ? org.apache.kafka.clients.admin.OffsetSpec.earliest()
              : org.apache.kafka.clients.admin.OffsetSpec.latest());
    }
    ListOffsetsOptions options = new ListOffsetsOptions(IsolationLevel.READ_COMMITTED);
    options.timeoutMs(requestBoundMs);
    var result = admin.listOffsets(request, options);
    List<PartitionOffset> out = new ArrayList<>();
    for (int p : new java.util.TreeSet<>(partitions)) {
      out.add(new PartitionOffset(p, await(result.partitionResult(new TopicPartition(topic, p))).offset()));
    }
    return out;
  }

  private List<PartitionOffset> deleteRecordsOnce(String topic, List<PartitionOffset> before)
      throws KafkaFailure {
    return deletions().delete(topic, leaders(topic, before));
  }

  /**
   * The partitions of {@code before} grouped by their leader, from one description of the topic.
   * Nothing waits for the topic or a leader to appear (that is the component's decision, after it
   * confirmed the topic's ID again): a topic that is not found, or lacks a partition, is
   * {@code unknown-topic} at once, and a partition without a leader is {@code not-leader} at once.
   */
  private Map<Node, List<PartitionOffset>> leaders(String topic, List<PartitionOffset> before)
      throws KafkaFailure {
    DescribeTopicsOptions options = new DescribeTopicsOptions().timeoutMs(requestBoundMs);
    TopicDescription described =
        await(admin().describeTopics(List.of(topic), options).topicNameValues().get(topic));
    Map<Integer, Node> leaderOf = new HashMap<>();
    for (TopicPartitionInfo p : described.partitions()) {
      leaderOf.put(p.partition(), p.leader());
    }
    // One offset per partition, the last one given, as a request map of them would keep.
    Map<Integer, PartitionOffset> byPartition = new java.util.TreeMap<>();
    for (PartitionOffset po : before) {
      byPartition.put(po.partition(), po);
    }
    Map<Node, List<PartitionOffset>> byLeader = new LinkedHashMap<>();
    for (PartitionOffset po : byPartition.values()) {
      if (!leaderOf.containsKey(po.partition())) {
        throw KafkaErrors.failure(
            new UnknownTopicOrPartitionException(
                topic + " has no partition " + po.partition()));
      }
      Node leader = leaderOf.get(po.partition());
      if (leader == null || leader.isEmpty()) {
        throw KafkaErrors.failure(
            new LeaderNotAvailableException(
                "partition " + po.partition() + " of " + topic + " has no leader"));
      }
      byLeader.computeIfAbsent(leader, l -> new ArrayList<>()).add(po);
    }
    return byLeader;
  }

  @Override
  public synchronized void close() {
    if (admin != null) {
      admin.close(Duration.ZERO);
      admin = null;
    }
  }
}
