package io.actionstate.cleanup;

/**
 * The plan of a snapshot's markers, read through a {@link SnapshotStore} (WIT
 * {@code snapshot-plan}): the plan, how many markers the operator stored, and what reading the
 * snapshot cost.
 */
public record SnapshotPlan(Plan plan, int markers, long storeRequests, long storeBytes) {}
