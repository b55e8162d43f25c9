// Package workflow reads agent workflows from a docs repository, decides
// when scheduled ones are due, verifies forge push webhooks and matches
// pushes to the workflows they start. It holds no state and starts
// nothing itself: callers store slots and deliveries and start the jobs.
package workflow
