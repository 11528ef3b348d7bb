package io.actionstate.cleanup.kafka;

import io.actionstate.cleanup.PartitionOffset;
import io.actionstate.cleanup.capability.KafkaFailure;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.apache.kafka.clients.ApiVersions;
import org.apache.kafka.clients.ClientResponse;
import org.apache.kafka.clients.ClientUtils;
import org.apache.kafka.clients.CommonClientConfigs;
import org.apache.kafka.clients.DefaultHostResolver;
import org.apache.kafka.clients.ManualMetadataUpdater;
import org.apache.kafka.clients.NetworkClient;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.common.KafkaException;
import org.apache.kafka.common.Node;
import org.apache.kafka.common.errors.AuthenticationException;
import org.apache.kafka.common.errors.DisconnectException;
import org.apache.kafka.common.errors.NetworkException;
import org.apache.kafka.common.errors.TimeoutException;
import org.apache.kafka.common.message.DeleteRecordsRequestData;
import org.apache.kafka.common.message.DeleteRecordsRequestData.DeleteRecordsPartition;
import org.apache.kafka.common.message.DeleteRecordsRequestData.DeleteRecordsTopic;
import org.apache.kafka.common.message.DeleteRecordsResponseData.DeleteRecordsPartitionResult;
import org.apache.kafka.common.message.DeleteRecordsResponseData.DeleteRecordsTopicResult;
import org.apache.kafka.common.metrics.Metrics;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.requests.DeleteRecordsRequest;
import org.apache.kafka.common.requests.DeleteRecordsResponse;
import org.apache.kafka.common.utils.LogContext;
import org.apache.kafka.common.utils.Time;

/**
 * The DeleteRecords requests of one {@code delete-records} call, each sent exactly once to the
 * partition leader it is addressed to (the duty of WIT {@code kafka-admin.delete-records}).
 *
 * <p>Not {@code Admin.deleteRecords}: its driver treats UNKNOWN_TOPIC_OR_PARTITION, NOT_LEADER and
 * a disconnection as stale metadata, looks the leader up again and sends once more, to a leader
 * it had not asked yet even with {@code retries=0}. DeleteRecords names a topic only by name, so a
 * topic deleted and recreated meanwhile would receive the deletion.
 *
 * <p>Why nothing here sends a request twice: the requests go through kafka-clients'
 * {@link NetworkClient}, a transport without retries. Its {@code send} puts a request in flight and
 * onto the socket once; a disconnection or an expired request timeout completes the in-flight
 * request as disconnected or timed out and never queues it again. The only requests it sends by
 * itself are each connection's ApiVersions handshake and the metadata requests of its metadata
 * updater, and the {@link ManualMetadataUpdater} here sends none (kafka-clients 4.3: the socket
 * write {@code Selectable.send} is reached only from {@code NetworkClient.doSend}, called by
 * {@code send}, the ApiVersions handshake and {@code DefaultMetadataUpdater}). This class calls
 * {@code send} once per leader, when that leader's connection is ready; a connection that fails
 * before the request left is the {@code transport} answer for its partitions, never a reason to
 * connect again. The client lives for one call only, so nothing of it acts after the call.
 *
 * <p>The connection takes the admin client's properties ({@code security.protocol},
 * {@code sasl.*}, {@code ssl.*}, socket and DNS settings), so it authenticates as the admin does.
 */
final class DeleteRecordsOnce {
  private static final String METRIC_GROUP = "action-state-cleanup-delete-records";

  private final AdminClientConfig config;
  private final int requestBoundMs;

  DeleteRecordsOnce(AdminClientConfig config, int requestBoundMs) {
    this.config = config;
    this.requestBoundMs = requestBoundMs;
  }

  /** A partition's answer: its low watermark, or why it failed. */
  private record Answer(long lowWatermark, RuntimeException failure) {
    static Answer deleted(long lowWatermark) {
      return new Answer(lowWatermark, null);
    }

    static Answer failed(RuntimeException failure) {
      return new Answer(-1, failure);
    }
  }

  /**
   * Deletes below each offset of {@code byLeader}'s partitions of {@code topic}, with one request
   * per leader, all within the request bound. Returns every partition's low watermark, ascending
   * by partition; when a partition failed, the failure of the lowest one that did.
   */
  List<PartitionOffset> delete(String topic, Map<Node, List<PartitionOffset>> byLeader)
      throws KafkaFailure {
    Time time = Time.SYSTEM;
    long deadline = time.milliseconds() + requestBoundMs;
    Map<Integer, Answer> answers = new TreeMap<>();
    Metrics metrics = new Metrics(time);
    NetworkClient client;
    try {
      client = client(metrics, time, new ArrayList<>(byLeader.keySet()), topic);
    } catch (RuntimeException e) {
      // The client could not be made (e.g. an SSL or SASL setting it refuses): nothing was sent.
      metrics.close();
      throw KafkaErrors.failure(e);
    }
    try (metrics;
        client) {
      exchange(client, time, deadline, topic, byLeader, answers);
    }
    List<PartitionOffset> out = new ArrayList<>();
    for (Map.Entry<Integer, Answer> answer : answers.entrySet()) {
      if (answer.getValue().failure() != null) {
        throw KafkaErrors.failure(answer.getValue().failure());
      }
      out.add(new PartitionOffset(answer.getKey(), answer.getValue().lowWatermark()));
    }
    return out;
  }

  private NetworkClient client(Metrics metrics, Time time, List<Node> leaders, String topic) {
    String clientId = config.getString(CommonClientConfigs.CLIENT_ID_CONFIG);
    return ClientUtils.createNetworkClient(
        config,
        clientId.isEmpty() ? METRIC_GROUP : clientId,
        metrics,
        METRIC_GROUP,
        new LogContext("[delete-records " + topic + "] "),
        new ApiVersions(),
        time,
        1,
        requestBoundMs,
        null,
        new ManualMetadataUpdater(leaders),
        new DefaultHostResolver(),
        null,
        null);
  }

  /** Connects to every leader, sends each its request once, and collects the answers. */
  private void exchange(
      NetworkClient client,
      Time time,
      long deadline,
      String topic,
      Map<Node, List<PartitionOffset>> byLeader,
      Map<Integer, Answer> answers) {
    Map<Node, List<PartitionOffset>> unsent = new LinkedHashMap<>(byLeader);
    Map<String, List<PartitionOffset>> inFlight = new HashMap<>();
    long now = time.milliseconds();
    for (Node leader : unsent.keySet()) {
      client.ready(leader, now);
    }
    while ((!unsent.isEmpty() || !inFlight.isEmpty()) && now < deadline) {
      for (Iterator<Map.Entry<Node, List<PartitionOffset>>> it = unsent.entrySet().iterator();
          it.hasNext(); ) {
        Map.Entry<Node, List<PartitionOffset>> entry = it.next();
        Node leader = entry.getKey();
        if (client.isReady(leader, now)) {
          int timeoutMs = (int) (deadline - now);
          client.send(
              client.newClientRequest(
                  leader.idString(),
                  request(topic, entry.getValue(), timeoutMs),
                  now,
                  true,
                  timeoutMs,
                  null),
              now);
          inFlight.put(leader.idString(), entry.getValue());
          it.remove();
        } else if (client.connectionFailed(leader)) {
          AuthenticationException refused = client.authenticationException(leader);
          fail(
              answers,
              entry.getValue(),
              refused != null
                  ? refused
                  : new NetworkException(
                      "could not connect to " + leader + ", the leader of " + topic
                          + "; DeleteRecords was not sent"));
          it.remove();
        }
      }
      for (ClientResponse response : client.poll(deadline - now, now)) {
        List<PartitionOffset> sent = inFlight.remove(response.destination());
        if (sent != null) {
          answer(answers, topic, sent, response);
        }
      }
      now = time.milliseconds();
    }
    TimeoutException late =
        new TimeoutException(
            "DeleteRecords of " + topic + " got no answer within " + requestBoundMs + " ms");
    unsent.values().forEach(partitions -> fail(answers, partitions, late));
    inFlight.values().forEach(partitions -> fail(answers, partitions, late));
  }

  private static DeleteRecordsRequest.Builder request(
      String topic, List<PartitionOffset> before, int timeoutMs) {
    List<DeleteRecordsPartition> partitions = new ArrayList<>();
    for (PartitionOffset po : before) {
      partitions.add(
          new DeleteRecordsPartition().setPartitionIndex(po.partition()).setOffset(po.offset()));
    }
    return new DeleteRecordsRequest.Builder(
        new DeleteRecordsRequestData()
            .setTimeoutMs(timeoutMs)
            .setTopics(List.of(new DeleteRecordsTopic().setName(topic).setPartitions(partitions))));
  }

  /** The answers a leader's response gives for the partitions {@code sent} to it. */
  private static void answer(
      Map<Integer, Answer> answers,
      String topic,
      List<PartitionOffset> sent,
      ClientResponse response) {
    String leader = "broker " + response.destination();
    if (response.authenticationException() != null) {
      fail(answers, sent, response.authenticationException());
    } else if (response.versionMismatch() != null) {
      fail(answers, sent, response.versionMismatch());
    } else if (response.wasTimedOut()) {
      fail(
          answers,
          sent,
          new TimeoutException(leader + " did not answer DeleteRecords of " + topic + " in time"));
    } else if (response.wasDisconnected()) {
      fail(
          answers,
          sent,
          new DisconnectException(
              "the connection to " + leader + " closed before it answered DeleteRecords of "
                  + topic + " (the deletion may have been carried out)"));
    } else {
      DeleteRecordsResponse body = (DeleteRecordsResponse) response.responseBody();
      for (DeleteRecordsTopicResult t : body.data().topics()) {
        if (!t.name().equals(topic)) {
          continue;
        }
        for (DeleteRecordsPartitionResult p : t.partitions()) {
          Errors error = Errors.forCode(p.errorCode());
          answers.put(
              p.partitionIndex(),
              error == Errors.NONE
                  ? Answer.deleted(p.lowWatermark())
                  : Answer.failed(
                      error.exception(
                          leader + " refused DeleteRecords of " + topic + "-" + p.partitionIndex()
                              + ": " + error.message())));
        }
      }
      for (PartitionOffset po : sent) {
        answers.putIfAbsent(
            po.partition(),
            Answer.failed(
                new KafkaException(
                    leader + " answered DeleteRecords of " + topic + " without partition "
                        + po.partition())));
      }
    }
  }

  private static void fail(
      Map<Integer, Answer> answers, List<PartitionOffset> partitions, RuntimeException failure) {
    for (PartitionOffset po : partitions) {
      answers.put(po.partition(), Answer.failed(failure));
    }
  }
}
