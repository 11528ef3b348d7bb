package io.actionstate.cleanup;

import java.util.ArrayList;
import java.util.List;
import java.util.Objects;

/**
 * Marker texts as {@link RecoverySession#restore} hands them to the component, those without a
 * UTF-8 form included.
 *
 * <p>A Java string with a lone surrogate has no UTF-8 form, so the WIT {@code string} cannot carry
 * it. Refusing such a marker in the host would leave the session's phase as it was, although the
 * runtime calling {@code restore} may already hold the failed checkpoint's state: a fresh or live
 * session would go on answering checkpoints with the live end offsets, a replaying one with an
 * earlier replay's offsets. So the marker crosses as a text the component's strict JSON reader
 * refuses, and the restore fails there, through the core session's failed-restore rule, like any
 * marker that does not parse.
 *
 * <p>Each lone surrogate becomes its JSON escape (a backslash, {@code u} and four hex digits)
 * followed by a raw U+0000. The escape makes the refusal name a lone surrogate where one stood
 * inside a JSON string. The U+0000 makes the refusal certain whatever surrounds the escape (a
 * backslash before it that escapes the backslash, or the text of a low surrogate's escape after it
 * that would complete a pair): strict JSON allows a raw control character nowhere, neither inside
 * a string nor between tokens, and a marker must be one whole JSON document, so no text holding
 * one parses.
 */
final class UndecodableMarkers {
  private UndecodableMarkers() {}

  /** {@code markers}, each one without a UTF-8 form replaced as described above. */
  static List<String> crossable(List<String> markers) {
    List<String> out = new ArrayList<>(markers.size());
    for (String marker : markers) {
      out.add(crossable(Objects.requireNonNull(marker, "marker")));
    }
    return out;
  }

  /** {@code text} itself when it has a UTF-8 form; else the text the component refuses. */
  static String crossable(String text) {
    StringBuilder out = null;
    for (int i = 0; i < text.length(); i++) {
      char c = text.charAt(i);
      if (Character.isHighSurrogate(c)
          && i + 1 < text.length()
          && Character.isLowSurrogate(text.charAt(i + 1))) {
        if (out != null) {
          out.append(c).append(text.charAt(i + 1));
        }
        i++;
      } else if (Character.isSurrogate(c)) {
        if (out == null) {
          out = new StringBuilder(text.length() + 16).append(text, 0, i);
        }
        out.append(String.format("\\u%04X", (int) c)).append('\0');
      } else if (out != null) {
        out.append(c);
      }
    }
    return out == null ? text : out.toString();
  }
}
