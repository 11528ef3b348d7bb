package io.actionstate.cleanup;

/**
 * The plan of one recovery point from marker files handed over one call at a time (WIT
 * {@code marker-planning.marker-files-planner}); {@link #finish} answers exactly what
 * {@code plans.plan-from-marker-files} answers for the same files in the same order. Calls are
 * synchronized on the owning {@link Cleanup}; after a trap discarded its instance the planner
 * throws {@link IllegalStateException}.
 */
public final class MarkerFilesPlanner implements AutoCloseable {
  private static final String RESOURCE = "marker-files-planner";

  /** The plan and how many markers the files held. */
  public record Result(Plan plan, int markers) {}

  private final Cleanup owner;
  private final long handle;
  private final int generation;
  private boolean closed;

  MarkerFilesPlanner(Cleanup owner, long handle, int generation) {
    this.owner = owner;
    this.handle = handle;
    this.generation = generation;
  }

  private long representation() {
    owner.checkOpen();
    if (closed) {
      throw new IllegalStateException("this planner is closed");
    }
    if (owner.host.generation() != generation) {
      throw new IllegalStateException(
          "this planner was lost when its component instance was discarded after a fault");
    }
    return owner.host.representation(RESOURCE, handle);
  }

  /**
   * Splits one more file and takes its markers.
   *
   * @throws CleanupException a file that is not a marker file, named (final: every later call
   *     answers it again)
   */
  public void addFile(String name, String text) throws CleanupException {
    synchronized (owner) {
      long rep = representation();
      owner.requireUtf8("A marker file", name, text);
      owner.result(owner.host.call(CleanupWit.PLANNER_ADD_FILE, rep, name, text), v -> v);
    }
  }

  /**
   * The plan of every marker of every file added.
   *
   * @throws CleanupException as {@code plans.plan-from-marker-files}
   */
  public Result finish() throws CleanupException {
    synchronized (owner) {
      return owner.result(
          owner.host.call(CleanupWit.PLANNER_FINISH, representation()),
          v -> {
            Object[] f = (Object[]) v;
            return new Result(Wit.plan(f[0]), Wit.u32AsInt(f[1], "marker count"));
          });
    }
  }

  @Override
  public void close() {
    synchronized (owner) {
      if (closed) {
        return;
      }
      closed = true;
      owner.host.dropExported("marker-planning", RESOURCE, handle, generation);
    }
  }
}
