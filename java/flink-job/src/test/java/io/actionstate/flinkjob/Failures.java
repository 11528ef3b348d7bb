package io.actionstate.flinkjob;

import java.util.ArrayDeque;
import java.util.Deque;
import java.util.IdentityHashMap;
import java.util.Map;

/** Reading why a Flink job failed: the cause chain Flink wraps around the operator's exception. */
final class Failures {
  private Failures() {}

  /**
   * The message in {@code failure}'s causes (and suppressed exceptions) that contains
   * {@code sentence}; fails naming every message when none does.
   */
  static String find(Throwable failure, String sentence) {
    StringBuilder seen = new StringBuilder();
    Deque<Throwable> todo = new ArrayDeque<>();
    Map<Throwable, Boolean> visited = new IdentityHashMap<>();
    todo.add(failure);
    while (!todo.isEmpty()) {
      Throwable t = todo.poll();
      if (visited.put(t, true) != null) {
        continue;
      }
      String message = String.valueOf(t.getMessage());
      if (message.contains(sentence)) {
        return message;
      }
      seen.append("\n  ").append(t.getClass().getName()).append(": ").append(message);
      if (t.getCause() != null) {
        todo.add(t.getCause());
      }
      for (Throwable s : t.getSuppressed()) {
        todo.add(s);
      }
    }
    throw new AssertionError("no cause says \"" + sentence + "\"; the causes were:" + seen);
  }
}
