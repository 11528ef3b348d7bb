package io.actionstate.cleanup;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.FutureTask;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.common.errors.TopicExistsException;
import org.apache.kafka.common.errors.UnknownTopicOrPartitionException;

/**
 * The harness of the conformance target {@code recreated-during-delete}, exactly as
 * {@code wit/suite.wit} describes it: a topic with one partition and records, created before the
 * suite runs; about 500 ms after {@link #start} (called as the suite's {@code run} is called) it
 * is deleted, and 1.5 s after the harness's own client no longer finds it, it is created again
 * under the same name (one partition) with exactly 10 records. Everything goes through
 * kafka-clients directly: the harness is the test's world, not the host under test.
 */
final class RecreatedTopicHarness {
  /** Records in the topic before it is deleted (any number: the suite only needs some). */
  private static final int RECORDS_BEFORE = 20;
  /** Records in the recreated topic: the suite checks for exactly this many. */
  private static final int RECORDS_AFTER = 10;

  private final String topic;
  private final FutureTask<Void> steps;

  private RecreatedTopicHarness(String topic) {
    this.topic = topic;
    this.steps = new FutureTask<>(this::deleteAndRecreate);
  }

  /** Creates the topic with its records; {@link #start} starts deleting and recreating it. */
  static RecreatedTopicHarness create() throws Exception {
    RecreatedTopicHarness harness = new RecreatedTopicHarness(Broker.unique("java-recreated"));
    Broker.createTopic(harness.topic, 1);
    Broker.writeActions(harness.topic, 0, 0, RECORDS_BEFORE);
    return harness;
  }

  /** Starts the thread that deletes the topic about 500 ms from now and recreates it. */
  void start() {
    Thread thread = new Thread(steps, "recreated-during-delete harness");
    thread.setDaemon(true);
    thread.start();
  }

  String topic() {
    return topic;
  }

  /** Waits for the harness's steps; a step that failed fails the test that started it. */
  void finish() throws Exception {
    try {
      steps.get(2, TimeUnit.MINUTES);
    } catch (ExecutionException e) {
      throw new AssertionError("the harness of recreated-during-delete failed", e.getCause());
    }
  }

  private Void deleteAndRecreate() throws Exception {
    Thread.sleep(500);
    try (Admin admin = Admin.create(Broker.client())) {
      admin.deleteTopics(List.of(topic)).all().get();
      awaitGone(admin);
    }
    Thread.sleep(1_500);
    recreate();
    Broker.writeActions(topic, 0, 0, RECORDS_AFTER);
    return null;
  }

  private void awaitGone(Admin admin) throws Exception {
    long deadline = System.nanoTime() + Duration.ofSeconds(15).toNanos();
    while (System.nanoTime() < deadline) {
      try {
        admin.describeTopics(List.of(topic)).allTopicNames().get();
      } catch (ExecutionException e) {
        if (e.getCause() instanceof UnknownTopicOrPartitionException) {
          return;
        }
        throw e;
      }
      Thread.sleep(50);
    }
    throw new IllegalStateException(topic + " was still described 15 s after its deletion");
  }

  /** The broker finishes a deletion asynchronously: the name is free again a little later. */
  private void recreate() throws Exception {
    long deadline = System.nanoTime() + Duration.ofSeconds(15).toNanos();
    while (true) {
      try {
        Broker.createTopic(topic, 1);
        return;
      } catch (ExecutionException e) {
        if (!(e.getCause() instanceof TopicExistsException) || System.nanoTime() > deadline) {
          throw e;
        }
      }
      Thread.sleep(100);
    }
  }
}
