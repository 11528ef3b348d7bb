package io.actionstate.snapshotfixtures;

import java.util.Map;
import java.util.TreeMap;

/** Minimal JSON text helpers (Jackson's escaping of strings). */
final class Json {
  private Json() {}

  static String str(String s) {
    if (s == null) {
      return "null";
    }
    StringBuilder b = new StringBuilder("\"");
    for (int i = 0; i < s.length(); i++) {
      char c = s.charAt(i);
      switch (c) {
        case '"': b.append("\\\""); break;
        case '\\': b.append("\\\\"); break;
        case '\b': b.append("\\b"); break;
        case '\t': b.append("\\t"); break;
        case '\n': b.append("\\n"); break;
        case '\f': b.append("\\f"); break;
        case '\r': b.append("\\r"); break;
        default:
          if (c < 0x20) {
            b.append(String.format("\\u%04X", (int) c));
          } else {
            b.append(c);
          }
      }
    }
    return b.append('"').toString();
  }

  /** Compact offsets object, partitions in ascending numeric order. */
  static String offsets(Map<Integer, Long> offsets) {
    StringBuilder b = new StringBuilder("{");
    boolean first = true;
    for (Map.Entry<Integer, Long> e : new TreeMap<>(offsets).entrySet()) {
      if (!first) {
        b.append(',');
      }
      first = false;
      b.append('"').append(e.getKey()).append("\":").append(e.getValue());
    }
    return b.append('}').toString();
  }
}
