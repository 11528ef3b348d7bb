package io.actionstate.cleanup;

import java.util.List;

/**
 * Where this library reads Flink snapshots: the WIT {@code snapshot-store} import. The component
 * decides which locations to read (the {@code _metadata}, then the marker operator's state files,
 * every path resolved against the location the caller gave); a store only gives whole objects.
 * One call is one request: no retries. {@link LocalSnapshotStore} reads local files; a job with
 * Flink on its classpath can give one over Flink's own {@code FileSystem} (its plugins and
 * credentials) with {@link Cleanup#setSnapshotStore}.
 */
public interface SnapshotStore {
  /**
   * The whole object at {@code location}.
   *
   * @throws SnapshotStoreException {@code TOO_LARGE} above {@code maxBytes}, or why it could not
   *     be read
   */
  byte[] read(String location, long maxBytes) throws SnapshotStoreException;

  /** The names one level below the folder {@code location}, folders ending with {@code /}. */
  List<String> list(String location) throws SnapshotStoreException;
}
