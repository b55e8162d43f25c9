// Package workflow reads agent workflows from a docs repository, decides
// when scheduled ones are due, verifies forge push and pull request
// webhooks and matches pushes to the workflows they start. It holds no
// state and starts nothing itself: callers store slots and deliveries and
// start the jobs.
//
// # Workflow files
//
// A workflow is a Markdown file in .mintlify/workflows/ or
// .docsmith/workflows/ at the root of the docs repository, in the format
// Mintlify reads, so a team moving over keeps its files. YAML front matter
// configures it; the Markdown after it is the instruction the agent
// follows:
//
//	---
//	name: Update docs from code
//	on:
//	  push:
//	    - repo: acme/api
//	      branch: main
//	context:
//	  - repo: acme/api
//	automerge: false
//	---
//	Read the change and update the reference pages it affects.
//
// The keys:
//
//   - name (required): the display name, one line.
//   - on (required): exactly one trigger. Either cron: "0 9 * * 1", five
//     standard fields (minute, hour, day of month, month, day of week;
//     lists, ranges, steps, JAN-DEC and SUN-SAT names, 7 for Sunday), read
//     in the server's configured zone, UTC by default; or push: one entry
//     or a list of up to 10, each with repo: owner/name (GitLab subgroups
//     add segments) and an optional branch, the repository's default
//     branch when left out.
//   - context (optional): up to 10 entries of repo: owner/name, cloned
//     read-only for the agent to read.
//   - automerge (optional, default false): false opens a pull request,
//     true pushes to the base branch.
//
// A workflow's id is its file name without ".md": 1 to 64 letters, digits,
// '-' or '_', starting with a letter or digit. Unknown keys, repeated keys,
// YAML anchors and aliases, and an empty instruction are errors. Each
// error names the file, the line and the key (as in
// ".mintlify/workflows/a.md:4: on.cron: ..."); a file with any error is
// left out whole, and the others still load.
//
// When both directories hold a file with the same id, the one in
// .docsmith/workflows/ is used and records the path it overrides: a team
// can keep Mintlify's file as it is and give docsmith its own version. If
// the .docsmith file has errors, neither runs: the one it was meant to
// replace does not quietly take its place.
//
// The repository is written by whoever can push to it, so symbolic links
// (for a workflow file or any directory on the way to one) are refused,
// files over 64 KiB are refused, and a directory holding more than 100
// workflow files, or more than 1000 entries, loads nothing from it.
// Load reads any fs.FS rooted at the repository; an os.Root's FS over the
// checkout adds the kernel's confinement to these checks.
//
// # Schedules
//
// ParseSchedule reads a cron expression in a zone. Slots are wall clock
// times in that zone: a time skipped when clocks go forward runs when the
// gap ends, and a time that happens twice when clocks go back runs once,
// the first time. Schedule.Due returns the single slot to run now, the
// latest since the last one that ran, so slots missed while the server
// was down become one run rather than one per slot. Its Slot.Key (the
// workflow id and the slot's UTC time) is meant for a unique constraint in
// the store, which is what makes each slot start exactly once across
// replicas without electing a leader.
//
// # Webhooks
//
// ReadWebhook accepts pushes from GitHub (X-GitHub-Event, X-GitHub-Delivery,
// X-Hub-Signature-256: sha256=<hex HMAC-SHA256 of the body>), GitLab
// (X-Gitlab-Event: Push Hook, X-Gitlab-Event-UUID, X-Gitlab-Token equal to
// the secret) and Gitea or Forgejo (X-Gitea-Event or X-Forgejo-Event,
// their -Delivery header, and X-Gitea-Signature or X-Forgejo-Signature:
// <hex HMAC-SHA256>). GitLab's token is compared before the body is read;
// the HMAC is computed as the body is read, once, into a buffer that grows
// with what arrives and is refused past 5 MiB, and compared before the
// body is parsed; both comparisons take constant time. Every refusal made
// before a delivery is verified wraps ErrUnverified. Other events, tag
// pushes and branch deletions are genuine deliveries that start nothing,
// and say why. The delivery id and the push's commits are returned so the
// caller can refuse replays, under the same delivery id or a new one.
//
// Pull request events (GitHub's and Gitea's pull_request, GitLab's Merge
// Request Hook) are verified the same way and read into a PullRequest:
// its base repository, number, head commit and branches, whether the head
// is in a fork, and whether the action gave it a new head to check
// (opened, reopened, new commits; GitLab's update only with oldrev).
//
// # Matching
//
// Triggered picks the workflows a push starts, and Instruction builds the
// agent's instruction for one of them: the workflow's text, then the
// push's commits, changed files and diff, each bounded and fenced as data.
package workflow
