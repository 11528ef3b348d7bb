// Click-to-paint of the validator page in Chromium with a 10,000-partition plan: the page is
// served, the plan (about 300 KB) chosen as a file, then "Validate plan" clicked RUNS times.
// Each click's time from the input event to the next paint comes from Chromium's Event Timing
// API (`duration`, 8 ms granularity), and its handler time from `processingEnd - processingStart`.
//
//   node scripts/measure-paint.mjs [RUNS] [ROOT]       (ROOT: the folder to serve, default web/)
//
// Prints JSON: per-click durations and medians. The browser test records the same numbers in
// test-artifacts/timing.json.
import { createHash } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

import { chromium } from 'playwright-core';

import { serve, WEB_ROOT } from './serve.mjs';

/** A canonical plan file of `partitions` partitions with a correct ID (built without the component). */
export function bigPlan(partitions = 10_000) {
  const source = 'savepoint-2025-06-01T12:00:00Z';
  const topic = 'orders-action-state';
  const topicId = 'Zm9vYmFyYmF6cXV4cXV1eA';
  const offsets = Array.from({ length: partitions }, (_, p) => [p, 1_000_000 + p * 37]);
  let canonical = `1\n${source}\n${topic}\n${topicId}\n`;
  for (const [p, o] of offsets) canonical += `${p}=${o}\n`;
  const planId = createHash('sha256').update(canonical, 'utf8').digest('hex');
  const text =
    `{\n  "schemaVersion" : 1,\n  "planId" : "${planId}",\n  "sourceRecoveryPoint" : ${JSON.stringify(source)},\n` +
    `  "topic" : ${JSON.stringify(topic)},\n  "topicId" : ${JSON.stringify(topicId)},\n  "offsets" : {\n` +
    `${offsets.map(([p, o]) => `    "${p}" : ${o}`).join(',\n')}\n  }\n}\n`;
  return { planId, text };
}

const median = (values) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)];
};

/**
 * Measures on an open page that shows the validator (its component loaded): chooses the plan as a
 * file, then clicks #validate `runs` times. Returns `{ clickToPaintMs, handlerMs, ... }`.
 */
export async function measureClickToPaint(page, { text, runs = 7 }) {
  await page.evaluate(() => {
    window.__clicks = [];
    new PerformanceObserver((list) => {
      for (const e of list.getEntries()) {
        if (e.name === 'click' && e.target?.id === 'validate') {
          window.__clicks.push({ duration: e.duration, processing: e.processingEnd - e.processingStart });
        }
      }
    }).observe({ type: 'event', durationThreshold: 16, buffered: false });
  });
  await page.setInputFiles('#plan-file', { name: 'plan-10000.json', mimeType: 'application/json', buffer: Buffer.from(text) });
  await page.waitForSelector('#verdict[data-valid="true"]');
  for (let i = 0; i < runs; i += 1) {
    await page.evaluate(() => document.getElementById('verdict').removeAttribute('data-valid'));
    await page.click('#validate');
    await page.waitForSelector('#verdict[data-valid="true"]');
    // Event Timing entries arrive after the paint that ends the interaction.
    await page.waitForFunction((n) => window.__clicks.length >= n, i + 1, { timeout: 10_000 }).catch(() => {});
  }
  const clicks = await page.evaluate(() => window.__clicks);
  // A click faster than the observer's 16 ms threshold leaves no entry: count it as 16 ms.
  const durations = Array.from({ length: runs }, (_, i) => clicks[i]?.duration ?? 16);
  const handlers = clicks.map((c) => c.processing);
  return {
    runs,
    clickToPaintMs: durations,
    medianClickToPaintMs: median(durations),
    handlerMs: handlers.map((ms) => Math.round(ms * 10) / 10),
    medianHandlerMs: handlers.length ? Math.round(median(handlers) * 10) / 10 : null,
    belowThreshold: runs - clicks.length,
  };
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const runs = Number(process.argv[2] ?? 7);
  const root = process.argv[3] ? resolve(process.argv[3]) : WEB_ROOT;
  const server = await serve({ root });
  const userDataDir = mkdtempSync(join(tmpdir(), 'asc-chromium-'));
  const context = await chromium.launchPersistentContext(userDataDir, {
    executablePath: process.env.CHROMIUM_PATH ?? '/usr/bin/chromium',
    headless: true,
    args: ['--no-sandbox', '--disable-gpu', '--no-first-run'],
    viewport: { width: 1100, height: 900 },
  });
  try {
    const page = await context.newPage();
    await page.goto(server.url);
    await page.waitForSelector('#engine[data-ready="true"]', { timeout: 30_000 });
    console.log(JSON.stringify(await measureClickToPaint(page, { text: bigPlan().text, runs }), null, 2));
  } finally {
    await context.close();
    await server.close();
    rmSync(userDataDir, { recursive: true, force: true });
  }
}
