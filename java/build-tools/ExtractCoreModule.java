import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;

/**
 * Build step (run by Maven as a single-file Java program, before Chicory's build-time compiler):
 * copies the main core module out of a WebAssembly component, the one module that exports
 * {@code cabi_realloc}. wit-component's other core modules are indirect-call shims that a host
 * calling the main module's imports directly does not need.
 *
 * <p>Usage: {@code java ExtractCoreModule.java COMPONENT OUT [COMPONENT OUT]...}
 */
public final class ExtractCoreModule {
  private ExtractCoreModule() {}

  public static void main(String[] args) throws IOException {
    if (args.length == 0 || args.length % 2 != 0) {
      System.err.println("usage: java ExtractCoreModule.java COMPONENT OUT [COMPONENT OUT]...");
      System.exit(2);
    }
    for (int i = 0; i < args.length; i += 2) {
      Path component = Path.of(args[i]);
      if (!Files.isRegularFile(component)) {
        System.err.println(
            component
                + " does not exist: build the components (cargo build -p action-state-cleanup)"
                + " and set ASC_COMPONENTS_DIR to <target>/components");
        System.exit(1);
      }
      byte[] main = mainModule(Files.readAllBytes(component), component.toString());
      Path out = Path.of(args[i + 1]);
      Files.createDirectories(out.toAbsolutePath().getParent());
      Files.write(out, main);
    }
  }

  private static final class Reader {
    final byte[] b;
    int at;
    final String what;

    Reader(byte[] b, int at, String what) {
      this.b = b;
      this.at = at;
      this.what = what;
    }

    int u8() {
      if (at >= b.length) {
        throw new IllegalArgumentException(what + ": truncated at byte " + at);
      }
      return b[at++] & 0xFF;
    }

    long leb() {
      long value = 0;
      for (int shift = 0; shift < 35; shift += 7) {
        int x = u8();
        value |= (long) (x & 0x7F) << shift;
        if ((x & 0x80) == 0) {
          return value;
        }
      }
      throw new IllegalArgumentException(what + ": LEB128 too long at byte " + at);
    }

    int length() {
      long n = leb();
      if (n > b.length - at) {
        throw new IllegalArgumentException(what + ": length " + n + " at byte " + at
            + " runs past the end");
      }
      return (int) n;
    }
  }

  static byte[] mainModule(byte[] component, String what) {
    if (component.length < 8
        || !Arrays.equals(Arrays.copyOf(component, 4), new byte[] {0, 0x61, 0x73, 0x6d})
        || component[6] != 1) {
      throw new IllegalArgumentException(what + " is not a WebAssembly component");
    }
    Reader r = new Reader(component, 8, what);
    byte[] found = null;
    while (r.at < component.length) {
      int id = r.u8();
      int size = r.length();
      if (id == 1) {
        byte[] module = Arrays.copyOfRange(component, r.at, r.at + size);
        if (exportsRealloc(module, what)) {
          if (found != null) {
            throw new IllegalArgumentException(what + " has two core modules exporting cabi_realloc");
          }
          found = module;
        }
      }
      r.at += size;
    }
    if (found == null) {
      throw new IllegalArgumentException(what + " has no core module exporting cabi_realloc");
    }
    return found;
  }

  private static boolean exportsRealloc(byte[] module, String what) {
    Reader r = new Reader(module, 8, what);
    while (r.at < module.length) {
      int id = r.u8();
      int size = r.length();
      int end = r.at + size;
      if (id == 7) {
        long count = r.leb();
        for (long i = 0; i < count; i++) {
          int n = r.length();
          String name = new String(module, r.at, n, java.nio.charset.StandardCharsets.UTF_8);
          r.at += n;
          int kind = r.u8();
          r.leb();
          if (kind == 0 && name.equals("cabi_realloc")) {
            return true;
          }
        }
      }
      r.at = end;
    }
    return false;
  }
}
