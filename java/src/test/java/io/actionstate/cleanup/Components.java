package io.actionstate.cleanup;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.EnumMap;
import java.util.Map;

/**
 * The built components and the shared fixtures, located like the web and Python suites do: the
 * components through {@code ASC_COMPONENTS_DIR}. A missing component fails the run; nothing is
 * ever skipped.
 */
final class Components {
  private static final Map<Plans.Engine, Plans> LOADED = new EnumMap<>(Plans.Engine.class);

  private Components() {}

  /** {@code $ASC_COMPONENTS_DIR/validator.wasm}, or a failure that says how to get it. */
  static Path validatorPath() {
    String dir = System.getenv("ASC_COMPONENTS_DIR");
    if (dir == null || dir.isBlank()) {
      throw new IllegalStateException(
          "ASC_COMPONENTS_DIR is not set: build the components (cargo build -p"
              + " action-state-cleanup) and set it to <target>/components, as scripts/test does");
    }
    Path path = Path.of(dir, "validator.wasm");
    if (!Files.isRegularFile(path)) {
      throw new IllegalStateException(
          "ASC_COMPONENTS_DIR=" + dir + " holds no validator.wasm: build the components first");
    }
    return path;
  }

  /** One shared instance per engine (loading compiles the module). */
  static synchronized Plans plans(Plans.Engine engine) {
    return LOADED.computeIfAbsent(
        engine,
        e -> {
          try {
            return Plans.load(validatorPath(), e);
          } catch (IOException ex) {
            throw new UncheckedIOException(ex);
          }
        });
  }

  private static Plans aheadOfTime;

  /** The ahead-of-time compiled validator this jar carries ({@code Plans.load()}), shared. */
  static synchronized Plans plans() {
    if (aheadOfTime == null) {
      aheadOfTime = Plans.load();
    }
    return aheadOfTime;
  }

  /** The repository's {@code fixtures/} directory. */
  static Path fixtures() {
    Path dir = Path.of(System.getProperty("asc.fixtures.dir", "../fixtures"));
    if (!Files.isDirectory(dir)) {
      throw new IllegalStateException("no fixtures directory at " + dir.toAbsolutePath());
    }
    return dir;
  }
}
