// The dashboard in a real browser (started by TestDashboardInBrowser):
// sign in with the admin key, start a job on the demo project and watch it
// finish, send a follow-up, open a conversation and the feedback (a
// reader's and an agent's), find the conversation among the gaps,
// turn the gap into a job and see it linked, a form posted without its
// CSRF token refused, another organization's key seeing none of it, and
// sign-out ending the session. Every page is kept as screenshots, light and
// dark, desktop and phone. Input on stdin:
//   {chromium, base, adminKey, otherKey, threadId, question, jobPrompt, followUp, gapPrompt, artifacts}
// Prints {steps: [...], failure, console, statuses: {...}}.

import { launch, log, readInput } from './lib.mjs';

const input = await readInput();
const out = { steps: [], console: [], statuses: {} };
const timeout = 30_000;
const { context, close } = await launch(input);
const step = (s) => { out.steps.push(s); log('step', s); };

// shoot keeps the page in the four looks a reader may see it in.
async function shoot(page, name) {
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

async function waitStatus(page, status) {
  await page.locator(`#job-status:text-is("${status}")`).waitFor({ timeout });
}

try {
  const page = await context.newPage();
  page.on('console', (m) => { if (m.type() === 'error' || m.type() === 'warning') out.console.push(`${m.type()}: ${m.text()}`); });
  page.on('pageerror', (e) => out.console.push(`pageerror: ${e.message}`));
  page.on('dialog', (d) => d.accept());

  await page.goto(input.base + '/ui/');
  if (!page.url().endsWith('/ui/login')) throw new Error('signed out, /ui/ went to ' + page.url());
  await shoot(page, 'login');
  await page.fill('input[name=key]', 'svc_not_a_key');
  await page.click('button[type=submit]');
  await page.locator('.error').waitFor({ timeout });
  out.badKeyMessage = await page.locator('.error').textContent();
  await page.fill('input[name=key]', input.adminKey);
  await page.click('button[type=submit]');
  await page.waitForURL('**/ui/projects/demo/jobs', { timeout });
  step('signed in');
  const cookies = await context.cookies();
  out.cookie = cookies.find((c) => c.name === 'docsmith_session');

  // A job, watched live to the end.
  await page.fill('#prompt', input.jobPrompt);
  await page.click('#new-job button[type=submit]');
  await page.waitForURL(/\/ui\/projects\/demo\/jobs\/[0-9a-f-]{36}$/, { timeout });
  out.jobURL = page.url();
  out.sawLive = await page.locator('#live').count() > 0;
  await waitStatus(page, 'completed');
  out.timeline = await page.locator('#timeline li').allTextContents();
  out.files = await page.locator('.files li').allTextContents();
  step('job completed');
  await shoot(page, 'job');

  await page.fill('#followup', input.followUp);
  await page.click('form[action$="/message"] button[type=submit]');
  await page.locator('.messages > li').nth(1).waitFor({ timeout });
  await waitStatus(page, 'completed');
  await page.locator('.messages .t-done').nth(1).waitFor({ timeout });
  out.messages = await page.locator('.messages .prompt').allTextContents();
  step('follow-up done');

  await page.goto(input.base + '/ui/projects/demo/jobs');
  await shoot(page, 'jobs');

  // The conversation the reader had, rated down.
  await page.goto(input.base + '/ui/domains/demo/conversations');
  out.conversations = await page.locator('table.list tbody tr').allTextContents();
  await shoot(page, 'conversations');
  await page.goto(input.base + '/ui/domains/demo/conversations/' + input.threadId);
  out.transcript = await page.locator('.transcript').textContent();
  await shoot(page, 'transcript');
  await page.goto(input.base + '/ui/domains/demo/insights');
  out.insights = await page.locator('.stats').textContent();
  await shoot(page, 'insights');
  // The reader's rating and an agent's, over MCP, side by side.
  await page.goto(input.base + '/ui/domains/demo/feedback');
  out.feedback = await page.locator('table.list tbody tr').allTextContents();
  await shoot(page, 'feedback');

  // The gap, turned into a job in two clicks.
  await page.goto(input.base + '/ui/domains/demo/gaps');
  const gap = page.locator('article.gap', { hasText: input.question });
  await gap.waitFor({ timeout });
  await shoot(page, 'gaps');
  await gap.locator('a', { hasText: 'Gap → job' }).click();
  await page.waitForURL(/\/ui\/projects\/demo\/jobs\?/, { timeout });
  out.draft = await page.locator('#prompt').inputValue();
  await shoot(page, 'gap-draft');
  // The drafted prompt is editable; the demo's builtin model takes commands.
  if (input.gapPrompt) await page.fill('#prompt', input.gapPrompt);
  await page.click('#new-job button[type=submit]');
  await page.waitForURL(/\/ui\/projects\/demo\/jobs\/[0-9a-f-]{36}$/, { timeout });
  out.gapJobURL = page.url();
  await waitStatus(page, 'completed');
  await page.goto(input.base + '/ui/domains/demo/gaps');
  const linked = page.locator('article.gap', { hasText: input.question }).locator('.gap-job');
  await linked.first().waitFor({ timeout });
  out.gapJob = await linked.first().textContent();
  out.gapJobHref = await linked.first().locator('a').first().getAttribute('href');
  step('gap linked');
  await shoot(page, 'gaps-linked');

  await page.goto(input.base + '/ui/settings');
  await shoot(page, 'settings');

  // A form posted without its token: refused, nothing made.
  out.statuses.noCSRF = await page.evaluate(async () => {
    const r = await fetch('/ui/projects/demo/jobs', { method: 'POST', body: new URLSearchParams({ prompt: 'forged' }), redirect: 'manual' });
    return r.status;
  });
  out.statuses.wrongCSRF = await page.evaluate(async () => {
    const r = await fetch('/ui/projects/demo/jobs', { method: 'POST', body: new URLSearchParams({ prompt: 'forged', csrf: 'guess' }), redirect: 'manual' });
    return r.status;
  });

  // Another organization's key sees none of it.
  const second = await launch(input);
  const page2 = await second.context.newPage();
  await page2.goto(input.base + '/ui/login');
  await page2.fill('input[name=key]', input.otherKey);
  await page2.click('button[type=submit]');
  await page2.waitForURL(/\/ui\/(projects|settings)/, { timeout });
  out.otherLanding = page2.url();
  for (const path of ['/ui/projects/demo/jobs', new URL(out.jobURL).pathname, '/ui/domains/demo/conversations', '/ui/domains/demo/conversations/' + input.threadId, '/ui/domains/demo/gaps', '/ui/domains/demo/insights', '/ui/domains/demo/feedback']) {
    const r = await page2.goto(input.base + path);
    out.statuses['other ' + path] = r.status();
  }
  out.otherSettings = await (await page2.goto(input.base + '/ui/settings')).text();
  await shoot(page2, 'other-org-404');
  await second.close();

  // Sign-out ends the session: the old cookie opens nothing.
  const before = (await context.cookies()).find((c) => c.name === 'docsmith_session');
  await page.goto(input.base + '/ui/settings');
  await page.click('form[action="/ui/logout"] button');
  await page.waitForURL('**/ui/login', { timeout });
  await context.addCookies([before]);
  await page.goto(input.base + '/ui/settings');
  out.afterSignOut = new URL(page.url()).pathname;
  step('signed out');
} catch (err) {
  out.failure = String(err?.stack ?? err);
} finally {
  await close();
}
process.stdout.write(JSON.stringify(out));
