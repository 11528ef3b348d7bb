package io.actionstate.flinkjob;

/**
 * The action-state record key of an action, {@code action-<id>}, and back. The replay refuses a
 * key it cannot read: an action-state topic holding records of another writer is not this job's.
 */
final class ActionKeys {
  private static final String PREFIX = "action-";

  private ActionKeys() {}

  static String key(long action) {
    return PREFIX + action;
  }

  static long action(String topic, int partition, long offset, String key) {
    if (key.startsWith(PREFIX)) {
      try {
        long action = Long.parseLong(key.substring(PREFIX.length()));
        if (action >= 0) {
          return action;
        }
      } catch (NumberFormatException e) {
        // named below
      }
    }
    throw new IllegalStateException(
        "Action-state record " + topic + "-" + partition + "@" + offset + " has key \"" + key
            + "\", not action-<id>: the topic holds records this job did not write");
  }
}
