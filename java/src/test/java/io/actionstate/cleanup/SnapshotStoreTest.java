package io.actionstate.cleanup;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/**
 * Snapshots read through the {@code snapshot-store} import on the JVM: a checkpoint served
 * under an {@code s3://} URI by a store the embedder gives plans exactly as its local copy does
 * with that URI as recovery point, reading only what the component asks for; a missing snapshot
 * is a {@link SnapshotUnavailableException} naming the URI; the local store refuses other
 * schemes by name.
 */
class SnapshotStoreTest {
  private static final String BUCKET = "s3://bucket/";
  private static final String CHECKPOINT =
      "flink-2.2/checkpoint-rocksdb-incremental/00000000000000000000000000002103/chk-2";

  /** The fixtures as objects under {@link #BUCKET}, every request recorded. */
  private static final class Bucket implements SnapshotStore {
    final Path root;
    final List<String> asked = new ArrayList<>();

    Bucket(Path root) {
      this.root = root;
    }

    private Path local(String location) throws SnapshotStoreException {
      if (!location.startsWith(BUCKET)) {
        throw new SnapshotStoreException(SnapshotStoreException.Kind.UNSUPPORTED, location);
      }
      return root.resolve(location.substring(BUCKET.length()));
    }

    @Override
    public byte[] read(String location, long maxBytes) throws SnapshotStoreException {
      asked.add(location);
      Path path = local(location);
      if (Files.isDirectory(path)) {
        // An object store holds no object at a folder's name.
        throw new SnapshotStoreException(SnapshotStoreException.Kind.NOT_FOUND, location);
      }
      try {
        return Files.readAllBytes(path);
      } catch (NoSuchFileException e) {
        throw new SnapshotStoreException(SnapshotStoreException.Kind.NOT_FOUND, location);
      } catch (IOException e) {
        throw new SnapshotStoreException(SnapshotStoreException.Kind.FAILED, e.toString());
      }
    }

    @Override
    public List<String> list(String location) throws SnapshotStoreException {
      try (Stream<Path> entries = Files.list(local(location))) {
        return entries.map(p -> p.getFileName() + (Files.isDirectory(p) ? "/" : "")).toList();
      } catch (IOException e) {
        throw new SnapshotStoreException(SnapshotStoreException.Kind.NOT_FOUND, location);
      }
    }
  }

  @Test
  void aCheckpointPlansThroughAStoreAsItsLocalCopy() throws Exception {
    Path root = Components.fixtures().resolve("snapshots").toAbsolutePath().normalize();
    Bucket bucket = new Bucket(root);
    String uri = BUCKET + CHECKPOINT;
    try (Cleanup cleanup = Cleanup.connect(Broker.client(), Duration.ofSeconds(30))) {
      SnapshotPlan local =
          cleanup.planFromSnapshot(root.resolve(CHECKPOINT).toString(), "agent-operator", null, uri);
      cleanup.setSnapshotStore(bucket);
      SnapshotPlan stored = cleanup.planFromSnapshot(uri, "agent-operator", null, null);
      assertEquals(local.plan(), stored.plan());
      assertEquals(uri, stored.plan().sourceRecoveryPoint());
      assertEquals(local.markers(), stored.markers());
      assertEquals(uri + "/_metadata", bucket.asked.get(0));
      assertEquals(bucket.asked.size(), stored.storeRequests());
      long bytes = 0;
      for (String asked : bucket.asked) {
        bytes += Files.size(root.resolve(asked.substring(BUCKET.length())));
      }
      assertEquals(bytes, stored.storeBytes());

      SnapshotUnavailableException missing =
          assertThrows(
              SnapshotUnavailableException.class,
              () -> cleanup.planFromSnapshot(BUCKET + "none", "agent-operator", null, null));
      assertEquals(SnapshotStoreException.Kind.NOT_FOUND, missing.reason());
      assertTrue(
          missing.getMessage().contains(BUCKET + "none/_metadata does not exist"),
          missing.getMessage());
      String job = BUCKET + CHECKPOINT.substring(0, CHECKPOINT.lastIndexOf('/'));
      SnapshotUnavailableException jobDirectory =
          assertThrows(
              SnapshotUnavailableException.class,
              () -> cleanup.planFromSnapshot(job, "agent-operator", null, null));
      assertTrue(jobDirectory.getMessage().contains("holding chk-2"), jobDirectory.getMessage());

      CleanupException unknown =
          assertThrows(
              CleanupException.class,
              () -> cleanup.planFromSnapshot(uri, "no-such-operator", null, null));
      assertEquals("invalid-argument", unknown.kind());

      cleanup.setSnapshotStore(new LocalSnapshotStore());
      SnapshotUnavailableException unsupported =
          assertThrows(
              SnapshotUnavailableException.class,
              () -> cleanup.planFromSnapshot("gs://bucket/sp", "agent-operator", null, null));
      assertEquals(SnapshotStoreException.Kind.UNSUPPORTED, unsupported.reason());
      assertTrue(unsupported.getMessage().contains("gs://bucket/sp"), unsupported.getMessage());
    }
  }

  @Test
  void retainedPointsPlanToTheirMinimumThroughAStore() throws Exception {
    Path root = Components.fixtures().resolve("snapshots").toAbsolutePath().normalize();
    Bucket bucket = new Bucket(root);
    String checkpoints = BUCKET + "flink-2.2/checkpoint-rocksdb-incremental";
    String savepoint = BUCKET + "flink-2.2/savepoint-canonical/savepoint";
    try (Cleanup cleanup = Cleanup.connect(Broker.client(), Duration.ofSeconds(30))) {
      cleanup.setSnapshotStore(bucket);
      RetainedPlan planned =
          cleanup.planRetained(List.of(checkpoints, savepoint), "agent-operator", null, List.of());
      assertEquals(
          List.of(BUCKET + CHECKPOINT, savepoint),
          planned.points().stream().map(RetainedPlan.Point::location).toList());
      // The minimum per partition, computed here from each point's own offsets.
      for (PartitionOffset po : planned.plan().offsets()) {
        long least = Long.MAX_VALUE;
        List<String> holders = new ArrayList<>();
        for (RetainedPlan.Point point : planned.points()) {
          for (PartitionOffset own : point.offsets()) {
            if (own.partition() == po.partition()) {
              if (own.offset() < least) {
                least = own.offset();
                holders.clear();
              }
              if (own.offset() == least) {
                holders.add(point.location());
              }
            }
          }
        }
        assertEquals(least, po.offset());
        assertEquals(new RetainedPlan.Bound(least, holders), planned.boundedBy().get(po.partition()));
      }
      assertEquals(planned.recorded(), planned.plan().sourceRecoveryPoint());
      assertEquals(bucket.asked.size() > 0, planned.storeRequests() > 0);

      RetainedPlan excluded =
          cleanup.planRetained(
              List.of(checkpoints, savepoint),
              "agent-operator",
              null,
              List.of(savepoint + "/_metadata", BUCKET + "gone"));
      assertEquals(List.of(savepoint), excluded.excluded());
      assertEquals(List.of(BUCKET + "gone"), excluded.unmatchedExclusions());
      assertEquals(1, excluded.points().size());

      String noUid = BUCKET + "flink-2.2/savepoint-no-uid/savepoint";
      CleanupException point =
          assertThrows(
              CleanupException.class,
              () ->
                  cleanup.planRetained(
                      List.of(checkpoints, noUid), "agent-operator", null, List.of()));
      assertTrue(
          point.getMessage().startsWith("retained recovery point " + noUid + ": "),
          point.getMessage());
      CleanupException nothing =
          assertThrows(
              CleanupException.class,
              () ->
                  cleanup.planRetained(
                      List.of(BUCKET + "missing"), "agent-operator", null, List.of()));
      assertEquals("invalid-argument", nothing.kind());
    }
  }
}
