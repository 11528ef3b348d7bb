package io.actionstate.flinkjob;

import java.io.IOException;
import org.apache.flink.api.common.typeutils.SimpleTypeSerializerSnapshot;
import org.apache.flink.api.common.typeutils.TypeSerializerSnapshot;
import org.apache.flink.api.common.typeutils.base.TypeSerializerSingleton;
import org.apache.flink.core.memory.DataInputView;
import org.apache.flink.core.memory.DataOutputView;

/**
 * A test knob's serializer ({@link JobSettings#declinedSnapshots}): a boolean whose {@code true}
 * cannot be written. Flink writes operator state in the asynchronous part of a checkpoint, so a
 * {@code true} in a list state makes that subtask's write fail there, and Flink declines the
 * checkpoint while the task keeps running, the way a failing checkpoint store does. (An exception
 * in {@code snapshotState} itself would fail the task instead.) Copies work: Flink copies operator
 * state in the synchronous part.
 */
final class FailingWriteSerializer extends TypeSerializerSingleton<Boolean> {
  private static final long serialVersionUID = 1L;
  static final FailingWriteSerializer INSTANCE = new FailingWriteSerializer();
  static final String SENTENCE = "the action operator declines this checkpoint (declinedSnapshots)";

  @Override
  public boolean isImmutableType() {
    return true;
  }

  @Override
  public Boolean createInstance() {
    return Boolean.FALSE;
  }

  @Override
  public Boolean copy(Boolean from) {
    return from;
  }

  @Override
  public Boolean copy(Boolean from, Boolean reuse) {
    return from;
  }

  @Override
  public int getLength() {
    return 1;
  }

  @Override
  public void serialize(Boolean fail, DataOutputView target) throws IOException {
    if (fail) {
      throw new IOException("Subtask 0 of " + SENTENCE);
    }
    target.writeBoolean(false);
  }

  @Override
  public Boolean deserialize(DataInputView source) throws IOException {
    return source.readBoolean();
  }

  @Override
  public Boolean deserialize(Boolean reuse, DataInputView source) throws IOException {
    return deserialize(source);
  }

  @Override
  public void copy(DataInputView source, DataOutputView target) throws IOException {
    target.writeBoolean(source.readBoolean());
  }

  @Override
  public TypeSerializerSnapshot<Boolean> snapshotConfiguration() {
    return new Snapshot();
  }

  /** Flink's snapshot of this serializer; restores the singleton. */
  public static final class Snapshot extends SimpleTypeSerializerSnapshot<Boolean> {
    public Snapshot() {
      super(() -> INSTANCE);
    }
  }
}
