package io.actionstate.cleanup.internal;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.dylibso.chicory.runtime.ByteArrayMemory;
import com.dylibso.chicory.runtime.Memory;
import com.dylibso.chicory.runtime.WasmRuntimeException;
import com.dylibso.chicory.wasm.types.MemoryLimits;
import java.util.List;
import java.util.Random;
import java.util.function.Consumer;
import org.junit.jupiter.api.Test;

/**
 * {@link FlatMemory} behaves as Chicory's own {@link ByteArrayMemory}: the same bytes after the
 * same stores (little-endian, at every alignment, across the 64 KiB page boundaries that memory
 * has and this one does not), the same values loaded, the same growth, and a trap for every
 * access that leaves the memory.
 */
class FlatMemoryTest {
  private static final MemoryLimits LIMITS = new MemoryLimits(2, 4);

  @Test
  void loadsAndStoresAgreeWithChicorysMemoryAtEveryWidthAndAlignment() {
    Memory flat = new FlatMemory(LIMITS);
    Memory chicory = new ByteArrayMemory(LIMITS);
    Random random = new Random(23);
    int size = 2 * Memory.PAGE_SIZE;
    for (int i = 0; i < 200_000; i++) {
      // Mostly near the page boundary, where a paged memory splits a word.
      int addr =
          random.nextBoolean()
              ? Memory.PAGE_SIZE - 12 + random.nextInt(24)
              : random.nextInt(size - 8);
      long value = random.nextLong();
      Consumer<Memory> store =
          switch (random.nextInt(7)) {
            case 0 -> m -> m.writeByte(addr, (byte) value);
            case 1 -> m -> m.writeShort(addr, (short) value);
            case 2 -> m -> m.writeI32(addr, (int) value);
            case 3 -> m -> m.writeLong(addr, value);
            case 4 -> m -> m.writeF32(addr, Float.intBitsToFloat((int) value));
            case 5 -> m -> m.writeF64(addr, Double.longBitsToDouble(value));
            default -> m -> m.write(addr, new byte[] {(byte) value, (byte) (value >> 8)}, 0, 2);
          };
      store.accept(flat);
      store.accept(chicory);
      int at = Memory.PAGE_SIZE - 12 + random.nextInt(24);
      assertEquals(chicory.read(at), flat.read(at), "byte at " + at);
      assertEquals(chicory.readShort(at), flat.readShort(at), "short at " + at);
      assertEquals(chicory.readU16(at), flat.readU16(at), "u16 at " + at);
      assertEquals(chicory.readInt(at), flat.readInt(at), "int at " + at);
      assertEquals(chicory.readLong(at), flat.readLong(at), "long at " + at);
      assertEquals(chicory.readF32(at), flat.readF32(at), "f32 bits at " + at);
      assertEquals(chicory.readF64(at), flat.readF64(at), "f64 bits at " + at);
    }
    assertArrayEquals(chicory.readBytes(0, size), flat.readBytes(0, size));
  }

  @Test
  void copyFillAndGrowAgreeWithChicorysMemory() {
    Memory flat = new FlatMemory(LIMITS);
    Memory chicory = new ByteArrayMemory(LIMITS);
    for (Memory m : List.of(flat, chicory)) {
      for (int i = 0; i < 3000; i++) {
        m.writeByte(Memory.PAGE_SIZE - 1500 + i, (byte) (i * 7));
      }
      m.copy(Memory.PAGE_SIZE - 1000, Memory.PAGE_SIZE - 1500, 2000); // overlapping, forward
      m.copy(Memory.PAGE_SIZE - 1600, Memory.PAGE_SIZE - 1200, 900); // overlapping, backward
      m.fill((byte) 0x5A, Memory.PAGE_SIZE - 10, Memory.PAGE_SIZE + 10);
      assertEquals(2, m.grow(1));
      assertEquals(3, m.grow(0));
      assertEquals(-1, m.grow(2), "beyond the maximum of 4 pages");
      assertEquals(3, m.pages());
    }
    assertArrayEquals(
        chicory.readBytes(0, 3 * Memory.PAGE_SIZE), flat.readBytes(0, 3 * Memory.PAGE_SIZE));
    assertEquals(0, flat.readLong(3 * Memory.PAGE_SIZE - 8), "grown memory is zero");
  }

  @Test
  void growingAPageAtATimeKeepsTheBoundAtTheSizeNotTheArray() {
    Memory flat = new FlatMemory(new MemoryLimits(1, 64));
    for (int pages = 1; pages < 64; pages++) {
      int end = pages * Memory.PAGE_SIZE;
      assertThrows(WasmRuntimeException.class, () -> flat.read(end));
      assertThrows(WasmRuntimeException.class, () -> flat.readLong(end - 7));
      flat.writeByte(end - 1, (byte) pages);
      assertEquals(pages, flat.grow(1));
      assertEquals(0, flat.readLong(end), "a grown page is zero");
      assertEquals((byte) pages, flat.read(end - 1), "growing keeps what was there");
    }
    assertEquals(-1, flat.grow(1), "beyond the maximum of 64 pages");
    assertEquals(64, flat.pages());
  }

  @Test
  void everyAccessOutsideTheMemoryTraps() {
    Memory flat = new FlatMemory(LIMITS);
    int end = flat.pages() * Memory.PAGE_SIZE;
    List<Consumer<Integer>> oneByte = List.of(a -> flat.read(a), a -> flat.writeByte(a, (byte) 1));
    List<Consumer<Integer>> wider =
        List.of(
            a -> flat.readShort(a),
            a -> flat.readInt(a),
            a -> flat.readLong(a),
            a -> flat.writeShort(a, (short) 1),
            a -> flat.writeI32(a, 1),
            a -> flat.writeLong(a, 1L),
            a -> flat.readBytes(a, 9),
            a -> flat.write(a, new byte[9], 0, 9),
            a -> flat.copy(a, 0, 9),
            a -> flat.copy(0, a, 9),
            a -> flat.fill((byte) 1, a, a + 9));
    for (int addr : new int[] {end, Integer.MAX_VALUE, -1, Integer.MIN_VALUE}) {
      for (Consumer<Integer> access : oneByte) {
        assertTraps(() -> access.accept(addr));
      }
      for (Consumer<Integer> access : wider) {
        assertTraps(() -> access.accept(addr));
      }
    }
    // Starting at the last byte, every access wider than a byte runs past the end.
    for (Consumer<Integer> access : wider) {
      assertTraps(() -> access.accept(end - 1));
    }
    // The last byte, and the last word ending exactly at the end, are inside.
    flat.writeByte(end - 1, (byte) 9);
    assertEquals(9, flat.read(end - 1));
    flat.writeLong(end - 8, -1L);
    assertEquals(-1L, flat.readLong(end - 8));
  }

  private static void assertTraps(org.junit.jupiter.api.function.Executable access) {
    var trap = assertThrows(WasmRuntimeException.class, access);
    assertTrue(trap.getMessage().startsWith("out of bounds memory access"), trap.getMessage());
  }
}
