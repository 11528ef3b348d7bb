package io.actionstate.cleanup;

import java.io.IOException;
import java.nio.file.AccessDeniedException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.NotDirectoryException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;

/**
 * A {@link SnapshotStore} over local files: plain paths and {@code file:} URIs. Other schemes
 * answer {@code UNSUPPORTED}.
 */
public final class LocalSnapshotStore implements SnapshotStore {
  /** The local path of {@code location}, or null when it names another store. */
  private static Path local(String location) {
    int colon = location.indexOf(':');
    if (colon < 2 || !location.substring(0, colon).matches("[A-Za-z][A-Za-z0-9+.-]*")) {
      return Path.of(location);
    }
    if (location.substring(0, colon).equalsIgnoreCase("file")) {
      String rest = location.substring(colon + 1);
      if (rest.startsWith("//localhost")) {
        rest = rest.substring("//localhost".length());
      }
      return Path.of("/" + rest.replaceFirst("^/+", ""));
    }
    return null;
  }

  private static Path path(String location) throws SnapshotStoreException {
    Path path = local(location);
    if (path == null) {
      throw new SnapshotStoreException(
          SnapshotStoreException.Kind.UNSUPPORTED,
          "this store reads local paths and file:// URIs, not " + location
              + " (give Cleanup a SnapshotStore over Flink's FileSystem for other schemes)");
    }
    return path;
  }

  private static SnapshotStoreException failure(IOException e, String location) {
    String text = location + ": " + e;
    if (e instanceof NoSuchFileException || e instanceof NotDirectoryException) {
      return new SnapshotStoreException(SnapshotStoreException.Kind.NOT_FOUND, text);
    }
    if (e instanceof AccessDeniedException) {
      return new SnapshotStoreException(SnapshotStoreException.Kind.DENIED, text);
    }
    return new SnapshotStoreException(SnapshotStoreException.Kind.FAILED, text);
  }

  @Override
  public byte[] read(String location, long maxBytes) throws SnapshotStoreException {
    Path path = path(location);
    try {
      if (Files.isDirectory(path)) {
        throw new SnapshotStoreException(
            SnapshotStoreException.Kind.NOT_FOUND, location + " is a directory");
      }
      long size = Files.size(path);
      if (size > maxBytes || size > Integer.MAX_VALUE - 8) {
        throw SnapshotStoreException.tooLarge(size);
      }
      return Files.readAllBytes(path);
    } catch (IOException e) {
      throw failure(e, location);
    }
  }

  @Override
  public List<String> list(String location) throws SnapshotStoreException {
    Path path = path(location);
    try (Stream<Path> entries = Files.list(path)) {
      List<String> names = new ArrayList<>();
      entries.sorted().forEach(p -> {
        String name = p.getFileName().toString();
        names.add(Files.isDirectory(p) ? name + "/" : name);
      });
      return names;
    } catch (IOException e) {
      throw failure(e, location);
    }
  }
}
