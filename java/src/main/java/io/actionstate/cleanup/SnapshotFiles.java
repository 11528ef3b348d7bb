package io.actionstate.cleanup;

import io.actionstate.cleanup.internal.AbiType.Case;
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
 * The {@code snapshot-store} import over local files: plain paths and {@code file:} URIs. One
 * call is one read; which files to read is the component's decision. Other schemes answer
 * {@code unsupported}.
 */
final class SnapshotFiles {
  private SnapshotFiles() {}

  // store-error cases, in WIT order.
  private static final int NOT_FOUND = 0;
  private static final int DENIED = 1;
  private static final int UNSUPPORTED = 3;
  private static final int TOO_LARGE = 4;
  private static final int FAILED = 5;

  private static Case err(int kind, Object payload) {
    return new Case(1, new Case(kind, payload));
  }

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

  private static Case unsupported(String location) {
    return err(
        UNSUPPORTED,
        "this library reads snapshots from local paths and file:// URIs, not " + location);
  }

  private static Case failure(IOException e, String location) {
    String text = location + ": " + e;
    if (e instanceof NoSuchFileException || e instanceof NotDirectoryException) {
      return err(NOT_FOUND, text);
    }
    if (e instanceof AccessDeniedException) {
      return err(DENIED, text);
    }
    return err(FAILED, text);
  }

  static Case read(String location, long maxBytes) {
    Path path = local(location);
    if (path == null) {
      return unsupported(location);
    }
    try {
      if (Files.isDirectory(path)) {
        return err(NOT_FOUND, location + " is a directory");
      }
      long size = Files.size(path);
      if (size > maxBytes || size > Integer.MAX_VALUE - 8) {
        return err(TOO_LARGE, size);
      }
      return new Case(0, Files.readAllBytes(path));
    } catch (IOException e) {
      return failure(e, location);
    }
  }

  static Case list(String location) {
    Path path = local(location);
    if (path == null) {
      return unsupported(location);
    }
    try (Stream<Path> entries = Files.list(path)) {
      List<Object> names = new ArrayList<>();
      entries.sorted().forEach(p -> {
        String name = p.getFileName().toString();
        names.add(Files.isDirectory(p) ? name + "/" : name);
      });
      return new Case(0, names);
    } catch (IOException e) {
      return failure(e, location);
    }
  }
}
