// A domain's answer checks on the dashboard (started by
// TestDashboardChecksInBrowser): sign in with the admin key, open the
// checks page, pin the check from a rated-up answer, edit what its answer
// must contain, drop the gap's check, then read the gaps page's regression
// alert and follow it to the run. Screenshots, light and dark, desktop and
// phone. Input on stdin: {chromium, base, adminKey, artifacts, domain}
// Prints {listed, pinned, edited, dropped, gapsAlert, alertHref, runPage,
// failure, console}.

import { launch, log, readInput } from './lib.mjs';

const input = await readInput();
const out = { console: [] };
const timeout = 30_000;
const { context, close } = await launch(input);

async function shots(page, name) {
  if (!input.artifacts) return;
  for (const scheme of ['light', 'dark']) {
    await page.emulateMedia({ colorScheme: scheme });
    for (const [device, size] of [['desktop', { width: 1280, height: 900 }], ['phone', { width: 390, height: 844 }]]) {
      await page.setViewportSize(size);
      await page.screenshot({ path: `${input.artifacts}/${name}-${scheme}-${device}.png`, fullPage: true });
    }
  }
  await page.emulateMedia({ colorScheme: 'light' });
  await page.setViewportSize({ width: 1280, height: 900 });
}

try {
  const page = await context.newPage();
  page.on('console', (m) => { if (m.type() === 'error' || m.type() === 'warning') out.console.push(`${m.type()}: ${m.text()}`); });
  page.on('pageerror', (e) => out.console.push(`pageerror: ${e.message}`));
  await page.goto(input.base + '/ui/login');
  await page.fill('input[name=key]', input.adminKey);
  await page.click('button[type=submit]');
  await page.waitForURL('**/ui/projects/**', { timeout });

  await page.click(`nav.main a[href="/ui/domains/${input.domain}/checks"]`);
  await page.waitForURL(`**/ui/domains/${input.domain}/checks`, { timeout });
  await page.locator('article.check').first().waitFor({ timeout });
  out.listed = await page.locator('article.check').allInnerTexts();
  await shots(page, 'checks');
  log('step', 'checks listed');

  const upvoted = page.locator('article.check', { has: page.locator('.badge.f-up') }).first();
  const id = await upvoted.getAttribute('id');
  await upvoted.getByRole('button', { name: 'Pin' }).click();
  await page.waitForURL('**flash=check-pinned**', { timeout });
  out.pinned = await page.locator(`#${id}`).innerText();
  log('step', 'pinned');

  const check = page.locator(`#${id}`);
  await check.locator('summary', { hasText: 'Edit' }).click();
  await check.locator('input[name=contains]').fill('quill init');
  await shots(page, 'checks-edit');
  await check.getByRole('button', { name: 'Save' }).click();
  await page.waitForURL('**flash=check-saved**', { timeout });
  out.edited = await page.locator(`#${id}`).innerText();
  log('step', 'edited');

  const gap = page.locator('article.check', { has: page.locator('.badge.r-not_covered') }).first();
  await gap.getByRole('button', { name: 'Drop' }).click();
  await page.waitForURL('**flash=check-dropped**', { timeout });
  await page.locator('details.dropped').evaluate((d) => { d.open = true; });
  out.dropped = await page.locator('details.dropped').innerText();
  await shots(page, 'checks-after');
  log('step', 'dropped');

  await page.goto(`${input.base}/ui/domains/${input.domain}/gaps`);
  const alert = page.locator('section.alert.regressed');
  await alert.waitFor({ timeout });
  out.gapsAlert = await alert.innerText();
  out.alertHref = await alert.locator('a.button').getAttribute('href');
  await shots(page, 'gaps-alert');
  await alert.getByRole('link', { name: 'See the run' }).click();
  await page.waitForURL('**/checks/runs/**', { timeout });
  for (const d of await page.locator('details.answer').all()) await d.locator('summary').click();
  out.runPage = await page.locator('main').innerText();
  await shots(page, 'run');
  log('step', 'run read');
} catch (e) {
  out.failure = String(e && e.stack || e);
} finally {
  await close();
}
process.stdout.write(JSON.stringify(out));
