package io.actionstate.flinkjob;

import io.actionstate.cleanup.SnapshotStore;
import io.actionstate.cleanup.SnapshotStoreException;
import java.io.FileNotFoundException;
import java.io.IOException;
import java.io.InputStream;
import java.util.ArrayList;
import java.util.List;
import org.apache.flink.core.fs.FileStatus;
import org.apache.flink.core.fs.FileSystem;
import org.apache.flink.core.fs.Path;

/**
 * The component's {@code snapshot-store} over Flink's own {@link FileSystem}: a job reads its
 * snapshots with the cluster's filesystem plugins and credentials (S3, GCS, Azure, HDFS, local),
 * exactly the locations Flink reports ({@code file:/…}, {@code s3://…}). One call, one request;
 * the component decides which objects to read.
 */
public final class FlinkSnapshotStore implements SnapshotStore {
  @Override
  public byte[] read(String location, long maxBytes) throws SnapshotStoreException {
    try {
      Path path = new Path(location);
      FileSystem fs = path.getFileSystem();
      FileStatus status = fs.getFileStatus(path);
      if (status.isDir()) {
        throw new SnapshotStoreException(
            SnapshotStoreException.Kind.NOT_FOUND, location + " is a directory");
      }
      if (status.getLen() > maxBytes || status.getLen() > Integer.MAX_VALUE - 8) {
        throw SnapshotStoreException.tooLarge(status.getLen());
      }
      try (InputStream in = fs.open(path)) {
        return in.readAllBytes();
      }
    } catch (FileNotFoundException e) {
      throw new SnapshotStoreException(SnapshotStoreException.Kind.NOT_FOUND, location + ": " + e.getMessage());
    } catch (IOException | IllegalArgumentException e) {
      throw failure(location, e);
    }
  }

  @Override
  public List<String> list(String location) throws SnapshotStoreException {
    try {
      Path path = new Path(location);
      FileStatus[] statuses = path.getFileSystem().listStatus(path);
      List<String> names = new ArrayList<>();
      if (statuses != null) {
        for (FileStatus status : statuses) {
          names.add(status.getPath().getName() + (status.isDir() ? "/" : ""));
        }
      }
      names.sort(null);
      return names;
    } catch (FileNotFoundException e) {
      throw new SnapshotStoreException(SnapshotStoreException.Kind.NOT_FOUND, location + ": " + e.getMessage());
    } catch (IOException | IllegalArgumentException e) {
      throw failure(location, e);
    }
  }

  private static SnapshotStoreException failure(String location, Exception e) {
    // Flink names a scheme with no filesystem plugin through UnsupportedFileSystemSchemeException.
    boolean unsupported = e.getClass().getSimpleName().contains("UnsupportedFileSystemScheme");
    return new SnapshotStoreException(
        unsupported ? SnapshotStoreException.Kind.UNSUPPORTED : SnapshotStoreException.Kind.FAILED,
        location + ": " + e);
  }
}
