// Click-to-paint of the validator page in Chromium with a 10,000-partition plan: the page is
// served, the plan (about 300 KB) chosen as a file, then "Validate plan" clicked RUNS times.
// Per click: `clickToPaintMs`, from the click's input timestamp to a task queued by the next
// animation frame (which runs once that frame is rendered); `eventTimingMs`, Chromium's Event
// Timing `duration` (input to next paint, 8 ms granularity; clicks under its 16 ms threshold are
// reported as 16); and the style, layout and script time of the run from Chromium's metrics.
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
    window.__frames = [];
    // Capture phase: runs before the page's own click handler.
    document.getElementById('validate').addEventListener('click', (e) => {
      const input = e.timeStamp;
      requestAnimationFrame(() => setTimeout(() => window.__frames.push(performance.now() - input), 0));
    }, { capture: true });
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
  const validateMs = [Number(await page.getAttribute('#timing', 'data-ms'))];
  // Chromium's own phase totals (CDP Performance domain), read around the clicks.
  const cdp = await page.context().newCDPSession(page);
  await cdp.send('Performance.enable');
  const metrics = async () => Object.fromEntries((await cdp.send('Performance.getMetrics')).metrics.map((m) => [m.name, m.value]));
  const start = await metrics();
  for (let i = 0; i < runs; i += 1) {
    await page.evaluate(() => document.getElementById('verdict').removeAttribute('data-valid'));
    await page.click('#validate');
    await page.waitForSelector('#verdict[data-valid="true"]');
    validateMs.push(Number(await page.getAttribute('#timing', 'data-ms')));
    await page.waitForFunction((n) => window.__frames.length >= n, i + 1);
    // Event Timing entries arrive after the paint that ends the interaction (none under 16 ms).
    await page.waitForFunction((n) => window.__clicks.length >= n, i + 1, { timeout: 1000 }).catch(() => {});
  }
  const end = await metrics();
  await cdp.detach();
  const perClick = (name) => Math.round(((end[name] - start[name]) * 1000 * 10) / runs) / 10;
  const { clicks, frames } = await page.evaluate(() => ({ clicks: window.__clicks, frames: window.__frames }));
  // A click faster than the observer's 16 ms threshold leaves no entry: count it as 16 ms.
  const durations = Array.from({ length: runs }, (_, i) => clicks[i]?.duration ?? 16);
  const handlers = clicks.map((c) => c.processing);
  const round = (ms) => Math.round(ms * 10) / 10;
  return {
    runs,
    clickToPaintMs: frames.map(round),
    medianClickToPaintMs: round(median(frames)),
    eventTimingMs: durations,
    medianEventTimingMs: median(durations),
    handlerMs: handlers.map((ms) => Math.round(ms * 10) / 10),
    medianHandlerMs: handlers.length ? Math.round(median(handlers) * 10) / 10 : null,
    belowThreshold: runs - clicks.length,
    // Per click, from Chromium: style recalculation, layout, script (includes the component).
    perClickMs: { recalcStyle: perClick('RecalcStyleDuration'), layout: perClick('LayoutDuration'), script: perClick('ScriptDuration') },
    // The component's verify-plan alone (the page's #timing), first the file load, then each click.
    validateMs: validateMs.map((ms) => Math.round(ms * 10) / 10),
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
