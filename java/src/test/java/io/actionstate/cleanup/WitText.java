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
 * A reader for the subset of WIT that {@code types.wit} and {@code plans.wit} use (records,
 * variants, enums, lists, options, results, integers, bools, strings, functions), producing the
 * same {@link AbiType} layouts {@link Wit} declares by hand, so the test can compare the two. It
 * refuses anything it does not know (a new kind of item or type) rather than guess.
 */
final class WitText {
  /** A declared named type: its layout and, for records, variants and enums, its member names. */
  record Named(String kind, List<String> members, List<String> memberTypes) {}

  /** A function: parameter types and result type ({@code null} for none), as WIT type text. */
  record Function(List<String> paramTypes, String resultType) {}

  final Map<String, Named> types = new LinkedHashMap<>();
  final Map<String, Function> functions = new LinkedHashMap<>();
  private final Map<String, AbiType> resolved = new HashMap<>();

  private List<String> tokens;
  private int at;

  /** Reads the interfaces of the given WIT texts. */
  static WitText parse(String... texts) {
    WitText wit = new WitText();
    for (String text : texts) {
      wit.read(text);
    }
    return wit;
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
        next();
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
        case "use" -> skipPast(";");
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
          String name = t;
          expect(":");
          expect("func");
          expect("(");
          List<String> params = new ArrayList<>();
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
          expect(";");
          functions.put(name, new Function(params, result));
        }
      }
    }
  }

  private void declare(String name, Named named) {
    if (types.put(name, named) != null) {
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

  /** The canonical-ABI layout of a WIT type expression. */
  AbiType layout(String type) {
    if (type == null) {
      return null;
    }
    AbiType known = resolved.get(type);
    if (known != null) {
      return known;
    }
    AbiType layout = build(type);
    resolved.put(type, layout);
    return layout;
  }

  private AbiType build(String type) {
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
          return new ListOf(layout(args.get(0)));
        case "option":
          return Variant.option(layout(args.get(0)));
        case "result":
          return Variant.result(
              args.get(0).equals("_") ? null : layout(args.get(0)), layout(args.get(1)));
        default:
          throw new IllegalArgumentException("WIT: unknown generic type " + type);
      }
    }
    Named named = types.get(type);
    if (named == null) {
      throw new IllegalArgumentException("WIT: unknown type " + type);
    }
    List<AbiType> members = new ArrayList<>();
    for (String t : named.memberTypes()) {
      members.add(layout(t));
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
