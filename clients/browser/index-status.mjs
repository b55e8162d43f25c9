// A domain's search index on the dashboard's settings page (started by
// TestDashboardShowsIndexStatus): sign in with the admin key, open the
// settings, read each domain's index facts, and keep the page as
// screenshots, light and dark, desktop and phone. Input on stdin:
//   {chromium, base, adminKey, artifacts, name}
// Prints {index: [text of each domain's index facts], failure, console}.

import { launch, log, readInput } from './lib.mjs';

const input = await readInput();
const out = { console: [] };
const timeout = 30_000;
const { context, close } = await launch(input);

try {
  const page = await context.newPage();
  page.on('console', (m) => { if (m.type() === 'error' || m.type() === 'warning') out.console.push(`${m.type()}: ${m.text()}`); });
  page.on('pageerror', (e) => out.console.push(`pageerror: ${e.message}`));
  await page.goto(input.base + '/ui/login');
  await page.fill('input[name=key]', input.adminKey);
  await page.click('button[type=submit]');
  await page.waitForURL('**/ui/projects/**', { timeout });
  await page.goto(input.base + '/ui/settings');
  await page.locator('dl.facts.index').first().waitFor({ timeout });
  out.index = await page.locator('dl.facts.index').allInnerTexts();
  log('step', 'settings read');
  if (input.artifacts) {
    const card = page.locator('dl.facts.index').first();
    for (const scheme of ['light', 'dark']) {
      await page.emulateMedia({ colorScheme: scheme });
      for (const [device, size] of [['desktop', { width: 1280, height: 900 }], ['phone', { width: 390, height: 844 }]]) {
        await page.setViewportSize(size);
        await card.scrollIntoViewIfNeeded();
        await page.screenshot({ path: `${input.artifacts}/${input.name}-${scheme}-${device}.png` });
      }
    }
  }
} catch (e) {
  out.failure = String(e && e.stack || e);
} finally {
  await close();
}
process.stdout.write(JSON.stringify(out));
