package io.actionstate.cleanup;

import java.util.List;
import java.util.SortedMap;

/**
 * The plan from every retained recovery point (WIT {@code snapshots.retained-plan}, {@link
 * Cleanup#planRetained}): the per-partition minimum over every point found, and how it was
 * bounded. The plan records {@link #recorded}, the point that bounds every partition ({@link
 * #boundsEveryPartition}) or else the one that bounds the most.
 *
 * @param points every point planned, in discovery order, each with its own minimum offsets
 * @param boundedBy per partition, ascending: the minimum offset and the points holding it
 * @param incomplete {@code chk-N} folders with no {@code _metadata}: not recovery points
 * @param excluded the points found that an exclusion left out
 * @param unmatchedExclusions exclusions that named none of the points found
 * @param storeRequests folder listings and reads made
 * @param storeBytes bytes read
 */
public record RetainedPlan(
    Plan plan,
    List<Point> points,
    SortedMap<Integer, Bound> boundedBy,
    String recorded,
    boolean boundsEveryPartition,
    List<String> incomplete,
    List<String> excluded,
    List<String> unmatchedExclusions,
    long storeRequests,
    long storeBytes) {

  /** One recovery point found and planned: its own minimum offset per partition. */
  public record Point(String location, List<PartitionOffset> offsets) {}

  /** A partition's smallest offset over every point, and the locations of the points holding it. */
  public record Bound(long offset, List<String> points) {}
}
