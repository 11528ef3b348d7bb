package io.actionstate.cleanup.internal;

import java.util.ArrayList;
import java.util.List;

/**
 * A component-model value type with its canonical ABI layout: size and alignment in linear
 * memory, and its flattening into core WebAssembly parameters and results. Values of these types
 * cross as plain Java objects (see {@link CanonicalAbi}).
 */
public sealed interface AbiType {
  /** Byte size in linear memory (already a multiple of {@link #alignment()}). */
  int size();

  /** Byte alignment in linear memory. */
  int alignment();

  /** The core value types this type flattens to, in order. */
  List<CoreType> flat();

  /** The two core number types a flattened component value travels as. */
  enum CoreType {
    I32,
    I64
  }

  /**
   * Integer and boolean primitives; Java values are {@code Boolean} or {@code Long} (unsigned
   * types zero-extended, {@code S32} sign-extended; {@code S64} and {@code U64} are the same
   * 64 bits, read as a Java {@code long}).
   */
  enum Prim implements AbiType {
    BOOL(1),
    U8(1),
    U16(2),
    U32(4),
    S32(4),
    U64(8),
    S64(8);

    private final int bytes;

    Prim(int bytes) {
      this.bytes = bytes;
    }

    @Override
    public int size() {
      return bytes;
    }

    @Override
    public int alignment() {
      return bytes;
    }

    @Override
    public List<CoreType> flat() {
      return List.of(bytes == 8 ? CoreType.I64 : CoreType.I32);
    }
  }

  /** A UTF-8 string: pointer and byte length. Java values are {@code String}. */
  record Str() implements AbiType {
    @Override
    public int size() {
      return 8;
    }

    @Override
    public int alignment() {
      return 4;
    }

    @Override
    public List<CoreType> flat() {
      return List.of(CoreType.I32, CoreType.I32);
    }
  }

  /** A list: pointer and element count. Java values are {@code List<Object>}. */
  record ListOf(AbiType element) implements AbiType {
    @Override
    public int size() {
      return 8;
    }

    @Override
    public int alignment() {
      return 4;
    }

    @Override
    public List<CoreType> flat() {
      return List.of(CoreType.I32, CoreType.I32);
    }
  }

  /**
   * A resource handle, {@code own<r>} or {@code borrow<r>}: one {@code i32}. Java values are
   * {@code Long}. Handles of resources the host implements index the host's table; a borrow of a
   * resource the component exports carries the component's representation.
   */
  record Handle(String resource, boolean own) implements AbiType {
    @Override
    public int size() {
      return 4;
    }

    @Override
    public int alignment() {
      return 4;
    }

    @Override
    public List<CoreType> flat() {
      return List.of(CoreType.I32);
    }
  }

  /**
   * A record: Java values are {@code Object[]}, one element per field in declaration order. Its
   * layout is computed once, at construction (lifting a list of 10,000 records asks for it 10,000
   * times).
   */
  final class Record implements AbiType {
    private final List<AbiType> fields;
    private final int[] offsets;
    private final int size;
    private final int alignment;
    private final List<CoreType> flat;

    public Record(List<AbiType> fields) {
      this.fields = List.copyOf(fields);
      int align = 1;
      for (AbiType field : this.fields) {
        align = Math.max(align, field.alignment());
      }
      this.alignment = align;
      this.offsets = new int[this.fields.size()];
      int offset = 0;
      List<CoreType> flatTypes = new ArrayList<>();
      for (int i = 0; i < this.fields.size(); i++) {
        AbiType field = this.fields.get(i);
        offset = align(offset, field.alignment());
        offsets[i] = offset;
        offset += field.size();
        flatTypes.addAll(field.flat());
      }
      this.size = align(offset, align);
      this.flat = List.copyOf(flatTypes);
    }

    public List<AbiType> fields() {
      return fields;
    }

    @Override
    public int size() {
      return size;
    }

    @Override
    public int alignment() {
      return alignment;
    }

    @Override
    public List<CoreType> flat() {
      return flat;
    }

    /** Offset of field {@code index} from the start of the record. */
    public int fieldOffset(int index) {
      return offsets[index];
    }

    @Override
    public boolean equals(Object o) {
      return o instanceof Record r && r.fields.equals(fields);
    }

    @Override
    public int hashCode() {
      return fields.hashCode();
    }

    @Override
    public String toString() {
      return "Record" + fields;
    }
  }

  /**
   * A variant; enums, options and results are variants too. Java values are {@link Case}. A
   * case without payload has a {@code null} type.
   */
  final class Variant implements AbiType {
    private final List<AbiType> cases;
    private final List<CoreType> flat;

    /** {@code cases} may hold {@code null} for a case without payload. */
    public Variant(List<AbiType> cases) {
      this.cases = java.util.Collections.unmodifiableList(new ArrayList<>(cases));
      this.flat = List.copyOf(computeFlat());
    }

    public List<AbiType> cases() {
      return cases;
    }

    @Override
    public boolean equals(Object o) {
      return o instanceof Variant v && v.cases.equals(cases);
    }

    @Override
    public int hashCode() {
      return cases.hashCode();
    }

    @Override
    public String toString() {
      return "Variant" + cases;
    }

    @Override
    public List<CoreType> flat() {
      return flat;
    }

    /** An enum of {@code n} cases: a variant whose cases carry nothing. */
    public static Variant enumOf(int n) {
      List<AbiType> cases = new ArrayList<>();
      for (int i = 0; i < n; i++) {
        cases.add(null);
      }
      return new Variant(cases);
    }

    /** {@code option<t>}: case 0 is none, case 1 is some. */
    public static Variant option(AbiType some) {
      List<AbiType> cases = new ArrayList<>();
      cases.add(null);
      cases.add(some);
      return new Variant(cases);
    }

    /** {@code result<ok, err>}: case 0 is ok, case 1 is err; either may be {@code null}. */
    public static Variant result(AbiType ok, AbiType err) {
      List<AbiType> cases = new ArrayList<>();
      cases.add(ok);
      cases.add(err);
      return new Variant(cases);
    }

    /** The discriminant's primitive type, by case count. */
    public Prim discriminant() {
      int n = cases.size();
      if (n <= 1 << 8) {
        return Prim.U8;
      }
      if (n <= 1 << 16) {
        return Prim.U16;
      }
      return Prim.U32;
    }

    private int maxCaseAlignment() {
      int alignment = 1;
      for (AbiType c : cases) {
        if (c != null) {
          alignment = Math.max(alignment, c.alignment());
        }
      }
      return alignment;
    }

    /** Offset of the payload from the start of the variant. */
    public int payloadOffset() {
      return align(discriminant().size(), maxCaseAlignment());
    }

    @Override
    public int size() {
      int payload = 0;
      for (AbiType c : cases) {
        if (c != null) {
          payload = Math.max(payload, c.size());
        }
      }
      return align(payloadOffset() + payload, alignment());
    }

    @Override
    public int alignment() {
      return Math.max(discriminant().alignment(), maxCaseAlignment());
    }

    private List<CoreType> computeFlat() {
      List<CoreType> joined = new ArrayList<>();
      for (AbiType c : cases) {
        if (c == null) {
          continue;
        }
        List<CoreType> caseFlat = c.flat();
        for (int i = 0; i < caseFlat.size(); i++) {
          if (i < joined.size()) {
            if (joined.get(i) != caseFlat.get(i)) {
              joined.set(i, CoreType.I64);
            }
          } else {
            joined.add(caseFlat.get(i));
          }
        }
      }
      List<CoreType> flat = new ArrayList<>();
      flat.add(CoreType.I32);
      flat.addAll(joined);
      return flat;
    }
  }

  /** One case of a variant value: its index and payload ({@code null} when it has none). */
  record Case(int index, Object payload) {}

  /** Rounds {@code offset} up to a multiple of {@code alignment}. */
  static int align(int offset, int alignment) {
    return (offset + alignment - 1) / alignment * alignment;
  }
}
