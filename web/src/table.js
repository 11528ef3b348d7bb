// The partition table of a checked plan: plan offsets alone, or next to the committed boundary.

/**
 * Rows shown before "Show all": enough to review, cheap to draw. 1,000 rows made laying out the
 * table most of a 10,000-partition plan's click-to-paint.
 */
export const FIRST_ROWS = 100;

/**
 * One row per plan partition: `{ partition, to, from? }` with bigint offsets. `from` is the
 * committed boundary (undefined when none was given or it lacks the partition).
 */
export function partitionRows(plan, advance, boundaryOffsets) {
  if (advance) return advance.map((a) => ({ partition: a.partition, from: a.from, to: a.to }));
  const boundary = boundaryOffsets ? new Map(boundaryOffsets.map((po) => [po.partition, po.offset])) : null;
  return plan.offsets.map((po) => ({
    partition: po.partition,
    to: po.offset,
    from: boundary ? boundary.get(po.partition) : undefined,
  }));
}

function cells(row, withBoundary) {
  if (!withBoundary) return `<td>${row.partition}</td><td>${row.to}</td>`;
  if (row.from === undefined) {
    return `<td>${row.partition}</td><td>—</td><td>${row.to}</td><td class="delta">not in boundary</td>`;
  }
  const delta = row.to - row.from;
  const shown = delta > 0n ? `+${delta}` : delta < 0n ? `−${-delta} (backwards)` : '0';
  return `<td>${row.partition}</td><td>${row.from}</td><td>${row.to}</td><td class="delta">${shown}</td>`;
}

function rowClass(row) {
  if (row.from === undefined) return '';
  return row.to > row.from ? 'forward' : row.to < row.from ? 'backward' : 'same';
}

/** Fills the table; returns how many rows are hidden behind "Show all". */
export function drawTable({ head, body, caption }, rows, withBoundary, limit = FIRST_ROWS) {
  head.innerHTML = withBoundary
    ? '<th scope="col">Partition</th><th scope="col">Committed boundary</th><th scope="col">Plan: first offset kept</th><th scope="col">Change</th>'
    : '<th scope="col">Partition</th><th scope="col">First offset kept (everything below may be deleted)</th>';
  const shown = rows.slice(0, limit);
  // Every interpolated value is a number or bigint, so building HTML text is safe here.
  body.innerHTML = shown
    .map((row) => `<tr class="${rowClass(row)}" data-partition="${row.partition}">${cells(row, withBoundary)}</tr>`)
    .join('');
  const n = rows.length.toLocaleString('en-US');
  caption.textContent =
    shown.length < rows.length
      ? `${n} partitions; the first ${shown.length.toLocaleString('en-US')} are shown.`
      : `${n} partition${rows.length === 1 ? '' : 's'}.`;
  return rows.length - shown.length;
}
