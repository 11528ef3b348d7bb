package io.actionstate.cleanup;

import io.actionstate.cleanup.capability.Capabilities;
import io.actionstate.cleanup.capability.KafkaFailure;
import io.actionstate.cleanup.kafka.KafkaCapabilities;
import io.actionstate.cleanup.kafka.KafkaErrors;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeSet;
import java.util.concurrent.ExecutionException;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.DeleteRecordsOptions;
import org.apache.kafka.clients.admin.RecordsToDelete;
import org.apache.kafka.common.TopicPartition;

/**
 * {@code delete-records} through kafka-clients' {@link Admin#deleteRecords}, as the JVM host did
 * before issue 34; kept for tests only. Its driver treats UNKNOWN_TOPIC_OR_PARTITION as stale
 * metadata: it looks the leader up again and sends the deletion to whichever topic bears the name
 * by then, as often as {@code retries} allows each stage (the lookup, and the requests to each
 * broker), until its timeout (the request bound here). Every other call goes to the honest admin.
 *
 * <p>{@link #asClientAdminHadIt} is the former {@code ClientAdmin} exactly ({@code retries=0}):
 * one lookup, so for a topic that is gone the call fails with {@code timeout} ("Exceeded
 * maxRetries after 1 tries") instead of {@code unknown-topic}. (It still resends when the first
 * leader came from the client's leader cache: the lookup after that leader's
 * UNKNOWN_TOPIC_OR_PARTITION is the first, and a recreated topic led by another broker is a fresh
 * stage.) {@link #withLibraryRetries} leaves {@code retries} at the library's default: a host
 * with client-side retries, whose deletion reaches the recreated topic.
 */
final class LibraryDeleteRecordsAdmin extends ConformanceTest.LyingAdmin {
  private final Admin library;
  private final int requestBoundMs;

  private LibraryDeleteRecordsAdmin(
      Capabilities.Admin honest, Map<String, Object> config, int requestBoundMs) {
    super(honest);
    this.requestBoundMs = requestBoundMs;
    this.library = Admin.create(config);
  }

  /** The former {@code ClientAdmin}'s delete-records, configured as it was. */
  static LibraryDeleteRecordsAdmin asClientAdminHadIt(
      Capabilities.Admin honest, Map<String, Object> client, int operationTimeoutMs) {
    Map<String, Object> config = bounded(client, operationTimeoutMs);
    config.put(AdminClientConfig.RETRIES_CONFIG, 0);
    return new LibraryDeleteRecordsAdmin(
        honest, config, KafkaCapabilities.requestBoundMs(operationTimeoutMs));
  }

  /** The same, with the library's own retries left on. */
  static LibraryDeleteRecordsAdmin withLibraryRetries(
      Capabilities.Admin honest, Map<String, Object> client, int operationTimeoutMs) {
    return new LibraryDeleteRecordsAdmin(
        honest,
        bounded(client, operationTimeoutMs),
        KafkaCapabilities.requestBoundMs(operationTimeoutMs));
  }

  private static Map<String, Object> bounded(Map<String, Object> client, int operationTimeoutMs) {
    int bound = KafkaCapabilities.requestBoundMs(operationTimeoutMs);
    Map<String, Object> config = new java.util.HashMap<>(client);
    config.put(AdminClientConfig.REQUEST_TIMEOUT_MS_CONFIG, bound);
    config.put(AdminClientConfig.DEFAULT_API_TIMEOUT_MS_CONFIG, bound);
    return config;
  }

  @Override
  public List<PartitionOffset> deleteRecords(String topic, List<PartitionOffset> before)
      throws KafkaFailure {
    Map<TopicPartition, RecordsToDelete> request = new LinkedHashMap<>();
    TreeSet<Integer> partitions = new TreeSet<>();
    for (PartitionOffset po : before) {
      request.put(
          new TopicPartition(topic, po.partition()), RecordsToDelete.beforeOffset(po.offset()));
      partitions.add(po.partition());
    }
    var result =
        library
            .deleteRecords(request, new DeleteRecordsOptions().timeoutMs(requestBoundMs))
            .lowWatermarks();
    List<PartitionOffset> out = new ArrayList<>();
    for (int p : partitions) {
      try {
        out.add(
            new PartitionOffset(p, result.get(new TopicPartition(topic, p)).get().lowWatermark()));
      } catch (ExecutionException e) {
        throw KafkaErrors.failure(e);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        throw KafkaErrors.failure(e);
      }
    }
    return out;
  }

  @Override
  public void close() {
    library.close();
    super.close();
  }
}
