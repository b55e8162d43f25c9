// The gaps and insights pages once a gap closed with proof and another
// reopened (started by TestGapClosesWithProofWhenItsJobMerges): sign in
// with the admin key, read each gap's state and proof, and keep both pages
// as screenshots, light and dark, desktop and phone. Input on stdin:
//   {chromium, base, adminKey, domain, artifacts}
// Prints {states: [badge text of each gap], proofs: [text of each proof],
// answeredSinceClosed, failure, console}.

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
  for (const name of ['gaps', 'insights']) {
    await page.goto(`${input.base}/ui/domains/${input.domain}/${name}`);
    if (name === 'gaps') {
      await page.locator('section.proof.proved').first().waitFor({ timeout });
      out.states = await page.locator('article.gap h2 .badge').allInnerTexts();
      out.proofs = await page.locator('section.proof').allInnerTexts();
    } else {
      out.answeredSinceClosed = await page.locator('#answered-since-closed').innerText();
    }
    log('step', name + ' read');
    if (input.artifacts) {
      for (const scheme of ['light', 'dark']) {
        await page.emulateMedia({ colorScheme: scheme });
        for (const [device, size] of [['desktop', { width: 1280, height: 900 }], ['phone', { width: 390, height: 844 }]]) {
          await page.setViewportSize(size);
          await page.screenshot({ path: `${input.artifacts}/${name}-${scheme}-${device}.png`, fullPage: true });
        }
      }
    }
  }
} catch (e) {
  out.failure = String(e && e.stack || e);
} finally {
  await close();
}
process.stdout.write(JSON.stringify(out));
