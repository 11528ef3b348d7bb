package io.actionstate.cleanup;

import io.actionstate.cleanup.internal.AbiType;
import io.actionstate.cleanup.internal.AbiType.ListOf;
import io.actionstate.cleanup.internal.AbiType.Prim;
import io.actionstate.cleanup.internal.AbiType.Record;
import io.actionstate.cleanup.internal.AbiType.Variant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * A reader for the subset of WIT that the package's interface files use (records, variants,
 * enums, resources with constructors, static functions and methods, lists, options, results,
 * handles, integers, bools, strings, {@code use} between interfaces), producing the same
 * {@link AbiType} layouts {@link Wit} and {@code CleanupWit} declare by hand, so the test can
 * compare the two. Names are scoped per interface. It refuses anything it does not know (a new
 * kind of item or type) rather than guess.
 */
final class WitText {
  /** A declared named type: its kind, and for records, variants and enums its members. */
  record Named(String kind, List<String> members, List<String> memberTypes) {}

  /**
   * A function: parameter types and result type ({@code null} for none), as WIT type text in the
   * scope of its interface. Methods list their {@code self} first as {@code borrow<r>}.
   */
  record Function(String iface, List<String> paramTypes, String resultType) {}

  /** Types per interface (after {@code use}, a used name resolves to its defining interface). */
  final Map<String, Map<String, Named>> interfaces = new LinkedHashMap<>();
  /** {@code use} aliases: interface → local name → "defining-interface/name". */
  private final Map<String, Map<String, String>> uses = new HashMap<>();
  /**
   * Functions keyed as the core module names them: {@code interface#name},
   * {@code interface#[static]r.f}, {@code interface#[method]r.f},
   * {@code interface#[constructor]r}.
   */
  final Map<String, Function> functions = new LinkedHashMap<>();
  private final Map<String, AbiType> resolved = new HashMap<>();

  private List<String> tokens;
  private int at;
  private String iface;

  /** Reads the interfaces of the given WIT texts. */
  static WitText parse(String... texts) {
    WitText wit = new WitText();
    for (String text : texts) {
      wit.read(text);
    }
    return wit;
  }

  /** The type {@code name} declared in (or used by) interface {@code iface}. */
  Named type(String iface, String name) {
    String[] where = resolveName(iface, name);
    return interfaces.get(where[0]).get(where[1]);
  }

  /** The function {@code key} ({@code interface#name}); {@code null} when not declared. */
  Function function(String key) {
    return functions.get(key);
  }

  /** The functions of one interface, by their core-name key. */
  List<String> functionsOf(String iface) {
    List<String> out = new ArrayList<>();
    for (String key : functions.keySet()) {
      if (key.startsWith(iface + "#")) {
        out.add(key);
      }
    }
    return out;
  }

  private static final Pattern TOKEN =
      Pattern.compile("\\s+|//[^\\n]*|%?[a-z][a-z0-9-]*|->|[{}()<>,:;.=@*_]|[0-9][0-9.]*");

  private void read(String text) {
    tokens = new ArrayList<>();
    Matcher m = TOKEN.matcher(text);
    int pos = 0;
    while (pos < text.length()) {
      if (!m.find(pos) || m.start() != pos) {
        throw new IllegalArgumentException(
            "WIT: unexpected text at " + pos + ": " + snippet(text, pos));
      }
      String t = m.group();
      if (!t.isBlank() && !t.startsWith("//")) {
        tokens.add(t.startsWith("%") ? t.substring(1) : t);
      }
      pos = m.end();
    }
    at = 0;
    while (at < tokens.size()) {
      String t = next();
      if (t.equals("package")) {
        skipPast(";");
      } else if (t.equals("interface")) {
        iface = next();
        interfaces.put(iface, new LinkedHashMap<>());
        uses.put(iface, new HashMap<>());
        expect("{");
        readInterface();
      } else {
        throw new IllegalArgumentException("WIT: unexpected top-level item " + t);
      }
    }
  }

  private static String snippet(String text, int pos) {
    return text.substring(pos, Math.min(text.length(), pos + 20));
  }

  private void readInterface() {
    while (true) {
      String t = next();
      switch (t) {
        case "}" -> {
          return;
        }
        case "use" -> {
          String from = next();
          expect(".");
          expect("{");
          while (!peek().equals("}")) {
            String name = next();
            uses.get(iface).put(name, from + "/" + name);
            if (peek().equals(",")) {
              next();
            }
          }
          next();
          expect(";");
        }
        case "resource" -> {
          String name = next();
          declare(name, new Named("resource", List.of(), List.of()));
          if (peek().equals(";")) {
            next();
          } else {
            expect("{");
            while (!peek().equals("}")) {
              readFunction(name);
            }
            next();
          }
        }
        case "record" -> {
          String name = next();
          expect("{");
          List<String> names = new ArrayList<>();
          List<String> types = new ArrayList<>();
          while (!peek().equals("}")) {
            names.add(next());
            expect(":");
            types.add(type());
            if (peek().equals(",")) {
              next();
            }
          }
          next();
          declare(name, new Named("record", names, types));
        }
        case "variant", "enum" -> {
          String name = next();
          expect("{");
          List<String> names = new ArrayList<>();
          List<String> types = new ArrayList<>();
          while (!peek().equals("}")) {
            names.add(next());
            String payload = null;
            if (t.equals("variant") && peek().equals("(")) {
              next();
              payload = type();
              expect(")");
            }
            types.add(payload);
            if (peek().equals(",")) {
              next();
            }
          }
          next();
          declare(name, new Named(t, names, types));
        }
        default -> {
          at--;
          readFunction(null);
        }
      }
    }
  }

  /** A function of the interface, or of {@code resource} (constructor, static, method). */
  private void readFunction(String resource) {
    String name = next();
    List<String> params = new ArrayList<>();
    String key;
    if (resource != null && name.equals("constructor")) {
      key = "[constructor]" + resource;
    } else {
      expect(":");
      boolean isStatic = false;
      if (peek().equals("static")) {
        next();
        isStatic = true;
      }
      expect("func");
      if (resource == null) {
        key = name;
      } else if (isStatic) {
        key = "[static]" + resource + "." + name;
      } else {
        key = "[method]" + resource + "." + name;
        params.add("borrow<" + resource + ">");
      }
    }
    expect("(");
    while (!peek().equals(")")) {
      next();
      expect(":");
      params.add(type());
      if (peek().equals(",")) {
        next();
      }
    }
    next();
    String result = null;
    if (peek().equals("->")) {
      next();
      result = type();
    }
    if (key.startsWith("[constructor]")) {
      result = "own<" + resource + ">";
    }
    expect(";");
    if (functions.put(iface + "#" + key, new Function(iface, params, result)) != null) {
      throw new IllegalArgumentException("WIT: function " + iface + "#" + key + " declared twice");
    }
  }

  private void declare(String name, Named named) {
    if (interfaces.get(iface).put(name, named) != null) {
      throw new IllegalArgumentException("WIT: type " + name + " declared twice");
    }
  }

  /** One type expression, returned as normalized text (e.g. {@code result<plan,cleanup-error>}). */
  private String type() {
    String head = next();
    if (!peek().equals("<")) {
      return head;
    }
    StringBuilder text = new StringBuilder(head).append(next());
    int depth = 1;
    while (depth > 0) {
      String t = next();
      if (t.equals("<")) {
        depth++;
      } else if (t.equals(">")) {
        depth--;
      }
      text.append(t);
    }
    return text.toString();
  }

  /** [defining interface, name] of a type name used in {@code scope}. */
  private String[] resolveName(String scope, String name) {
    if (interfaces.containsKey(scope) && interfaces.get(scope).containsKey(name)) {
      return new String[] {scope, name};
    }
    String used = uses.getOrDefault(scope, Map.of()).get(name);
    if (used == null) {
      throw new IllegalArgumentException("WIT: unknown type " + name + " in " + scope);
    }
    String[] parts = used.split("/", 2);
    return resolveName(parts[0], parts[1]);
  }

  /** The canonical-ABI layout of a WIT type expression in the scope of {@code scope}. */
  AbiType layout(String scope, String type) {
    if (type == null) {
      return null;
    }
    String key = scope + "|" + type;
    AbiType known = resolved.get(key);
    if (known != null) {
      return known;
    }
    AbiType layout = build(scope, type);
    resolved.put(key, layout);
    return layout;
  }

  private AbiType build(String scope, String type) {
    switch (type) {
      case "bool":
        return Prim.BOOL;
      case "u8":
        return Prim.U8;
      case "u16":
        return Prim.U16;
      case "u32":
        return Prim.U32;
      case "s32":
        return Prim.S32;
      case "u64":
        return Prim.U64;
      case "s64":
        return Prim.S64;
      case "string":
        return Wit.STRING;
      default:
        break;
    }
    int open = type.indexOf('<');
    if (open > 0) {
      String head = type.substring(0, open);
      List<String> args = splitArgs(type.substring(open + 1, type.length() - 1));
      switch (head) {
        case "list":
          return new ListOf(layout(scope, args.get(0)));
        case "option":
          return Variant.option(layout(scope, args.get(0)));
        case "result":
          if (args.size() == 1) {
            return Variant.result(
                args.get(0).equals("_") ? null : layout(scope, args.get(0)), null);
          }
          return Variant.result(
              args.get(0).equals("_") ? null : layout(scope, args.get(0)),
              layout(scope, args.get(1)));
        case "own", "borrow":
          {
            String[] where = resolveName(scope, args.get(0));
            return new AbiType.Handle(where[1], head.equals("own"));
          }
        default:
          throw new IllegalArgumentException("WIT: unknown generic type " + type);
      }
    }
    String[] where = resolveName(scope, type);
    Named named = interfaces.get(where[0]).get(where[1]);
    if (named.kind().equals("resource")) {
      return new AbiType.Handle(where[1], true);
    }
    List<AbiType> members = new ArrayList<>();
    for (String t : named.memberTypes()) {
      members.add(layout(where[0], t));
    }
    return named.kind().equals("record") ? new Record(members) : new Variant(members);
  }

  private static List<String> splitArgs(String text) {
    List<String> args = new ArrayList<>();
    int depth = 0;
    int start = 0;
    for (int i = 0; i < text.length(); i++) {
      char c = text.charAt(i);
      if (c == '<') {
        depth++;
      } else if (c == '>') {
        depth--;
      } else if (c == ',' && depth == 0) {
        args.add(text.substring(start, i));
        start = i + 1;
      }
    }
    args.add(text.substring(start));
    return args;
  }

  private String peek() {
    if (at >= tokens.size()) {
      throw new IllegalArgumentException("WIT: unexpected end");
    }
    return tokens.get(at);
  }

  private String next() {
    String t = peek();
    at++;
    return t;
  }

  private void expect(String token) {
    String t = next();
    if (!t.equals(token)) {
      throw new IllegalArgumentException("WIT: expected " + token + " but found " + t);
    }
  }

  private void skipPast(String token) {
    while (!next().equals(token)) {
      // skip
    }
  }
}
