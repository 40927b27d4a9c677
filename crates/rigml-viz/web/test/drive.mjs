// Drive the rigml web viewer in headless Chromium (used by crates/rigml-cli/tests/viewer.rs).
//
//   node drive.mjs URL OUT.png [--compare]
//
// Opens URL, waits for the page, reads the joint names, clicks the dot of the joint whose
// screen position is furthest from every other joint's (so the click cannot hit a neighbour),
// checks what the page then shows, plays the first clip if there is one, and with --compare
// switches to the difference view. Saves a screenshot to OUT.png and prints one JSON object
// with everything it saw; the Rust test makes the assertions. Chromium: $RIGML_CHROMIUM, else
// the Debian package's binary.

import { chromium } from 'playwright-core';
import { existsSync } from 'node:fs';

const [url, out, ...flags] = process.argv.slice(2);
if (!url || !out) {
  console.error('usage: node drive.mjs URL OUT.png [--compare]');
  process.exit(2);
}
const compare = flags.includes('--compare');
const candidates = [process.env.RIGML_CHROMIUM, '/usr/lib/chromium/chromium', '/usr/bin/chromium', '/usr/bin/chromium-browser'];
const executablePath = candidates.find((p) => p && existsSync(p));
if (!executablePath) {
  console.error('no chromium found (set RIGML_CHROMIUM)');
  process.exit(3);
}

const browser = await chromium.launch({
  executablePath,
  headless: true,
  args: [
    '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking',
    '--disable-component-update', '--disable-sync', '--use-angle=swiftshader', '--enable-unsafe-swiftshader',
  ],
});
const result = { errors: [] };
let phase = 'start';
try {
  const page = await browser.newPage({ viewport: { width: 1100, height: 720 } });
  page.on('console', (m) => {
    if (m.type() === 'error') result.errors.push(`console: ${m.text()}`);
  });
  page.on('pageerror', (e) => result.errors.push(`page: ${e.message}`));
  page.on('requestfailed', (r) => result.errors.push(`request failed [${phase}]: ${r.url()} (${r.failure() && r.failure().errorText})`));
  page.on('response', (r) => {
    if (r.status() >= 400) result.errors.push(`HTTP ${r.status()}: ${r.url()}`);
  });
  phase = 'goto';
  const t0 = Date.now();
  await page.goto(url);
  await page.waitForFunction(() => window.__rigml && (window.__rigml.ready || window.__rigml.errors.length), null, {
    timeout: 120000,
  });
  result.readyMs = Date.now() - t0;
  await page.waitForFunction(() => window.__rigml.frames() > 2, null, { timeout: 60000 });
  result.pageErrors = await page.evaluate(() => [...window.__rigml.errors]);
  result.status = await page.textContent('#status');
  result.joints = await page.evaluate(() => window.__rigml.joints());
  result.vertices = await page.evaluate(() => window.__rigml.meshVertices());
  result.weights = await page.evaluate(() => window.__rigml.weightStats());
  const box = await page.locator('canvas').boundingBox();
  const positions = (await page.evaluate(() => window.__rigml.jointScreenPositions())).filter(
    (p) => p.x > box.x + 5 && p.x < box.x + box.width - 5 && p.y > box.y + 5 && p.y < box.y + box.height - 5,
  );
  // The joint furthest (on screen) from all others.
  let target = null;
  for (const p of positions) {
    const gap = Math.min(...positions.filter((q) => q.name !== p.name).map((q) => Math.hypot(q.x - p.x, q.y - p.y)));
    if (!target || gap > target.gap) target = { ...p, gap };
  }
  if (!target) throw new Error('no joint is on screen');
  const position = await page.evaluate((name) => window.__rigml.jointScreenPos(name), target.name);
  result.before = await page.evaluate(() => ({ shown: window.__rigml.shownName(), checksum: window.__rigml.colourChecksum() }));
  phase = 'click';
  await page.mouse.click(position.x, position.y);
  await page.waitForFunction((name) => window.__rigml.shownName() === name, target.name, { timeout: 10000 }).catch(() => {});
  result.clicked = { name: target.name, x: position.x, y: position.y, gap_px: target.gap };
  result.after = await page.evaluate(() => ({
    shown: window.__rigml.shownName(),
    selected: window.__rigml.selected(),
    checksum: window.__rigml.colourChecksum(),
    readout: document.getElementById('weight-readout').textContent,
  }));
  if (await page.isVisible('#play')) {
    await page.click('#play');
    await page.waitForTimeout(800);
    result.clipTime = await page.evaluate(() => window.__rigml.clipTime());
    await page.click('#play');
  }
  await page.click('#fit');
  if (compare) {
    phase = 'compare';
    await page.selectOption('#show', 'diff');
    await page.waitForTimeout(200);
    result.difference = await page.textContent('#weight-readout');
    result.diffChecksum = await page.evaluate(() => window.__rigml.colourChecksum());
  }
  // Share of the canvas not showing the background: the model was drawn.
  result.drawn = await page.evaluate(() => {
    const source = document.querySelector('canvas');
    const c = document.createElement('canvas');
    c.width = source.width;
    c.height = source.height;
    const g = c.getContext('2d');
    g.drawImage(source, 0, 0);
    const data = g.getImageData(0, 0, c.width, c.height).data;
    let drawn = 0;
    for (let i = 0; i < data.length; i += 4) {
      if (Math.abs(data[i] - 0x20) + Math.abs(data[i + 1] - 0x23) + Math.abs(data[i + 2] - 0x2a) > 12) drawn++;
    }
    return drawn / (data.length / 4);
  });
  phase = 'screenshot';
  await page.screenshot({ path: out });
  phase = 'done';
  result.screenshot = out;
} catch (e) {
  result.errors.push(`driver: ${e.message}`);
} finally {
  phase = 'close';
  await browser.close();
}
console.log(JSON.stringify(result));
