package io.actionstate.cleanup.internal;

import com.dylibso.chicory.runtime.ConstantEvaluators;
import com.dylibso.chicory.runtime.Instance;
import com.dylibso.chicory.runtime.Memory;
import com.dylibso.chicory.runtime.WasmRuntimeException;
import com.dylibso.chicory.wasm.ChicoryException;
import com.dylibso.chicory.wasm.UninstantiableException;
import com.dylibso.chicory.wasm.types.ActiveDataSegment;
import com.dylibso.chicory.wasm.types.DataSegment;
import com.dylibso.chicory.wasm.types.MemoryLimits;
import com.dylibso.chicory.wasm.types.PassiveDataSegment;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.nio.ByteOrder;
import java.util.Arrays;
import java.util.function.Function;

/**
 * A component's linear memory as one Java array, for its single-threaded core module.
 *
 * <p>Why not Chicory's {@code ByteArrayMemory}: that keeps the memory in 64 KiB pages and reads
 * a word through a {@code VarHandle}. Every guest load and store is a call the compiled module
 * makes, and HotSpot inlines calls into a method only up to a budget of bytecode
 * ({@code DesiredMethodLimit}, 8,000 bytes counted with everything inlined): the
 * {@code VarHandle} machinery counts a few hundred bytes per access, so in the guest's larger
 * hot functions (the plan decoder's loop, SHA-256) most accesses were left as real calls. Here an
 * access is an index check and array reads, a few dozen bytes of bytecode: bytes, shorts and
 * 32-bit words are assembled from their bytes (little-endian, as WebAssembly stores them; SHA-256
 * alone has 40 such loads). 64-bit words, at few sites and eight byte reads each otherwise, go
 * through one {@code VarHandle} view of the array after the same index check.
 *
 * <p>Out-of-range accesses throw Chicory's {@link WasmRuntimeException} ("out of bounds memory
 * access"), a trap as with Chicory's memories: the bound is the memory's size, not the array's.
 * Growing copies the memory into a larger array when it does not fit, at least doubling it, so
 * that a guest growing a page at a time does not copy its memory once per page.
 * Shared memory and the atomic wait/notify instructions are not supported (the components use
 * neither; instantiating a module with shared memory fails).
 */
public final class FlatMemory implements Memory {
  /** 64-bit little-endian words of a byte array (bounds checked here before every use). */
  private static final VarHandle LONGS =
      MethodHandles.byteArrayViewVarHandle(long[].class, ByteOrder.LITTLE_ENDIAN);
  private final MemoryLimits limits;
  /** The memory, and beyond {@link #memorySize} zeros it may grow into. */
  private byte[] bytes;
  /** The memory's size in bytes: every access ends at or below it. */
  private int memorySize;
  private DataSegment[] dataSegments;

  public FlatMemory(MemoryLimits limits) {
    if (limits.shared()) {
      throw new IllegalArgumentException(
          "FlatMemory holds unshared memories only; this module declares a shared one");
    }
    this.limits = limits;
    this.memorySize = Memory.bytes(limits.initialPages());
    this.bytes = new byte[memorySize];
  }

  // --- size ----------------------------------------------------------------------------------

  @Override
  public int pages() {
    return memorySize / PAGE_SIZE;
  }

  @Override
  public int grow(int pages) {
    int before = pages();
    long after = (long) before + pages;
    if (pages < 0 || after > maximumPages()) {
      return -1;
    }
    int grown = (int) after * PAGE_SIZE;
    if (grown > bytes.length) {
      long doubled = Math.max(2L * bytes.length, grown);
      bytes = Arrays.copyOf(bytes, (int) Math.min(doubled, Memory.bytes(maximumPages())));
    }
    // Memory past the old size is zero: a fresh array, or never written (zero() and fill stay
    // within the size).
    memorySize = grown;
    return before;
  }

  @Override
  public int initialPages() {
    return limits.initialPages();
  }

  @Override
  public int maximumPages() {
    return Math.min(limits.maximumPages(), RUNTIME_MAX_PAGES);
  }

  @Override
  public boolean shared() {
    return false;
  }

  // --- threads (unshared memory: none). Abstract in Chicory 1.7.5 though marked for removal. --

  @Override
  @SuppressWarnings("removal")
  public Object lock(int address) {
    throw new UnsupportedOperationException("FlatMemory is not shared");
  }

  @Override
  @SuppressWarnings("removal")
  public int waitOn(int address, int expected, long timeout) {
    throw new UnsupportedOperationException("FlatMemory is not shared");
  }

  @Override
  @SuppressWarnings("removal")
  public int waitOn(int address, long expected, long timeout) {
    throw new UnsupportedOperationException("FlatMemory is not shared");
  }

  @Override
  @SuppressWarnings("removal")
  public int notify(int address, int maxThreads) {
    // Nobody can wait on an unshared memory: no thread woken (WebAssembly threads semantics).
    checkRange(address, 4);
    return 0;
  }

  // --- data segments -------------------------------------------------------------------------

  @Override
  public void initialize(Instance instance, DataSegment[] dataSegments) {
    initialize(instance, dataSegments, 0);
  }

  @Override
  public void initialize(Instance instance, DataSegment[] dataSegments, int memoryIndex) {
    this.dataSegments = dataSegments;
    if (dataSegments == null) {
      return;
    }
    for (DataSegment segment : dataSegments) {
      if (segment instanceof ActiveDataSegment active) {
        if (active.index() != memoryIndex) {
          continue;
        }
        int offset =
            (int) ConstantEvaluators.computeConstantValue(instance, active.offsetInstructions())[0];
        byte[] data = active.data();
        check(offset, data.length, memorySize, UninstantiableException::new);
        System.arraycopy(data, 0, bytes, offset, data.length);
      } else if (!(segment instanceof PassiveDataSegment)) {
        throw new ChicoryException("a data segment is neither active nor passive: " + segment);
      }
    }
  }

  @Override
  public void initPassiveSegment(int segmentId, int dest, int offset, int size) {
    write(dest, dataSegments[segmentId].data(), offset, size);
  }

  @Override
  public void drop(int segment) {
    dataSegments[segment] = PassiveDataSegment.EMPTY;
  }

  // --- bulk ----------------------------------------------------------------------------------

  @Override
  public void write(int addr, byte[] data, int offset, int size) {
    check(offset, size, data.length, WasmRuntimeException::new);
    checkRange(addr, size);
    System.arraycopy(data, offset, bytes, addr, size);
  }

  @Override
  public byte[] readBytes(int addr, int len) {
    checkRange(addr, len);
    return Arrays.copyOfRange(bytes, addr, addr + len);
  }

  @Override
  public void copy(int dest, int src, int size) {
    checkRange(dest, size);
    checkRange(src, size);
    // System.arraycopy copies overlapping ranges as if through a temporary copy.
    System.arraycopy(bytes, src, bytes, dest, size);
  }

  @Override
  public void fill(byte value, int fromIndex, int toIndex) {
    checkRange(fromIndex, toIndex - fromIndex);
    Arrays.fill(bytes, fromIndex, toIndex, value);
  }

  @Override
  public void zero() {
    Arrays.fill(bytes, 0, memorySize, (byte) 0);
  }

  // --- loads and stores (the compiled module's hot path: keep them small) ---------------------

  @Override
  public byte read(int addr) {
    byte[] b = bytes;
    if (addr < 0 || addr >= memorySize) {
      throw outOfBounds(addr, 1);
    }
    return b[addr];
  }

  @Override
  public void writeByte(int addr, byte data) {
    byte[] b = bytes;
    if (addr < 0 || addr >= memorySize) {
      throw outOfBounds(addr, 1);
    }
    b[addr] = data;
  }

  @Override
  public short readShort(int addr) {
    byte[] b = bytes;
    if (addr < 0 || addr > memorySize - 2) {
      throw outOfBounds(addr, 2);
    }
    return (short) ((b[addr] & 0xFF) | b[addr + 1] << 8);
  }

  @Override
  public long readU16(int addr) {
    return readShort(addr) & 0xFFFFL;
  }

  @Override
  public void writeShort(int addr, short data) {
    byte[] b = bytes;
    if (addr < 0 || addr > memorySize - 2) {
      throw outOfBounds(addr, 2);
    }
    b[addr] = (byte) data;
    b[addr + 1] = (byte) (data >> 8);
  }

  @Override
  public int readInt(int addr) {
    byte[] b = bytes;
    if (addr < 0 || addr > memorySize - 4) {
      throw outOfBounds(addr, 4);
    }
    return (b[addr] & 0xFF)
        | (b[addr + 1] & 0xFF) << 8
        | (b[addr + 2] & 0xFF) << 16
        | b[addr + 3] << 24;
  }

  @Override
  public void writeI32(int addr, int data) {
    byte[] b = bytes;
    if (addr < 0 || addr > memorySize - 4) {
      throw outOfBounds(addr, 4);
    }
    b[addr] = (byte) data;
    b[addr + 1] = (byte) (data >> 8);
    b[addr + 2] = (byte) (data >> 16);
    b[addr + 3] = (byte) (data >> 24);
  }

  @Override
  public long readLong(int addr) {
    byte[] b = bytes;
    if (addr < 0 || addr > memorySize - 8) {
      throw outOfBounds(addr, 8);
    }
    return (long) LONGS.get(b, addr);
  }

  @Override
  public void writeLong(int addr, long data) {
    byte[] b = bytes;
    if (addr < 0 || addr > memorySize - 8) {
      throw outOfBounds(addr, 8);
    }
    LONGS.set(b, addr, data);
  }

  @Override
  public void writeF32(int addr, float data) {
    writeI32(addr, Float.floatToRawIntBits(data));
  }

  @Override
  public long readF32(int addr) {
    return readInt(addr);
  }

  @Override
  public float readFloat(int addr) {
    return Float.intBitsToFloat(readInt(addr));
  }

  @Override
  public void writeF64(int addr, double data) {
    writeLong(addr, Double.doubleToRawLongBits(data));
  }

  @Override
  public double readDouble(int addr) {
    return Double.longBitsToDouble(readLong(addr));
  }

  @Override
  public long readF64(int addr) {
    return readLong(addr);
  }

  // --- bounds --------------------------------------------------------------------------------

  private void checkRange(int addr, int length) {
    check(addr, length, memorySize, WasmRuntimeException::new);
  }

  private static void check(
      int addr, int size, int limit, Function<String, ? extends ChicoryException> failure) {
    if (addr < 0 || size < 0 || (long) addr + size > limit) {
      throw failure.apply(
          "out of bounds memory access: attempted to access address: "
              + addr
              + " but limit is: "
              + limit
              + " and size: "
              + size);
    }
  }

  private WasmRuntimeException outOfBounds(int addr, int size) {
    return new WasmRuntimeException(
        "out of bounds memory access: attempted to access address: "
            + addr
            + " but limit is: "
            + memorySize
            + " and size: "
            + size);
  }
}
