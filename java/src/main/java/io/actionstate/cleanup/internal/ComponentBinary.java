package io.actionstate.cleanup.internal;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * Reads the top-level core modules out of a WebAssembly component binary. A component is a
 * preamble followed by sections ({@code id}, LEB128 byte length, contents); a core-module
 * section (id 1) holds one complete core module binary. The component file stays the single
 * source of truth: nothing is extracted at build time.
 */
public final class ComponentBinary {
  private static final byte[] MAGIC = {0x00, 0x61, 0x73, 0x6d};
  private static final int CORE_MODULE_SECTION = 1;

  private ComponentBinary() {}

  /**
   * The core modules of {@code component}, in section order.
   *
   * @throws IllegalArgumentException when the bytes are not a component binary
   */
  public static List<byte[]> coreModules(byte[] component) {
    if (component.length < 8 || !Arrays.equals(Arrays.copyOf(component, 4), MAGIC)) {
      throw new IllegalArgumentException("not a WebAssembly binary (no \\0asm preamble)");
    }
    // Bytes 4-5: version; 6-7: layer, 1 for components (0 for core modules).
    if (component[6] != 0x01 || component[7] != 0x00) {
      throw new IllegalArgumentException(
          "a core WebAssembly module, not a component (layer "
              + (component[6] & 0xFF)
              + ")");
    }
    List<byte[]> modules = new ArrayList<>();
    int position = 8;
    while (position < component.length) {
      int id = component[position++] & 0xFF;
      long size = 0;
      int shift = 0;
      while (true) {
        if (position >= component.length || shift > 28) {
          throw new IllegalArgumentException("truncated section header at byte " + position);
        }
        int b = component[position++] & 0xFF;
        size |= (long) (b & 0x7F) << shift;
        shift += 7;
        if ((b & 0x80) == 0) {
          break;
        }
      }
      if (size > component.length - position) {
        throw new IllegalArgumentException(
            "section " + id + " at byte " + position + " runs past the end of the file");
      }
      if (id == CORE_MODULE_SECTION) {
        modules.add(Arrays.copyOfRange(component, position, position + (int) size));
      }
      position += (int) size;
    }
    return modules;
  }
}
