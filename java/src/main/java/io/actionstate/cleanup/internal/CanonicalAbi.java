package io.actionstate.cleanup.internal;

import com.dylibso.chicory.runtime.ExportFunction;
import com.dylibso.chicory.runtime.Instance;
import com.dylibso.chicory.runtime.Memory;
import io.actionstate.cleanup.internal.AbiType.Case;
import io.actionstate.cleanup.internal.AbiType.CoreType;
import io.actionstate.cleanup.internal.AbiType.ListOf;
import io.actionstate.cleanup.internal.AbiType.Prim;
import io.actionstate.cleanup.internal.AbiType.Record;
import io.actionstate.cleanup.internal.AbiType.Str;
import io.actionstate.cleanup.internal.AbiType.Variant;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.util.AbstractList;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Objects;
import java.util.Set;

/**
 * The canonical ABI of the component model (string encoding UTF-8) over one core instance:
 * lowering Java values into the guest's memory and core parameters, calling an export, lifting
 * its result and running the export's post-return function. Values are plain Java objects:
 * {@code Boolean}, {@code Long} (every integer type), {@code String}, {@code List<Object>},
 * {@code Object[]} (records) and {@link Case} (variants, enums, options, results).
 */
public final class CanonicalAbi {
  /** Most flat parameters passed as core parameters; more travel through memory. */
  public static final int MAX_FLAT_PARAMS = 16;
  /** Most flat results returned as core results; more come back through a return area. */
  public static final int MAX_FLAT_RESULTS = 1;

  private final Instance instance;
  private final Memory memory;
  private final ExportFunction realloc;
  private final Set<String> exports;

  /**
   * Binds to {@code instance}, whose allocator is the core export {@code cabi_realloc};
   * {@code exports} names every function the core module exports.
   */
  public CanonicalAbi(Instance instance, Set<String> exports) {
    this.instance = instance;
    this.memory = instance.memory();
    this.realloc = instance.export("cabi_realloc");
    this.exports = exports;
  }

  /** A string a Java caller passed that has no UTF-8 form (a lone surrogate). */
  public static final class UnencodableStringException extends IllegalArgumentException {
    private static final long serialVersionUID = 1L;

    UnencodableStringException(String message) {
      super(message);
    }
  }

  /**
   * Calls the core export {@code name} of a component function with parameter types
   * {@code params} and result type {@code result} ({@code null} for none), then its
   * {@code cabi_post_<name>} function when the guest has one.
   */
  public Object call(String name, List<AbiType> params, AbiType result, Object... args) {
    if (args.length != params.size()) {
      throw new IllegalArgumentException(
          name + " takes " + params.size() + " arguments, not " + args.length);
    }
    Record tuple = new Record(params);
    long[] core;
    if (tuple.flat().size() <= MAX_FLAT_PARAMS) {
      List<Long> flat = new ArrayList<>();
      for (int i = 0; i < args.length; i++) {
        lowerFlat(params.get(i), args[i], flat);
      }
      core = flat.stream().mapToLong(Long::longValue).toArray();
    } else {
      int pointer = allocate(tuple.alignment(), tuple.size());
      store(tuple, args, pointer);
      core = new long[] {pointer & 0xFFFF_FFFFL};
    }
    long[] raw = instance.export(name).apply(core);
    Object value = null;
    if (result != null) {
      List<CoreType> flatResult = result.flat();
      if (flatResult.size() > MAX_FLAT_RESULTS) {
        value = load(result, checkedPointer(raw[0], result.size(), result.alignment()));
      } else {
        value = liftFlat(result, List.of(raw[0]).iterator(), flatResult.iterator());
      }
    }
    String postReturn = "cabi_post_" + name;
    if (exports.contains(postReturn)) {
      instance.export(postReturn).apply(raw);
    }
    return value;
  }

  private int allocate(int alignment, int size) {
    long pointer = realloc.apply(0, 0, alignment, size)[0] & 0xFFFF_FFFFL;
    return checkedPointer(pointer, size, alignment);
  }

  private int checkedPointer(long pointer, long size, int alignment) {
    long p = pointer & 0xFFFF_FFFFL;
    long memorySize = (long) memory.pages() * Memory.PAGE_SIZE;
    if (p % alignment != 0 || p + size > memorySize) {
      throw new GuestFault(
          "the guest returned the range " + p + "+" + size + " (alignment " + alignment
              + ") outside its " + memorySize + "-byte memory");
    }
    return (int) p;
  }

  // --- memory --------------------------------------------------------------------------------

  /** Writes {@code value} of type {@code type} at {@code pointer}. */
  public void store(AbiType type, Object value, int pointer) {
    if (type instanceof Prim prim) {
      storePrim(prim, value, pointer);
    } else if (type instanceof AbiType.Handle) {
      memory.writeI32(pointer, (int) (long) (Long) value);
    } else if (type instanceof Str) {
      int[] pointerAndLength = lowerString((String) value);
      memory.writeI32(pointer, pointerAndLength[0]);
      memory.writeI32(pointer + 4, pointerAndLength[1]);
    } else if (type instanceof ListOf list) {
      int[] pointerAndLength = lowerList(list, value);
      memory.writeI32(pointer, pointerAndLength[0]);
      memory.writeI32(pointer + 4, pointerAndLength[1]);
    } else if (type instanceof Record record) {
      Object[] fields = (Object[]) value;
      for (int i = 0; i < fields.length; i++) {
        store(record.fields().get(i), fields[i], pointer + record.fieldOffset(i));
      }
    } else {
      Variant variant = (Variant) type;
      Case c = (Case) value;
      storePrim(variant.discriminant(), (long) c.index(), pointer);
      AbiType payload = variant.cases().get(c.index());
      if (payload != null) {
        store(payload, c.payload(), pointer + variant.payloadOffset());
      }
    }
  }

  private void storePrim(Prim prim, Object value, int pointer) {
    switch (prim) {
      case BOOL -> memory.writeByte(pointer, (byte) (((Boolean) value) ? 1 : 0));
      case U8 -> memory.writeByte(pointer, (byte) (long) (Long) value);
      case U16 -> memory.writeShort(pointer, (short) (long) (Long) value);
      case U32, S32 -> memory.writeI32(pointer, (int) (long) (Long) value);
      case U64, S64 -> memory.writeLong(pointer, (Long) value);
    }
  }

  /** Reads a value of type {@code type} at {@code pointer}. */
  public Object load(AbiType type, int pointer) {
    if (type instanceof Prim prim) {
      return loadPrim(prim, pointer);
    } else if (type instanceof AbiType.Handle) {
      return memory.readInt(pointer) & 0xFFFF_FFFFL;
    } else if (type instanceof Str) {
      return liftString(memory.readInt(pointer), memory.readInt(pointer + 4));
    } else if (type instanceof ListOf list) {
      return liftList(list, memory.readInt(pointer), memory.readInt(pointer + 4));
    } else if (type instanceof Record record) {
      Object[] fields = new Object[record.fields().size()];
      for (int i = 0; i < fields.length; i++) {
        fields[i] = load(record.fields().get(i), pointer + record.fieldOffset(i));
      }
      return fields;
    }
    Variant variant = (Variant) type;
    int index = (int) (long) (Long) loadPrim(variant.discriminant(), pointer);
    AbiType payload = caseType(variant, index);
    return new Case(
        index, payload == null ? null : load(payload, pointer + variant.payloadOffset()));
  }

  private Object loadPrim(Prim prim, int pointer) {
    return switch (prim) {
      case BOOL -> {
        int b = memory.read(pointer);
        if (b != 0 && b != 1) {
          throw new GuestFault("the guest stored " + b + " as a bool");
        }
        yield b == 1;
      }
      case U8 -> (long) (memory.read(pointer) & 0xFF);
      case U16 -> (long) (memory.readShort(pointer) & 0xFFFF);
      case U32 -> memory.readInt(pointer) & 0xFFFF_FFFFL;
      case S32 -> (long) memory.readInt(pointer);
      case U64, S64 -> memory.readLong(pointer);
    };
  }

  private static AbiType caseType(Variant variant, int index) {
    if (index < 0 || index >= variant.cases().size()) {
      throw new GuestFault(
          "the guest returned case " + index + " of a variant with " + variant.cases().size()
              + " cases");
    }
    return variant.cases().get(index);
  }

  private int[] lowerString(String text) {
    byte[] bytes = utf8(text);
    int pointer = allocate(1, bytes.length);
    memory.write(pointer, bytes);
    return new int[] {pointer, bytes.length};
  }

  /** The index of the first lone UTF-16 surrogate of {@code text}, or -1 when it has a UTF-8 form. */
  public static int loneSurrogate(String text) {
    for (int i = 0; i < text.length(); i++) {
      char c = text.charAt(i);
      if (Character.isHighSurrogate(c)
          && i + 1 < text.length()
          && Character.isLowSurrogate(text.charAt(i + 1))) {
        i++;
      } else if (Character.isSurrogate(c)) {
        return i;
      }
    }
    return -1;
  }

  private static byte[] utf8(String text) {
    // The JDK's encoding (for a Latin-1 string an array copy) writes '?' for a lone surrogate
    // instead of refusing it, so the text is searched for one only when the result could hide
    // one: a '?' in the bytes, or non-ASCII characters (more bytes than characters).
    byte[] bytes = text.getBytes(StandardCharsets.UTF_8);
    if (bytes.length != text.length() || contains(bytes, (byte) '?')) {
      int index = loneSurrogate(text);
      if (index >= 0) {
        throw new UnencodableStringException(
            "the text has a lone UTF-16 surrogate at index " + index
                + ", which is not a Unicode character");
      }
    }
    return bytes;
  }

  private static boolean contains(byte[] bytes, byte wanted) {
    for (byte b : bytes) {
      if (b == wanted) {
        return true;
      }
    }
    return false;
  }

  private String liftString(int pointer, int length) {
    int p = checkedPointer(pointer, length & 0xFFFF_FFFFL, 1);
    byte[] bytes = memory.readBytes(p, length);
    // The JDK's decoder replaces what is not UTF-8 with U+FFFD; only a text holding U+FFFD is
    // decoded again strictly, to tell a genuine U+FFFD from a broken guest.
    String text = new String(bytes, StandardCharsets.UTF_8);
    if (text.indexOf('\uFFFD') < 0) {
      return text;
    }
    try {
      return StandardCharsets.UTF_8
          .newDecoder()
          .onMalformedInput(CodingErrorAction.REPORT)
          .onUnmappableCharacter(CodingErrorAction.REPORT)
          .decode(ByteBuffer.wrap(bytes))
          .toString();
    } catch (CharacterCodingException e) {
      throw new GuestFault("the guest returned a string that is not UTF-8");
    }
  }

  private int[] lowerList(ListOf list, Object value) {
    // Columns of integers (a poll's partitions, offsets and flags) cross as one copy.
    if (value instanceof byte[] bytes && list.element() == Prim.U8) {
      int pointer = allocate(1, bytes.length);
      memory.write(pointer, bytes);
      return new int[] {pointer, bytes.length};
    }
    if (value instanceof int[] ints && list.element() == Prim.U32) {
      ByteBuffer buffer = ByteBuffer.allocate(ints.length * 4).order(java.nio.ByteOrder.LITTLE_ENDIAN);
      buffer.asIntBuffer().put(ints);
      int pointer = allocate(4, ints.length * 4);
      memory.write(pointer, buffer.array());
      return new int[] {pointer, ints.length};
    }
    if (value instanceof long[] longs
        && (list.element() == Prim.U64 || list.element() == Prim.S64)) {
      ByteBuffer buffer = ByteBuffer.allocate(longs.length * 8).order(java.nio.ByteOrder.LITTLE_ENDIAN);
      buffer.asLongBuffer().put(longs);
      int pointer = allocate(8, longs.length * 8);
      memory.write(pointer, buffer.array());
      return new int[] {pointer, longs.length};
    }
    List<?> items = (List<?>) value;
    AbiType element = list.element();
    long bytes = (long) items.size() * element.size();
    if (bytes > Integer.MAX_VALUE) {
      throw new IllegalArgumentException("a list of " + items.size() + " items is too large");
    }
    int pointer = allocate(element.alignment(), (int) bytes);
    for (int i = 0; i < items.size(); i++) {
      store(element, items.get(i), pointer + i * element.size());
    }
    return new int[] {pointer, items.size()};
  }

  private List<Object> liftList(ListOf list, int pointer, int count) {
    AbiType element = list.element();
    long n = count & 0xFFFF_FFFFL;
    int p = checkedPointer(pointer, n * element.size(), element.alignment());
    if (element instanceof Record record && isPlain(record)) {
      // Records of integers (a plan's offsets): one copy out of the guest's memory, each
      // field read from there when asked for, without boxing when read through PlainRecords.
      return new PlainRecords(record, memory.readBytes(p, (int) (n * element.size())), (int) n);
    }
    List<Object> items = new ArrayList<>((int) n);
    if (isPlain(element)) {
      // Integers: one copy out of the guest's memory, read from there, instead of one
      // bounds-checked guest read per item.
      ByteBuffer raw =
          ByteBuffer.wrap(memory.readBytes(p, (int) (n * element.size())))
              .order(ByteOrder.LITTLE_ENDIAN);
      for (int i = 0; i < n; i++) {
        items.add(loadPlain(element, raw, i * element.size()));
      }
      return items;
    }
    for (int i = 0; i < n; i++) {
      items.add(load(element, p + i * element.size()));
    }
    return items;
  }

  /**
   * A lifted list of records holding only integers and bools, over one copy of the guest's
   * memory: a list of {@code Object[]} records like every lifted list (each made when it is
   * read), and its integer fields readable without boxing ({@link #u32}, {@link #u64}), which
   * is how a 10,000-partition plan's offsets become Java records.
   */
  public static final class PlainRecords extends AbstractList<Object> {
    private final Record record;
    private final ByteBuffer raw;
    private final int count;

    PlainRecords(Record record, byte[] bytes, int count) {
      this.record = record;
      this.raw = ByteBuffer.wrap(bytes).order(ByteOrder.LITTLE_ENDIAN);
      this.count = count;
    }

    /** The record type of the items. */
    public Record record() {
      return record;
    }

    @Override
    public int size() {
      return count;
    }

    @Override
    public Object get(int index) {
      Objects.checkIndex(index, count);
      return loadPlain(record, raw, index * record.size());
    }

    /** Field {@code field}, a {@code u32}, of item {@code index}. */
    public long u32(int index, int field) {
      Objects.checkIndex(index, count);
      return raw.getInt(index * record.size() + record.fieldOffset(field)) & 0xFFFF_FFFFL;
    }

    /** Field {@code field}, a {@code u64}, of item {@code index} (as Java's signed long). */
    public long u64(int index, int field) {
      Objects.checkIndex(index, count);
      return raw.getLong(index * record.size() + record.fieldOffset(field));
    }
  }

  /** Whether values of {@code type} hold only integers and bools (no pointers). */
  private static boolean isPlain(AbiType type) {
    if (type instanceof Prim) {
      return true;
    }
    return type instanceof Record record && record.fields().stream().allMatch(CanonicalAbi::isPlain);
  }

  /** {@link #load} of a plain type (see {@link #isPlain}) from a copy of guest memory. */
  private static Object loadPlain(AbiType type, ByteBuffer raw, int at) {
    if (type instanceof Record record) {
      Object[] fields = new Object[record.fields().size()];
      for (int i = 0; i < fields.length; i++) {
        fields[i] = loadPlain(record.fields().get(i), raw, at + record.fieldOffset(i));
      }
      return fields;
    }
    return switch ((Prim) type) {
      case BOOL -> {
        int b = raw.get(at);
        if (b != 0 && b != 1) {
          throw new GuestFault("the guest stored " + b + " as a bool");
        }
        yield b == 1;
      }
      case U8 -> (long) (raw.get(at) & 0xFF);
      case U16 -> (long) (raw.getShort(at) & 0xFFFF);
      case U32 -> raw.getInt(at) & 0xFFFF_FFFFL;
      case S32 -> (long) raw.getInt(at);
      case U64, S64 -> raw.getLong(at);
    };
  }

  // --- flat values ---------------------------------------------------------------------------

  /** Appends the core values of {@code value} to {@code out}. */
  void lowerFlat(AbiType type, Object value, List<Long> out) {
    if (type instanceof AbiType.Handle) {
      out.add((Long) value & 0xFFFF_FFFFL);
    } else if (type instanceof Prim prim) {
      switch (prim) {
        case BOOL -> out.add(((Boolean) value) ? 1L : 0L);
        case U8 -> out.add((Long) value & 0xFFL);
        case U16 -> out.add((Long) value & 0xFFFFL);
        case U32, S32 -> out.add((Long) value & 0xFFFF_FFFFL);
        case U64, S64 -> out.add((Long) value);
      }
    } else if (type instanceof Str) {
      int[] pointerAndLength = lowerString((String) value);
      out.add(pointerAndLength[0] & 0xFFFF_FFFFL);
      out.add(pointerAndLength[1] & 0xFFFF_FFFFL);
    } else if (type instanceof ListOf list) {
      int[] pointerAndLength = lowerList(list, value);
      out.add(pointerAndLength[0] & 0xFFFF_FFFFL);
      out.add(pointerAndLength[1] & 0xFFFF_FFFFL);
    } else if (type instanceof Record record) {
      Object[] fields = (Object[]) value;
      for (int i = 0; i < fields.length; i++) {
        lowerFlat(record.fields().get(i), fields[i], out);
      }
    } else {
      Variant variant = (Variant) type;
      Case c = (Case) value;
      List<CoreType> joined = variant.flat().subList(1, variant.flat().size());
      out.add((long) c.index());
      List<Long> payload = new ArrayList<>();
      AbiType caseType = variant.cases().get(c.index());
      if (caseType != null) {
        lowerFlat(caseType, c.payload(), payload);
      }
      // i32 values in a slot joined to i64 are zero-extended; the long form already is.
      for (int i = 0; i < joined.size(); i++) {
        out.add(i < payload.size() ? payload.get(i) : 0L);
      }
    }
  }

  /**
   * Reads a value of {@code type} from core values, where {@code slots} gives each value's core
   * type as the producer wrote it (joined types for variant payloads).
   */
  Object liftFlat(AbiType type, Iterator<Long> values, Iterator<CoreType> slots) {
    if (type instanceof AbiType.Handle) {
      return narrow(values.next(), slots.next());
    } else if (type instanceof Prim prim) {
      long v = narrow(values.next(), slots.next());
      return switch (prim) {
        case BOOL -> v != 0;
        case U8 -> v & 0xFFL;
        case U16 -> v & 0xFFFFL;
        case U32 -> v & 0xFFFF_FFFFL;
        case S32 -> (long) (int) v;
        case U64, S64 -> v;
      };
    } else if (type instanceof Str) {
      int pointer = (int) narrow(values.next(), slots.next());
      int length = (int) narrow(values.next(), slots.next());
      return liftString(pointer, length);
    } else if (type instanceof ListOf list) {
      int pointer = (int) narrow(values.next(), slots.next());
      int count = (int) narrow(values.next(), slots.next());
      return liftList(list, pointer, count);
    } else if (type instanceof Record record) {
      Object[] fields = new Object[record.fields().size()];
      for (int i = 0; i < fields.length; i++) {
        fields[i] = liftFlat(record.fields().get(i), values, slots);
      }
      return fields;
    }
    Variant variant = (Variant) type;
    int index = (int) narrow(values.next(), slots.next());
    int width = variant.flat().size() - 1;
    List<Long> payload = new ArrayList<>(width);
    List<CoreType> payloadSlots = new ArrayList<>(width);
    for (int i = 0; i < width; i++) {
      payload.add(values.next());
      payloadSlots.add(slots.next());
    }
    AbiType caseType = caseType(variant, index);
    return new Case(
        index,
        caseType == null
            ? null
            : liftFlat(caseType, payload.iterator(), payloadSlots.iterator()));
  }

  /**
   * The values of an import's parameters from its core arguments: flattened, or (more than
   * {@link #MAX_FLAT_PARAMS} core values) a pointer to a tuple in the guest's memory.
   */
  public Object[] liftParams(List<AbiType> params, long[] core) {
    Record tuple = new Record(params);
    if (tuple.flat().size() > MAX_FLAT_PARAMS) {
      return (Object[]) load(tuple, checkedPointer(core[0], tuple.size(), tuple.alignment()));
    }
    List<Long> values = new ArrayList<>(core.length);
    for (long v : core) {
      values.add(v);
    }
    return (Object[]) liftFlat(tuple, values.iterator(), tuple.flat().iterator());
  }

  /** An import's single flat result ({@code type} flattens to at most one core value). */
  public long[] lowerResult(AbiType type, Object value) {
    List<Long> out = new ArrayList<>(1);
    lowerFlat(type, value, out);
    return out.stream().mapToLong(Long::longValue).toArray();
  }

  /** Stores an import's result at the return area the guest passed ({@code pointer}). */
  public void storeResult(AbiType type, Object value, long pointer) {
    store(type, value, checkedPointer(pointer, type.size(), type.alignment()));
  }

  /** A core value as the unsigned 32-bit or 64-bit number its slot holds. */
  private static long narrow(long value, CoreType slot) {
    return slot == CoreType.I32 ? value & 0xFFFF_FFFFL : value;
  }
}
